#!/usr/bin/env bash
# clients/java: claims/s through the wrapper against raw commands from the
# same client (Lettuce and Jedis), on the standalone server that
# clients/testenv.py starts:
#   python3 clients/testenv.py --no-cluster -- clients/java/bench.sh
set -euo pipefail
cd "$(dirname "$0")"
mvn -B -q test-compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt
exec java -cp "target/classes:target/test-classes:$(cat target/classpath.txt)" io.ticketgate.ClaimBench
