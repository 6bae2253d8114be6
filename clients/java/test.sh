#!/usr/bin/env bash
# clients/java: installs what is missing (Maven and a JDK from Debian when
# absent; the Maven dependencies once, then offline), checks the format
# (spotless, google-java-format), runs the unit tests (every vector through
# Lettuce and Jedis, RESP2 and RESP3) and, when clients/testenv.py has
# started servers (TICKETGATE_TEST_REDIS / TICKETGATE_TEST_CLUSTER), the
# integration tests; prints Surefire's totals.
#   usage: clients/java/test.sh            (unit tests; integration skipped)
#          python3 clients/testenv.py -- clients/java/test.sh
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v mvn >/dev/null || ! command -v javac >/dev/null; then
    apt-get install -y -q maven openjdk-17-jdk-headless >&2
fi

# Offline once this pom's dependencies and plugins have all been fetched.
marker="$HOME/.m2/ticketgate-client-$(sha256sum pom.xml | cut -c1-16).fetched"
offline=()
[ -f "$marker" ] && offline=(-o)

rm -rf target/surefire-reports
status=0
mvn -B -q "${offline[@]}" spotless:check test "$@" || status=$?

python3 - <<'PY'
import glob, xml.etree.ElementTree as ET
runs = fails = errors = skipped = 0
for path in glob.glob("target/surefire-reports/TEST-*.xml"):
    suite = ET.parse(path).getroot()
    runs += int(suite.get("tests")); fails += int(suite.get("failures"))
    errors += int(suite.get("errors")); skipped += int(suite.get("skipped"))
print(f"Tests run: {runs}, Failures: {fails}, Errors: {errors}, Skipped: {skipped}")
print(f"{runs - fails - errors - skipped} passed, {fails + errors} failed, {skipped} skipped")
PY
if [ "$status" = 0 ] && [ ${#offline[@]} = 0 ]; then
    touch "$marker"
fi
exit "$status"
