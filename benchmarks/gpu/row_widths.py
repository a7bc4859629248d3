"""Row kernels at edge widths (issue 13): softmax, layernorm, rmsnorm and
logsumexp over rows of 1, 7, 31, 1023, 4095, 4104, 32001, 131073 and 262144
elements, in bf16 and f32, for the GPU checks; rmsnorm over rows of a 3-D
tensor, and softmax of a product with a value broadcast over the middle
axis. Widths no vector divides are held in shifted vectors where one
block holds the row (each row's whole vectors start at its first vector
boundary, which is at another offset in every row: 9 rows give every
offset; the columns around them are edge elements), else read element by
element; a block's threads rarely divide the row, so the last vectors a
thread holds are masked; 131073 is split over a cluster whose last part is
shorter. These few rows take the planner's rule; the `_many` cases (softmax,
layernorm, rmsnorm and logsumexp over MANY_ROWS rows of the widths from
1023 on) take the plans of the measured table (RowPlans.def), which serves
kernels of at least as many rows as the chip has multiprocessors.

`module()` gives the MLIR text; `reference(name, *tensors)` the float64
outputs.
"""

WIDTHS = (1, 7, 31, 1023, 4095, 4104, 32001, 131073, 262144)
DTYPES = ("bf16", "f32")
# Rows of each case: at least a vector's lanes (8 bf16), so that rows of
# odd widths start at every offset in a vector.
ROWS = 9
# Rows of the `_many` cases: more than the H200's 132 multiprocessors, and
# a multiple of 8 (every offset of a row in a vector, many times).
MANY_ROWS = 264
MANY_KINDS = ("softmax", "layernorm", "rmsnorm", "logsumexp")


def _function(kind, dtype, h, rows=ROWS):
    r, t = rows, f"tensor<{rows}x{h}x{dtype}>"
    w = f"tensor<{h}x{dtype}>"
    name = f"{kind}_{dtype}_{h}" + ("_many" if rows != ROWS else "")
    if kind == "softmax":
        return f"""func.func @{name}(%x: {t}) -> {t} {{
  %0 = fusion.softmax %x axis = 1 : {t}
  return %0 : {t}
}}"""
    if kind == "layernorm":
        return f"""func.func @{name}(%x: {t}, %g: {w}, %b: {w}) -> {t} {{
  %0 = fusion.layer_norm %x, %g, %b epsilon = 1.0e-05 : {t}, {w}, {w}
  return %0 : {t}
}}"""
    if kind == "rmsnorm":
        return f"""func.func @{name}(%x: {t}, %g: {w}) -> {t} {{
  %0 = fusion.rms_norm %x, %g epsilon = 1.0e-06 : {t}, {w}
  return %0 : {t}
}}"""
    if kind == "rmsnorm3d":
        t3 = f"tensor<3x3x{h}x{dtype}>"
        return f"""func.func @{name}(%x: {t3}, %g: {w}) -> {t3} {{
  %0 = fusion.rms_norm %x, %g epsilon = 1.0e-06 : {t3}, {w}
  return %0 : {t3}
}}"""
    if kind == "scaledsoftmax":
        # The scale is broadcast over the middle axis: its rows are not the
        # softmax's, so its vectors are read unaligned.
        t3, s3 = f"tensor<3x3x{h}x{dtype}>", f"tensor<3x1x{h}x{dtype}>"
        return f"""func.func @{name}(%x: {t3}, %s: {s3}) -> {t3} {{
  %p = fusion.mul %x, %s : ({t3}, {s3}) -> {t3}
  %0 = fusion.softmax %p axis = 2 : {t3}
  return %0 : {t3}
}}"""
    if kind == "logsumexp":
        f = f"tensor<{r}x{h}xf32>"
        convert = "" if dtype == "f32" else \
            f"  %x32 = fusion.convert %x : {t} to {f}\n"
        operand = "%x" if dtype == "f32" else "%x32"
        return f"""func.func @{name}(%x: {t}) -> tensor<{r}xf32> {{
{convert}  %0 = fusion.logsumexp {operand} axis = 1 : {f} -> tensor<{r}xf32>
  return %0 : tensor<{r}xf32>
}}"""
    raise KeyError(kind)


KINDS = ("softmax", "layernorm", "rmsnorm", "logsumexp", "rmsnorm3d", "scaledsoftmax")


def module():
    return "\n".join([_function(kind, dtype, h)
                      for kind in KINDS for dtype in DTYPES for h in WIDTHS]
                     + [_function(kind, dtype, h, MANY_ROWS)
                        for kind in MANY_KINDS for dtype in DTYPES for h in WIDTHS
                        if h >= 1023]) + "\n"


def reference(name, *xs):
    """float64 reference outputs of case `name` (torch tensors in)."""
    import torch
    x = [t.double() for t in xs]
    kind = name.split("_")[0]
    if kind == "softmax":
        return (torch.softmax(x[0], -1),)
    if kind == "layernorm":
        return (torch.nn.functional.layer_norm(x[0], x[0].shape[-1:], x[1], x[2], 1e-5),)
    if kind in ("rmsnorm", "rmsnorm3d"):
        return (x[0] * torch.rsqrt(x[0].pow(2).mean(-1, keepdim=True) + 1e-6) * x[1],)
    if kind == "scaledsoftmax":
        return (torch.softmax(x[0] * x[1], -1),)
    if kind == "logsumexp":
        return (torch.logsumexp(x[0], -1),)
    raise KeyError(name)
