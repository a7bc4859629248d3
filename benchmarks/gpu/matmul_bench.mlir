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
