// RUN: fusion-opt %s --fusion-plan-kernels | FileCheck %s
// RUN: fusion-opt %s --fusion-plan-kernels=chip=sm_80 | FileCheck %s --check-prefix=SM80
// RUN: fusion-opt %s --fusion-plan-kernels=matmul-backend=generated | FileCheck %s --check-prefix=GENERATED
// RUN: fusion-opt %s --fusion-plan-kernels=emit-remarks -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// Plan selection over kernel shapes: held, streamed, split over a cluster,
// dynamic, elementwise, fallback, matmul; sm_80 has no clusters.

// A row of 4096 f32: 1024 vectors of 4, 256 threads holding 4 each.
// CHECK-LABEL: func @held
// CHECK: plan = #fusion.plan<rows, threads = 256, vector = 4, row = registers, cluster = 1, passes = [1]>
func.func @held(%x: tensor<64x4096xf32>) -> tensor<64x4096xf32> {
  %0 = fusion.kernel row_reduction (%x) : (tensor<64x4096xf32>) -> tensor<64x4096xf32> {
  ^bb0(%a: tensor<64x4096xf32>):
    %m = fusion.reduce_max %a axes = [1] keep_dims : tensor<64x4096xf32> -> tensor<64x1xf32>
    %d = fusion.sub %a, %m : (tensor<64x4096xf32>, tensor<64x1xf32>) -> tensor<64x4096xf32>
    fusion.yield %d : tensor<64x4096xf32>
  }
  return %0 : tensor<64x4096xf32>
}

// A row of 32768 f32 (up to max-row-elements: one block) is 16 vectors a
// thread at 512 threads, more than 8: streamed. %x is read by the max
// pass and again by the write pass; %w by the write pass only.
// CHECK-LABEL: func @streamed
// CHECK: plan = #fusion.plan<rows, threads = 512, vector = 4, row = streamed, cluster = 1, passes = [2, 1]>
func.func @streamed(%x: tensor<64x32768xf32>, %w: tensor<32768xf32>) -> tensor<64x32768xf32> {
  %0 = fusion.kernel row_reduction (%x, %w) : (tensor<64x32768xf32>, tensor<32768xf32>) -> tensor<64x32768xf32> {
  ^bb0(%a: tensor<64x32768xf32>, %b: tensor<32768xf32>):
    %m = fusion.reduce_max %a axes = [1] keep_dims : tensor<64x32768xf32> -> tensor<64x1xf32>
    %d = fusion.sub %a, %m : (tensor<64x32768xf32>, tensor<64x1xf32>) -> tensor<64x32768xf32>
    %e = fusion.mul %d, %b : (tensor<64x32768xf32>, tensor<32768xf32>) -> tensor<64x32768xf32>
    fusion.yield %e : tensor<64x32768xf32>
  }
  return %0 : tensor<64x32768xf32>
}

// 131072 bf16 over a cluster of 8 parts of 16384 (2048 vectors of 8: 512
// threads holding 4 each).
// CHECK-LABEL: func @split
// CHECK: plan = #fusion.plan<cluster_rows, threads = 512, vector = 8, row = registers, cluster = 8, passes = [1]>
// SM80-LABEL: func @split
// SM80: plan = #fusion.plan<rows, threads = 512, vector = 8, row = streamed, cluster = 1, passes = [1]>
func.func @split(%x: tensor<8x131072xbf16>) -> tensor<8xbf16> {
  %0 = fusion.kernel wide_row (%x) : (tensor<8x131072xbf16>) -> tensor<8xbf16> {
  ^bb0(%a: tensor<8x131072xbf16>):
    %s = fusion.reduce_sum %a axes = [1] : tensor<8x131072xbf16> -> tensor<8xbf16>
    fusion.yield %s : tensor<8xbf16>
  }
  return %0 : tensor<8xbf16>
}

// A row of dynamic length is streamed with scalars: the max pass, the sum
// pass and the write pass each read %x.
// CHECK-LABEL: func @dynamic
// CHECK: plan = #fusion.plan<rows, threads = 256, vector = 1, row = streamed, cluster = 1, passes = [3]>
func.func @dynamic(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = fusion.kernel wide_row (%x) : (tensor<?x?xf32>) -> tensor<?x?xf32> {
  ^bb0(%a: tensor<?x?xf32>):
    %m = fusion.reduce_max %a axes = [1] keep_dims : tensor<?x?xf32> -> tensor<?x1xf32>
    %d = fusion.sub %a, %m : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
    %e = fusion.exp %d : tensor<?x?xf32>
    %s = fusion.reduce_sum %e axes = [1] keep_dims : tensor<?x?xf32> -> tensor<?x1xf32>
    %y = fusion.div %e, %s : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
    fusion.yield %y : tensor<?x?xf32>
  }
  return %0 : tensor<?x?xf32>
}

// Same-shape math is flat: 16-byte vectors of f16 and a scalar tail,
// whatever the innermost size.
// CHECK-LABEL: func @flat
// CHECK: plan = #fusion.plan<elementwise, threads = 256, vector = 8, row = none, cluster = 1, passes = [1, 1]>
func.func @flat(%x: tensor<7x3xf16>, %y: tensor<7x3xf16>) -> tensor<7x3xf16> {
  %0 = fusion.kernel elementwise (%x, %y) : (tensor<7x3xf16>, tensor<7x3xf16>) -> tensor<7x3xf16> {
  ^bb0(%a: tensor<7x3xf16>, %b: tensor<7x3xf16>):
    %s = fusion.add %a, %b : tensor<7x3xf16>
    fusion.yield %s : tensor<7x3xf16>
  }
  return %0 : tensor<7x3xf16>
}

// A broadcast operand: vectors along the innermost size (64 = 16 x 4).
// CHECK-LABEL: func @broadcast
// CHECK: plan = #fusion.plan<elementwise, threads = 256, vector = 4, row = none, cluster = 1, passes = [1, 1]>
func.func @broadcast(%x: tensor<7x64xf32>, %y: tensor<64xf32>) -> tensor<7x64xf32> {
  %0 = fusion.kernel elementwise (%x, %y) : (tensor<7x64xf32>, tensor<64xf32>) -> tensor<7x64xf32> {
  ^bb0(%a: tensor<7x64xf32>, %b: tensor<64xf32>):
    %s = fusion.add %a, %b : (tensor<7x64xf32>, tensor<64xf32>) -> tensor<7x64xf32>
    fusion.yield %s : tensor<7x64xf32>
  }
  return %0 : tensor<7x64xf32>
}

// Reductions over outer axes have no strategy of their own yet.
// REMARK: remark: [plan] runs per_element: no specialised strategy for this kind yet
// CHECK-LABEL: func @column
// CHECK: plan = #fusion.plan<per_element, threads = 256, vector = 1, row = none, cluster = 1, passes = [1]>
func.func @column(%x: tensor<64x32xf32>) -> tensor<32xf32> {
  %0 = fusion.kernel column_reduction (%x) : (tensor<64x32xf32>) -> tensor<32xf32> {
  ^bb0(%a: tensor<64x32xf32>):
    %s = fusion.reduce_sum %a axes = [0] : tensor<64x32xf32> -> tensor<32xf32>
    fusion.yield %s : tensor<32xf32>
  }
  return %0 : tensor<32xf32>
}

// A plan written by hand is kept.
// CHECK-LABEL: func @handwritten
// CHECK: plan = #fusion.plan<rows, threads = 1024, vector = 4, row = registers, cluster = 1, passes = [1]>
func.func @handwritten(%x: tensor<64x4096xf32>) -> tensor<64xf32> {
  %0 = fusion.kernel row_reduction (%x) {plan = #fusion.plan<rows, threads = 1024, vector = 4, row = registers, cluster = 1, passes = [1]>} : (tensor<64x4096xf32>) -> tensor<64xf32> {
  ^bb0(%a: tensor<64x4096xf32>):
    %s = fusion.reduce_sum %a axes = [1] : tensor<64x4096xf32> -> tensor<64xf32>
    fusion.yield %s : tensor<64xf32>
  }
  return %0 : tensor<64xf32>
}

// CHECK-LABEL: func @library
// CHECK: plan = #fusion.plan<library_matmul, threads = 1, vector = 1, row = none, cluster = 1, passes = [1, 1]>
// GENERATED-LABEL: func @library
// GENERATED: plan = #fusion.plan<matmul_tiles, threads = 256, vector = 1, row = none, cluster = 1, passes = [1, 1]>
func.func @library(%a: tensor<64x32xbf16>, %b: tensor<32x16xbf16>) -> tensor<64x16xbf16> {
  %0 = fusion.kernel matmul (%a, %b) : (tensor<64x32xbf16>, tensor<32x16xbf16>) -> tensor<64x16xbf16> {
  ^bb0(%x: tensor<64x32xbf16>, %y: tensor<32x16xbf16>):
    %p = fusion.matmul %x, %y : (tensor<64x32xbf16>, tensor<32x16xbf16>) -> tensor<64x16xbf16>
    fusion.yield %p : tensor<64x16xbf16>
  }
  return %0 : tensor<64x16xbf16>
}
