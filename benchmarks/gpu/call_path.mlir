// The call-path checks (call_path.py): a function of three kernels (a row
// kernel, a library matmul, an elementwise kernel) and one of one kernel.
func.func @norm_matmul_silu(%x: tensor<?x1024xbf16>, %g: tensor<1024xbf16>, %w: tensor<1024x512xbf16>) -> tensor<?x512xbf16> {
  %n = fusion.rms_norm %x, %g epsilon = 1.0e-06 : tensor<?x1024xbf16>, tensor<1024xbf16>
  %p = fusion.matmul %n, %w : (tensor<?x1024xbf16>, tensor<1024x512xbf16>) -> tensor<?x512xbf16>
  %y = fusion.silu %p : tensor<?x512xbf16>
  return %y : tensor<?x512xbf16>
}
func.func @add_rmsnorm_decode(%x: tensor<16x4096xbf16>, %r: tensor<16x4096xbf16>, %w: tensor<4096xbf16>) -> (tensor<16x4096xbf16>, tensor<16x4096xbf16>) {
  %s = fusion.add %x, %r : tensor<16x4096xbf16>
  %y = fusion.rms_norm %s, %w epsilon = 1.0e-06 : tensor<16x4096xbf16>, tensor<4096xbf16>
  return %s, %y : tensor<16x4096xbf16>, tensor<16x4096xbf16>
}
