#!/usr/bin/env bash
# clients/java: the Java client's checks and tests, and its Spring example's.
#   usage: clients/java/test.sh [setup|unit|integration]
#     setup        Maven and a JDK from Debian when absent (dependencies and
#                  plugins are resolved by Maven itself, in each run, from
#                  the local repository or Maven Central)
#     unit         format check (spotless, google-java-format) of both, and
#                  the vectors: every one through Lettuce and Jedis, RESP2
#                  and RESP3
#     integration  against the servers of clients/testenv.py
#                  (TICKETGATE_TEST_REDIS / TICKETGATE_TEST_CLUSTER): the
#                  library's integration and cluster-routing tests, then it
#                  is installed into the local Maven repository and the
#                  Spring example's tests run (1,000 HTTP users on 100 tickets)
#                  python3 clients/testenv.py -- clients/java/test.sh integration
#     (none)       setup, then unit, or integration when those variables are set
# Ends with Surefire's totals and "N passed, N failed, N skipped".
set -euo pipefail
cd "$(dirname "$0")"
quiet=(-B -q)

# mvn_in DIR GOALS...: Maven in DIR. Always online: Maven reuses what the
# local repository has and fetches only what it lacks, including what a goal
# resolves at run time (Surefire's JUnit provider), so a run never depends on
# an earlier run having filled the cache.
mvn_in() {
    local dir=$1
    shift
    (cd "$dir" && mvn "${quiet[@]}" "$@")
}

# Surefire's reports of the last run, summed.
summary() {
    python3 - <<'PY'
import glob, xml.etree.ElementTree as ET
runs = fails = errors = skipped = 0
for path in glob.glob("target/surefire-reports/TEST-*.xml") + glob.glob(
        "examples/spring/target/surefire-reports/TEST-*.xml"):
    suite = ET.parse(path).getroot()
    runs += int(suite.get("tests")); fails += int(suite.get("failures"))
    errors += int(suite.get("errors")); skipped += int(suite.get("skipped"))
print(f"Tests run: {runs}, Failures: {fails}, Errors: {errors}, Skipped: {skipped}")
print(f"{runs - fails - errors - skipped} passed, {fails + errors} failed, {skipped} skipped")
PY
}

setup() {
    if ! command -v mvn >/dev/null || ! command -v javac >/dev/null; then
        apt-get update -q >&2 && apt-get install -y -q maven openjdk-17-jdk-headless >&2
    fi
}

reset_reports() {
    rm -rf target/surefire-reports examples/spring/target/surefire-reports
}

unit() {
    reset_reports
    local status=0
    mvn_in examples/spring spotless:check || status=$?
    mvn_in . spotless:check test -Dtest=VectorsTest || status=$?
    summary
    return "$status"
}

integration() {
    if [ -z "${TICKETGATE_TEST_REDIS:-}${TICKETGATE_TEST_CLUSTER:-}" ]; then
        echo "integration: no servers (run through clients/testenv.py)" >&2
        return 1
    fi
    reset_reports
    local status=0
    mvn_in . install '-Dtest=IntegrationTest,ClusterRoutingTest,DrawTest,SeatsTest' || status=$?
    if [ "$status" = 0 ]; then
        mvn_in examples/spring test || status=$?
    fi
    summary
    return "$status"
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
