# The GPU matmul cases (benchmarks/gpu/matmul_cases.py: every library
# epilogue, ragged and dynamic sizes, broadcast batches, an erf gelu left to
# its own kernel) through the CPU target, fused (matmul-epilogue=library, the
# default, and any) and unfused, against numpy on fresh random inputs; the
# fused kernels must agree with the unfused program and the traffic each
# moved must equal fusion-report's prediction.
#
# RUN: %fusion_python %s %fusion_obj_root %fusion_src_root %t

import os
import sys

import numpy as np

from fusion import cpu, testing

build_dir, src_root, work_dir = sys.argv[1:4]
os.makedirs(work_dir, exist_ok=True)
rng = testing.fresh_rng()

sys.path.insert(0, os.path.join(src_root, "benchmarks", "gpu"))
import matmul_cases  # noqa: E402

source = os.path.join(work_dir, "matmul_cases.mlir")
with open(source, "w") as f:
    f.write(matmul_cases.MODULE)

variants = {"library": dict(fuse=True), "any": dict(fuse=True, matmul_epilogue="any"),
            "unfused": dict(fuse=False)}
for v in variants:
    os.makedirs(os.path.join(work_dir, v), exist_ok=True)
modules = {v: cpu.compile(source, build_dir, work_dir=os.path.join(work_dir, v),
                          count_traffic=True, debug=True, **kw) for v, kw in variants.items()}
report = {f["name"]: f for f in cpu.report(source, build_dir, True)["functions"]}
first_kernel, next_id = {}, 0
for f in cpu.report(source, build_dir, True)["functions"]:
    first_kernel[f["name"]] = next_id
    next_id += f["kernels"]

failures = []
for name, fn in modules["library"].functions.items():
    for size in matmul_cases.DYNAMIC.get(name, [None]):
        shapes = [tuple(size if d is None else d for d in t.shape) for t in fn.inputs]
        # Right-hand operands scaled by sqrt(3 / K): products of variance 1/3.
        inputs = [testing.random_input(rng, t, s, -1.0, 1.0) for t, s in zip(fn.inputs, shapes)]
        for i in matmul_cases.right_operands(name):
            inputs[i] = (np.asarray(inputs[i], np.float64) * (3 / max(1, shapes[i][-2])) ** 0.5).astype(fn.inputs[i].dtype)
        expected = matmul_cases.reference(name, *inputs)
        label = name if size is None else f"{name}[{size}]"
        results = {}
        for variant, module in modules.items():
            module.reset_traffic()
            results[variant] = module.functions[name](*inputs)
            for i, (out, ref, t) in enumerate(zip(results[variant], expected, fn.outputs)):
                testing.check(f"{label} {variant} output {i}", out, ref, t.element, failures)
            if variant == "library" and size is None:
                k0 = first_kernel[name]
                counted = sum(sum(module.traffic(k)) for k in range(k0, k0 + report[name]["kernels"]))
                ok = counted == report[name]["bytes"]
                print(f"{'ok' if ok else 'FAIL'}: {label} traffic: counted {counted} bytes, "
                      f"predicted {report[name]['bytes']}")
                if not ok:
                    failures.append(f"{label} traffic")
        # The CPU path rounds at every op whatever the grouping: all three agree.
        for variant in ("any", "unfused"):
            for i, (a, b) in enumerate(zip(results["library"], results[variant])):
                same = np.array_equal(np.asarray(a, np.float64), np.asarray(b, np.float64))
                print(f"{'ok' if same else 'FAIL'}: {label} library == {variant}, output {i}")
                if not same:
                    failures.append(f"{label} library vs {variant} {i}")

print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
