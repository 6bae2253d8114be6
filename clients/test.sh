#!/usr/bin/env bash
# Every client library's tests. Installs what is missing (each language's
# `test.sh setup`; Redis 8 and Valkey 9 via scripts/pinned-server.sh), then
# for each language with a clients/<lang>/test.sh: its unit tests, and its
# integration tests against Debian's redis-server (7.0), Redis 8 and Valkey
# 9.1, each run on fresh servers from clients/testenv.py (with --sentinel: a
# primary, a replica and three sentinels too); plus the vectors' drift
# check on both Redis servers (the vectors are Redis's replies).
# Closing line: "clients: N passed, N failed"; non-zero status on failure.
#
# A language's clients/<lang>/test.sh either takes `setup`, `unit` or
# `integration` (servers in the TICKETGATE_TEST_* environment; its usage
# text says "setup|unit|integration"), or takes no argument and runs its
# unit tests, plus its integration tests when TICKETGATE_TEST_* are set: then
# it is run once alone and once under each server. Counts come from the last
# output line saying "N passed, N failed" (a run without one counts as one
# test). Order: python, node, then the other folders; CLIENTS="go java"
# runs only those languages.
set -uo pipefail
cd "$(dirname "$0")/.."
export TICKETGATE_MODULE=${TICKETGATE_MODULE:-$PWD/target/release/libticketgate.so}
if [ ! -f "$TICKETGATE_MODULE" ]; then
    echo "clients: no module at $TICKETGATE_MODULE (cargo build --release --workspace)" >&2
    echo "clients: 0 passed, 1 failed"
    exit 1
fi

passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Runs one step, echoes its output, and adds its closing line's counts (a
# step that ends without one counts as one failure).
step() {
    echo "== $*"
    "$@" 2>&1 | tee "$log"
    local status=${PIPESTATUS[0]} counts
    counts=$(grep -oE '[0-9]+ passed, [0-9]+ failed' "$log" | tail -n1 | sed -E 's/ passed, / /; s/ failed//')
    if [ -z "$counts" ]; then
        counts=$([ "$status" -eq 0 ] && echo "1 0" || echo "0 1")
    fi
    passed=$((passed + ${counts% *}))
    failed=$((failed + ${counts#* }))
    [ "$status" -eq 0 ] || [ "${counts#* }" -gt 0 ] || failed=$((failed + 1))
    return 0
}

vectors() { # the drift check of clients/vectors.json, on the given server
    local out status
    out=$(TICKETGATE_TEST_REDIS_SERVER=$1 "${TICKETGATE_CACHE:-$PWD/.cache}/clients-py/bin/python" \
        -m pytest -q -p no:cacheprovider clients/vectors 2>&1)
    status=$?
    echo "$out"
    echo "vectors ($("$1" --version | grep -oE 'v=[0-9.]+')): $(grep -oE '[0-9]+ passed' <<<"$out" | cut -d' ' -f1 || echo 0) passed, $((status != 0)) failed"
    return "$status"
}

redis7=$(command -v redis-server || true)
redis8=$(bash scripts/redis8.sh) || redis8=""
valkey9=$(bash scripts/valkey9.sh) || valkey9=""
servers=()
for server in "$redis7" "$redis8"; do
    if [ -n "$server" ]; then servers+=("$server"); else failed=$((failed + 1)); echo "clients: a redis-server is missing" >&2; fi
done
integration_servers=("${servers[@]}")
if [ -n "$valkey9" ]; then integration_servers+=("$valkey9"); else failed=$((failed + 1)); echo "clients: valkey-server 9 is missing" >&2; fi

languages=(python node)
for dir in clients/*/; do
    lang=$(basename "$dir")
    [ -x "$dir/test.sh" ] && [[ ! " ${languages[*]} " =~ " $lang " ]] && languages+=("$lang")
done
[ -z "${CLIENTS:-}" ] || read -r -a languages <<<"$CLIENTS"

for lang in "${languages[@]}"; do
    script=clients/$lang/test.sh
    if ! grep -q 'setup|unit|integration' "$script"; then
        step "$script"
        for server in "${integration_servers[@]}"; do
            step python3 clients/testenv.py --redis-server "$server" --sentinel -- "$script"
        done
        continue
    fi
    if ! "$script" setup; then
        echo "clients: $lang setup failed" >&2
        failed=$((failed + 1))
        continue
    fi
    step "$script" unit
    for server in "${integration_servers[@]}"; do
        step python3 clients/testenv.py --redis-server "$server" --sentinel -- "$script" integration
    done
done
# The drift check runs in the Python client's venv: make it when the
# languages above did not (CLIENTS without python on a fresh machine).
if [[ ! " ${languages[*]} " =~ " python " ]] && ! clients/python/test.sh setup; then
    echo "clients: the vectors' Python setup failed" >&2
    failed=$((failed + 1))
fi
for server in "${servers[@]}"; do
    step vectors "$server"
done

echo "clients: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
