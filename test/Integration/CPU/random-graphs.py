# Seeded random fusion graphs (elementwise chains, broadcasts, diamonds,
# multi-consumer values, reductions over either axis, norms, softmax, slices,
# dynamic row counts and row lengths), compiled fused and unfused for the
# CPU, run on fresh random inputs and compared with a numpy evaluation and
# with each other; then again with infinities and NaNs among the inputs,
# with run-time sizes of 0 and 1, and with one dynamic size off by one
# (refused with SizeMismatchError exactly where numpy cannot broadcast).
# Every graph also compiles for the GPU (to PTX, fused and unfused: no valid
# program may fail there either).
#
# RUN: %fusion_python %s %fusion_obj_root %t --graphs 300 --seed 1

import argparse
import os
import subprocess
import sys

import numpy as np

from fusion import cpu, random_graphs, testing, tools

parser = argparse.ArgumentParser()
parser.add_argument("build_dir")
parser.add_argument("work_dir")
parser.add_argument("--graphs", type=int, default=300)
parser.add_argument("--seed", type=int, default=1)
args = parser.parse_args()
os.makedirs(args.work_dir, exist_ok=True)

# Inputs are uniform in [-2, 2]; see GraphChecker.compare.
ABSOLUTE_F32 = 1e-5

graphs = [random_graphs.random_graph(args.seed * 100000 + i) for i in range(args.graphs)]
source = os.path.join(args.work_dir, "graphs.mlir")
with open(source, "w") as f:
    f.write("\n".join(g.mlir for g in graphs))

fused = cpu.compile(source, args.build_dir, fuse=True, work_dir=args.work_dir, debug=True)
unfused = cpu.compile(source, args.build_dir, fuse=False, work_dir=args.work_dir, debug=True)
rng = testing.fresh_rng()
checker = random_graphs.GraphChecker(rng, absolute=ABSOLUTE_F32)
failures = checker.failures


def runner(g):
    def run(inputs):
        results = []
        for label, module in (("fused", fused), ("unfused", unfused)):
            try:
                results.append((label, module.functions[g.name](*inputs)))
            except cpu.SizeMismatchError as e:
                results.append((label, e))
        return results
    return run


for g in graphs:
    rows = int(rng.integers(1, 12))
    width = int(rng.choice([1, 3, 37, g.width]))
    checker.check_graph(g, fused.functions[g.name].inputs, runner(g), rows, width)

# The GPU path: the whole module through fusion-to-nvvm to PTX.
fusion_opt = tools.find("fusion-opt", args.build_dir)
for fuse in (True, False):
    gpu = subprocess.run([fusion_opt, source, f"--fusion-to-nvvm=fuse={int(fuse)} format=isa",
                          "-o", os.devnull], capture_output=True, text=True)
    if gpu.returncode != 0:
        failures.append(f"GPU compile ({'fused' if fuse else 'unfused'}) failed: "
                        + gpu.stderr[:2000])

kernels = {fuse: sum(f["kernels"] for f in cpu.report(source, args.build_dir, fuse)["functions"])
           for fuse in (True, False)}
for line in failures:
    print("FAIL:", line)
print(f"{len(graphs)} graphs, {sum(len(g.outputs) for g in graphs)} outputs, "
      f"{kernels[True]} kernels fused ({kernels[False]} unfused); {checker.summary()}; "
      f"{len(failures)} failures")
sys.exit(1 if failures else 0)
