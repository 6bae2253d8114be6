#!/usr/bin/env bash
# The Python client's tests, run by clients/test.sh:
#   test.sh setup        venv under $TICKETGATE_CACHE (default <repo>/.cache) with
#                        `pip install ./clients/python[test]` (a real, non-editable install)
#   test.sh unit         ruff (lint + format), mypy --strict, the vector tests; no server
#   test.sh integration  pytest against the servers of clients/testenv.py
# The last line is "python <mode>: N passed, N failed"; the status is non-zero on failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
venv=${TICKETGATE_CACHE:-$repo/.cache}/clients-py
mode=${1:?usage: test.sh setup|unit|integration}

summary() { # pytest's closing line -> our closing line
    local passed failed
    passed=$(grep -oE '[0-9]+ passed' "$1" | tail -1 | cut -d' ' -f1)
    failed=$(grep -oE '[0-9]+ (failed|error)' "$1" | awk '{n += $1} END {print n + 0}')
    echo "python $mode: ${passed:-0} passed, $((failed + $2)) failed"
}

case "$mode" in
setup)
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "$here[test]"
    ;;
unit | integration)
    cd "$here" || exit 1
    log=$(mktemp)
    trap 'rm -f "$log"' EXIT
    lint_failed=0
    if [ "$mode" = unit ]; then
        # This package, and the shared Python next to it (testenv, the vectors).
        "$venv/bin/ruff" check . ../testenv.py ../vectors &&
            "$venv/bin/ruff" format --check . ../testenv.py ../vectors || lint_failed=1
        "$venv/bin/mypy" --strict src/ticketgate || lint_failed=$((lint_failed + 1))
        "$venv/bin/python" -m pytest -q -p no:cacheprovider -m "not integration" tests 2>&1 | tee "$log"
    else
        "$venv/bin/python" -m pytest -q -p no:cacheprovider -m integration tests 2>&1 | tee "$log"
    fi
    status=${PIPESTATUS[0]}
    summary "$log" "$lint_failed"
    [ "$status" -eq 0 ] && [ "$lint_failed" -eq 0 ]
    ;;
*) echo "usage: test.sh setup|unit|integration" >&2; exit 2 ;;
esac
