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
cargo test --release --workspace
