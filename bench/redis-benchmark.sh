#!/usr/bin/env bash
# TICKET.CLAIM against the equivalent Lua script and raw ZPOPMIN, measured
# with redis-benchmark -P 16 on one private redis-server (unix socket, no
# persistence), each path on a fresh server. Prints claims/s and the
# server's CPU time per claim (from /proc, so a busy client does not skew
# it). The Lua script gets the time as an argument (no TIME call), which
# makes it a little cheaper than the module's path: a conservative baseline.
#
#   bash bench/redis-benchmark.sh [claims-per-path] [extra redis-benchmark args]
#   bash bench/redis-benchmark.sh 300000 --threads 2
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-300000}
shift || true
SO="$PWD/target/release/libticketgate.so"
[ -f "$SO" ] || { echo "build first: cargo build --release -p ticketgate" >&2; exit 2; }

LUA='local held = redis.call("HGET", KEYS[2], ARGV[1])
if held then return tonumber(held) end
local popped = redis.call("ZPOPMIN", KEYS[1])
if #popped == 0 then return redis.error_reply("SOLDOUT event is sold out") end
local t = popped[1]
redis.call("HSET", KEYS[2], ARGV[1], t)
redis.call("XADD", KEYS[3], "*", "op", "claim", "event", ARGV[2], "user", ARGV[1], "ticket", t, "at", ARGV[3])
return tonumber(t)'

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

run() {
  local label=$1; shift
  local dir; dir=$(mktemp -d)
  redis-server --port 0 --unixsocket "$dir/s" --unixsocketperm 700 --dir "$dir" --save "" \
    --appendonly no --loadmodule "$SO" --daemonize yes --logfile "$dir/log" --pidfile "$dir/pid"
  for _ in $(seq 50); do [ -s "$dir/pid" ] && redis-cli -s "$dir/s" ping >/dev/null 2>&1 && break; sleep 0.1; done
  local cli="redis-cli -s $dir/s" pid; pid=$(cat "$dir/pid")
  $cli TICKET.INIT M 2000000000 >/dev/null
  local sha; sha=$($cli SCRIPT LOAD "$LUA")
  $cli EVAL "for i=1,$((N + 1000)),1000 do local a={} for j=i,i+999 do a[#a+1]=j a[#a+1]=j end redis.call('ZADD', KEYS[1], unpack(a)) end return 1" 1 'ticket:{L}:pool' >/dev/null
  local before; before=$(cpu_ticks "$pid")
  local out; out=$(redis-benchmark -s "$dir/s" -P 16 -c 50 -n "$N" -r 1000000000 -q "${EXTRA[@]}" "${@//@SHA@/$sha}" 2>&1 | tr '\r' '\n' | grep 'requests per second' | tail -1)
  local after; after=$(cpu_ticks "$pid")
  local rps; rps=$(echo "$out" | grep -o '[0-9.]* requests per second' | cut -d' ' -f1)
  local us; us=$(awk -v t="$((after - before))" -v n="$N" 'BEGIN { printf "%.2f", t * 10000 / n }')
  printf '%-8s %12.0f claims/s %8s us server CPU per claim\n' "$label" "$rps" "$us"
  eval "${label}_rps=$rps"
  $cli SHUTDOWN NOSAVE >/dev/null 2>&1 || true
  rm -rf "$dir"
}

EXTRA=("$@")
echo "redis-benchmark -P 16 -c 50 -n $N ${EXTRA[*]}"
run module TICKET.CLAIM M u__rand_int__
run lua EVALSHA @SHA@ 3 'ticket:{L}:pool' 'ticket:{L}:holders' 'ticket:{L}:log' u__rand_int__ L 1796050527425
run zpopmin ZPOPMIN 'ticket:{L}:pool'
awk -v m="$module_rps" -v l="$lua_rps" -v z="$zpopmin_rps" \
  'BEGIN { printf "module/lua = %.2fx, module/zpopmin = %.2fx\n", m / l, m / z }'
