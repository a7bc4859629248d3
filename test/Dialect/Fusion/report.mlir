// The seeds' textbook numbers, through the whole fusion pipeline.
// RUN: fusion-opt %s --fusion-pipeline --fusion-report="format=json output=%t.json" -o /dev/null
// RUN: FileCheck %s --input-file=%t.json
// RUN: fusion-opt %s --fusion-pipeline --fusion-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=TEXT
// RUN: fusion-opt %s --fusion-pipeline --fusion-report=dynamic-size=1000 -o /dev/null 2>&1 | FileCheck %s --check-prefix=DYNAMIC
// RUN: not fusion-opt %s --fusion-report=format=yaml -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not fusion-opt %s --fusion-report=bandwidth=0 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-TARGET

// JSON keys print in sorted order: bytes, flops, kernel_list, kernels,
// launches, name, predicted_us, unfused_bytes, unfused_launches.

// out = max(x*2+1, 0) * w over N = 1024 f32: 9*N*4 bytes op by op, 3*N*4
// fused; 12288 B at 4250 GB/s is 0.003 us.
// CHECK:      "bytes": 12288,
// CHECK-NEXT: "flops": 0,
// CHECK:        "bytes_read": 8192,
// CHECK-NEXT:   "bytes_written": 4096,
// CHECK-NEXT:   "flops": 0,
// CHECK-NEXT:   "kind": "elementwise",
// CHECK-NEXT:   "name": "chain_k0",
// CHECK-NEXT:   "ops": 4,
// CHECK-NEXT:   "plan": null,
// CHECK-NEXT:   "predicted_us": 0.003{{[0-9]*}}
// CHECK:      "kernels": 1,
// CHECK-NEXT: "launches": 1,
// CHECK-NEXT: "name": "chain",
// CHECK-NEXT: "predicted_us": 0.003{{[0-9]*}},
// CHECK-NEXT: "unfused_bytes": 36864,
// CHECK-NEXT: "unfused_launches": 4
func.func @chain(%x: tensor<1024xf32>, %w: tensor<1024xf32>) -> tensor<1024xf32> {
  %two = fusion.constant dense<2.0> : tensor<f32>
  %one = fusion.constant dense<1.0> : tensor<f32>
  %zero = fusion.constant dense<0.0> : tensor<f32>
  %0 = fusion.mul %x, %two : (tensor<1024xf32>, tensor<f32>) -> tensor<1024xf32>
  %1 = fusion.add %0, %one : (tensor<1024xf32>, tensor<f32>) -> tensor<1024xf32>
  %2 = fusion.max %1, %zero : (tensor<1024xf32>, tensor<f32>) -> tensor<1024xf32>
  %3 = fusion.mul %2, %w : tensor<1024xf32>
  return %3 : tensor<1024xf32>
}

// add + rms_norm over [R, H] = [64, 4096] bf16 returning the sum and the
// normalized value: one kernel, 4*R*H*2 + H*2 bytes.
// CHECK:      "bytes": 2105344,
// CHECK:        "kind": "row_reduction",
// CHECK-NEXT:   "name": "add_rmsnorm_k0",
// CHECK:      "kernels": 1,
// CHECK-NEXT: "launches": 1,
// CHECK-NEXT: "name": "add_rmsnorm",
func.func @add_rmsnorm(%x: tensor<64x4096xbf16>, %r: tensor<64x4096xbf16>, %w: tensor<4096xbf16>) -> (tensor<64x4096xbf16>, tensor<64x4096xbf16>) {
  %s = fusion.add %x, %r : tensor<64x4096xbf16>
  %y = fusion.rms_norm %s, %w epsilon = 1.0e-06 : tensor<64x4096xbf16>, tensor<4096xbf16>
  return %s, %y : tensor<64x4096xbf16>, tensor<64x4096xbf16>
}

// A hand-written f32 softmax over [64, 1024]: one kernel, 2*R*H*4 bytes.
// CHECK:      "bytes": 524288,
// CHECK:      "kernels": 1,
// CHECK-NEXT: "launches": 1,
// CHECK-NEXT: "name": "softmax",
func.func @softmax(%x: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %m = fusion.reduce_max %x axes = [1] keep_dims : tensor<64x1024xf32> -> tensor<64x1xf32>
  %d = fusion.sub %x, %m : (tensor<64x1024xf32>, tensor<64x1xf32>) -> tensor<64x1024xf32>
  %e = fusion.exp %d : tensor<64x1024xf32>
  %s = fusion.reduce_sum %e axes = [1] keep_dims : tensor<64x1024xf32> -> tensor<64x1xf32>
  %y = fusion.div %e, %s : (tensor<64x1024xf32>, tensor<64x1xf32>) -> tensor<64x1024xf32>
  return %y : tensor<64x1024xf32>
}

// AdamW over N = 4096 parameters, 4 inputs and 3 outputs: one kernel of 28
// bytes per parameter.
// CHECK:      "bytes": 114688,
// CHECK:      "kernels": 1,
// CHECK-NEXT: "launches": 1,
// CHECK-NEXT: "name": "adamw",
func.func @adamw(%p: tensor<4096xf32>, %g: tensor<4096xf32>, %m: tensor<4096xf32>, %v: tensor<4096xf32>) -> (tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>) {
  %b1 = fusion.constant dense<0.9> : tensor<f32>
  %b1c = fusion.constant dense<0.1> : tensor<f32>
  %b2 = fusion.constant dense<0.999> : tensor<f32>
  %b2c = fusion.constant dense<0.001> : tensor<f32>
  %decay = fusion.constant dense<0.99999> : tensor<f32>
  %lr = fusion.constant dense<1.0e-3> : tensor<f32>
  %bc1 = fusion.constant dense<0.1> : tensor<f32>
  %bc2 = fusion.constant dense<0.001> : tensor<f32>
  %eps = fusion.constant dense<1.0e-8> : tensor<f32>
  %0 = fusion.mul %m, %b1 : (tensor<4096xf32>, tensor<f32>) -> tensor<4096xf32>
  %1 = fusion.mul %g, %b1c : (tensor<4096xf32>, tensor<f32>) -> tensor<4096xf32>
  %m1 = fusion.add %0, %1 : tensor<4096xf32>
  %2 = fusion.mul %v, %b2 : (tensor<4096xf32>, tensor<f32>) -> tensor<4096xf32>
  %3 = fusion.square %g : tensor<4096xf32>
  %4 = fusion.mul %3, %b2c : (tensor<4096xf32>, tensor<f32>) -> tensor<4096xf32>
  %v1 = fusion.add %2, %4 : tensor<4096xf32>
  %5 = fusion.mul %p, %decay : (tensor<4096xf32>, tensor<f32>) -> tensor<4096xf32>
  %6 = fusion.div %m1, %bc1 : (tensor<4096xf32>, tensor<f32>) -> tensor<4096xf32>
  %7 = fusion.div %v1, %bc2 : (tensor<4096xf32>, tensor<f32>) -> tensor<4096xf32>
  %8 = fusion.sqrt %7 : tensor<4096xf32>
  %9 = fusion.add %8, %eps : (tensor<4096xf32>, tensor<f32>) -> tensor<4096xf32>
  %10 = fusion.div %6, %9 : tensor<4096xf32>
  %11 = fusion.mul %10, %lr : (tensor<4096xf32>, tensor<f32>) -> tensor<4096xf32>
  %p1 = fusion.sub %5, %11 : tensor<4096xf32>
  return %p1, %m1, %v1 : tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>
}

// A 4096^3 bf16 matmul with a bias and tanh gelu (one library call): 2*M*N*K
// FLOPs, compute-bound on the target: 2^37 / 700 TFLOP/s = 196.341 us
// (its 100671488 bytes take 23.7 us at 4250 GB/s).
// CHECK:      "bytes": 100671488,
// CHECK-NEXT: "flops": 137438953472,
// CHECK:        "kind": "matmul",
// CHECK-NEXT:   "name": "matmul_bias_gelu_k0",
// CHECK-NEXT:   "ops": 3,
// CHECK-NEXT:   "plan": null,
// CHECK-NEXT:   "predicted_us": 196.341{{[0-9]*}}
// CHECK:      "name": "matmul_bias_gelu",
// CHECK-NEXT: "predicted_us": 196.341{{[0-9]*}},
func.func @matmul_bias_gelu(%a: tensor<4096x4096xbf16>, %b: tensor<4096x4096xbf16>, %bias: tensor<4096xbf16>) -> tensor<4096x4096xbf16> {
  %0 = fusion.matmul %a, %b : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  %1 = fusion.add %0, %bias : (tensor<4096x4096xbf16>, tensor<4096xbf16>) -> tensor<4096x4096xbf16>
  %2 = fusion.gelu %1 approximation = tanh : tensor<4096x4096xbf16>
  return %2 : tensor<4096x4096xbf16>
}

// Dynamic rows: the count is null, with a formula in d0 beside it.
// CHECK:      "bytes": null,
// CHECK-NEXT: "bytes_formula": "16384*d0 + 8192",
// CHECK:        "bytes_read": null,
// CHECK-NEXT:   "bytes_read_formula": "8192*d0 + 8192",
// CHECK-NEXT:   "bytes_written": null,
// CHECK-NEXT:   "bytes_written_formula": "8192*d0",
// CHECK:      "name": "rms_norm_dynamic",
func.func @rms_norm_dynamic(%x: tensor<?x4096xbf16>, %w: tensor<4096xbf16>) -> tensor<?x4096xbf16> {
  %0 = fusion.rms_norm %x, %w epsilon = 1.0e-06 : tensor<?x4096xbf16>, tensor<4096xbf16>
  return %0 : tensor<?x4096xbf16>
}

// TEXT:      function @chain: 1 kernels, 1 launches, 12288 bytes (unfused: 4 launches, 36864 bytes), predicted 0.0 us
// TEXT-NEXT:   kernel kind ops bytes read bytes written FLOPs us
// TEXT-NEXT:   chain_k0 elementwise 4 8192 4096 0 0.0
// TEXT:      function @matmul_bias_gelu: 1 kernels, 1 launches, 100671488 bytes (unfused: 3 launches, 234889216 bytes), 137438953472 FLOPs, predicted 196.3 us
// TEXT:      function @rms_norm_dynamic: 1 kernels, 1 launches, 16384*d0 + 8192 bytes (unfused: 9 launches, 163864*d0 + 40960 bytes), no predicted time (dynamic sizes: set dynamic-size)

// With dynamic-size, d0 = 1000: 16392192 bytes at 4250 GB/s.
// DYNAMIC: function @rms_norm_dynamic: {{.*}} predicted 3.9 us

// BAD: error: fusion-report: format must be text or json, got 'yaml'
// BAD-TARGET: error: fusion-report: bandwidth, matmul-tflops and f32-matmul-tflops must be positive
