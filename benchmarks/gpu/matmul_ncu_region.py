#!/usr/bin/env python3
"""The profiled region for ncu: one call of a matmul benchmark program
(`matmul_plain_4096` unless --program names another of matmul_bench.py's,
e.g. `gated_pair` or `mlp_block:4096`) from each STEM (libraries built from
matmul_bench.mlir), then the same computation through torch eager (cuBLAS
and torch's kernels) on the same inputs, after warm-up:

    ncu --clock-control none --profile-from-start off --section SpeedOfLight \\
        --section WarpStateStats python3 matmul_ncu_region.py \\
        [--program NAME[:ROWS]] STEM [STEM ...]"""

import argparse
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from fusion import cuda  # noqa: E402
import matmul_bench  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--program", default="matmul_plain_4096",
                    help="a function of matmul_bench.mlir, with ':ROWS' for a dynamic one")
parser.add_argument("stems", nargs="+")
args = parser.parse_args()
name, _, rows = args.program.partition(":")
if name not in matmul_bench.EAGER:
    sys.exit(f"unknown program {name!r}; one of {', '.join(matmul_bench.EAGER)}")
size = int(rows) if rows else None

calls = []
xs = None
for stem in args.stems:
    fn = cuda.load(os.path.join(here, stem + ".so")).functions[name]
    if xs is None:
        xs = matmul_bench.inputs_for(fn, name, size)
    outs = fn(*xs)
    calls.append(lambda fn=fn, outs=outs: fn(*xs, outputs=outs))
calls.append(lambda: matmul_bench.EAGER[name](*xs))
for _ in range(5):
    for call in calls:
        call()
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
for call in calls:
    call()
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
