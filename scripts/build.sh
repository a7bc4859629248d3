#!/usr/bin/env bash
# Configures and builds Fusion into build/ (or $FUSION_BUILD_DIR).
# Extra arguments are build targets.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUSION_BUILD_DIR:-$root/build}

if [[ ! -f $build/build.ninja ]]; then
  cmake -S "$root" -B "$build" -G Ninja
fi
cmake --build "$build" -j "${FUSION_JOBS:-2}" ${1:+--target "$@"}
