"""The MLP block at row counts around matmul_wgmma's few-row limits (64, 256):
do_bench medians (ms), outputs preallocated, per build (libraries compiled
from matmul_bench.mlir with the example appended, as the bundle builds them).

    python3 decode_rows.py STEM [STEM ...]"""
import os, sys
import torch, triton.testing
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from fusion import cuda
import matmul_bench
stems = sys.argv[1:]
mods = {s: cuda.load(os.path.join(here, s + ".so")) for s in stems}
for rows in (16, 64, 65, 128, 192, 256, 257):
    fn0 = mods[stems[0]].functions["mlp_block"]
    xs = matmul_bench.inputs_for(fn0, "mlp_block", rows)
    line = f"mlp_block[{rows}]"
    for s, m in mods.items():
        f = m.functions["mlp_block"]
        outs = f(*xs)
        t = triton.testing.do_bench(lambda: f(*xs, outputs=outs), warmup=50, rep=300, return_mode="median")
        line += f"  {s} {t:.4f}"
    print(line, flush=True)
