#!/usr/bin/env bash
# The test command: installs missing packages, checks formatting and lints,
# builds everything in release mode and runs every test. The tests start
# their own redis-server (with the module) and MariaDB in temp dirs on free
# ports; nothing here touches a server already running on the machine.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

# The lints need rustfmt and clippy. On a machine whose Rust lacks them and
# where rustup cannot add them, say so loudly and skip only that lint step.
lint_tool() {
  local tool=$1 component=$2
  cargo "$tool" --version >/dev/null 2>&1 && return 0
  command -v rustup >/dev/null 2>&1 && rustup component add "$component" >/dev/null 2>&1 &&
    cargo "$tool" --version >/dev/null 2>&1 && return 0
  printf '\n!!! WARNING: cargo %s is missing and could not be installed: SKIPPING that lint step (no test is skipped) !!!\n\n' "$tool" >&2
  return 1
}
if lint_tool fmt rustfmt; then cargo fmt --all --check; fi
if lint_tool clippy clippy; then cargo clippy --release --workspace --all-targets -- -D warnings; fi
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
