// RUN: fusion-opt %s --split-input-file --fusion-record-size-checks --verify-diagnostics | FileCheck %s

// Operands of an elementwise op: their dynamic row counts (and the output's)
// must be equal. Arguments are numbered inputs, then results.
// CHECK-LABEL: func @add
// CHECK-SAME: fusion.size_checks = {checks = [array<i64: -1, 0, 0, 1, 0, 2, 0>], inputs = 2 : i64}
func.func @add(%a: tensor<?x8xf32>, %b: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = fusion.add %a, %b : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// A dynamic size against a static 4 must be 4; a static 1 broadcasts.
// CHECK-LABEL: func @against_static
// CHECK-SAME: fusion.size_checks = {checks = [array<i64: 4, 0, 0>], inputs = 3 : i64}
func.func @against_static(%a: tensor<?x8xf32>, %b: tensor<4x8xf32>, %c: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %0 = fusion.add %a, %b : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = fusion.mul %0, %c : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// Independent inputs: each output follows its own input.
// CHECK-LABEL: func @independent
// CHECK-SAME: fusion.size_checks = {checks = [array<i64: -1, 0, 0, 2, 0>, array<i64: -1, 1, 0, 3, 0>], inputs = 2 : i64}
func.func @independent(%a: tensor<?x64xf32>, %b: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  %0 = fusion.exp %a : tensor<?x64xf32>
  %1 = fusion.exp %b : tensor<?x64xf32>
  return %0, %1 : tensor<?x64xf32>, tensor<?x64xf32>
}

// -----

// A norm's weight has x's row length; a matmul's K agrees; a transpose
// moves the dynamic size; a reduction keeps the other dimensions.
// CHECK-LABEL: func @ops
// CHECK-SAME: fusion.size_checks = {checks = [array<i64: -1, 0, 0, 3, 0, 4, 1>, array<i64: -1, 0, 1, 1, 0, 2, 0, 3, 1, 5, 0>], inputs = 3 : i64}
func.func @ops(%x: tensor<?x?xf32>, %w: tensor<?xf32>, %b: tensor<?x16xf32>) -> (tensor<?x?xf32>, tensor<16x?xf32>, tensor<?xf32>) {
  %n = fusion.rms_norm %x, %w epsilon = 1.0e-5 : tensor<?x?xf32>, tensor<?xf32>
  %m = fusion.matmul %n, %b : (tensor<?x?xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %t = fusion.transpose %m permutation = [1, 0] : tensor<?x16xf32> -> tensor<16x?xf32>
  %s = fusion.reduce_sum %x axes = [0] : tensor<?x?xf32> -> tensor<?xf32>
  return %n, %t, %s : tensor<?x?xf32>, tensor<16x?xf32>, tensor<?xf32>
}

// -----

// Static shapes need no check.
// CHECK-LABEL: func @static
// CHECK-NOT: fusion.size_checks
func.func @static(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = fusion.exp %a : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A caller could not allocate a result whose size no input gives.
// expected-error @+1 {{result 0 dimension 0 is dynamic and no input dimension gives its size}}
func.func @unsized(%n: index) -> tensor<?xf32> {
  %0 = tensor.empty(%n) : tensor<?xf32>
  return %0 : tensor<?xf32>
}
