"""Row kernels at edge widths (issue 13): softmax, layernorm, rmsnorm and
logsumexp over rows of 1, 7, 31, 1023, 4095, 32001 and 131073 elements, in
bf16 and f32, for the GPU checks. Odd widths are read element by element;
a block's threads rarely divide the row, so the last vectors a thread holds
are masked; 131073 is split over a cluster whose last part is shorter.

`module()` gives the MLIR text; `reference(name, *tensors)` the float64
outputs.
"""

WIDTHS = (1, 7, 31, 1023, 4095, 4104, 32001, 131073, 262144)
DTYPES = ("bf16", "f32")
# Rows of each case: a few, and odd, so that rows start at every alignment.
ROWS = 3


def _function(kind, dtype, h):
    r, t = ROWS, f"tensor<{ROWS}x{h}x{dtype}>"
    w = f"tensor<{h}x{dtype}>"
    name = f"{kind}_{dtype}_{h}"
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


KINDS = ("softmax", "layernorm", "rmsnorm", "logsumexp")


def module():
    return "\n".join(_function(kind, dtype, h)
                     for kind in KINDS for dtype in DTYPES for h in WIDTHS) + "\n"


def reference(name, *xs):
    """float64 reference outputs of case `name` (torch tensors in)."""
    import torch
    x = [t.double() for t in xs]
    kind = name.split("_")[0]
    if kind == "softmax":
        return (torch.softmax(x[0], -1),)
    if kind == "layernorm":
        return (torch.nn.functional.layer_norm(x[0], x[0].shape[-1:], x[1], x[2], 1e-5),)
    if kind == "rmsnorm":
        return (x[0] * torch.rsqrt(x[0].pow(2).mean(-1, keepdim=True) + 1e-6) * x[1],)
    if kind == "logsumexp":
        return (torch.logsumexp(x[0], -1),)
    raise KeyError(name)
