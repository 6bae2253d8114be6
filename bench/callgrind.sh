#!/usr/bin/env bash
# Instructions redis-server executes per TICKET.CLAIM and per EVALSHA of the
# equivalent Lua script (the one bench/redis-benchmark.sh uses), counted by
# callgrind over N pipelined claims after a warm-up, and what a replica
# executes per claim it applies (one TICKET._APPLY each). Instruction counts
# do not depend on what else the machine is doing, so this is the steadiest
# comparison on a shared machine. Needs valgrind (callgrind_control).
# Each server hashes with a random seed, so how many of its dictionary
# look-ups collide (the command table, the keyspace, the holders hash)
# moves one server's count by about +-100 per claim: each side is counted
# on ROUNDS fresh servers (default 3) and its median reported.
#
#   bash bench/callgrind.sh [claims]        (default 20000; ~1 min)
#   ONLY_REPLICA=1 bash bench/callgrind.sh  (just the replica's figure)
#   SEATS=1 bash bench/callgrind.sh [claims] (a best-available claim of 4 in
#     an 80,000-seat arena, 40 sections x 40 rows x 50 seats, empty and 95%
#     sold with free singles scattered, against a general-admission
#     CLAIM COUNT 4 on an event of 80,000; default 2000 claims; ~4 min)
#   SO=path/to/libticketgate.so bash bench/callgrind.sh  (another build, for A/B)
#   SERVER=$(bash scripts/valkey9.sh) bash bench/callgrind.sh  (on Valkey 9.1,
#     or any other server binary: module and Lua on the same one)
#   ALLOCATIONS=1 bash bench/callgrind.sh   (a public claim on an event with
#     two allocations against one without: issue 42's 5% budget)
#   ROUNDS=1 bash bench/callgrind.sh        (one server per side: quicker)
#   KEEP=DIR bash bench/callgrind.sh        (keeps each run's callgrind output
#     as DIR/<label>.<round>.cg.out*, for callgrind_annotate's per-function
#     breakdown)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-20000}
SO=${SO:-$PWD/target/release/libticketgate.so}
SERVER=${SERVER:-redis-server}
[ -f "$SO" ] || { echo "build first: cargo build --release -p ticketgate" >&2; exit 2; }
LUA=$(sed -n "/^LUA='/,/'$/p" bench/redis-benchmark.sh | sed "1s/^LUA='//; \$s/'$//")

# count LABEL SETUP COMMAND...: instructions per COMMAND (redis-benchmark
# syntax) on a server SETUP prepared (SETUP gets the redis-cli command), the
# median of ROUNDS servers; sets LABEL_ir.
count() {
  local label=$1 round samples=()
  for round in $(seq "$ROUNDS"); do samples+=("$(count_once "$round" "$@")"); done
  local median; median=$(printf '%s\n' "${samples[@]}" | sort -n | sed -n "$(((ROUNDS + 1) / 2))p")
  printf '%-8s %8d instructions per claim (median of %s)\n' "$label" "$median" "${samples[*]}"
  eval "${label}_ir=$median"
}

# count_once ROUND LABEL SETUP COMMAND...: one server's count per COMMAND.
count_once() {
  local round=$1 label=$2 setup=$3; shift 3
  local dir; dir=$(mktemp -d)
  valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" --instr-atstart=no \
    "$SERVER" --port 0 --unixsocket "$dir/s" --unixsocketperm 700 --dir "$dir" --save "" \
    --appendonly no --loadmodule "$SO" --logfile "$dir/log" >/dev/null 2>&1 &
  local vg=$!
  local cli="redis-cli -s $dir/s"
  for _ in $(seq 100); do $cli PING >/dev/null 2>&1 && break; sleep 0.2; done
  local sha; sha=$($cli SCRIPT LOAD "$LUA")
  "$setup" "$cli" >/dev/null
  local bench=(redis-benchmark -s "$dir/s" -P 16 -c 10 -r 1000000000 -q)
  "${bench[@]}" -n "$WARM" "${@//@SHA@/$sha}" >/dev/null 2>&1   # warm-up
  callgrind_control -i on "$vg" >/dev/null 2>&1
  "${bench[@]}" -n "$N" "${@//@SHA@/$sha}" >/dev/null 2>&1
  callgrind_control -i off "$vg" >/dev/null 2>&1
  callgrind_control -d "$vg" >/dev/null 2>&1
  $cli SHUTDOWN NOSAVE >/dev/null 2>&1 || true
  wait "$vg" || true
  local total; total=$(grep -h '^totals:' "$dir"/cg.out* | awk '{ s += $2 } END { print s }')
  echo "$((total / N))"
  keep "$dir" "$label.$round"
}

# keep DIR LABEL: with KEEP set, saves DIR's callgrind output as KEEP/LABEL.out.
keep() {
  if [ -n "${KEEP:-}" ]; then
    mkdir -p "$KEEP"
    local f
    for f in "$1"/cg.out*; do cp "$f" "$KEEP/$2.${f##*/}"; done
  fi
  rm -rf "$1"
}

# The replica: a plain primary takes the claims, the replica runs under
# callgrind and applies them; counted from the first to the last effect.
replica() {
  local dir; dir=$(mktemp -d)
  local pport; pport=$(free_port)
  "$SERVER" --port "$pport" --bind 127.0.0.1 --unixsocket "$dir/p" --unixsocketperm 700 --dir "$dir" \
    --save "" --appendonly no --loadmodule "$SO" --logfile "$dir/plog" --daemonize yes
  local pcli="redis-cli -s $dir/p"
  for _ in $(seq 100); do $pcli PING >/dev/null 2>&1 && break; sleep 0.1; done
  $pcli TICKET.INIT M 2000000000 >/dev/null
  valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" --instr-atstart=no \
    "$SERVER" --port 0 --unixsocket "$dir/r" --unixsocketperm 700 --dir "$dir" --save "" \
    --appendonly no --loadmodule "$SO" --logfile "$dir/rlog" --replicaof 127.0.0.1 "$pport" >/dev/null 2>&1 &
  local vg=$!
  local rcli="redis-cli -s $dir/r"
  for _ in $(seq 300); do
    $rcli INFO replication 2>/dev/null | grep -q 'master_link_status:up' && break
    sleep 0.2
  done
  local bench=(redis-benchmark -s "$dir/p" -P 16 -c 10 -r 1000000000 -q)
  "${bench[@]}" -n 2000 TICKET.CLAIM M u__rand_int__ >/dev/null 2>&1
  synced "$pcli"
  local before; before=$(applied "$rcli")
  callgrind_control -i on "$vg" >/dev/null 2>&1
  "${bench[@]}" -n "$N" TICKET.CLAIM M u__rand_int__ >/dev/null 2>&1
  synced "$pcli"
  callgrind_control -i off "$vg" >/dev/null 2>&1
  local after; after=$(applied "$rcli")
  callgrind_control -d "$vg" >/dev/null 2>&1
  $rcli SHUTDOWN NOSAVE >/dev/null 2>&1 || true
  $pcli SHUTDOWN NOSAVE >/dev/null 2>&1 || true
  wait "$vg" || true
  local total; total=$(grep -h '^totals:' "$dir"/cg.out* | awk '{ s += $2 } END { print s }')
  local n=$((after - before))
  [ "$n" -gt 0 ] || { echo "replica applied no effects" >&2; exit 1; }
  printf '%-8s %8d instructions per applied claim (%d TICKET._APPLY counted)\n' replica "$((total / n))" "$n"
  keep "$dir" replica
}

# Waits until the replica has everything: WAIT counts only the writes of its
# own connection, so write once on it first.
synced() { printf 'SET tg:callgrind-sync 1\nWAIT 1 300000\n' | $1 >/dev/null; }

applied() { $1 INFO ticket | tr -d '\r' | sed -n 's/^ticket_applied_effects://p'; }

# The setups: the general-admission event and the Lua script's pool.
plain() {
  $1 TICKET.INIT M 2000000000 >/dev/null
  $1 EVAL "for i=1,$((N + 3000)),1000 do local a={} for j=i,i+999 do a[#a+1]=j a[#a+1]=j end redis.call('ZADD', KEYS[1], unpack(a)) end return 1" 1 'ticket:{L}:pool' >/dev/null
}
ga80k() { $1 TICKET.INIT G 80000 LIMIT 4 >/dev/null; }
arena_layout() {
  python3 -c 'import json; print(json.dumps({"sections": [{"name": f"S{s}", "rows": [{"name": str(r), "seats": 50} for r in range(1, 41)]} for s in range(1, 41)]}))'
}
arena() { arena_layout | $1 -x TICKET.INIT A 80000 LIMIT 4 SEATS >/dev/null; }
# 95% sold: every seat picked in id order (each pick leaves no single), then
# about two singles a row given back, scattered, and the last eight rows
# given back whole, where the claims of 4 land after searching every row.
arena95() {
  arena "$1"
  python3 - "$N" "$WARM" >"$SEATS_DIR/fill" <<'PY'
import random, sys
need = (int(sys.argv[1]) + int(sys.argv[2])) * 4
for seat in range(1, 80001):
    print(f"TICKET.CLAIM A f{seat} SEATS {seat}")
rnd = random.Random(7)
back = need * 3 // 2 + 100  # parties of 4 leave short runs behind
for seat in range(80001 - back, 80001):
    print(f"TICKET.CANCEL A f{seat}")
for row in range(1600 - (back + 49) // 50):
    for pos in rnd.sample(range(1, 51, 2), 2):
        print(f"TICKET.CANCEL A f{row * 50 + pos}")
PY
  $1 --pipe <"$SEATS_DIR/fill" >/dev/null
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

if [ -n "${SEATS:-}" ]; then
  N=${1:-2000} WARM=200 ROUNDS=${ROUNDS:-1}
  SEATS_DIR=$(mktemp -d)
  trap 'rm -rf "$SEATS_DIR"' EXIT
  count ga4 ga80k TICKET.CLAIM G u__rand_int__ COUNT 4
  count empty4 arena TICKET.CLAIM A u__rand_int__ COUNT 4
  N=$((N / 10)) WARM=20
  count sold4 arena95 TICKET.CLAIM A u__rand_int__ COUNT 4
  awk -v g="$ga4_ir" -v e="$empty4_ir" -v s="$sold4_ir" 'BEGIN {
    printf "best available of 4 / general admission COUNT 4: empty %.2fx, 95%% sold %.2fx\n", e / g, s / g }'
  exit 0
fi
WARM=2000 ROUNDS=${ROUNDS:-3}
if [ -n "${ALLOCATIONS:-}" ]; then
  # A public claim on an event with two allocations set aside (one keyed,
  # one timed) against the same claim on a plain event, same build.
  withalloc() {
    $1 TICKET.INIT M 2000000000 >/dev/null
    $1 TICKET.ALLOCATE M house COUNT 1000 KEY k >/dev/null
    $1 TICKET.ALLOCATE M partner COUNT 500 RELEASE 4102444800000 >/dev/null
  }
  count plainev plain TICKET.CLAIM M u__rand_int__
  count allocev withalloc TICKET.CLAIM M u__rand_int__
  awk -v p="$plainev_ir" -v a="$allocev_ir" 'BEGIN {
    printf "public claim, event with allocations / without: %.4f (%+.1f%%)\n", a / p, (a / p - 1) * 100 }'
  exit 0
fi
[ -n "${ONLY_REPLICA:-}" ] || count module plain TICKET.CLAIM M u__rand_int__
[ -n "${ONLY_REPLICA:-}" ] || count lua plain EVALSHA @SHA@ 3 'ticket:{L}:pool' 'ticket:{L}:holders' 'ticket:{L}:log' u__rand_int__ L 1796050527425
[ -n "${ONLY_REPLICA:-}" ] || awk -v m="$module_ir" -v l="$lua_ir" 'BEGIN { printf "lua/module = %.2fx fewer instructions per claim\n", l / m }'
replica
