"""The GPU benchmark workloads (shared/bench/workloads.md) as fusion IR and
as PyTorch references, at any scale.

`module(scale)` gives the MLIR text; `SHAPES` the input shapes per scale;
`reference(name, *tensors)` the float64 result of a workload.
"""

SCALES = {
    # 1-D size; rows and hidden size; bias_gelu/silu_mul width; softmax rows
    # and width; logsumexp rows and width; adamw parameters; wide rows/width.
    "tiny": dict(n=1000, rows=6, h=96, g=96, sm_rows=6, sm=96, lse_rows=6, lse=96,
                 adamw=1000, wide_rows=2, wide=40000),
    "small": dict(n=1 << 16, rows=64, h=4096, g=2048, sm_rows=2048, sm=2048, lse_rows=64,
                  lse=32768, adamw=1 << 16, wide_rows=8, wide=131072),
    "full": dict(n=64 << 20, rows=16384, h=4096, g=8192, sm_rows=8192, sm=8192, lse_rows=8192,
                 lse=32768, adamw=32 << 20, wide_rows=1024, wide=131072),
}


def module(scale):
    s = SCALES[scale]
    n, r, h, g = s["n"], s["rows"], s["h"], s["g"]
    smr, sm = s["sm_rows"], s["sm"]
    lr, lw = s["lse_rows"], s["lse"]
    ar = s["adamw"]
    wr, ww = s["wide_rows"], s["wide"]
    return f"""
func.func @ew_chain4(%x: tensor<{n}xf32>, %w: tensor<{n}xf32>) -> tensor<{n}xf32> {{
  %two = fusion.constant dense<2.0> : tensor<f32>
  %one = fusion.constant dense<1.0> : tensor<f32>
  %zero = fusion.constant dense<0.0> : tensor<f32>
  %0 = fusion.mul %x, %two : (tensor<{n}xf32>, tensor<f32>) -> tensor<{n}xf32>
  %1 = fusion.add %0, %one : (tensor<{n}xf32>, tensor<f32>) -> tensor<{n}xf32>
  %2 = fusion.max %1, %zero : (tensor<{n}xf32>, tensor<f32>) -> tensor<{n}xf32>
  %3 = fusion.mul %2, %w : tensor<{n}xf32>
  return %3 : tensor<{n}xf32>
}}
func.func @ew_chain8(%x: tensor<{n}xf32>, %w: tensor<{n}xf32>) -> tensor<{n}xf32> {{
  %two = fusion.constant dense<2.0> : tensor<f32>
  %one = fusion.constant dense<1.0> : tensor<f32>
  %zero = fusion.constant dense<0.0> : tensor<f32>
  %0 = fusion.mul %x, %two : (tensor<{n}xf32>, tensor<f32>) -> tensor<{n}xf32>
  %1 = fusion.add %0, %one : (tensor<{n}xf32>, tensor<f32>) -> tensor<{n}xf32>
  %2 = fusion.max %1, %zero : (tensor<{n}xf32>, tensor<f32>) -> tensor<{n}xf32>
  %t = fusion.mul %2, %w : tensor<{n}xf32>
  %3 = fusion.neg %t : tensor<{n}xf32>
  %4 = fusion.exp %3 : tensor<{n}xf32>
  %5 = fusion.add %4, %one : (tensor<{n}xf32>, tensor<f32>) -> tensor<{n}xf32>
  %6 = fusion.div %x, %5 : tensor<{n}xf32>
  return %6 : tensor<{n}xf32>
}}
func.func @bias_gelu(%x: tensor<{r}x{g}xbf16>, %b: tensor<{g}xbf16>) -> tensor<{r}x{g}xbf16> {{
  %0 = fusion.add %x, %b : (tensor<{r}x{g}xbf16>, tensor<{g}xbf16>) -> tensor<{r}x{g}xbf16>
  %1 = fusion.gelu %0 approximation = tanh : tensor<{r}x{g}xbf16>
  return %1 : tensor<{r}x{g}xbf16>
}}
func.func @silu_mul(%x: tensor<{r}x{2*g}xbf16>) -> tensor<{r}x{g}xbf16> {{
  %a = fusion.slice %x offsets = [0, 0] sizes = [{r}, {g}] strides = [1, 1] : tensor<{r}x{2*g}xbf16> -> tensor<{r}x{g}xbf16>
  %u = fusion.slice %x offsets = [0, {g}] sizes = [{r}, {g}] strides = [1, 1] : tensor<{r}x{2*g}xbf16> -> tensor<{r}x{g}xbf16>
  %s = fusion.silu %a : tensor<{r}x{g}xbf16>
  %0 = fusion.mul %s, %u : tensor<{r}x{g}xbf16>
  return %0 : tensor<{r}x{g}xbf16>
}}
func.func @add_rmsnorm(%x: tensor<{r}x{h}xbf16>, %res: tensor<{r}x{h}xbf16>, %w: tensor<{h}xbf16>) -> (tensor<{r}x{h}xbf16>, tensor<{r}x{h}xbf16>) {{
  %s = fusion.add %x, %res : tensor<{r}x{h}xbf16>
  %y = fusion.rms_norm %s, %w epsilon = 1.0e-06 : tensor<{r}x{h}xbf16>, tensor<{h}xbf16>
  return %s, %y : tensor<{r}x{h}xbf16>, tensor<{r}x{h}xbf16>
}}
func.func @layernorm(%x: tensor<{r}x{h}xbf16>, %gm: tensor<{h}xbf16>, %bt: tensor<{h}xbf16>) -> tensor<{r}x{h}xbf16> {{
  %0 = fusion.layer_norm %x, %gm, %bt epsilon = 1.0e-05 : tensor<{r}x{h}xbf16>, tensor<{h}xbf16>, tensor<{h}xbf16>
  return %0 : tensor<{r}x{h}xbf16>
}}
func.func @softmax(%x: tensor<{smr}x{sm}xbf16>) -> tensor<{smr}x{sm}xbf16> {{
  %0 = fusion.softmax %x axis = 1 : tensor<{smr}x{sm}xbf16>
  return %0 : tensor<{smr}x{sm}xbf16>
}}
func.func @softmax_wide(%x: tensor<{wr}x{ww}xbf16>) -> tensor<{wr}x{ww}xbf16> {{
  %0 = fusion.softmax %x axis = 1 : tensor<{wr}x{ww}xbf16>
  return %0 : tensor<{wr}x{ww}xbf16>
}}
func.func @logsumexp(%x: tensor<{lr}x{lw}xbf16>) -> tensor<{lr}xf32> {{
  %xf = fusion.convert %x : tensor<{lr}x{lw}xbf16> to tensor<{lr}x{lw}xf32>
  %0 = fusion.logsumexp %xf axis = 1 : tensor<{lr}x{lw}xf32> -> tensor<{lr}xf32>
  return %0 : tensor<{lr}xf32>
}}
func.func @adamw(%p: tensor<{ar}xf32>, %gr: tensor<{ar}xf32>, %m: tensor<{ar}xf32>, %v: tensor<{ar}xf32>) -> (tensor<{ar}xf32>, tensor<{ar}xf32>, tensor<{ar}xf32>) {{
  %b1 = fusion.constant dense<0.9> : tensor<f32>
  %b1c = fusion.constant dense<0.1> : tensor<f32>
  %b2 = fusion.constant dense<0.999> : tensor<f32>
  %b2c = fusion.constant dense<0.001> : tensor<f32>
  %decay = fusion.constant dense<0.99999> : tensor<f32>
  %lr = fusion.constant dense<1.0e-3> : tensor<f32>
  %bc1 = fusion.constant dense<0.1> : tensor<f32>
  %bc2 = fusion.constant dense<0.001> : tensor<f32>
  %eps = fusion.constant dense<1.0e-8> : tensor<f32>
  %0 = fusion.mul %m, %b1 : (tensor<{ar}xf32>, tensor<f32>) -> tensor<{ar}xf32>
  %1 = fusion.mul %gr, %b1c : (tensor<{ar}xf32>, tensor<f32>) -> tensor<{ar}xf32>
  %m1 = fusion.add %0, %1 : tensor<{ar}xf32>
  %2 = fusion.mul %v, %b2 : (tensor<{ar}xf32>, tensor<f32>) -> tensor<{ar}xf32>
  %3 = fusion.square %gr : tensor<{ar}xf32>
  %4 = fusion.mul %3, %b2c : (tensor<{ar}xf32>, tensor<f32>) -> tensor<{ar}xf32>
  %v1 = fusion.add %2, %4 : tensor<{ar}xf32>
  %5 = fusion.mul %p, %decay : (tensor<{ar}xf32>, tensor<f32>) -> tensor<{ar}xf32>
  %6 = fusion.div %m1, %bc1 : (tensor<{ar}xf32>, tensor<f32>) -> tensor<{ar}xf32>
  %7 = fusion.div %v1, %bc2 : (tensor<{ar}xf32>, tensor<f32>) -> tensor<{ar}xf32>
  %8 = fusion.sqrt %7 : tensor<{ar}xf32>
  %9 = fusion.add %8, %eps : (tensor<{ar}xf32>, tensor<f32>) -> tensor<{ar}xf32>
  %10 = fusion.div %6, %9 : tensor<{ar}xf32>
  %11 = fusion.mul %10, %lr : (tensor<{ar}xf32>, tensor<f32>) -> tensor<{ar}xf32>
  %p1 = fusion.sub %5, %11 : tensor<{ar}xf32>
  return %p1, %m1, %v1 : tensor<{ar}xf32>, tensor<{ar}xf32>, tensor<{ar}xf32>
}}
func.func @add_rmsnorm_decode(%x: tensor<?x{h}xbf16>, %res: tensor<?x{h}xbf16>, %w: tensor<{h}xbf16>) -> (tensor<?x{h}xbf16>, tensor<?x{h}xbf16>) {{
  %s = fusion.add %x, %res : tensor<?x{h}xbf16>
  %y = fusion.rms_norm %s, %w epsilon = 1.0e-06 : tensor<?x{h}xbf16>, tensor<{h}xbf16>
  return %s, %y : tensor<?x{h}xbf16>, tensor<?x{h}xbf16>
}}
"""


def reference(name, *xs):
    """float64 reference outputs of workload `name` (torch tensors in)."""
    import torch
    x = [t.double() for t in xs]

    def rms(s, w):
        return s * torch.rsqrt((s * s).mean(-1, keepdim=True) + 1e-6) * w

    if name == "ew_chain4":
        return (torch.clamp(x[0] * 2 + 1, min=0) * x[1],)
    if name == "ew_chain8":
        t = torch.clamp(x[0] * 2 + 1, min=0) * x[1]
        return (x[0] / (torch.exp(-t) + 1),)
    if name == "bias_gelu":
        return (torch.nn.functional.gelu(x[0] + x[1], approximate="tanh"),)
    if name == "silu_mul":
        g, u = x[0].chunk(2, dim=-1)
        return (torch.nn.functional.silu(g) * u,)
    if name in ("add_rmsnorm", "add_rmsnorm_decode"):
        s = x[0] + x[1]
        return (s, rms(s, x[2]))
    if name == "layernorm":
        return (torch.nn.functional.layer_norm(x[0], x[0].shape[-1:], x[1], x[2], 1e-5),)
    if name in ("softmax", "softmax_wide"):
        return (torch.softmax(x[0], -1),)
    if name == "logsumexp":
        return (torch.logsumexp(x[0], -1),)
    if name == "adamw":
        p, g, m, v = x
        m1 = 0.9 * m + 0.1 * g
        v1 = 0.999 * v + 0.001 * g * g
        return (p * 0.99999 - 1e-3 * (m1 / 0.1) / (torch.sqrt(v1 / 0.001) + 1e-8), m1, v1)
    raise KeyError(name)
