// RUN: fusion-opt %s --split-input-file --fusion-fuse-producer-consumer --fusion-fuse-reductions | FileCheck %s
// RUN: fusion-opt %s --split-input-file --fusion-fuse-producer-consumer --fusion-fuse-reductions=emit-remarks --verify-diagnostics -o /dev/null

// A hand-written softmax: max then sum over the same rows, the normalize
// step broadcasting back over the row; one row_reduction kernel.
// CHECK-LABEL: func @softmax
// CHECK-SAME: (%[[X:.+]]: tensor<64x1024xf32>)
// CHECK: %[[K:.+]] = fusion.kernel row_reduction "softmax_k0" (%[[X]]) : (tensor<64x1024xf32>) -> tensor<64x1024xf32>
// CHECK: fusion.reduce_max
// CHECK: fusion.exp
// CHECK: fusion.reduce_sum
// CHECK: fusion.div
// CHECK-NOT: fusion.kernel
// CHECK: return %[[K]]
func.func @softmax(%x: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %m = fusion.reduce_max %x axes = [1] keep_dims : tensor<64x1024xf32> -> tensor<64x1xf32>
  %d = fusion.sub %x, %m : (tensor<64x1024xf32>, tensor<64x1xf32>) -> tensor<64x1024xf32>
  %e = fusion.exp %d : tensor<64x1024xf32>
  %s = fusion.reduce_sum %e axes = [1] keep_dims : tensor<64x1024xf32> -> tensor<64x1xf32>
  %y = fusion.div %e, %s : (tensor<64x1024xf32>, tensor<64x1xf32>) -> tensor<64x1024xf32>
  return %y : tensor<64x1024xf32>
}

// -----

// Dependent reductions (mean, then the variance around it) with dynamic rows.
// CHECK-LABEL: func @layer_norm_dynamic_rows
// CHECK: fusion.kernel row_reduction "layer_norm_dynamic_rows_k0" (%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<?x256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<?x256xf32>
// CHECK-COUNT-2: fusion.reduce_mean
// CHECK-NOT: fusion.kernel
func.func @layer_norm_dynamic_rows(%x: tensor<?x256xf32>, %g: tensor<256xf32>, %b: tensor<256xf32>) -> tensor<?x256xf32> {
  %eps = fusion.constant dense<1.0e-05> : tensor<f32>
  %mean = fusion.reduce_mean %x axes = [1] keep_dims : tensor<?x256xf32> -> tensor<?x1xf32>
  %d = fusion.sub %x, %mean : (tensor<?x256xf32>, tensor<?x1xf32>) -> tensor<?x256xf32>
  %sq = fusion.square %d : tensor<?x256xf32>
  %var = fusion.reduce_mean %sq axes = [1] keep_dims : tensor<?x256xf32> -> tensor<?x1xf32>
  %v = fusion.add %var, %eps : (tensor<?x1xf32>, tensor<f32>) -> tensor<?x1xf32>
  %r = fusion.rsqrt %v : tensor<?x1xf32>
  %n = fusion.mul %d, %r : (tensor<?x256xf32>, tensor<?x1xf32>) -> tensor<?x256xf32>
  %s = fusion.mul %n, %g : (tensor<?x256xf32>, tensor<256xf32>) -> tensor<?x256xf32>
  %y = fusion.add %s, %b : (tensor<?x256xf32>, tensor<256xf32>) -> tensor<?x256xf32>
  return %y : tensor<?x256xf32>
}

// -----

// A per-row result ([R], reduced without keep_dims) is a kernel output too.
// CHECK-LABEL: func @row_sums_and_normalized
// CHECK: %[[K:.+]]:2 = fusion.kernel row_reduction "row_sums_and_normalized_k0" (%{{.+}}) : (tensor<8x512xf32>) -> (tensor<8x512xf32>, tensor<8xf32>)
// CHECK-NOT: fusion.kernel
func.func @row_sums_and_normalized(%x: tensor<8x512xf32>) -> (tensor<8xf32>, tensor<8x512xf32>) {
  %s = fusion.reduce_sum %x axes = [1] : tensor<8x512xf32> -> tensor<8xf32>
  %sk = fusion.reduce_sum %x axes = [1] keep_dims : tensor<8x512xf32> -> tensor<8x1xf32>
  %y = fusion.div %x, %sk : (tensor<8x512xf32>, tensor<8x1xf32>) -> tensor<8x512xf32>
  return %s, %y : tensor<8xf32>, tensor<8x512xf32>
}

// -----

// A row longer than max-row-elements becomes one wide_row kernel (how it
// runs is its plan: plan-kernels.mlir).
// CHECK-LABEL: func @wide_row
// CHECK: fusion.kernel wide_row "wide_row_k0" (%{{.+}}) :
// CHECK-NOT: fusion.kernel
func.func @wide_row(%x: tensor<8x131072xf32>) -> tensor<8x131072xf32> {
  %m = fusion.reduce_max %x axes = [1] keep_dims : tensor<8x131072xf32> -> tensor<8x1xf32>
  %d = fusion.sub %x, %m : (tensor<8x131072xf32>, tensor<8x1xf32>) -> tensor<8x131072xf32>
  %e = fusion.exp %d : tensor<8x131072xf32>
  %s = fusion.reduce_sum %e axes = [1] keep_dims : tensor<8x131072xf32> -> tensor<8x1xf32>
  %y = fusion.div %e, %s : (tensor<8x131072xf32>, tensor<8x1xf32>) -> tensor<8x131072xf32>
  return %y : tensor<8x131072xf32>
}

// -----

// Reductions over different rows do not share a kernel.
// CHECK-LABEL: func @different_rows
// CHECK: fusion.kernel row_reduction "different_rows_k0"
// CHECK: fusion.kernel row_reduction "different_rows_k1"
func.func @different_rows(%x: tensor<8x64x32xf32>) -> tensor<8xf32> {
  // expected-remark @+1 {{[shape] reductions over different rows [8x64x32] and [8x64]}}
  %a = fusion.reduce_sum %x axes = [2] : tensor<8x64x32xf32> -> tensor<8x64xf32>
  %b = fusion.reduce_max %a axes = [1] : tensor<8x64xf32> -> tensor<8xf32>
  return %b : tensor<8xf32>
}

// -----

// A reduction over an outer axis takes its elementwise producers and gets
// its own kind.
// CHECK-LABEL: func @column_sum
// CHECK: fusion.kernel column_reduction "column_sum_k0"
// CHECK: fusion.exp
// CHECK: fusion.reduce_sum
// CHECK-NOT: fusion.kernel
func.func @column_sum(%x: tensor<64x128xf32>) -> tensor<128xf32> {
  %e = fusion.exp %x : tensor<64x128xf32>
  %0 = fusion.reduce_sum %e axes = [0] : tensor<64x128xf32> -> tensor<128xf32>
  return %0 : tensor<128xf32>
}

// -----

// The column sum's result is not a row of the consumer: [shape].
// CHECK-LABEL: func @column_then_rows
// CHECK: fusion.kernel column_reduction
// CHECK: fusion.kernel row_reduction
func.func @column_then_rows(%x: tensor<64x128xf32>, %y: tensor<32x128xf32>) -> tensor<32xf32> {
  // expected-remark @+1 {{[kind] a column_reduction kernel does not join a row reduction}}
  %c = fusion.reduce_sum %x axes = [0] : tensor<64x128xf32> -> tensor<128xf32>
  %p = fusion.mul %y, %c : (tensor<32x128xf32>, tensor<128xf32>) -> tensor<32x128xf32>
  %r = fusion.reduce_sum %p axes = [1] : tensor<32x128xf32> -> tensor<32xf32>
  return %r : tensor<32xf32>
}

// -----

// A weight-shaped value that is also returned cannot join the row kernel
// that reads it: the row strategies write rows and values per row, not
// [H] (the plan is asked before the merge). The relu stays its own kernel.
// CHECK-LABEL: func @weight_escapes
// CHECK: %[[R:.+]] = fusion.kernel elementwise
// CHECK: fusion.relu
// CHECK: fusion.kernel row_reduction {{.*}}(%{{.+}}, %[[R]])
// CHECK-NOT: fusion.relu
func.func @weight_escapes(%w: tensor<12xf32>, %x: tensor<4x12xf32>) -> (tensor<4x12xf32>, tensor<12xf32>) {
  // expected-remark @+1 {{[plan] the merged row kernel would write [12], neither a row nor a value per row of [4x12]: no row strategy writes it}}
  %r = fusion.relu %w : tensor<12xf32>
  %m = fusion.reduce_mean %x axes = [1] keep_dims : tensor<4x12xf32> -> tensor<4x1xf32>
  %s = fusion.sub %x, %m : (tensor<4x12xf32>, tensor<4x1xf32>) -> tensor<4x12xf32>
  %y = fusion.mul %s, %r : (tensor<4x12xf32>, tensor<12xf32>) -> tensor<4x12xf32>
  return %y, %r : tensor<4x12xf32>, tensor<12xf32>
}
