#!/usr/bin/env bash
# The Node client's tests, run by clients/test.sh:
#   test.sh setup        npm install (dev dependencies from package-lock.json), build
#   test.sh unit         tsc strict, prettier, lib/ up to date with src/, the vector tests
#   test.sh integration  node's test runner against the servers of clients/testenv.py
# The last line is "node <mode>: N passed, N failed"; the status is non-zero on failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here" || exit 1
mode=${1:?usage: test.sh setup|unit|integration}

summary() { # node --test's counts -> our closing line
    local passed failed
    passed=$(awk '/^# pass / {print $3}' "$1" | tail -1)
    failed=$(awk '/^# fail / {print $3}' "$1" | tail -1)
    echo "node $mode: ${passed:-0} passed, $((${failed:-1} + $2)) failed"
}

# lib/ is committed (so `npm install ./clients/node` needs no build step):
# it must be exactly what tsc makes of src/.
lib_is_fresh() {
    local fresh
    fresh=$(mktemp -d)
    npx tsc -p tsconfig.build.json --outDir "$fresh" &&
        diff -r "$fresh" lib >/dev/null || { echo "lib/ is stale: run npm run build" >&2; rm -rf "$fresh"; return 1; }
    rm -rf "$fresh"
}

case "$mode" in
setup)
    npm install --no-audit --no-fund --loglevel=error && npx tsc -p .
    ;;
unit | integration)
    log=$(mktemp)
    trap 'rm -f "$log"' EXIT
    checks_failed=0
    if [ "$mode" = unit ]; then
        npx tsc -p . || checks_failed=$((checks_failed + 1))
        npx prettier --check src test bench.ts || checks_failed=$((checks_failed + 1))
        lib_is_fresh || checks_failed=$((checks_failed + 1))
        node --test dist/test/vectors.test.js >"$log" 2>&1
    else
        node --test --test-concurrency=1 dist/test/integration.test.js >"$log" 2>&1
    fi
    status=$?
    grep -E '^not ok|^# (pass|fail)' "$log"
    [ "$status" -eq 0 ] || grep -vE '^\s*(ok|#|---|\.\.\.|duration_ms|type:|1\.\.)' "$log" | head -60
    summary "$log" "$checks_failed"
    [ "$status" -eq 0 ] && [ "$checks_failed" -eq 0 ]
    ;;
*) echo "usage: test.sh setup|unit|integration" >&2; exit 2 ;;
esac
