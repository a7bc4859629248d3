"""Matmul kernels on the GPU: every library epilogue, ragged and dynamic
sizes, broadcast batches, gated pairs (two products sharing A, combined by
their epilogue), the transformer MLP block, and what falls outside
the library's menu (erf gelu, any other consumer), which runs as a separate
fused kernel reading the product once.

`module()` gives the MLIR text with the MLP block example (compile it with
the defaults: matmul-epilogue=library, matmul-backend=auto), `MODULE` the
cases alone, `tf32_module()` a case to compile with --matmul-tf32;
`reference(name, *arrays, ops=...)` the float64 results (numpy or torch); `DYNAMIC` the
dynamic sizes to check each function at. The GPU checks run them
(matmul_checks.py), the CPU suite runs `MODULE` through the CPU target
(test/Integration/CPU/matmul-epilogues.py).
"""

import math
import os

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))

MODULE = """
// For the generated tensor-core kernel (matmul_wgmma, compiled with
// matmul-backend=generated matmul-epilogue=any; the library's calls
// otherwise): ragged M, K (264 = 4 steps of 64 and a partial one) and N (392:
// three 128-wide tiles and a partial one), an erf gelu and a residual on the
// accumulator, two outputs; f16 over a long K (16 steps: the four stages go
// round four times).
func.func @wgmma_ragged_bf16(%a: tensor<?x264xbf16>, %b: tensor<264x392xbf16>, %bias: tensor<392xbf16>, %r: tensor<?x392xbf16>) -> (tensor<?x392xbf16>, tensor<?x392xbf16>) {
  %0 = fusion.matmul %a, %b : (tensor<?x264xbf16>, tensor<264x392xbf16>) -> tensor<?x392xbf16>
  %1 = fusion.add %0, %bias : (tensor<?x392xbf16>, tensor<392xbf16>) -> tensor<?x392xbf16>
  %2 = fusion.gelu %1 : tensor<?x392xbf16>
  %3 = fusion.add %2, %r : tensor<?x392xbf16>
  return %3, %1 : tensor<?x392xbf16>, tensor<?x392xbf16>
}
func.func @wgmma_long_k_f16(%a: tensor<?x1024xf16>, %b: tensor<1024x256xf16>) -> tensor<?x256xf16> {
  %half = fusion.constant dense<0.5> : tensor<f16>
  %0 = fusion.matmul %a, %b : (tensor<?x1024xf16>, tensor<1024x256xf16>) -> tensor<?x256xf16>
  %1 = fusion.mul %0, %half : (tensor<?x256xf16>, tensor<f16>) -> tensor<?x256xf16>
  %2 = fusion.relu %1 : tensor<?x256xf16>
  return %2 : tensor<?x256xf16>
}
// At most 256 rows (decode) the generated kernel splits K over blocks, the
// last block of a tile summing their partial products before the
// epilogue: K = 1096 is 18 steps of 64 (the last one partial) in 4 ranges
// of 4 or 5 steps; at a static 16 rows K = 2048 is 8 ranges of 4 steps.
func.func @splitk_gelu_residual_bf16(%a: tensor<?x1096xbf16>, %b: tensor<1096x392xbf16>, %bias: tensor<392xbf16>, %r: tensor<?x392xbf16>) -> tensor<?x392xbf16> {
  %0 = fusion.matmul %a, %b : (tensor<?x1096xbf16>, tensor<1096x392xbf16>) -> tensor<?x392xbf16>
  %1 = fusion.add %0, %bias : (tensor<?x392xbf16>, tensor<392xbf16>) -> tensor<?x392xbf16>
  %2 = fusion.gelu %1 : tensor<?x392xbf16>
  %3 = fusion.add %2, %r : tensor<?x392xbf16>
  return %3 : tensor<?x392xbf16>
}
func.func @splitk_static_f16(%a: tensor<16x2048xf16>, %b: tensor<2048x256xf16>, %bias: tensor<256xf16>) -> tensor<16x256xf16> {
  %0 = fusion.matmul %a, %b : (tensor<16x2048xf16>, tensor<2048x256xf16>) -> tensor<16x256xf16>
  %1 = fusion.add %0, %bias : (tensor<16x256xf16>, tensor<256xf16>) -> tensor<16x256xf16>
  %2 = fusion.relu %1 : tensor<16x256xf16>
  return %2 : tensor<16x256xf16>
}
// Gated pairs, silu(x @ Wg) * (x @ Wu), one kernel with matmul-epilogue=any
// (the tiles hold both products): as two products of one x (200 columns a
// product: three 64-wide tiles and a partial one; K = 136 ragged), as the
// halves of one product (x @ [Wg Wu], sliced), and in f32 (matmul_tiles).
func.func @gated_pair_bf16(%x: tensor<?x136xbf16>, %wg: tensor<136x200xbf16>, %wu: tensor<136x200xbf16>) -> tensor<?x200xbf16> {
  %g = fusion.matmul %x, %wg : (tensor<?x136xbf16>, tensor<136x200xbf16>) -> tensor<?x200xbf16>
  %u = fusion.matmul %x, %wu : (tensor<?x136xbf16>, tensor<136x200xbf16>) -> tensor<?x200xbf16>
  %s = fusion.silu %g : tensor<?x200xbf16>
  %0 = fusion.mul %s, %u : tensor<?x200xbf16>
  return %0 : tensor<?x200xbf16>
}
func.func @gated_pair_decode_bf16(%x: tensor<?x520xbf16>, %wg: tensor<520x200xbf16>, %wu: tensor<520x200xbf16>) -> tensor<?x200xbf16> {
  %g = fusion.matmul %x, %wg : (tensor<?x520xbf16>, tensor<520x200xbf16>) -> tensor<?x200xbf16>
  %u = fusion.matmul %x, %wu : (tensor<?x520xbf16>, tensor<520x200xbf16>) -> tensor<?x200xbf16>
  %s = fusion.silu %g : tensor<?x200xbf16>
  %0 = fusion.mul %s, %u : tensor<?x200xbf16>
  return %0 : tensor<?x200xbf16>
}
func.func @gated_halves_f16(%x: tensor<?x264xf16>, %w: tensor<264x400xf16>) -> tensor<?x200xf16> {
  %p = fusion.matmul %x, %w : (tensor<?x264xf16>, tensor<264x400xf16>) -> tensor<?x400xf16>
  %g = fusion.slice %p offsets = [0, 0] sizes = [-1, 200] strides = [1, 1] : tensor<?x400xf16> -> tensor<?x200xf16>
  %u = fusion.slice %p offsets = [0, 200] sizes = [-1, 200] strides = [1, 1] : tensor<?x400xf16> -> tensor<?x200xf16>
  %s = fusion.silu %g : tensor<?x200xf16>
  %0 = fusion.mul %s, %u : tensor<?x200xf16>
  return %0 : tensor<?x200xf16>
}
// Prologues (matmul-epilogue=any): elementwise math on an operand, which
// the generated kernels apply as they load its tiles and never write.
// Autocast's converts of f32 activations and weights (both operands: no
// TMA at all; K = 264 ragged, N = 392 a partial tile); scales along K of
// both operands (a vector per column of A, per row of B) over K = 1096 (a
// split K at few rows); a scale per row of the shared x of a gated pair.
func.func @prologue_autocast_bf16(%x: tensor<?x264xf32>, %w: tensor<264x392xf32>, %bias: tensor<392xbf16>) -> tensor<?x392xbf16> {
  %xb = fusion.convert %x : tensor<?x264xf32> to tensor<?x264xbf16>
  %wb = fusion.convert %w : tensor<264x392xf32> to tensor<264x392xbf16>
  %0 = fusion.matmul %xb, %wb : (tensor<?x264xbf16>, tensor<264x392xbf16>) -> tensor<?x392xbf16>
  %1 = fusion.add %0, %bias : (tensor<?x392xbf16>, tensor<392xbf16>) -> tensor<?x392xbf16>
  return %1 : tensor<?x392xbf16>
}
func.func @prologue_scale_k_f16(%x: tensor<?x1096xf16>, %s: tensor<1096xf16>, %w: tensor<1096x256xf16>, %g: tensor<1096x1xf16>) -> tensor<?x256xf16> {
  %xs = fusion.mul %x, %s : (tensor<?x1096xf16>, tensor<1096xf16>) -> tensor<?x1096xf16>
  %wg = fusion.mul %w, %g : (tensor<1096x256xf16>, tensor<1096x1xf16>) -> tensor<1096x256xf16>
  %0 = fusion.matmul %xs, %wg : (tensor<?x1096xf16>, tensor<1096x256xf16>) -> tensor<?x256xf16>
  return %0 : tensor<?x256xf16>
}
func.func @prologue_gated_pair_bf16(%x: tensor<?x136xbf16>, %r: tensor<?x1xbf16>, %wg: tensor<136x200xbf16>, %wu: tensor<136x200xbf16>) -> tensor<?x200xbf16> {
  %xs = fusion.mul %x, %r : (tensor<?x136xbf16>, tensor<?x1xbf16>) -> tensor<?x136xbf16>
  %g = fusion.matmul %xs, %wg : (tensor<?x136xbf16>, tensor<136x200xbf16>) -> tensor<?x200xbf16>
  %u = fusion.matmul %xs, %wu : (tensor<?x136xbf16>, tensor<136x200xbf16>) -> tensor<?x200xbf16>
  %sg = fusion.silu %g : tensor<?x200xbf16>
  %0 = fusion.mul %sg, %u : tensor<?x200xbf16>
  return %0 : tensor<?x200xbf16>
}
func.func @gated_pair_f32(%x: tensor<40x24xf32>, %wg: tensor<24x33xf32>, %wu: tensor<24x33xf32>) -> tensor<40x33xf32> {
  %g = fusion.matmul %x, %wg : (tensor<40x24xf32>, tensor<24x33xf32>) -> tensor<40x33xf32>
  %u = fusion.matmul %x, %wu : (tensor<40x24xf32>, tensor<24x33xf32>) -> tensor<40x33xf32>
  %s = fusion.silu %g : tensor<40x33xf32>
  %0 = fusion.mul %s, %u : tensor<40x33xf32>
  return %0 : tensor<40x33xf32>
}
func.func @plain_f32(%a: tensor<77x45xf32>, %b: tensor<45x33xf32>) -> tensor<77x33xf32> {
  %0 = fusion.matmul %a, %b : (tensor<77x45xf32>, tensor<45x33xf32>) -> tensor<77x33xf32>
  return %0 : tensor<77x33xf32>
}
func.func @bias_relu_bf16(%a: tensor<?x200xbf16>, %b: tensor<200x129xbf16>, %bias: tensor<129xbf16>) -> tensor<?x129xbf16> {
  %0 = fusion.matmul %a, %b : (tensor<?x200xbf16>, tensor<200x129xbf16>) -> tensor<?x129xbf16>
  %1 = fusion.add %0, %bias : (tensor<?x129xbf16>, tensor<129xbf16>) -> tensor<?x129xbf16>
  %2 = fusion.relu %1 : tensor<?x129xbf16>
  return %2 : tensor<?x129xbf16>
}
func.func @bias_gelu_tanh_f16(%a: tensor<?x96xf16>, %b: tensor<96x40xf16>, %bias: tensor<1x40xf16>) -> tensor<?x40xf16> {
  %0 = fusion.matmul %a, %b : (tensor<?x96xf16>, tensor<96x40xf16>) -> tensor<?x40xf16>
  %1 = fusion.add %bias, %0 : (tensor<1x40xf16>, tensor<?x40xf16>) -> tensor<?x40xf16>
  %2 = fusion.gelu %1 approximation = tanh : tensor<?x40xf16>
  return %2 : tensor<?x40xf16>
}
func.func @bias_gelu_tanh_f32(%a: tensor<300x64xf32>, %b: tensor<64x257xf32>, %bias: tensor<257xf32>) -> tensor<300x257xf32> {
  %0 = fusion.matmul %a, %b : (tensor<300x64xf32>, tensor<64x257xf32>) -> tensor<300x257xf32>
  %1 = fusion.add %0, %bias : (tensor<300x257xf32>, tensor<257xf32>) -> tensor<300x257xf32>
  %2 = fusion.gelu %1 approximation = tanh : tensor<300x257xf32>
  return %2 : tensor<300x257xf32>
}
func.func @gelu_f32(%a: tensor<65x31xf32>, %b: tensor<31x17xf32>) -> tensor<65x17xf32> {
  %0 = fusion.matmul %a, %b : (tensor<65x31xf32>, tensor<31x17xf32>) -> tensor<65x17xf32>
  %1 = fusion.gelu %0 approximation = tanh : tensor<65x17xf32>
  return %1 : tensor<65x17xf32>
}
func.func @relu_bf16(%a: tensor<1x300xbf16>, %b: tensor<300x1000xbf16>) -> tensor<1x1000xbf16> {
  %0 = fusion.matmul %a, %b : (tensor<1x300xbf16>, tensor<300x1000xbf16>) -> tensor<1x1000xbf16>
  %1 = fusion.relu %0 : tensor<1x1000xbf16>
  return %1 : tensor<1x1000xbf16>
}
func.func @scale_residual_bf16(%a: tensor<?x128xbf16>, %b: tensor<128x72xbf16>, %r: tensor<?x72xbf16>) -> tensor<?x72xbf16> {
  %half = fusion.constant dense<0.5> : tensor<bf16>
  %0 = fusion.matmul %a, %b : (tensor<?x128xbf16>, tensor<128x72xbf16>) -> tensor<?x72xbf16>
  %1 = fusion.mul %0, %half : (tensor<?x72xbf16>, tensor<bf16>) -> tensor<?x72xbf16>
  %2 = fusion.add %r, %1 : tensor<?x72xbf16>
  return %2 : tensor<?x72xbf16>
}
func.func @residual_bias_gelu_bf16(%a: tensor<?x64xbf16>, %b: tensor<64x48xbf16>, %r: tensor<?x48xbf16>, %bias: tensor<48xbf16>) -> tensor<?x48xbf16> {
  %0 = fusion.matmul %a, %b : (tensor<?x64xbf16>, tensor<64x48xbf16>) -> tensor<?x48xbf16>
  %1 = fusion.add %0, %r : tensor<?x48xbf16>
  %2 = fusion.add %1, %bias : (tensor<?x48xbf16>, tensor<48xbf16>) -> tensor<?x48xbf16>
  %3 = fusion.gelu %2 approximation = tanh : tensor<?x48xbf16>
  return %3 : tensor<?x48xbf16>
}
func.func @bias_gelu_erf_bf16(%a: tensor<?x128xbf16>, %b: tensor<128x96xbf16>, %bias: tensor<96xbf16>) -> tensor<?x96xbf16> {
  %0 = fusion.matmul %a, %b : (tensor<?x128xbf16>, tensor<128x96xbf16>) -> tensor<?x96xbf16>
  %1 = fusion.add %0, %bias : (tensor<?x96xbf16>, tensor<96xbf16>) -> tensor<?x96xbf16>
  %2 = fusion.gelu %1 : tensor<?x96xbf16>
  return %2 : tensor<?x96xbf16>
}
func.func @batch_bcast_a_f32(%a: tensor<3x20x24xf32>, %b: tensor<24x11xf32>) -> tensor<3x20x11xf32> {
  %0 = fusion.matmul %a, %b : (tensor<3x20x24xf32>, tensor<24x11xf32>) -> tensor<3x20x11xf32>
  return %0 : tensor<3x20x11xf32>
}
func.func @batch_bcast_b_bf16(%a: tensor<19x32xbf16>, %b: tensor<4x32x40xbf16>, %bias: tensor<40xbf16>) -> tensor<4x19x40xbf16> {
  %0 = fusion.matmul %a, %b : (tensor<19x32xbf16>, tensor<4x32x40xbf16>) -> tensor<4x19x40xbf16>
  %1 = fusion.add %0, %bias : (tensor<4x19x40xbf16>, tensor<40xbf16>) -> tensor<4x19x40xbf16>
  return %1 : tensor<4x19x40xbf16>
}
func.func @batch_nested_f32(%a: tensor<1x3x9x16xf32>, %b: tensor<2x1x16x5xf32>, %r: tensor<2x3x9x5xf32>) -> tensor<2x3x9x5xf32> {
  %0 = fusion.matmul %a, %b : (tensor<1x3x9x16xf32>, tensor<2x1x16x5xf32>) -> tensor<2x3x9x5xf32>
  %1 = fusion.add %0, %r : tensor<2x3x9x5xf32>
  return %1 : tensor<2x3x9x5xf32>
}
func.func @batch_dynamic_bf16(%a: tensor<?x7x50xbf16>, %b: tensor<?x50x30xbf16>) -> tensor<?x7x30xbf16> {
  %0 = fusion.matmul %a, %b : (tensor<?x7x50xbf16>, tensor<?x50x30xbf16>) -> tensor<?x7x30xbf16>
  return %0 : tensor<?x7x30xbf16>
}
func.func @dynamic_k_relu_f32(%a: tensor<6x?xf32>, %b: tensor<?x10xf32>) -> tensor<6x10xf32> {
  %0 = fusion.matmul %a, %b : (tensor<6x?xf32>, tensor<?x10xf32>) -> tensor<6x10xf32>
  %1 = fusion.relu %0 : tensor<6x10xf32>
  return %1 : tensor<6x10xf32>
}
func.func @two_outputs_bf16(%a: tensor<?x64xbf16>, %b: tensor<64x32xbf16>, %bias: tensor<32xbf16>) -> (tensor<?x32xbf16>, tensor<?x32xbf16>) {
  %0 = fusion.matmul %a, %b : (tensor<?x64xbf16>, tensor<64x32xbf16>) -> tensor<?x32xbf16>
  %1 = fusion.add %0, %bias : (tensor<?x32xbf16>, tensor<32xbf16>) -> tensor<?x32xbf16>
  %2 = fusion.sigmoid %1 : tensor<?x32xbf16>
  %3 = fusion.tanh %1 : tensor<?x32xbf16>
  return %2, %3 : tensor<?x32xbf16>, tensor<?x32xbf16>
}
func.func @linear_wt_bias_bf16(%x: tensor<?x96xbf16>, %w: tensor<40x96xbf16>, %bias: tensor<40xbf16>) -> tensor<?x40xbf16> {
  %wt = fusion.transpose %w permutation = [1, 0] : tensor<40x96xbf16> -> tensor<96x40xbf16>
  %0 = fusion.matmul %x, %wt : (tensor<?x96xbf16>, tensor<96x40xbf16>) -> tensor<?x40xbf16>
  %1 = fusion.add %0, %bias : (tensor<?x40xbf16>, tensor<40xbf16>) -> tensor<?x40xbf16>
  return %1 : tensor<?x40xbf16>
}
func.func @transposed_a_f32(%a: tensor<45x77xf32>, %b: tensor<45x33xf32>) -> tensor<77x33xf32> {
  %at = fusion.transpose %a permutation = [1, 0] : tensor<45x77xf32> -> tensor<77x45xf32>
  %0 = fusion.matmul %at, %b : (tensor<77x45xf32>, tensor<45x33xf32>) -> tensor<77x33xf32>
  return %0 : tensor<77x33xf32>
}
func.func @scores_f32(%q: tensor<3x?x16xf32>, %k: tensor<3x?x16xf32>) -> tensor<3x?x?xf32> {
  %kt = fusion.transpose %k permutation = [0, 2, 1] : tensor<3x?x16xf32> -> tensor<3x16x?xf32>
  %0 = fusion.matmul %q, %kt : (tensor<3x?x16xf32>, tensor<3x16x?xf32>) -> tensor<3x?x?xf32>
  return %0 : tensor<3x?x?xf32>
}
func.func @both_transposed_bf16(%a: tensor<64x20xbf16>, %b: tensor<30x64xbf16>) -> tensor<20x30xbf16> {
  %at = fusion.transpose %a permutation = [1, 0] : tensor<64x20xbf16> -> tensor<20x64xbf16>
  %bt = fusion.transpose %b permutation = [1, 0] : tensor<30x64xbf16> -> tensor<64x30xbf16>
  %0 = fusion.matmul %at, %bt : (tensor<20x64xbf16>, tensor<64x30xbf16>) -> tensor<20x30xbf16>
  return %0 : tensor<20x30xbf16>
}
"""

TF32_MODULE = """
func.func @plain_tf32(%a: tensor<256x512xf32>, %b: tensor<512x192xf32>) -> tensor<256x192xf32> {
  %0 = fusion.matmul %a, %b : (tensor<256x512xf32>, tensor<512x192xf32>) -> tensor<256x192xf32>
  return %0 : tensor<256x192xf32>
}
"""

# Dynamic sizes each function is checked with (1 is the decode case).
DYNAMIC = {"bias_relu_bf16": [1, 130], "bias_gelu_tanh_f16": [1, 77],
           "scale_residual_bf16": [5, 1000], "residual_bias_gelu_bf16": [3, 257],
           "bias_gelu_erf_bf16": [1, 64], "batch_dynamic_bf16": [1, 6],
           "two_outputs_bf16": [1, 33], "mlp_block": [1, 16, 133],
           "dynamic_k_relu_f32": [0, 1, 37], "linear_wt_bias_bf16": [1, 70],
           "scores_f32": [1, 50], "wgmma_ragged_bf16": [0, 1, 130, 300],
           "wgmma_long_k_f16": [7, 256], "gated_pair_bf16": [1, 130, 300],
           "gated_halves_f16": [0, 5, 257],
           "splitk_gelu_residual_bf16": [1, 13, 64, 65],
           "gated_pair_decode_bf16": [1, 16, 64, 100],
           "prologue_autocast_bf16": [0, 1, 130, 300],
           "prologue_scale_k_f16": [1, 13, 300],
           "prologue_gated_pair_bf16": [1, 130, 300]}


# The strategy each case's matmul kernel runs when compiled with
# matmul-epilogue=any matmul-backend=generated (the `.generated` bundle);
# test/Integration/PTX/matmul-strategies.py checks it. matmul_tiles: f32,
# batches, or K or N not a multiple of 8 (TMA's 16-byte rows).
_WGMMA = ["wgmma_ragged_bf16", "wgmma_long_k_f16", "splitk_gelu_residual_bf16",
          "splitk_static_f16", "gated_pair_bf16", "gated_pair_decode_bf16",
          "gated_halves_f16", "prologue_autocast_bf16", "prologue_scale_k_f16",
          "prologue_gated_pair_bf16", "bias_gelu_tanh_f16", "scale_residual_bf16",
          "residual_bias_gelu_bf16", "bias_gelu_erf_bf16", "two_outputs_bf16",
          "linear_wt_bias_bf16"]
_TILES = ["gated_pair_f32", "plain_f32", "bias_relu_bf16", "bias_gelu_tanh_f32",
          "gelu_f32", "relu_bf16", "batch_bcast_a_f32", "batch_bcast_b_bf16",
          "batch_nested_f32", "batch_dynamic_bf16", "dynamic_k_relu_f32",
          "transposed_a_f32", "scores_f32", "both_transposed_bf16"]
STRATEGIES = {**{n: "matmul_wgmma" for n in _WGMMA}, **{n: "matmul_tiles" for n in _TILES}}


def right_operands(name):
    """The inputs that are right-hand matmul operands ([K, N]): the checks
    scale them by sqrt(3 / K)."""
    return {"mlp_block": (3, 4), "gated_pair_bf16": (1, 2),
            "gated_pair_f32": (1, 2),
            "gated_pair_decode_bf16": (1, 2),
            "prologue_scale_k_f16": (2,),
            "prologue_gated_pair_bf16": (2, 3)}.get(name, (1,))


def module():
    """The cases and the MLP block example (from the source tree)."""
    example = os.path.join(here, "..", "..", "examples", "transformer_mlp_block.mlir")
    with open(example) as f:
        return MODULE + f.read()


def tf32_module():
    return TF32_MODULE


class NumpyOps:
    """The array operations the references use, for numpy (the CPU suite)."""
    f64 = staticmethod(lambda t: np.asarray(t, dtype=np.float64))
    tanh, exp, sqrt = np.tanh, np.exp, np.sqrt
    erf = staticmethod(np.vectorize(math.erf, otypes=[np.float64]))
    relu = staticmethod(lambda v: np.maximum(v, 0))
    mean_last = staticmethod(lambda v: v.mean(-1, keepdims=True))

    @staticmethod
    def round_bf16(v):
        import ml_dtypes
        return np.asarray(v).astype(ml_dtypes.bfloat16).astype(np.float64)

    @staticmethod
    def round_f16(v):
        return np.asarray(v).astype(np.float16).astype(np.float64)


class TorchOps:
    """The same for torch tensors (the GPU checks, float64 on the GPU)."""
    def __init__(self):
        import torch
        self.f64 = lambda t: t.double()
        self.tanh, self.exp, self.sqrt, self.erf = torch.tanh, torch.exp, torch.sqrt, torch.erf
        self.relu = torch.relu
        self.mean_last = lambda v: v.mean(-1, keepdim=True)
        self.round_bf16 = lambda v: v.to(torch.bfloat16).double()
        self.round_f16 = lambda v: v.half().double()


def reference(name, *xs, ops=NumpyOps):
    """The float64 results of function `name` on inputs `xs` (numpy arrays
    with NumpyOps, torch tensors with TorchOps())."""
    x = [ops.f64(t) for t in xs]
    gelu_tanh = lambda v: 0.5 * v * (1 + ops.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))
    gelu_erf = lambda v: 0.5 * v * (1 + ops.erf(v / math.sqrt(2)))
    if name == "mlp_block":
        inp, residual, w_norm, w_up, w_down = x
        s = inp + residual
        up = s / ops.sqrt(ops.mean_last(s * s) + 1e-6) * w_norm @ w_up
        gate, value = up[:, :11008], up[:, 11008:]
        return [s, (gate / (1 + ops.exp(-gate)) * value) @ w_down]
    silu = lambda v: v / (1 + ops.exp(-v))
    # Prologues: each operand is a value of the element type (rounded).
    if name == "prologue_autocast_bf16":
        return [ops.round_bf16(x[0]) @ ops.round_bf16(x[1]) + x[2]]
    if name == "prologue_scale_k_f16":
        return [ops.round_f16(x[0] * x[1]) @ ops.round_f16(x[2] * x[3])]
    if name == "prologue_gated_pair_bf16":
        xs = ops.round_bf16(x[0] * x[1])
        return [ops.round_bf16(silu(ops.round_bf16(xs @ x[2]))) * ops.round_bf16(xs @ x[3])]
    if name.startswith("gated_pair"):
        # Each product is a value of the element type (rounded), as is silu's.
        rnd = (lambda v: v) if name.endswith("f32") else ops.round_bf16
        return [rnd(silu(rnd(x[0] @ x[1]))) * rnd(x[0] @ x[2])]
    if name == "gated_halves_f16":
        product = x[0] @ x[1]
        return [silu(product[:, :200]) * product[:, 200:]]
    # Operands the function transposes (its last two dimensions) first.
    transposed = {"linear_wt_bias_bf16": (False, True), "transposed_a_f32": (True, False),
                  "scores_f32": (False, True), "both_transposed_bf16": (True, True)}
    a, b = x[0], x[1]
    if name in transposed:
        a = a.swapaxes(-1, -2) if transposed[name][0] else a
        b = b.swapaxes(-1, -2) if transposed[name][1] else b
    product = a @ b
    return {
        "linear_wt_bias_bf16": lambda: [product + x[2]],
        "transposed_a_f32": lambda: [product],
        "scores_f32": lambda: [product],
        "both_transposed_bf16": lambda: [product],
        "plain_f32": lambda: [product],
        "plain_tf32": lambda: [product],
        "batch_bcast_a_f32": lambda: [product],
        "batch_dynamic_bf16": lambda: [product],
        "bias_relu_bf16": lambda: [ops.relu(product + x[2])],
        "bias_gelu_tanh_f16": lambda: [gelu_tanh(product + x[2])],
        "bias_gelu_tanh_f32": lambda: [gelu_tanh(product + x[2])],
        "gelu_f32": lambda: [gelu_tanh(product)],
        "relu_bf16": lambda: [ops.relu(product)],
        "dynamic_k_relu_f32": lambda: [ops.relu(product)],
        "scale_residual_bf16": lambda: [0.5 * product + x[2]],
        "residual_bias_gelu_bf16": lambda: [gelu_tanh(product + x[2] + x[3])],
        "bias_gelu_erf_bf16": lambda: [gelu_erf(product + x[2])],
        "batch_bcast_b_bf16": lambda: [product + x[2]],
        "batch_nested_f32": lambda: [product + x[2]],
        # The biased product is a bf16 value (the dialect rounds each op to
        # its type), which the ops after it read rounded, so the reference
        # rounds it too. (two_outputs_bf16 took exp of it until its one-row
        # check failed 1e-2 in about 1% of random draws: exp amplifies the
        # product's own rounding, which the library path does not do, by
        # |x|; sigmoid's slope is at most 1/4.) wgmma_ragged_bf16's second
        # output is the biased product, which the first reads rounded.
        "wgmma_ragged_bf16": lambda: [gelu_erf(ops.round_bf16(product + x[2])) + x[3],
                                      product + x[2]],
        "wgmma_long_k_f16": lambda: [ops.relu(0.5 * product)],
        "splitk_gelu_residual_bf16": lambda: [gelu_erf(ops.round_bf16(product + x[2])) + x[3]],
        "splitk_static_f16": lambda: [ops.relu(product + x[2])],
        "two_outputs_bf16": lambda: [1 / (1 + ops.exp(-ops.round_bf16(product + x[2]))),
                                     ops.tanh(ops.round_bf16(product + x[2]))],
    }[name]()
