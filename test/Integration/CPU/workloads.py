# Every GPU benchmark workload, at small shapes, compiled for the CPU fused
# and unfused, run on fresh random inputs and compared with numpy; the
# traffic each kernel moved (counted at run time) must equal the
# fusion-report prediction.
#
# RUN: %fusion_python %s %fusion_obj_root %fusion_src_root %t

import os
import sys

import numpy as np

from fusion import cpu, testing

build_dir, src_root, work_dir = sys.argv[1:4]
os.makedirs(work_dir, exist_ok=True)
rng = testing.fresh_rng()

# The benchmark's workloads at CPU-sized shapes ("tiny": rows of 96, not a
# power of two).
sys.path.insert(0, os.path.join(src_root, "benchmarks", "gpu"))
import workloads  # noqa: E402

MODULE = workloads.module("tiny")


def f64(a):
    return np.asarray(a, dtype=np.float64)


def round_to(a, dtype):
    return np.asarray(a).astype(dtype)


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def rms_norm(s, w):
    return s / np.sqrt(np.mean(s * s, axis=-1, keepdims=True) + 1e-6) * w


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def adamw(p, g, m, v):
    m1 = 0.9 * m + 0.1 * g
    v1 = 0.999 * v + 0.001 * g * g
    p1 = p * 0.99999 - 1e-3 * (m1 / 0.1) / (np.sqrt(v1 / 0.001) + 1e-8)
    return p1, m1, v1


# name -> (reference on float64 inputs, rows for dynamic shapes)
REFERENCES = {
    "ew_chain4": lambda x, w: (np.maximum(x * 2 + 1, 0) * w,),
    "ew_chain8": lambda x, w: (x / (np.exp(-(np.maximum(x * 2 + 1, 0) * w)) + 1),),
    "bias_gelu": lambda x, b: (gelu_tanh(x + b),),
    "silu_mul": lambda x: ((lambda g, u: g / (1 + np.exp(-g)) * u)(*np.split(x, 2, axis=-1)),),
    "add_rmsnorm": lambda x, r, w: (x + r, rms_norm(x + r, w)),
    "layernorm": lambda x, g, b: (((x - x.mean(-1, keepdims=True)) /
                                   np.sqrt(x.var(-1, keepdims=True) + 1e-5)) * g + b,),
    "softmax": lambda x: (softmax(x),),
    "softmax_wide": lambda x: (softmax(x),),
    "logsumexp": lambda x: (x.max(-1) + np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1)),),
    "adamw": adamw,
    "add_rmsnorm_decode": lambda x, r, w: (x + r, rms_norm(x + r, w)),
}

source = os.path.join(work_dir, "workloads.mlir")
with open(source, "w") as f:
    f.write(MODULE)

failures = []
modules = {fuse: cpu.compile(source, build_dir, fuse=fuse, count_traffic=True, debug=True,
                             work_dir=work_dir) for fuse in (True, False)}
reports = {fuse: {f["name"]: f for f in cpu.report(source, build_dir, fuse)["functions"]}
           for fuse in (True, False)}
kernel_ids = {}
for fuse, rep in reports.items():
    next_id = 0
    for f in cpu.report(source, build_dir, fuse)["functions"]:
        kernel_ids[(fuse, f["name"])] = list(range(next_id, next_id + f["kernels"]))
        next_id += f["kernels"]

for name, reference in REFERENCES.items():
    fn = modules[True].functions[name]
    row_counts = [1, 7, 64] if any(d is None for t in fn.inputs for d in t.shape) else [None]
    for rows in row_counts:
        shapes = [tuple(rows if d is None else d for d in t.shape) for t in fn.inputs]
        inputs = [testing.random_input(rng, t, s) for t, s in zip(fn.inputs, shapes)]
        if name == "adamw":  # the second moment is non-negative
            inputs[3] = np.abs(inputs[3])
        # bf16 inputs: the reference sees exactly the rounded values.
        expected = reference(*[f64(a) for a in inputs])
        label = name if rows is None else f"{name}[rows={rows}]"
        results = {}
        for fuse, module in modules.items():
            module.reset_traffic()
            outputs = module.functions[name](*inputs)
            results[fuse] = outputs
            tag = "fused" if fuse else "unfused"
            for i, (out, ref, t) in enumerate(zip(outputs, expected, fn.outputs)):
                testing.check(f"{label} {tag} output {i}", out, ref, t.element, failures)
            # Counted traffic against the prediction (static shapes only:
            # the prediction for dynamic ones is a formula).
            rep = reports[fuse][name]
            if rows is None:
                counted = sum(sum(module.traffic(k)) for k in kernel_ids[(fuse, name)])
                ok = counted == rep["bytes"]
                print(f"{'ok' if ok else 'FAIL'}: {label} {tag} traffic: counted {counted} bytes, "
                      f"predicted {rep['bytes']} in {rep['kernels']} kernels")
                if not ok:
                    failures.append(f"{label} {tag} traffic")
        for i, (a, b) in enumerate(zip(results[True], results[False])):
            same = np.array_equal(f64(a), f64(b), equal_nan=False)
            print(f"{'ok' if same else 'FAIL'}: {label} fused == unfused, output {i}")
            if not same:
                failures.append(f"{label} fused vs unfused {i}")

print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
