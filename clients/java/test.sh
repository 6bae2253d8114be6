#!/usr/bin/env bash
# clients/java: installs what is missing (Maven and a JDK from Debian when
# absent; each pom's Maven dependencies once, then offline), checks the format
# (spotless, google-java-format), runs the library's unit tests (every vector
# through Lettuce and Jedis, RESP2 and RESP3), installs it into the local
# Maven repository, and runs the Spring example's tests. Integration tests
# (the library's and the example's) run when clients/testenv.py has started
# servers (TICKETGATE_TEST_REDIS / TICKETGATE_TEST_CLUSTER), else skip.
# Prints Surefire's totals over both.
#   usage: clients/java/test.sh            (unit tests; integration skipped)
#          python3 clients/testenv.py -- clients/java/test.sh
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v mvn >/dev/null || ! command -v javac >/dev/null; then
    apt-get install -y -q maven openjdk-17-jdk-headless >&2
fi

# mvn_in DIR GOALS...: offline once DIR's pom has had a successful online run.
mvn_in() {
    local dir=$1 marker
    shift
    marker="$HOME/.m2/ticketgate-$(sha256sum "$dir/pom.xml" | cut -c1-16).fetched"
    if [ -f "$marker" ]; then
        (cd "$dir" && mvn -B -q -o "$@")
    else
        (cd "$dir" && mvn -B -q "$@") && touch "$marker"
    fi
}

rm -rf target/surefire-reports examples/spring/target/surefire-reports
status=0
mvn_in . spotless:check install "$@" || status=$?
if [ "$status" = 0 ]; then
    mvn_in examples/spring spotless:check test || status=$?
fi

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
exit "$status"
