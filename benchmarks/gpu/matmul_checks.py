#!/usr/bin/env python3
"""Runs on the GPU machine, from a bundle made by scripts/build-gpu-bundle.sh:
each matmul case (matmul_cases.py) called through fusion.cuda against a
PyTorch float64 reference on fresh random inputs, outputs poisoned with NaN
first (debug calls), twice at every dynamic size listed; then calls that must fail
with a clear error. `matmul_checks.py [STEM]` checks the library STEM.so
(default matmul_cases.fused: library matmuls; matmul_cases.fused.generated:
the generated kernels, tensor-core where they apply). Prints a table last
and writes matmul_checks.STEM.json into $OUT (or the current directory).

Tolerances, relative norm error: f32 1e-5 (cuBLASLt's exact f32 path), TF32
5e-3, f16/bf16 1e-2. f32 cases also bound the largest element error by
1e-4, which tells tanh gelu from erf gelu (they differ by up to 4.7e-4)."""

import json
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from fusion import cuda  # noqa: E402
import matmul_cases  # noqa: E402

TOLERANCE = {"f32": 1e-5, "bf16": 1e-2, "f16": 1e-2}
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def inputs_for(fn, name, size):
    """Uniform inputs in [-1, 1]; right-hand matmul operands ([K, N]) scaled
    by sqrt(3 / K), so products have variance 1/3 whatever K is (gelu then
    sees values where its two forms differ)."""
    right = matmul_cases.right_operands(name)
    xs = []
    for i, t in enumerate(fn.inputs):
        shape = [size if d is None else d for d in t.shape]
        x = torch.rand(shape, device="cuda", dtype=torch.float64) * 2 - 1
        if i in right:
            x *= (3 / max(1, shape[-2])) ** 0.5
        xs.append(x.to(DTYPES[t.element]))
    return xs


def errors_of(outs, refs):
    rel, worst = [], []
    for o, r in zip(outs, refs):
        o = o.double()
        if o.numel() == 0:  # an empty output (M = 0) matches an empty reference
            rel.append(0.0 if r.numel() == 0 else float("inf"))
            worst.append(0.0)
            continue
        if torch.isnan(o).any():
            rel.append(float("inf"))
            worst.append(float("inf"))
            continue
        rel.append(float((o - r).norm() / r.norm().clamp_min(1e-30)))
        worst.append(float((o - r).abs().max()))
    return rel, worst


def check(module, name, size, tolerance, results, lines):
    """The call twice, on fresh inputs: one that leaves the arrival
    counters the runtime keeps per stream anything but zero (split
    products) fails the second. The worse errors of the two count."""
    fn = module.functions[name]
    try:
        rel = [0.0] * len(fn.outputs)
        worst = [0.0] * len(fn.outputs)
        for _ in range(2):
            xs = inputs_for(fn, name, size)
            refs = matmul_cases.reference(name, *xs, ops=matmul_cases.TorchOps())
            outs = fn(*xs)  # debug module: outputs are NaN-poisoned first
            torch.cuda.synchronize()
            rel2, worst2 = errors_of(outs, refs)
            rel = [max(a, b) for a, b in zip(rel, rel2)]
            worst = [max(a, b) for a, b in zip(worst, worst2)]
        ok = all(e <= tolerance(t.element) for e, t in zip(rel, fn.outputs))
        if all(t.element == "f32" for t in fn.outputs) and tolerance("f32") == 1e-5:
            ok = ok and all(w <= 1e-4 for w in worst)
        detail = " ".join(f"{e:.1e}" for e in rel) + "  max abs " + " ".join(f"{w:.1e}" for w in worst)
    except Exception as e:  # a runtime error is a failure, reported
        ok, detail = False, f"error: {e}"
    label = name if size is None else f"{name}[{size}]"
    results.append(dict(case=label, ok=ok, errors=detail))
    lines.append(f"{'ok  ' if ok else 'FAIL'} {label:32} rel.err {detail}")


def expect_error(module, name, xs, needle, results, lines, outputs=None):
    """A call with mismatched sizes or wrong outputs must raise, naming the
    problem."""
    try:
        module.functions[name](*xs, outputs=outputs)
        torch.cuda.synchronize()
        ok, detail = False, "no error raised"
    except (RuntimeError, ValueError, TypeError) as e:
        ok, detail = needle in str(e), str(e).splitlines()[0][:100]
    results.append(dict(case=f"error:{name}", ok=ok, errors=detail))
    lines.append(f"{'ok  ' if ok else 'FAIL'} {'error: ' + name:32} {detail}")


def main():
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    stem = sys.argv[1] if len(sys.argv) > 1 else "matmul_cases.fused"
    module = cuda.load(os.path.join(here, stem + ".so"), debug=True)
    tf32 = cuda.load(os.path.join(here, "matmul_cases_tf32.fused.so"), debug=True)
    results, lines = [], []
    for name, fn in module.functions.items():
        for size in matmul_cases.DYNAMIC.get(name, [None]):
            check(module, name, size, TOLERANCE.get, results, lines)
    check(tf32, "plain_tf32", None, lambda element: 5e-3, results, lines)
    # The residual's rows disagree with A's: the compiled function's entry
    # check refuses the call before anything runs (SizeMismatchError).
    a = torch.randn(5, 128, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(128, 72, device="cuda", dtype=torch.bfloat16)
    r = torch.randn(7, 72, device="cuda", dtype=torch.bfloat16)
    expect_error(module, "scale_residual_bf16", [a, b, r],
                 "argument 2 dimension 0 has size 7, but argument 0 dimension 0 has size 5",
                 results, lines)
    # Outputs given by the caller are checked like the inputs.
    r = torch.randn(5, 72, device="cuda", dtype=torch.bfloat16)
    wrong = torch.empty(5, 72, device="cuda", dtype=torch.float32)
    expect_error(module, "scale_residual_bf16", [a, b, r], "output 0 has dtype", results, lines,
                 outputs=[wrong])
    strided = torch.empty(72, 5, device="cuda", dtype=torch.bfloat16).t()
    expect_error(module, "scale_residual_bf16", [a, b, r], "not contiguous", results, lines,
                 outputs=[strided])
    out_dir = os.environ.get("OUT", ".")
    with open(os.path.join(out_dir, f"matmul_checks.{stem}.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(f"GPU: {torch.cuda.get_device_name()}, {stem}")
    print("\n".join(lines))
    failed = sum(not r["ok"] for r in results)
    print(f"matmul checks: {len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
