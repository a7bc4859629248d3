#!/usr/bin/env python3
"""The profiled region for ncu: one call of `matmul_plain_4096` from each
STEM (libraries built from matmul_bench.mlir), then torch's 4096^3 bf16
matmul (cuBLAS) on the same inputs, after warm-up:

    ncu --clock-control none --profile-from-start off --section SpeedOfLight \\
        --section WarpStateStats python3 matmul_ncu_region.py STEM [STEM ...]"""

import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from fusion import cuda  # noqa: E402
import matmul_bench  # noqa: E402

calls = []
xs = None
for stem in sys.argv[1:]:
    fn = cuda.load(os.path.join(here, stem + ".so")).functions["matmul_plain_4096"]
    if xs is None:
        xs = matmul_bench.inputs_for(fn, "matmul_plain_4096", None)
    outs = fn(*xs)
    calls.append(lambda fn=fn, outs=outs: fn(*xs, outputs=outs))
if xs is None:
    sys.exit("usage: matmul_ncu_region.py STEM [STEM ...]")
calls.append(lambda: xs[0] @ xs[1])
for _ in range(5):
    for call in calls:
        call()
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
for call in calls:
    call()
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
