#!/usr/bin/env bash
# clients/go: fetches the module's dependencies (go-redis v9) when missing,
# checks gofmt and go vet, runs the unit tests (every vector through go-redis,
# RESP2 and RESP3) and, when clients/testenv.py has started servers
# (TICKETGATE_TEST_REDIS / TICKETGATE_TEST_CLUSTER), the integration tests.
#   usage: clients/go/test.sh            (unit tests; integration skipped)
#          python3 clients/testenv.py -- clients/go/test.sh
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v go >/dev/null; then
    apt-get install -y -q golang-go >&2
fi
go mod download

unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
    echo "gofmt: not formatted: $unformatted" >&2
    exit 1
fi
go vet ./...
go test -count=1 "$@" ./...
