#!/usr/bin/env bash
# Installs, from Debian's packages, whatever building and testing ticketgate
# needs and this machine lacks: redis-server (7.0+), MariaDB, libclang (for
# the redis-module crate's bindgen) and a C compiler. Needs root or sudo
# only when something is missing. Rust itself comes from rustup (1.88+).
set -euo pipefail

missing=()
have() { command -v "$1" >/dev/null 2>&1; }
have redis-server || missing+=(redis-server)
have redis-cli || missing+=(redis-tools)
{ have mariadbd || [ -x /usr/sbin/mariadbd ]; } || missing+=(mariadb-server)
have mariadb-install-db || missing+=(mariadb-server)
have mariadb || missing+=(mariadb-client)
# bindgen needs libclang.so itself; libclang-cpp, which some images ship,
# does not do.
if have dpkg; then
  dpkg -s libclang-dev >/dev/null 2>&1 || missing+=(libclang-dev)
else
  compgen -G '/usr/lib/llvm-*/lib/libclang.so' >/dev/null || missing+=(libclang-dev)
fi
have cc || missing+=(gcc libc6-dev)

if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: ${missing[*]}"
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
fi

if ! have cargo; then
  echo "cargo not found: install Rust 1.88 or newer (https://rustup.rs), then run this again" >&2
  exit 1
fi
