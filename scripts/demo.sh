#!/usr/bin/env bash
# The demo command: installs missing packages, builds, and runs the whole
# system on private servers (see sidecar/demo.sh for what it does).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
exec bash sidecar/demo.sh "$@"
