// The op contract as other tools write it: generic form, attributes in the
// plain dictionary. Every op must parse, verify and print in pretty form.
// RUN: fusion-opt %s | FileCheck %s
// RUN: fusion-opt %s --mlir-print-op-generic | fusion-opt | FileCheck %s

// CHECK-LABEL: func @contract
func.func @contract(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %h: tensor<4x8xbf16>,
                    %wh: tensor<8xbf16>, %k: tensor<8x3xf32>) {
  // CHECK: fusion.add %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %0 = "fusion.add"(%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.sub
  %1 = "fusion.sub"(%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.mul
  %2 = "fusion.mul"(%x, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.div
  %3 = "fusion.div"(%x, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.max
  %4 = "fusion.max"(%x, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.min
  %5 = "fusion.min"(%x, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.pow
  %6 = "fusion.pow"(%x, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.neg
  %7 = "fusion.neg"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.abs
  %8 = "fusion.abs"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.exp
  %9 = "fusion.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.log
  %10 = "fusion.log"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.tanh
  %11 = "fusion.tanh"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.sigmoid
  %12 = "fusion.sigmoid"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.relu
  %13 = "fusion.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.silu
  %14 = "fusion.silu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.sqrt
  %15 = "fusion.sqrt"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.rsqrt
  %16 = "fusion.rsqrt"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.reciprocal
  %17 = "fusion.reciprocal"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.square
  %18 = "fusion.square"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.gelu %{{.*}} : tensor<4x8xf32>
  %19 = "fusion.gelu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.gelu %{{.*}} approximation = tanh : tensor<4x8xf32>
  %20 = "fusion.gelu"(%x) {approximation = #fusion<gelu_approximation tanh>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.cmp lt, %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  %21 = "fusion.cmp"(%x, %b) {predicate = #fusion<cmp_predicate lt>} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
  // CHECK: fusion.select
  %22 = "fusion.select"(%21, %x, %b) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.convert %{{.*}} : tensor<4x8xbf16> to tensor<4x8xf32>
  %23 = "fusion.convert"(%h) : (tensor<4x8xbf16>) -> tensor<4x8xf32>
  // CHECK: fusion.constant dense<2.000000e+00> : tensor<f32>
  %24 = "fusion.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  // CHECK: fusion.iota dimension = 1 : tensor<4x8xf32>
  %iota = "fusion.iota"() {dimension = 1 : i64} : () -> tensor<4x8xf32>
  // CHECK: fusion.reduce_sum %{{.*}} axes = [1] keep_dims : tensor<4x8xf32> -> tensor<4x1xf32>
  %25 = "fusion.reduce_sum"(%x) {axes = array<i64: 1>, keep_dims} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  // CHECK: fusion.reduce_max %{{.*}} axes = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %26 = "fusion.reduce_max"(%x) {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4xf32>
  // CHECK: fusion.reduce_min %{{.*}} axes = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  %27 = "fusion.reduce_min"(%x) {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  // CHECK: fusion.reduce_mean
  %28 = "fusion.reduce_mean"(%x) {axes = array<i64: 0>} : (tensor<4x8xf32>) -> tensor<8xf32>
  // CHECK: fusion.rms_norm %{{.*}}, %{{.*}} epsilon = 9.99999997E-7 : tensor<4x8xbf16>, tensor<8xbf16>
  %29 = "fusion.rms_norm"(%h, %wh) {epsilon = 1.0e-06 : f32} : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
  // CHECK: fusion.layer_norm
  %30 = "fusion.layer_norm"(%h, %wh, %wh) {epsilon = 1.0e-05 : f32} : (tensor<4x8xbf16>, tensor<8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
  // CHECK: fusion.softmax %{{.*}} axis = 1 : tensor<4x8xf32>
  %31 = "fusion.softmax"(%x) {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.logsumexp %{{.*}} axis = 0 : tensor<4x8xf32> -> tensor<8xf32>
  %32 = "fusion.logsumexp"(%x) {axis = 0 : i64} : (tensor<4x8xf32>) -> tensor<8xf32>
  // CHECK: fusion.slice %{{.*}} offsets = [0, 4] sizes = [4, 4] strides = [1, 1] : tensor<4x8xf32> -> tensor<4x4xf32>
  %33 = "fusion.slice"(%x) {offsets = array<i64: 0, 4>, sizes = array<i64: 4, 4>, strides = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x4xf32>
  // CHECK: fusion.transpose %{{.*}} permutation = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %34 = "fusion.transpose"(%x) {permutation = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  // CHECK: fusion.matmul %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %35 = "fusion.matmul"(%x, %k) : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  // CHECK: fusion.erf
  %36 = "fusion.erf"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: fusion.reshape %{{.*}} : tensor<4x8xf32> -> tensor<32xf32>
  %37 = "fusion.reshape"(%x) : (tensor<4x8xf32>) -> tensor<32xf32>
  return
}
