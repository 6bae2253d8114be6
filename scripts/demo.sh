#!/usr/bin/env bash
# The demo command: installs missing packages, builds everything, then runs
# `ticketgate-bench demo`: a private redis-server with the module, a private
# MariaDB, `ticketgate-sidecar migrate`, the sidecar, an event of 100
# tickets, 1,000 users claiming at the same instant from 1,000 connections,
# and a summary showing that Redis and MySQL agree. Exits non-zero if they
# don't. Sizes: `bash scripts/demo.sh --burst-users 5000 --burst-tickets 300`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cargo build --release --workspace
exec target/release/ticketgate-bench demo "$@"
