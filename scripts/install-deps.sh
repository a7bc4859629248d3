#!/usr/bin/env bash
# Installs what building and testing Fusion needs on Debian 12 (as root).
# Packages already present are not fetched again.
set -euo pipefail

# graphviz renders fusion-view graphs; python3-torch (1.13, for /usr/bin/python3)
# runs the PyTorch front end's tests.
packages=(
  cmake ninja-build g++ python3 python3-pip graphviz
  python3-torch
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

# The executed tests and the Python package run on the python3 in PATH (the
# one CMake finds): numpy for references, ml_dtypes for bfloat16, setuptools
# and wheel to pip-install the package offline in the install test.
if ! python3 -c "import numpy, ml_dtypes, setuptools, wheel" 2>/dev/null; then
  echo "install-deps: installing numpy, ml_dtypes, setuptools and wheel for $(command -v python3)"
  python3 -m pip install --quiet --disable-pip-version-check numpy ml_dtypes setuptools wheel ||
    # Debian's own python3 refuses plain pip installs (PEP 668).
    python3 -m pip install --quiet --disable-pip-version-check \
      --break-system-packages numpy ml_dtypes setuptools wheel
fi

# cuobjdump and nvdisasm (scripts/kernel-sass.py: the SASS of the kernels),
# which this CUDA toolkit lacks: NVIDIA's wheels from PyPI, about 6 MB.
if ! python3 "$(dirname "$0")/kernel-sass.py" --which >/dev/null 2>&1; then
  echo "install-deps: installing cuobjdump and nvdisasm for $(command -v python3)"
  python3 -m pip install --quiet --disable-pip-version-check nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm ||
    python3 -m pip install --quiet --disable-pip-version-check --break-system-packages \
      nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm
fi

# The torch.compile backend's tests need PyTorch 2.x in that python3
# (Debian's python3-torch is 1.13, without torch.compile). From PyPI: about
# 3 minutes and 5 GB with its CUDA packages; it runs on the CPU here.
if ! python3 -c "import torch, torch._dynamo; torch.compile" 2>/dev/null; then
  echo "install-deps: installing PyTorch 2.x for $(command -v python3)"
  python3 -m pip install --quiet --disable-pip-version-check "torch>=2.4" ||
    python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "torch>=2.4"
fi
