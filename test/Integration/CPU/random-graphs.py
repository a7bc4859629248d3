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
counts = {"calls": 0, "edge sizes": 0, "specials": 0, "refused": 0}


def compare(name, out, ref, tolerance=testing.TOLERANCE["f32"], absolute_tolerance=ABSOLUTE_F32):
    """NaN where the reference is NaN (infinities and NaNs among the inputs,
    the mean of an empty row), the same infinity where it is infinite (in
    f32 range), and the finite rest within tolerance: f32 against float64,
    relative error 1e-5, or, where a result is small because of
    cancellation (a random graph can subtract or average values of size ~2
    down to ~1e-3), absolute error 1e-5. Poisoned (unwritten) elements are
    NaN where the reference is not."""
    ref32 = ref.astype(np.float32)
    nan = np.isnan(ref32)
    inf = np.isinf(ref32)
    if not np.array_equal(np.isnan(out), nan):
        failures.append(f"{name}: NaN at {np.argwhere(np.isnan(out) != nan)[:3].tolist()} "
                        f"where the reference has {ref32[np.isnan(out) != nan][:3].tolist()}")
        return
    if not np.array_equal(out[inf], ref32[inf]):
        failures.append(f"{name}: infinities differ")
        return
    finite = ~(nan | inf)
    error = testing.relative_error(out[finite], ref[finite])
    absolute = testing.max_abs_error(out[finite], ref[finite])
    if error > tolerance and absolute > absolute_tolerance:
        failures.append(f"{name}: relative error {error:.2e}, absolute {absolute:.2e}")


def call(g, inputs):
    """The fused and unfused outputs, or the SizeMismatchError of each."""
    results = []
    for module in (fused, unfused):
        try:
            results.append(module.functions[g.name](*inputs))
        except cpu.SizeMismatchError as e:
            results.append(e)
    return results


def inputs_for(g, rows, width, specials=False):
    fn = fused.functions[g.name]
    inputs = [testing.random_input(rng, t, s)
              for t, s in zip(fn.inputs, g.input_shapes(rows, width))]
    if specials:
        for x in inputs:
            flat = x.reshape(-1)
            if flat.size:
                where = rng.random(flat.size) < 0.08
                flat[where] = rng.choice([np.inf, -np.inf, np.nan], size=int(where.sum()))
    return inputs


def check_call(g, inputs, tag):
    counts["calls"] += 1
    try:
        expected = g.evaluate(*inputs)
    except ValueError as e:
        if "broadcast" not in str(e):
            raise
        expected = None  # the sizes disagree: both programs must refuse
    got_fused, got_unfused = call(g, inputs)
    if expected is None:
        for label, got in (("fused", got_fused), ("unfused", got_unfused)):
            if not isinstance(got, cpu.SizeMismatchError):
                failures.append(f"{g.name} {tag} {label}: sizes that disagree were not refused")
        counts["refused"] += 1
        return
    for label, got in (("fused", got_fused), ("unfused", got_unfused)):
        if isinstance(got, Exception):
            failures.append(f"{g.name} {tag} {label}: refused a valid call: {got}")
            return
    for i, (a, b, ref) in enumerate(zip(got_fused, got_unfused, expected)):
        for label, out in (("fused", a), ("unfused", b)):
            name = f"{g.name} {tag} {label} output {i}"
            if out.shape != ref.shape:
                failures.append(f"{name}: shape {out.shape}, expected {ref.shape}")
            else:
                compare(name, out, ref)
        if a.shape == b.shape:
            compare(f"{g.name} {tag} fused vs unfused output {i}", a,
                    b.astype(np.float64), 1e-6, 1e-6)


for g in graphs:
    rows = int(rng.integers(1, 12)) if g.dynamic_rows else g.rows
    width = int(rng.choice([1, 3, 37, g.width])) if g.dynamic_width else g.width
    check_call(g, inputs_for(g, rows, width), f"rows={rows} width={width}")
    # Infinities and NaNs among the inputs.
    check_call(g, inputs_for(g, rows, width, specials=True), "specials")
    counts["specials"] += 1
    # Run-time sizes of 0 and 1.
    if g.dynamic_rows or g.dynamic_width:
        for size in (0, 1):
            r = size if g.dynamic_rows else g.rows
            w = size if g.dynamic_width else g.width
            check_call(g, inputs_for(g, r, w), f"rows={r} width={w}")
            counts["edge sizes"] += 1
    # One input's dynamic size off by one: refused exactly where the sizes
    # meet in an op (numpy cannot broadcast them), run where they do not.
    dims = g.dynamic_inputs()
    if dims:
        index, dim = dims[int(rng.integers(len(dims)))]
        inputs = inputs_for(g, max(rows, 2) if g.dynamic_rows else rows,
                            max(width, 2) if g.dynamic_width else width)
        shape = list(inputs[index].shape)
        shape[dim] += 1
        inputs[index] = testing.random_input(rng, fused.functions[g.name].inputs[index], tuple(shape))
        check_call(g, inputs, f"input {index} dimension {dim} off by one")

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
      f"{kernels[True]} kernels fused ({kernels[False]} unfused); {counts['calls']} calls "
      f"({counts['specials']} with infinities and NaNs, {counts['edge sizes']} with run-time "
      f"sizes 0 or 1, {counts['refused']} refused as sizes disagree); {len(failures)} failures")
sys.exit(1 if failures else 0)
