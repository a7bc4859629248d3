#!/usr/bin/env python3
"""The error of the GPU's elementwise math against float64 (issue 13's
transcendental item), on the GPU machine from the bundle: every f32 op that
is not exact in IEEE arithmetic (exp, log, tanh, erf, sqrt, rsqrt,
reciprocal, division, division by a divisor shared along a row, pow,
sigmoid, silu, gelu with and without the tanh approximation) over about 2M
inputs per op: a grid over [-20, 20], random magnitudes from the smallest
subnormal to the largest float of both signs, and the special values
(zeros, infinities, NaN, FLT_MIN, FLT_MAX).

For each op: the largest error in units in the last place (ulp) of the
f32 result (of the float64 reference rounded to f32), over inputs whose
reference is a normal f32 and, separately, the largest absolute error
where the reference is subnormal (the GPU flushes subnormal results and
operands to zero: `ftz`). For the activations that multiply their input
(silu, gelu), the bound is in ulp of max(|f(x)|, |x|): where f(x) is far
below x (silu for x < -87, where 1 + exp(-x) leaves the range division
covers; gelu's left tail, where 1 + erf cancels, as in PyTorch's f32
gelu) only the error relative to x is kept; the ulp of the result alone
is printed too. Specials must match: an infinite reference is returned
exactly, a NaN reference as NaN. Each op is checked against the bound in
BOUNDS (docs/lowering.md quotes them); a miss fails the run. The same
inputs rounded to bf16 and f16 check the ops of HALF_UNARY on tensors of
those types (their fast forms: ScalarOps' MathPrecision) to 1 ulp of the
type, and an attention's soft-cap on f32 inputs converted to bf16 likewise.

`module()` gives the MLIR text (scripts/build-gpu-bundle.sh compiles it).

  python3 math_accuracy.py [LIBRARY]   # prints a table, writes math_accuracy.json to $OUT
                                       # (LIBRARY: another build's math_accuracy.fused.so)
"""

import json
import math
import os
import sys

N_GRID = 1 << 20
N_RANDOM = 1 << 20

# Largest error allowed per op: ulp over normal results; absolute error
# where the reference is subnormal (flushed to zero costs at most
# FLT_MIN = 1.18e-38).
BOUNDS = {
    "exp": 2, "log": 2, "tanh": 2, "erf": 2, "sqrt": 1, "rsqrt": 2,
    "reciprocal": 2.5, "div": 2.5, "div_rows": 2.5, "pow": 4, "sigmoid": 4, "silu": 4,
    "gelu": 4, "gelu_tanh": 4,
}
# Ops whose bound is in ulp of max(|f(x)|, |x|).
SCALED = {"silu", "gelu", "gelu_tanh"}
SUBNORMAL_BOUND = 1.2e-38

UNARY = ["exp", "log", "tanh", "erf", "sqrt", "rsqrt", "reciprocal", "sigmoid", "silu",
         "gelu", "gelu_tanh"]
BINARY = ["div", "pow"]
# A division by a divisor shared along a row (GpuMathForms' shared
# reciprocal): each of the inputs divides a row of ROW_LANES of them.
ROW_LANES = 8

# Ops on bf16 and f16 tensors (named <op>_<type>): f32 math rounded to the
# type, where exp and the logistic ops take the approximate hardware forms
# (ScalarOps' MathPrecision). Their bound: 1 ulp of the type (of max(|f|,
# |x|) for silu and gelu), i.e. the correctly rounded result or its
# neighbour. Where the reference is below the type's smallest normal:
# for bf16 (f32's range) absolute FLT_MIN (flushed), for f16 one step of
# its subnormals (2^-24; f16 subnormals are normal f32 values); silu and
# gelu there too 1 ulp of max(|f|, |x|).
HALF_UNARY = ["exp", "tanh", "sigmoid", "silu", "gelu", "gelu_tanh"]
# An attention's soft-cap, CAP tanh(x / CAP), on f32 inputs, converted to
# bf16 (its tanh takes tanh.approx.f32: MathPrecision::roundedToBF16),
# bounded as the bf16 ops.
SOFTCAP = 30.0
# A softmax over rows of the type (its exponentials take the fast form
# too: they reach only the rounded result, through a sum and a quotient),
# on normal random rows scaled by 4.
SOFTMAX_ROWS = (2048, 1024)
HALF_TYPES = {"bf16": SUBNORMAL_BOUND, "f16": 2.0 ** -24}
HALF_BOUND = 1
# A logsumexp over f32 rows of LSE_WIDTH (a streamed plan, whose online
# sum's terms take the approximate form: ScalarOps' MathPrecision::sumTerm)
# on rows built to stress those terms: normal rows at several scales, one
# term of 1 among many near exp(-k) for k up to past the f32 range (where
# the terms' share of the sum and their arguments' rounding are largest),
# uniform exponents down to the subnormals, huge values, and -inf, +inf
# and NaN among finite values. Its error is absolute in log(sum) (the sum's
# relative error): measured in units of 2^-23 max(|result|, 1), bounded by
# LSE_BOUND of them; infinite and NaN results must match.
LSE_WIDTH = 16384
LSE_ROWS_PER_KIND = 8
LSE_BOUND = 16


def module():
    n = N_GRID + N_RANDOM + 16
    lines = []

    def unary(name, t):
        return {"gelu": f"fusion.gelu %x : {t}",
                "gelu_tanh": f"fusion.gelu %x approximation = tanh : {t}"}.get(
                    name, f"fusion.{name} %x : {t}")

    t = f"tensor<{n}xf32>"
    for name in UNARY:
        lines.append(f"""func.func @{name}(%x: {t}) -> {t} {{
  %0 = {unary(name, t)}
  return %0 : {t}
}}""")
    for dtype in HALF_TYPES:
        h = f"tensor<{n}x{dtype}>"
        for name in HALF_UNARY:
            lines.append(f"""func.func @{name}_{dtype}(%x: {h}) -> {h} {{
  %0 = {unary(name, h)}
  return %0 : {h}
}}""")
        r = f"tensor<{SOFTMAX_ROWS[0]}x{SOFTMAX_ROWS[1]}x{dtype}>"
        lines.append(f"""func.func @softmax_{dtype}(%x: {r}) -> {r} {{
  %0 = fusion.softmax %x axis = 1 : {r}
  return %0 : {r}
}}""")
    b = f"tensor<{n}xbf16>"
    lines.append(f"""func.func @softcap_bf16(%x: {t}) -> {b} {{
  %r = fusion.constant dense<{1.0 / SOFTCAP}> : tensor<f32>
  %c = fusion.constant dense<{SOFTCAP}> : tensor<f32>
  %0 = fusion.mul %x, %r : ({t}, tensor<f32>) -> {t}
  %1 = fusion.tanh %0 : {t}
  %2 = fusion.mul %1, %c : ({t}, tensor<f32>) -> {t}
  %3 = fusion.convert %2 : {t} to {b}
  return %3 : {b}
}}""")
    for name in BINARY:
        lines.append(f"""func.func @{name}(%x: {t}, %y: {t}) -> {t} {{
  %0 = fusion.{name} %x, %y : {t}
  return %0 : {t}
}}""")
    count = len(lse_rows(None, None)) * LSE_ROWS_PER_KIND
    r, o = f"tensor<{count}x{LSE_WIDTH}xf32>", f"tensor<{count}xf32>"
    lines.append(f"""func.func @logsumexp_rows(%x: {r}) -> {o} {{
  %0 = fusion.logsumexp %x axis = 1 : {r} -> {o}
  return %0 : {o}
}}""")
    x, y = f"tensor<{n}x{ROW_LANES}xf32>", f"tensor<{n}x1xf32>"
    lines.append(f"""func.func @div_rows(%x: {x}, %y: {y}) -> {x} {{
  %0 = fusion.div %x, %y : ({x}, {y}) -> {x}
  return %0 : {x}
}}""")
    return "\n".join(lines) + "\n"


def inputs(torch, generator, device):
    """A grid over [-20, 20], random magnitudes over the whole f32 range
    (subnormals included) with random signs, and the special values."""
    grid = torch.linspace(-20, 20, N_GRID, dtype=torch.float64)
    exponent = torch.empty(N_RANDOM, dtype=torch.float64).uniform_(-149, 128, generator=generator)
    sign = torch.randint(0, 2, (N_RANDOM,), generator=generator).double() * 2 - 1
    random = (sign * torch.pow(2.0, exponent)).float().double()
    finfo = torch.finfo(torch.float32)
    specials = torch.tensor([0.0, -0.0, float("inf"), -float("inf"), float("nan"), finfo.tiny,
                             -finfo.tiny, finfo.max, -finfo.max, 2.0 ** -149, -(2.0 ** -149),
                             1.0, -1.0, 88.7, 89.0, -104.0], dtype=torch.float64)
    x = torch.cat([grid, random, specials]).float()
    return x.to(device)


def lse_rows(torch, generator):
    """The kinds of logsumexp_rows' rows: functions giving LSE_ROWS_PER_KIND
    float64 rows of LSE_WIDTH each (with `torch` None, only how many)."""
    shape = (LSE_ROWS_PER_KIND, LSE_WIDTH)

    def normal(scale, shift=0.0):
        return lambda: torch.randn(shape, generator=generator, dtype=torch.float64) * scale + shift

    def one_above(k):
        # One term of 1 (at a random column) among terms near exp(-k).
        def rows():
            x = normal(0.01, -k)()
            x[torch.arange(shape[0]), torch.randint(0, shape[1], (shape[0],),
                                                    generator=generator)] = 0.0
            return x
        return rows

    def among(value, share):
        # `value` at a random `share` of the columns of normal rows.
        def rows():
            x = normal(1.0)()
            x[torch.rand(shape, generator=generator, dtype=torch.float64) < share] = value
            return x
        return rows

    kinds = [normal(s) for s in (1.0, 10.0, 100.0, 1e4)]
    kinds += [one_above(k) for k in (0.5, 1, 2, 4, 6, 8, 10, 12, 16, 20, 30, 50, 87, 88, 100)]
    kinds += [lambda: torch.rand(shape, generator=generator, dtype=torch.float64) * -104,
              normal(1e24, 1e30), normal(1e30, -1e32),
              among(-float("inf"), 0.5), among(-float("inf"), 1.0),
              among(float("inf"), 1e-4), among(float("nan"), 1e-4)]
    return kinds


def reference(torch, name, x, y=None):
    """float64 value of op `name` at f32 inputs `x` (and `y`)."""
    x = x.double()
    y = y.double() if y is not None else None

    def gelu_tanh(x):
        # PyTorch's 0.5 x (1 + tanh(u)) written as x sigmoid(2u): the same
        # function, but in float64 1 + tanh(u) cancels for x below about
        # -6 (absolute errors up to 4e-16, zeros where the value is 1e-18).
        u = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)
        return x * torch.sigmoid(2 * u)

    unary = {
        "exp": torch.exp, "log": torch.log, "tanh": torch.tanh, "erf": torch.erf,
        "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "reciprocal": lambda x: 1.0 / x,
        "sigmoid": torch.sigmoid, "silu": lambda x: x * torch.sigmoid(x),
        "gelu": torch.nn.functional.gelu, "gelu_tanh": gelu_tanh,
    }
    binary = {"div": lambda x, y: x / y, "pow": torch.pow}
    return unary[name](x) if name in unary else binary[name](x, y)


def errors(torch, out, ref, x=None, dtype=None, scaled_subnormals=False):
    """(max ulp over normal references, the same in ulp of max(|ref|, |x|)
    when `x` is given (with `scaled_subnormals`, over subnormal references
    too), max absolute error over subnormal references, count of
    special-value mismatches, inputs counted), in the result type `dtype`
    (torch's; float32 by default)."""
    dtype = dtype or torch.float32
    out = out.double()
    finfo = torch.finfo(dtype)
    mantissa = {torch.float32: 23, torch.bfloat16: 7, torch.float16: 10}[dtype]
    ref32 = ref.to(dtype).double()  # the correctly rounded result
    special = torch.isinf(ref32) | torch.isnan(ref32)
    mismatched = int(((torch.isnan(ref32) & ~torch.isnan(out))
                      | (torch.isinf(ref32) & (out != ref32))).sum())
    normal = ~special & (ref32.abs() >= finfo.tiny)
    subnormal = ~special & (ref32.abs() < finfo.tiny)
    r = ref[normal]

    def max_ulps(magnitude, where=normal):
        # (Below the smallest normal the spacing is that of the smallest
        # normal: a reference just below it rounds up to it.)
        ulp = torch.pow(2.0, torch.floor(torch.log2(magnitude.clamp(min=finfo.tiny))) - mantissa)
        ulps = (out[where] - ref[where]).abs() / ulp
        # A NaN or infinite output for a finite reference is unbounded.
        ulps = torch.where(torch.isfinite(ulps), ulps, torch.full_like(ulps, float("inf")))
        return float(ulps.max()) if ulps.numel() else 0.0

    ulps = max_ulps(r.abs())
    scaled = max_ulps(torch.maximum(r.abs(), x.double()[normal].abs())) if x is not None else ulps
    if x is not None and scaled_subnormals:
        finite = normal | subnormal
        scaled = max(scaled, max_ulps(torch.maximum(
            torch.maximum(ref[finite].abs(), x.double()[finite].abs()),
            torch.full_like(ref[finite], finfo.tiny)), finite))
    sub = (out[subnormal] - ref[subnormal]).abs()
    sub = torch.where(torch.isfinite(sub), sub, torch.full_like(sub, float("inf")))
    return (ulps, scaled, float(sub.max()) if sub.numel() else 0.0, mismatched,
            int(normal.sum()))


def main():
    import torch
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    from fusion import cuda
    library = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "math_accuracy.fused.so")
    module = cuda.load(library, debug=True)
    generator = torch.Generator().manual_seed(int.from_bytes(os.urandom(4), "little"))
    x = inputs(torch, generator, "cuda")
    # The second operand: the same values in another order (every pair of
    # magnitudes, specials against specials and against ordinary values).
    y = x[torch.randperm(x.numel(), generator=generator).to(x.device)]
    results = []

    def record(label, name, bound, measured, ok):
        ulps, scaled, sub, mismatched, counted = measured
        results.append(dict(op=label, max_ulp=ulps,
                            max_ulp_of_max_f_x=scaled if name in SCALED else None,
                            bound_ulp=bound, max_abs_subnormal=sub,
                            special_mismatches=mismatched, inputs=counted, ok=ok))
        measure = f"{scaled:8.2f} ulp of max(|f|,|x|), {ulps:.3g} of f" if name in SCALED \
            else f"{ulps:8.2f} ulp"
        print(f"{'ok  ' if ok else 'FAIL'} {label:15} max {measure} (bound {bound})"
              f"  subnormal results: max abs error {sub:.1e}  special mismatches {mismatched}"
              f"  ({counted} normal results)")

    for name in UNARY + BINARY:
        args = (x,) if name in UNARY else (x, y)
        out = module.functions[name](*args)[0]
        torch.cuda.synchronize()
        ref = reference(torch, name, *[a.cpu() for a in args])
        measured = errors(torch, out.cpu(), ref, x.cpu() if name in SCALED else None)
        _, scaled, sub, mismatched, _ = measured
        record(name, name, BOUNDS[name], measured,
               scaled <= BOUNDS[name] and sub <= SUBNORMAL_BOUND and mismatched == 0)
    # Every input as a divisor shared by a row of dividends (the inputs in
    # other orders).
    rows = torch.stack([x[torch.randperm(x.numel(), generator=generator).to(x.device)]
                        for _ in range(ROW_LANES)], 1)
    out = module.functions["div_rows"](rows, y[:, None])[0]
    torch.cuda.synchronize()
    measured = errors(torch, out.cpu(), rows.cpu().double() / y.cpu().double()[:, None])
    _, scaled, sub, mismatched, _ = measured
    record("div_rows", "div_rows", BOUNDS["div_rows"], measured,
           scaled <= BOUNDS["div_rows"] and sub <= SUBNORMAL_BOUND and mismatched == 0)
    torch_types = {"bf16": torch.bfloat16, "f16": torch.float16}
    for dtype, name in [(d, n) for d in HALF_TYPES for n in HALF_UNARY]:
        xh = x.to(torch_types[dtype])
        out = module.functions[f"{name}_{dtype}"](xh)[0]
        torch.cuda.synchronize()
        ref = reference(torch, name, xh.cpu().float())
        measured = errors(torch, out.cpu(), ref, xh.cpu() if name in SCALED else None,
                          torch_types[dtype], scaled_subnormals=True)
        _, scaled, sub, mismatched, _ = measured
        # The activations that multiply x are held to max(|f|, |x|) where
        # f is subnormal too (erf gelu's 1 + erf cancels in f32 first).
        record(f"{name}_{dtype}", name, HALF_BOUND, measured,
               scaled <= HALF_BOUND and (name in SCALED or sub <= HALF_TYPES[dtype])
               and mismatched == 0)
    out = module.functions["softcap_bf16"](x)[0]
    torch.cuda.synchronize()
    measured = errors(torch, out.cpu(), SOFTCAP * torch.tanh(x.cpu().double() / SOFTCAP), None,
                      torch.bfloat16)
    _, scaled, sub, mismatched, _ = measured
    record("softcap_bf16", "softcap", HALF_BOUND, measured,
           scaled <= HALF_BOUND and sub <= HALF_TYPES["bf16"] and mismatched == 0)
    for dtype in HALF_TYPES:
        rows = (torch.randn(SOFTMAX_ROWS, generator=generator, dtype=torch.float64) * 4).to(
            torch_types[dtype])
        out = module.functions[f"softmax_{dtype}"](rows.to(x.device))[0]
        torch.cuda.synchronize()
        measured = errors(torch, out.cpu(), torch.softmax(rows.double(), -1), None,
                          torch_types[dtype])
        _, scaled, sub, mismatched, _ = measured
        record(f"softmax_{dtype}", "softmax", HALF_BOUND, measured,
               scaled <= HALF_BOUND and sub <= HALF_TYPES[dtype] and mismatched == 0)
    rows = torch.cat([kind() for kind in lse_rows(torch, generator)]).float()
    out = module.functions["logsumexp_rows"](rows.to(x.device))[0].cpu().double()
    torch.cuda.synchronize()
    ref = torch.logsumexp(rows.double(), 1)
    special = ~torch.isfinite(ref)
    mismatched = int(((torch.isnan(ref) & ~torch.isnan(out))
                      | (torch.isinf(ref) & (out != ref))).sum())
    units = ((out - ref).abs() / (2.0 ** -23 * ref.abs().clamp(min=1.0)))[~special]
    units = torch.where(torch.isfinite(units), units, torch.full_like(units, float("inf")))
    worst = float(units.max())
    results.append(dict(op="logsumexp_rows", max_units_of_2e_23_max_result_1=worst,
                        bound=LSE_BOUND, special_mismatches=mismatched,
                        rows=int((~special).sum()), ok=worst <= LSE_BOUND and mismatched == 0))
    print(f"{'ok  ' if results[-1]['ok'] else 'FAIL'} {'logsumexp_rows':15} max {worst:8.2f} "
          f"x 2^-23 max(|f|, 1) (bound {LSE_BOUND})  special mismatches {mismatched}"
          f"  ({results[-1]['rows']} finite rows of {LSE_WIDTH})")
    failed = sum(not r["ok"] for r in results)
    with open(os.path.join(os.environ.get("OUT", "."), "math_accuracy.json"), "w") as f:
        json.dump(dict(device=torch.cuda.get_device_name(), results=results), f, indent=1)
    print(f"{len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
