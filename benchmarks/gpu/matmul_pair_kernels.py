#!/usr/bin/env python3
"""One call of the gated pair and of the plain 4096^3 product from each
named build of matmul_bench.mlir, for ncu to time kernel by kernel (a
paired kernel against the products and silu * mul it replaces):

    ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \\
        --csv python3 matmul_pair_kernels.py matmul_bench.fused.generated [STEM ...]
"""

import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from fusion import cuda  # noqa: E402
import matmul_bench  # noqa: E402

for stem in sys.argv[1:]:
    module = cuda.load(os.path.join(here, stem + ".so"))
    for name in ("gated_pair", "matmul_plain_4096"):
        f = module.functions[name]
        xs = matmul_bench.inputs_for(f, name, None)
        outs = f(*xs)  # the first call tunes and loads; ncu sees both calls
        torch.cuda.synchronize()
        f(*xs, outputs=outs)
        torch.cuda.synchronize()
