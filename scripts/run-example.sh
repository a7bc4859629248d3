#!/usr/bin/env bash
# The main job on an example, from a fresh Debian 12 machine: installs the
# packages, builds fusion-opt, fuses the example into kernels, and prints the
# fused IR and the traffic report (fused against op by op).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUSION_BUILD_DIR:-$root/build}
example=${1:-$root/examples/transformer_mlp_block.mlir}

"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" fusion-opt
"$build/bin/fusion-opt" "$example" --fusion-pipeline --fusion-report=output=-
