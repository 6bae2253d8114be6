#!/usr/bin/env bash
# The test command: installs missing packages, checks formatting and lints,
# builds everything in release mode and runs every test. The tests start
# their own redis-server (with the module) and MariaDB in temp dirs on free
# ports; nothing here touches a server already running on the machine.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cargo fmt --all --check
cargo clippy --release --workspace --all-targets -- -D warnings
cargo build --release --workspace

log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
cargo test --release --workspace --all-targets 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# One closing line for the whole workspace (cargo prints one per binary).
awk '/^test result:/ { passed += $4; failed += $6 } END { printf "tests: %d passed, %d failed\n", passed, failed }' "$log"
exit "$status"
