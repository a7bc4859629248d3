// Every workload of the GPU benchmark (at small shapes) fuses into one
// kernel of the expected kind, moving the minimal bytes.
// RUN: fusion-opt %s --fusion-pipeline | FileCheck %s
// RUN: fusion-opt %s --fusion-pipeline --fusion-report=format=json -o /dev/null 2>&1 | FileCheck %s --check-prefix=BYTES
// RUN: fusion-opt %s --fusion-pipeline=emit-remarks --verify-diagnostics -o /dev/null

// CHECK-LABEL: func @ew_chain8
// CHECK-COUNT-1: fusion.kernel elementwise
// CHECK-NOT: fusion.kernel
// BYTES: "bytes": 12288,
// BYTES: "name": "ew_chain8",
func.func @ew_chain8(%x: tensor<1024xf32>, %w: tensor<1024xf32>) -> tensor<1024xf32> {
  %two = fusion.constant dense<2.0> : tensor<f32>
  %one = fusion.constant dense<1.0> : tensor<f32>
  %zero = fusion.constant dense<0.0> : tensor<f32>
  %0 = fusion.mul %x, %two : (tensor<1024xf32>, tensor<f32>) -> tensor<1024xf32>
  %1 = fusion.add %0, %one : (tensor<1024xf32>, tensor<f32>) -> tensor<1024xf32>
  %2 = fusion.max %1, %zero : (tensor<1024xf32>, tensor<f32>) -> tensor<1024xf32>
  %t = fusion.mul %2, %w : tensor<1024xf32>
  %3 = fusion.neg %t : tensor<1024xf32>
  %4 = fusion.exp %3 : tensor<1024xf32>
  %5 = fusion.add %4, %one : (tensor<1024xf32>, tensor<f32>) -> tensor<1024xf32>
  %6 = fusion.div %x, %5 : tensor<1024xf32>
  return %6 : tensor<1024xf32>
}

// bias_gelu over [64, 8192] bf16: 4 bytes per element plus the bias.
// CHECK-LABEL: func @bias_gelu
// CHECK-COUNT-1: fusion.kernel elementwise
// CHECK-NOT: fusion.kernel
// BYTES: "bytes": 2113536,
// BYTES: "name": "bias_gelu",
func.func @bias_gelu(%x: tensor<64x8192xbf16>, %b: tensor<8192xbf16>) -> tensor<64x8192xbf16> {
  %0 = fusion.add %x, %b : (tensor<64x8192xbf16>, tensor<8192xbf16>) -> tensor<64x8192xbf16>
  %1 = fusion.gelu %0 approximation = tanh : tensor<64x8192xbf16>
  return %1 : tensor<64x8192xbf16>
}

// silu_mul: both halves of x's last dim are slices of one input read once;
// 6 bytes per output element.
// CHECK-LABEL: func @silu_mul
// CHECK-COUNT-1: fusion.kernel elementwise
// CHECK-NOT: fusion.kernel
// BYTES: "bytes": 3145728,
// BYTES: "name": "silu_mul",
func.func @silu_mul(%x: tensor<64x16384xbf16>) -> tensor<64x8192xbf16> {
  %g = fusion.slice %x offsets = [0, 0] sizes = [64, 8192] strides = [1, 1] : tensor<64x16384xbf16> -> tensor<64x8192xbf16>
  %u = fusion.slice %x offsets = [0, 8192] sizes = [64, 8192] strides = [1, 1] : tensor<64x16384xbf16> -> tensor<64x8192xbf16>
  %s = fusion.silu %g : tensor<64x8192xbf16>
  %0 = fusion.mul %s, %u : tensor<64x8192xbf16>
  return %0 : tensor<64x8192xbf16>
}

// layernorm over [64, 4096] bf16: 4 bytes per element plus gamma and beta.
// CHECK-LABEL: func @layernorm
// CHECK-COUNT-1: fusion.kernel row_reduction
// CHECK-NOT: fusion.kernel
// BYTES: "bytes": 1064960,
// BYTES: "name": "layernorm",
func.func @layernorm(%x: tensor<64x4096xbf16>, %g: tensor<4096xbf16>, %b: tensor<4096xbf16>) -> tensor<64x4096xbf16> {
  %0 = fusion.layer_norm %x, %g, %b epsilon = 1.0e-05 : tensor<64x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>
  return %0 : tensor<64x4096xbf16>
}

// softmax over [64, 8192] bf16.
// CHECK-LABEL: func @softmax
// CHECK-COUNT-1: fusion.kernel row_reduction
// CHECK-NOT: fusion.kernel
// BYTES: "bytes": 2097152,
// BYTES: "name": "softmax",
func.func @softmax(%x: tensor<64x8192xbf16>) -> tensor<64x8192xbf16> {
  %0 = fusion.softmax %x axis = 1 : tensor<64x8192xbf16>
  return %0 : tensor<64x8192xbf16>
}

// softmax_wide: rows of 131072 make one wide_row kernel (its plan splits
// it over a cluster: plan-kernels.mlir).
// CHECK-LABEL: func @softmax_wide
// CHECK-COUNT-1: fusion.kernel wide_row
// CHECK-NOT: fusion.kernel
// BYTES: "bytes": 2097152,
// BYTES: "launches": 1,
// BYTES: "name": "softmax_wide",
func.func @softmax_wide(%x: tensor<4x131072xbf16>) -> tensor<4x131072xbf16> {
  %0 = fusion.softmax %x axis = 1 : tensor<4x131072xbf16>
  return %0 : tensor<4x131072xbf16>
}

// logsumexp of bf16 rows into f32: 2 bytes per element plus the result.
// CHECK-LABEL: func @logsumexp
// CHECK-COUNT-1: fusion.kernel row_reduction
// CHECK-NOT: fusion.kernel
// BYTES: "bytes": 4194560,
// BYTES: "name": "logsumexp",
func.func @logsumexp(%x: tensor<64x32768xbf16>) -> tensor<64xf32> {
  %xf = fusion.convert %x : tensor<64x32768xbf16> to tensor<64x32768xf32>
  %0 = fusion.logsumexp %xf axis = 1 : tensor<64x32768xf32> -> tensor<64xf32>
  return %0 : tensor<64xf32>
}

// add_rmsnorm_decode with a dynamic row count.
// CHECK-LABEL: func @add_rmsnorm_decode
// CHECK-COUNT-1: fusion.kernel row_reduction
// CHECK-NOT: fusion.kernel
// BYTES: "bytes_formula": "32768*d0 + 8192",
// BYTES: "name": "add_rmsnorm_decode",
func.func @add_rmsnorm_decode(%x: tensor<?x4096xbf16>, %r: tensor<?x4096xbf16>, %w: tensor<4096xbf16>) -> (tensor<?x4096xbf16>, tensor<?x4096xbf16>) {
  %s = fusion.add %x, %r : tensor<?x4096xbf16>
  %y = fusion.rms_norm %s, %w epsilon = 1.0e-06 : tensor<?x4096xbf16>, tensor<4096xbf16>
  return %s, %y : tensor<?x4096xbf16>, tensor<?x4096xbf16>
}
