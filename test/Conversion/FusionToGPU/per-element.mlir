// RUN: fusion-opt %s --split-input-file --fusion-kernels-to-gpu | FileCheck %s

// per_element: a thread per output element (grid-stride), the reduction
// over the outer axis as a loop per element.
// CHECK-LABEL: func.func @column_sum
// CHECK: gpu.launch
// CHECK-SAME: threads({{.*}}) in ({{.*}} = %c256
// CHECK: scf.for
// CHECK: scf.for {{.*}} iter_args
// CHECK: memref.load {{.*}} : memref<64x32xf32>
// CHECK: math.exp
// CHECK: memref.store {{.*}} : memref<32xf32>
func.func @column_sum(%x: tensor<64x32xf32>) -> tensor<32xf32> {
  %0 = fusion.kernel column_reduction "column_sum" (%x) {plan = #fusion.plan<per_element, threads = 256, vector = 1, row = none, cluster = 1, passes = [1]>} : (tensor<64x32xf32>) -> tensor<32xf32> {
  ^bb0(%a: tensor<64x32xf32>):
    %e = fusion.exp %a : tensor<64x32xf32>
    %s = fusion.reduce_sum %e axes = [0] : tensor<64x32xf32> -> tensor<32xf32>
    fusion.yield %s : tensor<32xf32>
  }
  return %0 : tensor<32xf32>
}

// -----

// A row kernel planned per_element by hand runs too: the same results, a
// thread per output and the row reduced in a loop.
// CHECK-LABEL: func.func @row_sum_per_element
// CHECK: gpu.launch
// CHECK-NOT: gpu.all_reduce
// CHECK: scf.for {{.*}} iter_args
// CHECK: memref.store {{.*}} : memref<8xf32>
func.func @row_sum_per_element(%x: tensor<8x96xf32>) -> tensor<8xf32> {
  %0 = fusion.kernel row_reduction "row_sum_per_element" (%x) {plan = #fusion.plan<per_element, threads = 128, vector = 1, row = none, cluster = 1, passes = [1]>} : (tensor<8x96xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8x96xf32>):
    %s = fusion.reduce_sum %a axes = [1] : tensor<8x96xf32> -> tensor<8xf32>
    fusion.yield %s : tensor<8xf32>
  }
  return %0 : tensor<8xf32>
}

// -----

// A mean over every axis: the count (the product of the reduced sizes,
// read from the input buffer) is computed before the nested loops and
// divides their result after them.
// CHECK-LABEL: func.func @mean_all
// CHECK: gpu.launch
// CHECK: %[[ROWS:.+]] = memref.dim %{{.+}}, %c0{{.*}} : memref<?x8xf32>
// CHECK: %[[PARTIAL:.+]] = arith.muli %{{.+}}, %[[ROWS]]
// CHECK: %[[COUNT:.+]] = arith.muli %[[PARTIAL]], %c8
// CHECK: scf.for {{.*}} to %[[ROWS]] {{.*}} iter_args
// CHECK: scf.for {{.*}} to %c8{{.*}} iter_args
// CHECK: %[[N:.+]] = arith.index_cast %[[COUNT]]
// CHECK: %[[NF:.+]] = arith.uitofp %[[N]]
// CHECK: "llvm.nvvm.div.full"(%{{.+}}, %[[NF]])
func.func @mean_all(%x: tensor<?x8xf32>) -> tensor<f32> {
  %0 = fusion.kernel reduction "mean_all" (%x) {plan = #fusion.plan<per_element, threads = 256, vector = 1, row = none, cluster = 1, passes = [1]>} : (tensor<?x8xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<?x8xf32>):
    %m = fusion.reduce_mean %a axes = [0, 1] : tensor<?x8xf32> -> tensor<f32>
    fusion.yield %m : tensor<f32>
  }
  return %0 : tensor<f32>
}
