// RUN: fusion-opt %s --canonicalize --split-input-file | FileCheck %s

// CHECK-LABEL: func @add_zero
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NOT: fusion.add
// CHECK: return %[[X]], %[[X]]
func.func @add_zero(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = fusion.constant dense<0.0> : tensor<f32>
  %0 = fusion.add %x, %zero : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = fusion.add %zero, %x : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Adding a zero that broadcasts x to a larger shape is not the identity.
// CHECK-LABEL: func @add_zero_broadcasting
// CHECK: fusion.add
func.func @add_zero_broadcasting(%x: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = fusion.constant dense<0.0> : tensor<4x8xf32>
  %0 = fusion.add %x, %zero : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func @mul_one_sub_zero_div_one
// CHECK-SAME: (%[[X:.+]]: tensor<?x8xbf16>)
// CHECK-NOT: fusion.mul
// CHECK-NOT: fusion.sub
// CHECK-NOT: fusion.div
// CHECK: return %[[X]]
func.func @mul_one_sub_zero_div_one(%x: tensor<?x8xbf16>) -> tensor<?x8xbf16> {
  %one = fusion.constant dense<1.0> : tensor<bf16>
  %zero = fusion.constant dense<0.0> : tensor<bf16>
  %0 = fusion.mul %one, %x : (tensor<bf16>, tensor<?x8xbf16>) -> tensor<?x8xbf16>
  %1 = fusion.sub %0, %zero : (tensor<?x8xbf16>, tensor<bf16>) -> tensor<?x8xbf16>
  %2 = fusion.div %1, %one : (tensor<?x8xbf16>, tensor<bf16>) -> tensor<?x8xbf16>
  return %2 : tensor<?x8xbf16>
}

// -----

// Multiplying by two is not the identity.
// CHECK-LABEL: func @mul_two
// CHECK: fusion.mul
func.func @mul_two(%x: tensor<4xf32>) -> tensor<4xf32> {
  %two = fusion.constant dense<2.0> : tensor<f32>
  %0 = fusion.mul %x, %two : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func @neg_neg
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK-NOT: fusion.neg
// CHECK: return %[[X]]
func.func @neg_neg(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = fusion.neg %x : tensor<4xf32>
  %1 = fusion.neg %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func @convert_same_type
// CHECK-SAME: (%[[X:.+]]: tensor<4xf16>)
// CHECK-NOT: fusion.convert
// CHECK: return %[[X]]
func.func @convert_same_type(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = fusion.convert %x : tensor<4xf16> to tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// bf16 -> f32 -> bf16 is exact; f32 -> bf16 -> f32 rounds and must stay.
// CHECK-LABEL: func @convert_round_trips
// CHECK-SAME: (%[[H:.+]]: tensor<4xbf16>, %[[F:.+]]: tensor<4xf32>)
// CHECK: %[[DOWN:.+]] = fusion.convert %[[F]] : tensor<4xf32> to tensor<4xbf16>
// CHECK: %[[UP:.+]] = fusion.convert %[[DOWN]] : tensor<4xbf16> to tensor<4xf32>
// CHECK: return %[[H]], %[[UP]]
func.func @convert_round_trips(%h: tensor<4xbf16>, %f: tensor<4xf32>) -> (tensor<4xbf16>, tensor<4xf32>) {
  %0 = fusion.convert %h : tensor<4xbf16> to tensor<4xf32>
  %1 = fusion.convert %0 : tensor<4xf32> to tensor<4xbf16>
  %2 = fusion.convert %f : tensor<4xf32> to tensor<4xbf16>
  %3 = fusion.convert %2 : tensor<4xbf16> to tensor<4xf32>
  return %1, %3 : tensor<4xbf16>, tensor<4xf32>
}

// -----

// Elementwise ops on splat constants are evaluated; a broadcast splat takes
// the result's shape.
// CHECK-LABEL: func @splat_arithmetic
// CHECK-DAG: %[[A:.+]] = fusion.constant dense<7.000000e+00> : tensor<2x3xf32>
// CHECK-DAG: %[[B:.+]] = fusion.constant dense<5.000000e-01> : tensor<f32>
// CHECK-DAG: %[[C:.+]] = fusion.constant dense<2.000000e+00> : tensor<bf16>
// CHECK-DAG: %[[D:.+]] = fusion.constant dense<true> : tensor<2x3xi1>
// CHECK-NOT: fusion.add
// CHECK-NOT: fusion.rsqrt
// CHECK: return %[[A]], %[[B]], %[[C]], %[[D]]
func.func @splat_arithmetic() -> (tensor<2x3xf32>, tensor<f32>, tensor<bf16>, tensor<2x3xi1>) {
  %three = fusion.constant dense<3.0> : tensor<f32>
  %four = fusion.constant dense<4.0> : tensor<2x3xf32>
  %0 = fusion.add %three, %four : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = fusion.rsqrt %four : tensor<2x3xf32>
  %2 = fusion.reduce_max %1 axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %four_h = fusion.constant dense<4.0> : tensor<bf16>
  %3 = fusion.sqrt %four_h : tensor<bf16>
  %4 = fusion.cmp gt, %four, %three : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xi1>
  %5 = fusion.rsqrt %four_h : tensor<bf16>
  %6 = fusion.convert %5 : tensor<bf16> to tensor<f32>
  return %0, %6, %3, %4 : tensor<2x3xf32>, tensor<f32>, tensor<bf16>, tensor<2x3xi1>
}

// -----

// Splats fold only into static shapes.
// CHECK-LABEL: func @splat_dynamic_result
// CHECK: fusion.add
func.func @splat_dynamic_result(%x: tensor<?xf32>) -> tensor<?xf32> {
  %three = fusion.constant dense<3.0> : tensor<f32>
  %0 = fusion.add %three, %x : (tensor<f32>, tensor<?xf32>) -> tensor<?xf32>
  %1 = fusion.mul %0, %three : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
  return %1 : tensor<?xf32>
}

// -----

// CHECK-LABEL: func @select_splat_condition
// CHECK-SAME: (%[[A:.+]]: tensor<4xf32>, %[[B:.+]]: tensor<4xf32>)
// CHECK-NOT: fusion.select
// CHECK: return %[[B]], %[[A]]
func.func @select_splat_condition(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %false = fusion.constant dense<false> : tensor<i1>
  %0 = fusion.select %false, %a, %b : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = fusion.select %false, %a, %a : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func @identity_data_movement
// CHECK-SAME: (%[[X:.+]]: tensor<?x8xf32>)
// CHECK-NOT: fusion.slice
// CHECK-NOT: fusion.transpose
// CHECK: return %[[X]]
func.func @identity_data_movement(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = fusion.slice %x offsets = [0, 0] sizes = [-1, 8] strides = [1, 1] : tensor<?x8xf32> -> tensor<?x8xf32>
  %1 = fusion.transpose %0 permutation = [0, 1] : tensor<?x8xf32> -> tensor<?x8xf32>
  return %1 : tensor<?x8xf32>
}

// -----

// A concatenation of one operand is that operand.
// CHECK-LABEL: func @concat_of_one
// CHECK-SAME: (%[[X:.+]]: tensor<?x8xf32>)
// CHECK-NOT: fusion.concat
// CHECK: return %[[X]]
func.func @concat_of_one(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = fusion.concat %x axis = 1 : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// CHECK-LABEL: func @real_slice_stays
// CHECK: fusion.slice
// CHECK: fusion.transpose
func.func @real_slice_stays(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  %0 = fusion.slice %x offsets = [0, 4] sizes = [4, 4] strides = [1, 1] : tensor<4x8xf32> -> tensor<4x4xf32>
  %1 = fusion.transpose %0 permutation = [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}

// -----

// A reshape to its own shape is its operand; two reshapes are one; a
// reshaped constant is a constant of the new shape.

// CHECK-LABEL: func @reshapes
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-DAG: %[[C:.+]] = fusion.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-DAG: %[[S:.+]] = fusion.constant dense<5.000000e-01> : tensor<2x16xf32>
// CHECK-DAG: %[[R:.+]] = fusion.reshape %[[X]] : tensor<4x8xf32> -> tensor<32xf32>
// CHECK-NOT: fusion.reshape
// CHECK: return %[[X]], %[[R]], %[[C]], %[[S]]
func.func @reshapes(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<32xf32>, tensor<2x2xf32>, tensor<2x16xf32>) {
  %0 = fusion.reshape %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = fusion.reshape %x : tensor<4x8xf32> -> tensor<2x16xf32>
  %2 = fusion.reshape %1 : tensor<2x16xf32> -> tensor<32xf32>
  %c = fusion.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %3 = fusion.reshape %c : tensor<4xf32> -> tensor<2x2xf32>
  %s = fusion.constant dense<0.5> : tensor<32xf32>
  %4 = fusion.reshape %s : tensor<32xf32> -> tensor<2x16xf32>
  return %0, %2, %3, %4 : tensor<4x8xf32>, tensor<32xf32>, tensor<2x2xf32>, tensor<2x16xf32>
}

// -----

// An iota of a static shape needs no source: it is dropped; a dynamic one
// keeps it.
// CHECK-LABEL: func @iota_sources
// CHECK: fusion.iota dimension = 1 : tensor<1x64xf32>
// CHECK: fusion.iota dimension = 0 size_of %{{.+}}[0] : tensor<?x64xbf16> -> tensor<?x1xf32>
func.func @iota_sources(%x: tensor<?x64xbf16>) -> (tensor<1x64xf32>, tensor<?x1xf32>) {
  %0 = fusion.iota dimension = 1 size_of %x[1] : tensor<?x64xbf16> -> tensor<1x64xf32>
  %1 = fusion.iota dimension = 0 size_of %x[0] : tensor<?x64xbf16> -> tensor<?x1xf32>
  return %0, %1 : tensor<1x64xf32>, tensor<?x1xf32>
}
