// The embedding compiler's input: a pre-norm residual block tail in bf16
// (residual add, RMSNorm, bias, GELU), fused into kernels by Fusion's
// pipeline.
func.func @block_tail(%x: tensor<8x1024xbf16>, %res: tensor<8x1024xbf16>,
                      %w: tensor<1024xbf16>, %b: tensor<1024xbf16>)
    -> (tensor<8x1024xbf16>, tensor<8x1024xbf16>) {
  %s = fusion.add %x, %res : tensor<8x1024xbf16>
  %n = fusion.rms_norm %s, %w epsilon = 1.0e-06 : tensor<8x1024xbf16>, tensor<1024xbf16>
  %y = fusion.add %n, %b : (tensor<8x1024xbf16>, tensor<1024xbf16>) -> tensor<8x1024xbf16>
  %g = fusion.gelu %y approximation = tanh : tensor<8x1024xbf16>
  return %s, %g : tensor<8x1024xbf16>, tensor<8x1024xbf16>
}
