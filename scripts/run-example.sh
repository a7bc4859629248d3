#!/usr/bin/env bash
# The main job on an example, from a fresh Debian 12 machine: installs the
# packages, builds fusion-opt, and prints the example with its composite ops
# decomposed into the primitive ops the fusion passes work on.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUSION_BUILD_DIR:-$root/build}
example=${1:-$root/examples/transformer_mlp_block.mlir}

"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" fusion-opt
"$build/bin/fusion-opt" "$example" --fusion-decompose --canonicalize --cse
