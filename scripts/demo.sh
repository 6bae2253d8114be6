#!/usr/bin/env bash
# The demo command: installs missing packages, builds everything, then runs
# `ticketgate-bench demo`: a private redis-server with the module, a private
# MariaDB, `ticketgate-sidecar migrate`, the sidecar, an event of 100
# tickets, 1,000 users claiming at the same instant from 1,000 connections,
# and a summary showing that Redis and MySQL agree. Exits non-zero if they
# don't. Sizes: `bash scripts/demo.sh --burst-users 5000 --burst-tickets 300`.
#
# `bash scripts/demo.sh seats`: the seated demo (`ticketgate-bench
# demo-seats`): a venue of 2,000 seats, 1,000 parties of 1-6 claiming seats
# together at the same instant; then every party sits together, no seat is
# sold twice, MySQL's seats equal Redis's and `ticketgate-sidecar
# audit-seats` passes (`--burst-users N` sets the number of parties).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cargo build --release --workspace
if [ "${1:-}" = seats ]; then
    shift
    exec target/release/ticketgate-bench demo-seats "$@"
fi
exec target/release/ticketgate-bench demo "$@"
