#!/usr/bin/env bash
# Runs a command as on a machine that never ran it: HOME and every
# language's cache (Maven's local repository, Go's module and build caches,
# npm's cache, pip's cache, the project's own .cache) point at empty
# temporary directories, removed afterwards. Rust's toolchain (RUSTUP_HOME,
# CARGO_HOME) stays where it is installed. Fails when the command fails, so
# a step that only passes thanks to something an earlier run downloaded is
# caught here.
#   usage: scripts/fresh-check.sh                   every client's tests (clients/test.sh)
#          scripts/fresh-check.sh -- CMD ARGS...    any command, e.g. bash scripts/test.sh
# The clients' tests need the module built first (cargo build --release).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

if [ "${1:-}" = "--" ]; then
    shift
    command=("$@")
else
    command=(bash clients/test.sh)
fi

fresh=$(mktemp -d /tmp/ticketgate-fresh.XXXXXX)
cleanup() {
    [ ! -d "$fresh/node_modules.kept" ] || mv "$fresh/node_modules.kept" clients/node/node_modules
    chmod -R u+w "$fresh" 2>/dev/null # Go's module cache is read-only
    rm -rf "$fresh"
}
trap cleanup EXIT
mkdir -p "$fresh"/{home,m2,gopath,gocache,npm,pip,cache}

# The toolchain stays: rustup and cargo find it through these, not HOME.
export RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}
export CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}
export HOME=$fresh/home
# Java takes user.home from the password database, not HOME: name the
# local repository explicitly.
export MAVEN_OPTS="${MAVEN_OPTS:-} -Dmaven.repo.local=$fresh/m2"
export GOPATH=$fresh/gopath GOMODCACHE=$fresh/gopath/pkg/mod GOCACHE=$fresh/gocache
export npm_config_cache=$fresh/npm PIP_CACHE_DIR=$fresh/pip
export TICKETGATE_CACHE=$fresh/cache
# What a checkout left behind is a cache too.
[ ! -d clients/node/node_modules ] || mv clients/node/node_modules "$fresh/node_modules.kept"

echo "fresh-check: ${command[*]} with HOME and caches under $fresh" >&2
status=0
"${command[@]}" || status=$?
if [ "$status" -eq 0 ]; then
    echo "fresh-check: passed on empty caches" >&2
else
    echo "fresh-check: FAILED on empty caches (status $status)" >&2
fi
exit "$status"
