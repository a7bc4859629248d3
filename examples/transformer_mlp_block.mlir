// A pre-norm transformer MLP block as a model author writes it: residual add,
// RMSNorm, an up projection, SiLU gating and a down projection. The
// matmuls are fusion boundaries; everything between them is memory-bound.
//
//   fusion-opt examples/transformer_mlp_block.mlir --fusion-pipeline --fusion-report
func.func @mlp_block(%x: tensor<?x4096xbf16>, %residual: tensor<?x4096xbf16>,
                     %norm_weight: tensor<4096xbf16>,
                     %w_up: tensor<4096x22016xbf16>,
                     %w_down: tensor<11008x4096xbf16>)
    -> (tensor<?x4096xbf16>, tensor<?x4096xbf16>) {
  %sum = fusion.add %x, %residual : tensor<?x4096xbf16>
  %normed = fusion.rms_norm %sum, %norm_weight epsilon = 1.0e-06
      : tensor<?x4096xbf16>, tensor<4096xbf16>
  %up = fusion.matmul %normed, %w_up
      : (tensor<?x4096xbf16>, tensor<4096x22016xbf16>) -> tensor<?x22016xbf16>
  %gate = fusion.slice %up offsets = [0, 0] sizes = [-1, 11008] strides = [1, 1]
      : tensor<?x22016xbf16> -> tensor<?x11008xbf16>
  %value = fusion.slice %up offsets = [0, 11008] sizes = [-1, 11008] strides = [1, 1]
      : tensor<?x22016xbf16> -> tensor<?x11008xbf16>
  %activated = fusion.silu %gate : tensor<?x11008xbf16>
  %gated = fusion.mul %activated, %value : tensor<?x11008xbf16>
  %down = fusion.matmul %gated, %w_down
      : (tensor<?x11008xbf16>, tensor<11008x4096xbf16>) -> tensor<?x4096xbf16>
  return %sum, %down : tensor<?x4096xbf16>, tensor<?x4096xbf16>
}
