# Seeded random fusion graphs (elementwise chains, broadcasts, diamonds,
# multi-consumer values, reductions over either axis, norms, softmax, slices,
# dynamic row counts and row lengths), compiled fused and unfused for the
# CPU, run on fresh random inputs and compared with a numpy evaluation and
# with each other; every graph also compiles for the GPU (to PTX, fused and
# unfused: no valid program may fail there either).
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

# Inputs are uniform in [-2, 2]; see the comparison below.
ABSOLUTE_F32 = 1e-5

graphs = [random_graphs.random_graph(args.seed * 100000 + i) for i in range(args.graphs)]
source = os.path.join(args.work_dir, "graphs.mlir")
with open(source, "w") as f:
    f.write("\n".join(g.mlir for g in graphs))

fused = cpu.compile(source, args.build_dir, fuse=True, work_dir=args.work_dir, debug=True)
unfused = cpu.compile(source, args.build_dir, fuse=False, work_dir=args.work_dir, debug=True)
rng = np.random.default_rng()
failures = []
for g in graphs:
    rows = int(rng.integers(1, 12)) if g.dynamic_rows else g.rows
    width = int(rng.choice([1, 3, 37, g.width])) if g.dynamic_width else g.width
    fn = fused.functions[g.name]
    inputs = [testing.random_input(rng, t, s)
              for t, s in zip(fn.inputs, g.input_shapes(rows, width))]
    expected = g.evaluate(*inputs)
    got_fused = fn(*inputs)
    got_unfused = unfused.functions[g.name](*inputs)
    for i, (a, b, ref) in enumerate(zip(got_fused, got_unfused, expected)):
        for label, out in (("fused", a), ("unfused", b)):
            # f32 against float64: relative error 1e-5, or, where a result is
            # small because of cancellation (a random graph can subtract or
            # average values of size ~2 down to ~1e-3), absolute error 1e-5.
            error = testing.relative_error(out, ref)
            absolute = testing.max_abs_error(out, ref)
            if error > testing.TOLERANCE["f32"] and absolute > ABSOLUTE_F32:
                failures.append(f"{g.name} {label} output {i}: relative error {error:.2e}, "
                                f"absolute {absolute:.2e}")
        if testing.relative_error(a, b) > 1e-6:
            failures.append(f"{g.name} fused vs unfused output {i} differ")

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
      f"{kernels[True]} kernels fused ({kernels[False]} unfused), {len(failures)} failures")
sys.exit(1 if failures else 0)
