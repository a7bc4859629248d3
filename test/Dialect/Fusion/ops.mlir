// Every op in pretty form; it must print back the same and survive a trip
// through the generic form.
// RUN: fusion-opt %s | fusion-opt | FileCheck %s
// RUN: fusion-opt %s --mlir-print-op-generic | fusion-opt | FileCheck %s

// CHECK-LABEL: func @binary
func.func @binary(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %c: tensor<?x1xf32>) -> tensor<?x8xf32> {
  // CHECK: fusion.add %{{.*}}, %{{.*}} : tensor<4x8xf32>
  %0 = fusion.add %a, %a : tensor<4x8xf32>
  // CHECK: fusion.sub %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = fusion.sub %0, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.mul
  %2 = fusion.mul %1, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.div
  %3 = fusion.div %2, %a : tensor<4x8xf32>
  // CHECK: fusion.max
  %4 = fusion.max %3, %a : tensor<4x8xf32>
  // CHECK: fusion.min
  %5 = fusion.min %4, %a : tensor<4x8xf32>
  // CHECK: fusion.pow
  %6 = fusion.pow %5, %a : tensor<4x8xf32>
  // A dynamic dim against a static one takes the static size; against 1 it stays dynamic.
  // CHECK: fusion.add %{{.*}}, %{{.*}} : (tensor<?x1xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %7 = fusion.add %c, %b : (tensor<?x1xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %7 : tensor<?x8xf32>
}

// CHECK-LABEL: func @unary
func.func @unary(%x: tensor<?x16xbf16>) -> tensor<?x16xbf16> {
  // CHECK: fusion.neg %{{.*}} : tensor<?x16xbf16>
  %0 = fusion.neg %x : tensor<?x16xbf16>
  // CHECK: fusion.abs
  %1 = fusion.abs %0 : tensor<?x16xbf16>
  // CHECK: fusion.exp
  %2 = fusion.exp %1 : tensor<?x16xbf16>
  // CHECK: fusion.log
  %3 = fusion.log %2 : tensor<?x16xbf16>
  // CHECK: fusion.tanh
  %4 = fusion.tanh %3 : tensor<?x16xbf16>
  // CHECK: fusion.sigmoid
  %5 = fusion.sigmoid %4 : tensor<?x16xbf16>
  // CHECK: fusion.relu
  %6 = fusion.relu %5 : tensor<?x16xbf16>
  // CHECK: fusion.silu
  %7 = fusion.silu %6 : tensor<?x16xbf16>
  // CHECK: fusion.sqrt
  %8 = fusion.sqrt %7 : tensor<?x16xbf16>
  // CHECK: fusion.rsqrt
  %9 = fusion.rsqrt %8 : tensor<?x16xbf16>
  // CHECK: fusion.reciprocal
  %10 = fusion.reciprocal %9 : tensor<?x16xbf16>
  // CHECK: fusion.square
  %11 = fusion.square %10 : tensor<?x16xbf16>
  // CHECK: fusion.erf
  %12 = fusion.erf %11 : tensor<?x16xbf16>
  // CHECK: fusion.gelu %{{.*}} : tensor<?x16xbf16>
  %13 = fusion.gelu %12 : tensor<?x16xbf16>
  // CHECK: fusion.gelu %{{.*}} approximation = tanh : tensor<?x16xbf16>
  %14 = fusion.gelu %13 approximation = tanh : tensor<?x16xbf16>
  return %14 : tensor<?x16xbf16>
}

// CHECK-LABEL: func @masks
func.func @masks(%x: tensor<4x8xf16>, %y: tensor<f16>) -> tensor<4x8xf16> {
  // CHECK: fusion.cmp eq,
  %0 = fusion.cmp eq, %x, %y : (tensor<4x8xf16>, tensor<f16>) -> tensor<4x8xi1>
  // CHECK: fusion.cmp ne,
  %1 = fusion.cmp ne, %x, %y : (tensor<4x8xf16>, tensor<f16>) -> tensor<4x8xi1>
  // CHECK: fusion.cmp lt,
  %2 = fusion.cmp lt, %x, %y : (tensor<4x8xf16>, tensor<f16>) -> tensor<4x8xi1>
  // CHECK: fusion.cmp le,
  %3 = fusion.cmp le, %x, %y : (tensor<4x8xf16>, tensor<f16>) -> tensor<4x8xi1>
  // CHECK: fusion.cmp gt,
  %4 = fusion.cmp gt, %x, %y : (tensor<4x8xf16>, tensor<f16>) -> tensor<4x8xi1>
  // CHECK: fusion.cmp ge, %{{.*}}, %{{.*}} : (tensor<4x8xf16>, tensor<f16>) -> tensor<4x8xi1>
  %5 = fusion.cmp ge, %x, %y : (tensor<4x8xf16>, tensor<f16>) -> tensor<4x8xi1>
  // CHECK: fusion.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x8xi1>, tensor<4x8xf16>, tensor<f16>) -> tensor<4x8xf16>
  %6 = fusion.select %5, %x, %y : (tensor<4x8xi1>, tensor<4x8xf16>, tensor<f16>) -> tensor<4x8xf16>
  return %6 : tensor<4x8xf16>
}

// CHECK-LABEL: func @positions
func.func @positions() -> tensor<128x128xi1> {
  // CHECK: fusion.iota dimension = 0 : tensor<128x1xf32>
  %0 = fusion.iota dimension = 0 : tensor<128x1xf32>
  // CHECK: fusion.iota dimension = 1 : tensor<1x128xbf16>
  %1 = fusion.iota dimension = 1 : tensor<1x128xbf16>
  %2 = fusion.convert %1 : tensor<1x128xbf16> to tensor<1x128xf32>
  %3 = fusion.cmp le, %2, %0 : (tensor<1x128xf32>, tensor<128x1xf32>) -> tensor<128x128xi1>
  return %3 : tensor<128x128xi1>
}

// CHECK-LABEL: func @positions_sized_by
func.func @positions_sized_by(%q: tensor<2x?x64xbf16>, %k: tensor<2x?x64xbf16>) -> tensor<?x?xi1> {
  // CHECK: fusion.iota dimension = 0 size_of %{{.+}}[1] : tensor<2x?x64xbf16> -> tensor<?x1xf32>
  %0 = fusion.iota dimension = 0 size_of %q[1] : tensor<2x?x64xbf16> -> tensor<?x1xf32>
  // CHECK: fusion.iota dimension = 1 size_of %{{.+}}[1] : tensor<2x?x64xbf16> -> tensor<1x?xf32>
  %1 = fusion.iota dimension = 1 size_of %k[1] : tensor<2x?x64xbf16> -> tensor<1x?xf32>
  %2 = fusion.cmp le, %1, %0 : (tensor<1x?xf32>, tensor<?x1xf32>) -> tensor<?x?xi1>
  return %2 : tensor<?x?xi1>
}

// CHECK-LABEL: func @convert_and_constant
func.func @convert_and_constant(%x: tensor<?x4096xbf16>) -> tensor<?x4096xf32> {
  // CHECK: fusion.constant dense<9.99999997E-7> : tensor<f32>
  %eps = fusion.constant dense<1.0e-06> : tensor<f32>
  // CHECK: fusion.constant dense<[true, false]> : tensor<2xi1>
  %mask = fusion.constant dense<[true, false]> : tensor<2xi1>
  // CHECK: fusion.convert %{{.*}} : tensor<?x4096xbf16> to tensor<?x4096xf32>
  %0 = fusion.convert %x : tensor<?x4096xbf16> to tensor<?x4096xf32>
  %1 = fusion.add %0, %eps : (tensor<?x4096xf32>, tensor<f32>) -> tensor<?x4096xf32>
  return %1 : tensor<?x4096xf32>
}

// CHECK-LABEL: func @reductions
func.func @reductions(%x: tensor<?x4096xf32>, %y: tensor<8x4x2xf16>) -> (tensor<?x1xf32>, tensor<?xf32>, tensor<4xf16>, tensor<f16>) {
  // CHECK: fusion.reduce_sum %{{.*}} axes = [1] keep_dims : tensor<?x4096xf32> -> tensor<?x1xf32>
  %0 = fusion.reduce_sum %x axes = [1] keep_dims : tensor<?x4096xf32> -> tensor<?x1xf32>
  // CHECK: fusion.reduce_max %{{.*}} axes = [1] : tensor<?x4096xf32> -> tensor<?xf32>
  %1 = fusion.reduce_max %x axes = [1] : tensor<?x4096xf32> -> tensor<?xf32>
  // CHECK: fusion.reduce_min %{{.*}} axes = [0, 2] : tensor<8x4x2xf16> -> tensor<4xf16>
  %2 = fusion.reduce_min %y axes = [0, 2] : tensor<8x4x2xf16> -> tensor<4xf16>
  // CHECK: fusion.reduce_mean %{{.*}} axes = [0] : tensor<4xf16> -> tensor<f16>
  %3 = fusion.reduce_mean %2 axes = [0] : tensor<4xf16> -> tensor<f16>
  return %0, %1, %2, %3 : tensor<?x1xf32>, tensor<?xf32>, tensor<4xf16>, tensor<f16>
}

// CHECK-LABEL: func @composites
func.func @composites(%x: tensor<?x4096xbf16>, %w: tensor<4096xbf16>, %b: tensor<4096xbf16>) -> (tensor<?x4096xbf16>, tensor<?xbf16>) {
  // CHECK: fusion.rms_norm %{{.*}}, %{{.*}} epsilon = 9.99999997E-7 : tensor<?x4096xbf16>, tensor<4096xbf16>
  %0 = fusion.rms_norm %x, %w epsilon = 1.0e-06 : tensor<?x4096xbf16>, tensor<4096xbf16>
  // CHECK: fusion.layer_norm %{{.*}}, %{{.*}}, %{{.*}} epsilon = 9.99999974E-6 : tensor<?x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>
  %1 = fusion.layer_norm %0, %w, %b epsilon = 1.0e-05 : tensor<?x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>
  // CHECK: fusion.softmax %{{.*}} axis = 1 : tensor<?x4096xbf16>
  %2 = fusion.softmax %1 axis = 1 : tensor<?x4096xbf16>
  // CHECK: fusion.logsumexp %{{.*}} axis = 1 : tensor<?x4096xbf16> -> tensor<?xbf16>
  %3 = fusion.logsumexp %2 axis = 1 : tensor<?x4096xbf16> -> tensor<?xbf16>
  return %2, %3 : tensor<?x4096xbf16>, tensor<?xbf16>
}

// CHECK-LABEL: func @data_movement
func.func @data_movement(%x: tensor<?x16xbf16>, %y: tensor<4x8xf32>) -> (tensor<?x8xbf16>, tensor<2x4xf32>, tensor<8x4xf32>) {
  // CHECK: fusion.slice %{{.*}} offsets = [0, 8] sizes = [-1, 8] strides = [1, 1] : tensor<?x16xbf16> -> tensor<?x8xbf16>
  %0 = fusion.slice %x offsets = [0, 8] sizes = [-1, 8] strides = [1, 1] : tensor<?x16xbf16> -> tensor<?x8xbf16>
  // CHECK: fusion.slice %{{.*}} offsets = [1, 0] sizes = [2, 4] strides = [2, 2] : tensor<4x8xf32> -> tensor<2x4xf32>
  %1 = fusion.slice %y offsets = [1, 0] sizes = [2, 4] strides = [2, 2] : tensor<4x8xf32> -> tensor<2x4xf32>
  // CHECK: fusion.transpose %{{.*}} permutation = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %2 = fusion.transpose %y permutation = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  // CHECK: fusion.reshape %{{.*}} : tensor<4x8xf32> -> tensor<2x2x8xf32>
  %3 = fusion.reshape %y : tensor<4x8xf32> -> tensor<2x2x8xf32>
  // CHECK: fusion.reshape %{{.*}} : tensor<?x16xbf16> -> tensor<?x2x8xbf16>
  %4 = fusion.reshape %x : tensor<?x16xbf16> -> tensor<?x2x8xbf16>
  return %0, %1, %2 : tensor<?x8xbf16>, tensor<2x4xf32>, tensor<8x4xf32>
}

// CHECK-LABEL: func @concat
func.func @concat(%a: tensor<?x8xbf16>, %b: tensor<?x24xbf16>, %c: tensor<2x8xf32>) -> (tensor<?x32xbf16>, tensor<4x8xf32>) {
  // CHECK: fusion.concat %{{.*}}, %{{.*}} axis = 1 : (tensor<?x8xbf16>, tensor<?x24xbf16>) -> tensor<?x32xbf16>
  %0 = fusion.concat %a, %b axis = 1 : (tensor<?x8xbf16>, tensor<?x24xbf16>) -> tensor<?x32xbf16>
  // CHECK: fusion.concat %{{.*}}, %{{.*}} axis = 0 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
  %1 = fusion.concat %c, %c axis = 0 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<?x32xbf16>, tensor<4x8xf32>
}

// CHECK-LABEL: func @matmul
func.func @matmul(%a: tensor<?x64x128xbf16>, %b: tensor<128x32xbf16>, %c: tensor<64x128xbf16>) -> (tensor<?x64x32xbf16>, tensor<64x32xbf16>) {
  // CHECK: fusion.matmul %{{.*}}, %{{.*}} : (tensor<?x64x128xbf16>, tensor<128x32xbf16>) -> tensor<?x64x32xbf16>
  %0 = fusion.matmul %a, %b : (tensor<?x64x128xbf16>, tensor<128x32xbf16>) -> tensor<?x64x32xbf16>
  // CHECK: fusion.matmul %{{.*}}, %{{.*}} : (tensor<64x128xbf16>, tensor<128x32xbf16>) -> tensor<64x32xbf16>
  %1 = fusion.matmul %c, %b : (tensor<64x128xbf16>, tensor<128x32xbf16>) -> tensor<64x32xbf16>
  return %0, %1 : tensor<?x64x32xbf16>, tensor<64x32xbf16>
}

// CHECK-LABEL: func @kernel
func.func @kernel(%x: tensor<?xf32>, %w: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  // CHECK: %{{.+}}:2 = fusion.kernel elementwise "kernel_k0" (%{{.+}}, %{{.+}}) : (tensor<?xf32>, tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  // CHECK: ^bb0(%{{.+}}: tensor<?xf32>, %{{.+}}: tensor<?xf32>):
  // CHECK: fusion.yield %{{.+}}, %{{.+}} : tensor<?xf32>, tensor<?xf32>
  %0:2 = fusion.kernel elementwise "kernel_k0" (%x, %w) : (tensor<?xf32>, tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  ^bb0(%a: tensor<?xf32>, %b: tensor<?xf32>):
    %two = fusion.constant dense<2.0> : tensor<f32>
    %1 = fusion.mul %a, %two : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
    %2 = fusion.mul %1, %b : tensor<?xf32>
    fusion.yield %2, %1 : tensor<?xf32>, tensor<?xf32>
  }
  return %0#0, %0#1 : tensor<?xf32>, tensor<?xf32>
}

// CHECK-LABEL: func @wide_kernel
func.func @wide_kernel(%x: tensor<8x131072xf32>) -> tensor<8xf32> {
  // CHECK: fusion.kernel wide_row (%{{.+}}) {plan = #fusion.plan<cluster_rows, threads = 512, vector = 4, row = registers, cluster = 8, passes = [1]>} : (tensor<8x131072xf32>) -> tensor<8xf32>
  %0 = fusion.kernel wide_row (%x) {plan = #fusion.plan<cluster_rows, threads = 512, vector = 4, row = registers, cluster = 8, passes = [1]>} : (tensor<8x131072xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8x131072xf32>):
    %s = fusion.reduce_sum %a axes = [1] : tensor<8x131072xf32> -> tensor<8xf32>
    fusion.yield %s : tensor<8xf32>
  }
  return %0 : tensor<8xf32>
}
