// The matmul-bearing programs of the GPU benchmark (matmul_bench.py), bf16;
// the MLP block is examples/transformer_mlp_block.mlir, appended by
// scripts/build-gpu-bundle.sh.
func.func @matmul_plain(%a: tensor<8192x8192xbf16>, %b: tensor<8192x8192xbf16>) -> tensor<8192x8192xbf16> {
  %0 = fusion.matmul %a, %b : (tensor<8192x8192xbf16>, tensor<8192x8192xbf16>) -> tensor<8192x8192xbf16>
  return %0 : tensor<8192x8192xbf16>
}
func.func @matmul_plain_4096(%a: tensor<4096x4096xbf16>, %b: tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16> {
  %0 = fusion.matmul %a, %b : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  return %0 : tensor<4096x4096xbf16>
}
// erf gelu: the bias joins the library call, gelu is a kernel of its own.
func.func @matmul_bias_gelu(%a: tensor<4096x4096xbf16>, %b: tensor<4096x4096xbf16>, %bias: tensor<4096xbf16>) -> tensor<4096x4096xbf16> {
  %0 = fusion.matmul %a, %b : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  %1 = fusion.add %0, %bias : (tensor<4096x4096xbf16>, tensor<4096xbf16>) -> tensor<4096x4096xbf16>
  %2 = fusion.gelu %1 : tensor<4096x4096xbf16>
  return %2 : tensor<4096x4096xbf16>
}
// tanh gelu: one library call with the GELU_BIAS epilogue.
func.func @matmul_bias_gelu_tanh(%a: tensor<4096x4096xbf16>, %b: tensor<4096x4096xbf16>, %bias: tensor<4096xbf16>) -> tensor<4096x4096xbf16> {
  %0 = fusion.matmul %a, %b : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  %1 = fusion.add %0, %bias : (tensor<4096x4096xbf16>, tensor<4096xbf16>) -> tensor<4096x4096xbf16>
  %2 = fusion.gelu %1 approximation = tanh : tensor<4096x4096xbf16>
  return %2 : tensor<4096x4096xbf16>
}
// The gated MLP up projection (4096 -> 2 x 11008), as two products of one x
// and as the halves of one product: one generated kernel each with
// matmul-epilogue=any (both products in every tile); the library backend
// runs the products, then silu * mul as a kernel of its own.
func.func @gated_pair(%x: tensor<4096x4096xbf16>, %wg: tensor<4096x11008xbf16>, %wu: tensor<4096x11008xbf16>) -> tensor<4096x11008xbf16> {
  %g = fusion.matmul %x, %wg : (tensor<4096x4096xbf16>, tensor<4096x11008xbf16>) -> tensor<4096x11008xbf16>
  %u = fusion.matmul %x, %wu : (tensor<4096x4096xbf16>, tensor<4096x11008xbf16>) -> tensor<4096x11008xbf16>
  %s = fusion.silu %g : tensor<4096x11008xbf16>
  %0 = fusion.mul %s, %u : tensor<4096x11008xbf16>
  return %0 : tensor<4096x11008xbf16>
}
func.func @gated_halves(%x: tensor<4096x4096xbf16>, %w: tensor<4096x22016xbf16>) -> tensor<4096x11008xbf16> {
  %p = fusion.matmul %x, %w : (tensor<4096x4096xbf16>, tensor<4096x22016xbf16>) -> tensor<4096x22016xbf16>
  %g = fusion.slice %p offsets = [0, 0] sizes = [-1, 11008] strides = [1, 1] : tensor<4096x22016xbf16> -> tensor<4096x11008xbf16>
  %u = fusion.slice %p offsets = [0, 11008] sizes = [-1, 11008] strides = [1, 1] : tensor<4096x22016xbf16> -> tensor<4096x11008xbf16>
  %s = fusion.silu %g : tensor<4096x11008xbf16>
  %0 = fusion.mul %s, %u : tensor<4096x11008xbf16>
  return %0 : tensor<4096x11008xbf16>
}
// Prologues (matmul-epilogue=any): autocast's converts of f32 activations
// and weights, and a scale along K of the activations (as SmoothQuant
// folds into them), at 4096 and at 16 rows; the generated kernels apply
// them as they load the tiles, the library backend runs them as kernels of
// their own.
func.func @autocast_linear(%x: tensor<?x4096xf32>, %w: tensor<4096x4096xf32>) -> tensor<?x4096xbf16> {
  %xb = fusion.convert %x : tensor<?x4096xf32> to tensor<?x4096xbf16>
  %wb = fusion.convert %w : tensor<4096x4096xf32> to tensor<4096x4096xbf16>
  %0 = fusion.matmul %xb, %wb : (tensor<?x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<?x4096xbf16>
  return %0 : tensor<?x4096xbf16>
}
func.func @scaled_linear(%x: tensor<?x4096xbf16>, %s: tensor<4096xbf16>, %w: tensor<4096x4096xbf16>) -> tensor<?x4096xbf16> {
  %xs = fusion.mul %x, %s : (tensor<?x4096xbf16>, tensor<4096xbf16>) -> tensor<?x4096xbf16>
  %0 = fusion.matmul %xs, %w : (tensor<?x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<?x4096xbf16>
  return %0 : tensor<?x4096xbf16>
}
