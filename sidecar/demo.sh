#!/usr/bin/env bash
# The whole system on this machine, nothing shared with system services:
# a private redis-server with the ticketgate module, a private MariaDB (both
# on unix sockets in a temp dir), the schema migrations, the sidecar, a burst
# of 1,000 concurrent users on 100 tickets, and a summary that shows Redis
# and MySQL agree (`ticketgate-sidecar reconcile`).
#
#   bash sidecar/demo.sh            (from the workspace root)
set -euo pipefail

USERS=${USERS:-1000}
TICKETS=${TICKETS:-100}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

echo "== building (release)"
cargo build --release -q -p ticketgate -p ticketgate-sidecar

tmp=$(mktemp -d /tmp/ticketgate-demo.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

echo "== starting redis-server with the module ($tmp/redis.sock)"
redis-server --port 0 --unixsocket "$tmp/redis.sock" --dir "$tmp" --save "" --appendonly no \
  --loadmodule "$root/target/release/libticketgate.so" --logfile "$tmp/redis.log" --daemonize no &
pids+=($!)
rcli() { redis-cli -s "$tmp/redis.sock" "$@"; }

echo "== starting a private MariaDB ($tmp/mysql.sock)"
mariadb-install-db --no-defaults --datadir="$tmp/data" --user="$(id -un)" \
  --auth-root-authentication-method=normal --skip-test-db >"$tmp/install.log" 2>&1
mkdir -p "$tmp/mtmp"
mariadbd --no-defaults --datadir="$tmp/data" --socket="$tmp/mysql.sock" --skip-networking \
  --tmpdir="$tmp/mtmp" --log-error="$tmp/mariadb.err" --pid-file="$tmp/mariadb.pid" \
  --user="$(id -un)" --skip-log-bin --innodb-buffer-pool-size=64M --innodb-flush-log-at-trx-commit=2 2>"$tmp/mariadbd.stderr" &
pids+=($!)
mcli() { mariadb --no-defaults -S "$tmp/mysql.sock" -uroot "$@"; }
for _ in $(seq 1 300); do
  if rcli PING >/dev/null 2>&1 && mcli -e 'SELECT 1' >/dev/null 2>&1; then break; fi
  sleep 0.1
done
mcli -e 'CREATE DATABASE ticketgate CHARACTER SET utf8mb4'

export TICKETGATE_REDIS_URL="redis+unix://$tmp/redis.sock"
export TICKETGATE_MYSQL_URL="mysql://root@localhost/ticketgate?socket=$tmp/mysql.sock"
sidecar="$root/target/release/ticketgate-sidecar"

echo "== migrations"
"$sidecar" migrate 2>/dev/null

echo "== sidecar"
"$sidecar" run --metrics-addr 127.0.0.1:0 >"$tmp/sidecar.log" 2>&1 &
pids+=($!)

echo "== TICKET.INIT demo $TICKETS; $USERS users claim at once"
rcli TICKET.INIT demo "$TICKETS" >/dev/null
start=$(date +%s.%N)
seq 1 "$USERS" | xargs -P 100 -I{} redis-cli -s "$tmp/redis.sock" TICKET.CLAIM demo "user{}" >"$tmp/replies" 2>&1
end=$(date +%s.%N)
winners=$(grep -cE '^[0-9]+$' "$tmp/replies" || true)
soldout=$(grep -c 'SOLDOUT' "$tmp/replies" || true)
printf '   %s winners, %s sold-out replies, burst took %.2fs\n' "$winners" "$soldout" "$(echo "$end - $start" | bc)"

echo "== waiting for the sidecar to drain the log"
for _ in $(seq 1 300); do
  unsynced=$(rcli TICKET.STATUS demo | awk 'p{print; exit} /^unsynced$/{p=1}')
  [ "$unsynced" = "0" ] && break
  sleep 0.1
done

echo "== summary"
echo "   Redis: holders=$(rcli HLEN 'ticket:{demo}:holders') remaining=$(rcli TICKET.STATUS demo | awk 'p{print; exit} /^remaining$/{p=1}') unsynced=$unsynced"
mcli -N ticketgate -e "SELECT CONCAT('   MySQL: active=', (SELECT COUNT(*) FROM ticket_participation WHERE event_id='demo' AND status='active'),
  ' remaining=', (SELECT remaining_stock FROM ticket_stock WHERE event_id='demo'),
  ' distinct tickets=', (SELECT COUNT(DISTINCT ticket_number) FROM ticket_participation WHERE event_id='demo' AND status='active'),
  ' conflicts=', (SELECT COUNT(*) FROM ticket_conflict))"
"$sidecar" reconcile
