#!/usr/bin/env bash
# clients/go: the Go client's checks and tests.
#   usage: clients/go/test.sh [setup|unit|integration]
#     setup        fetch the module's dependencies (go-redis v9)
#     unit         gofmt, go vet, and the tests without servers: every vector
#                  through go-redis over RESP2 and RESP3 (integration tests skip)
#     integration  every test against the servers of clients/testenv.py
#                  (TICKETGATE_TEST_REDIS / TICKETGATE_TEST_CLUSTER):
#                  python3 clients/testenv.py -- clients/go/test.sh integration
#     (none)       setup, unit, and integration when those variables are set
# Ends with go test's own line and "N passed, N failed, N skipped" (tests
# and subtests).
set -euo pipefail
cd "$(dirname "$0")"

setup() {
    if ! command -v go >/dev/null; then
        apt-get update -q >&2 && apt-get install -y -q golang-go >&2
    fi
    go mod download
}

# run_tests [ENV...]: go test -v over the module, summarised.
run_tests() {
    local log status=0
    log=$(mktemp)
    env "$@" go test -count=1 -v ./... >"$log" 2>&1 || status=$?
    grep -E '^(ok|FAIL|---|\s+--- FAIL|panic)|_test.go:[0-9]+:' "$log" | grep -vE '^\s+--- (PASS|SKIP)' || true
    echo "$(grep -cE '^\s*--- PASS' "$log") passed, $(grep -cE '^\s*--- FAIL' "$log") failed, $(grep -cE '^\s*--- SKIP' "$log") skipped"
    rm -f "$log"
    return "$status"
}

unit() {
    local unformatted
    unformatted=$(gofmt -l .)
    if [ -n "$unformatted" ]; then
        echo "gofmt: not formatted: $unformatted" >&2
        return 1
    fi
    go vet ./...
    run_tests -u TICKETGATE_TEST_REDIS -u TICKETGATE_TEST_CLUSTER
}

integration() {
    if [ -z "${TICKETGATE_TEST_REDIS:-}${TICKETGATE_TEST_CLUSTER:-}" ]; then
        echo "integration: no servers (run through clients/testenv.py)" >&2
        return 1
    fi
    run_tests
}

case "${1:-}" in
setup) setup ;;
unit) unit ;;
integration) integration ;;
"")
    setup
    if [ -n "${TICKETGATE_TEST_REDIS:-}${TICKETGATE_TEST_CLUSTER:-}" ]; then integration; else unit; fi
    ;;
*) echo "usage: $0 [setup|unit|integration]" >&2; exit 2 ;;
esac
