"""Reduction workloads beyond the benchmark's row kernels (issue 13), as
fusion IR, float64 references, and the same programs in PyTorch and JAX for
run_bench.py: column reductions (a bias gradient's sum over the batch, over
batch and sequence, a mean and a max over the rows, few wide columns, an
odd width), and for comparison rows of odd, vocabulary and dynamic widths
and a sum over every element.

`module(scale)` gives the MLIR text ("small" for the checks, "full" for the
benchmark); `reference(name, *tensors)` the float64 outputs; `eager(name)`
the PyTorch function; `xla(name)` the jax.jit one (None without JAX).
"""

SCALES = {
    # rows x columns of the 2-D column sums; the 3-D bias gradient; the
    # narrow column sum; rows of the odd-width and vocabulary rows; the
    # elements of the global sum.
    "small": dict(r=1000, c=4096, b=4, s=300, h=1024, nr=70001, rows=37,
                  n=1000003),
    "full": dict(r=16384, c=4096, b=32, s=2048, h=1024, nr=1 << 20, rows=4096,
                 n=64 << 20),
}

# GPT-2's vocabulary: an odd width, so no vector divides a row.
VOCAB = 50257


def module(scale):
    p = SCALES[scale]
    r, c, b, s, h, nr, rows, n = (p[k] for k in ("r", "c", "b", "s", "h", "nr", "rows", "n"))
    odd = c - 1
    return f"""
func.func @col_sum_bf16(%x: tensor<{r}x{c}xbf16>) -> tensor<{c}xf32> {{
  %xf = fusion.convert %x : tensor<{r}x{c}xbf16> to tensor<{r}x{c}xf32>
  %0 = fusion.reduce_sum %xf axes = [0] : tensor<{r}x{c}xf32> -> tensor<{c}xf32>
  return %0 : tensor<{c}xf32>
}}
func.func @col_sum_3d(%x: tensor<{b}x{s}x{h}xbf16>) -> tensor<{h}xf32> {{
  %xf = fusion.convert %x : tensor<{b}x{s}x{h}xbf16> to tensor<{b}x{s}x{h}xf32>
  %0 = fusion.reduce_sum %xf axes = [0, 1] : tensor<{b}x{s}x{h}xf32> -> tensor<{h}xf32>
  return %0 : tensor<{h}xf32>
}}
func.func @col_mean_f32(%x: tensor<{r}x{c}xf32>) -> tensor<1x{c}xf32> {{
  %0 = fusion.reduce_mean %x axes = [0] keep_dims : tensor<{r}x{c}xf32> -> tensor<1x{c}xf32>
  return %0 : tensor<1x{c}xf32>
}}
func.func @col_max_bf16(%x: tensor<{r}x{c}xbf16>) -> tensor<{c}xbf16> {{
  %0 = fusion.reduce_max %x axes = [0] : tensor<{r}x{c}xbf16> -> tensor<{c}xbf16>
  return %0 : tensor<{c}xbf16>
}}
func.func @col_sum_narrow(%x: tensor<{nr}x64xf32>) -> tensor<64xf32> {{
  %0 = fusion.reduce_sum %x axes = [0] : tensor<{nr}x64xf32> -> tensor<64xf32>
  return %0 : tensor<64xf32>
}}
func.func @col_sum_odd(%x: tensor<{r}x{odd}xbf16>) -> tensor<{odd}xf32> {{
  %xf = fusion.convert %x : tensor<{r}x{odd}xbf16> to tensor<{r}x{odd}xf32>
  %0 = fusion.reduce_sum %xf axes = [0] : tensor<{r}x{odd}xf32> -> tensor<{odd}xf32>
  return %0 : tensor<{odd}xf32>
}}
func.func @col_sum_dynamic(%x: tensor<?x{c}xbf16>) -> tensor<{c}xf32> {{
  %xf = fusion.convert %x : tensor<?x{c}xbf16> to tensor<?x{c}xf32>
  %0 = fusion.reduce_sum %xf axes = [0] : tensor<?x{c}xf32> -> tensor<{c}xf32>
  return %0 : tensor<{c}xf32>
}}
func.func @layernorm_odd(%x: tensor<{r}x{odd}xbf16>, %g: tensor<{odd}xbf16>, %bt: tensor<{odd}xbf16>) -> tensor<{r}x{odd}xbf16> {{
  %0 = fusion.layer_norm %x, %g, %bt epsilon = 1.0e-05 : tensor<{r}x{odd}xbf16>, tensor<{odd}xbf16>, tensor<{odd}xbf16>
  return %0 : tensor<{r}x{odd}xbf16>
}}
func.func @softmax_vocab(%x: tensor<{rows}x{VOCAB}xbf16>) -> tensor<{rows}x{VOCAB}xbf16> {{
  %0 = fusion.softmax %x axis = 1 : tensor<{rows}x{VOCAB}xbf16>
  return %0 : tensor<{rows}x{VOCAB}xbf16>
}}
func.func @softmax_dynamic(%x: tensor<{rows}x?xbf16>) -> tensor<{rows}x?xbf16> {{
  %0 = fusion.softmax %x axis = 1 : tensor<{rows}x?xbf16>
  return %0 : tensor<{rows}x?xbf16>
}}
func.func @logsumexp_dynamic(%x: tensor<{rows}x?xbf16>) -> tensor<{rows}xf32> {{
  %xf = fusion.convert %x : tensor<{rows}x?xbf16> to tensor<{rows}x?xf32>
  %0 = fusion.logsumexp %xf axis = 1 : tensor<{rows}x?xf32> -> tensor<{rows}xf32>
  return %0 : tensor<{rows}xf32>
}}
func.func @sum_all(%x: tensor<{n}xf32>) -> tensor<f32> {{
  %0 = fusion.reduce_sum %x axes = [0] : tensor<{n}xf32> -> tensor<f32>
  return %0 : tensor<f32>
}}
"""


# Row counts the dynamic workload is run at by the checks (the benchmark
# uses the static row count of its scale).
SHAPES = {
    "col_sum_dynamic": [[(0, 4096)], [(1, 4096)], [(777, 4096)], [(20000, 4096)]],
    # Row lengths (the rows are the scale's): multiples of the vector width
    # (8) are read in vectors, the others element by element.
    "softmax_dynamic": [[(None, n)] for n in (1, 7, 8, 31, 1023, 4095, 4096, 70001, 131072)],
    "logsumexp_dynamic": [[(None, n)] for n in (1, 7, 8, 31, 1023, 4095, 4096, 70001, 131072)],
}


def reference(name, *xs):
    """float64 reference outputs of workload `name` (torch tensors in)."""
    import torch
    x = [t.double() for t in xs]
    if name in ("col_sum_bf16", "col_sum_narrow", "col_sum_odd", "col_sum_dynamic"):
        return (x[0].sum(0),)
    if name == "col_sum_3d":
        return (x[0].sum((0, 1)),)
    if name == "col_mean_f32":
        return (x[0].mean(0, keepdim=True),)
    if name == "col_max_bf16":
        return (x[0].amax(0),)
    if name == "layernorm_odd":
        return (torch.nn.functional.layer_norm(x[0], x[0].shape[-1:], x[1], x[2], 1e-5),)
    if name in ("softmax_vocab", "softmax_dynamic"):
        return (torch.softmax(x[0], -1),)
    if name == "logsumexp_dynamic":
        return (torch.logsumexp(x[0], -1),)
    if name == "sum_all":
        return (x[0].sum(),)
    raise KeyError(name)


def eager(name):
    """The workload in PyTorch (run eagerly and through torch.compile)."""
    import torch
    return {
        "col_sum_bf16": lambda x: x.float().sum(0),
        "col_sum_3d": lambda x: x.float().sum((0, 1)),
        "col_mean_f32": lambda x: x.mean(0, keepdim=True),
        "col_max_bf16": lambda x: x.amax(0),
        "col_sum_narrow": lambda x: x.sum(0),
        "col_sum_odd": lambda x: x.float().sum(0),
        "col_sum_dynamic": lambda x: x.float().sum(0),
        "layernorm_odd": lambda x, g, b: torch.nn.functional.layer_norm(x, x.shape[-1:], g, b, 1e-5),
        "softmax_vocab": lambda x: torch.softmax(x.float(), -1).to(x.dtype),
        "softmax_dynamic": lambda x: torch.softmax(x.float(), -1).to(x.dtype),
        "logsumexp_dynamic": lambda x: torch.logsumexp(x.float(), -1),
        "sum_all": lambda x: x.sum(),
    }[name]


def xla(name):
    """The workload in JAX, jitted (None where JAX is missing)."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None

    def layernorm(x, g, b):
        xf = x.astype(jnp.float32)
        m = xf.mean(-1, keepdims=True)
        v = ((xf - m) ** 2).mean(-1, keepdims=True)
        return ((xf - m) * jax.lax.rsqrt(v + 1e-5) * g.astype(jnp.float32)
                + b.astype(jnp.float32)).astype(x.dtype)

    fns = {
        "col_sum_bf16": lambda x: x.astype(jnp.float32).sum(0),
        "col_sum_3d": lambda x: x.astype(jnp.float32).sum((0, 1)),
        "col_mean_f32": lambda x: x.mean(0, keepdims=True),
        "col_max_bf16": lambda x: x.max(0),
        "col_sum_narrow": lambda x: x.sum(0),
        "col_sum_odd": lambda x: x.astype(jnp.float32).sum(0),
        "col_sum_dynamic": lambda x: x.astype(jnp.float32).sum(0),
        "layernorm_odd": layernorm,
        "softmax_vocab": lambda x: jax.nn.softmax(x.astype(jnp.float32), -1).astype(x.dtype),
        "softmax_dynamic": lambda x: jax.nn.softmax(x.astype(jnp.float32), -1).astype(x.dtype),
        "logsumexp_dynamic": lambda x: jax.nn.logsumexp(x.astype(jnp.float32), -1),
        "sum_all": lambda x: x.sum(),
    }
    return jax.jit(fns[name])
