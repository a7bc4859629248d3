#!/usr/bin/env python3
"""The GPU time of each kernel of the MLP block at 16 tokens (decode), for
Fusion and for torch's matmuls at the same shapes: run under
`ncu --profile-from-start off --metrics gpu__time_duration.sum --csv`; the
profiled region is one call of each after warm-up.

    python3 matmul_decode_kernels.py [STEM]   (default matmul_bench.fused)"""

import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from fusion import cuda  # noqa: E402
import matmul_bench  # noqa: E402

stem = sys.argv[1] if len(sys.argv) > 1 else "matmul_bench.fused"
module = cuda.load(os.path.join(here, stem + ".so"))
fn = module.functions["mlp_block"]
xs = matmul_bench.inputs_for(fn, "mlp_block", 16)
outs = fn(*xs)
normed = torch.randn(16, 4096, device="cuda", dtype=torch.bfloat16)
gated = torch.randn(16, 11008, device="cuda", dtype=torch.bfloat16)
for _ in range(3):
    fn(*xs, outputs=outs)
    normed @ xs[3]
    gated @ xs[4]
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
fn(*xs, outputs=outs)
normed @ xs[3]
gated @ xs[4]
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
