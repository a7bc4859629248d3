#!/usr/bin/env bash
# Installs what building and testing Fusion needs on Debian 12 (as root).
# Packages already present are not fetched again.
set -euo pipefail

packages=(
  cmake ninja-build g++ python3
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
