// RUN: fusion-opt %s --split-input-file --fusion-kernels-to-gpu | FileCheck %s

// cluster_rows: a row of 131072 bf16 over a cluster of 8 blocks, each
// holding its 16384 elements in registers (512 threads x 4 vectors of 8).
// Each block's total goes to a shared slot; every block combines the eight
// slots of its cluster (mapa to each block's slot) between cluster barriers.
// CHECK-LABEL: func.func @wide_sum
// CHECK: gpu.launch clusters({{.*}}) in ({{.*}} = %c8{{.*}}, {{.*}}) blocks
// CHECK-SAME: threads({{.*}}) in ({{.*}} = %c512
// CHECK-SAME: dynamic_shared_memory_size %c4_i32
// CHECK: gpu.dynamic_shared_memory
// CHECK: gpu.cluster_block_id x
// CHECK-COUNT-4: vector.load {{.*}} : memref<4x131072xbf16>, vector<8xbf16>
// CHECK: gpu.all_reduce add
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-COUNT-8: nvvm.mapa
// CHECK: memref.store {{.*}} : memref<4xbf16>
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
func.func @wide_sum(%x: tensor<4x131072xbf16>) -> tensor<4xbf16> {
  %0 = fusion.kernel wide_row "wide_sum" (%x) {plan = #fusion.plan<cluster_rows, threads = 512, vector = 8, row = registers, cluster = 8, passes = [1]>} : (tensor<4x131072xbf16>) -> tensor<4xbf16> {
  ^bb0(%a: tensor<4x131072xbf16>):
    %s = fusion.reduce_sum %a axes = [1] : tensor<4x131072xbf16> -> tensor<4xbf16>
    fusion.yield %s : tensor<4xbf16>
  }
  return %0 : tensor<4xbf16>
}

// -----

// Parts that do not divide the row: 131073 bf16 (odd, scalars) in parts of
// 16385, the last block's 16378. A block's part ends at the row's end; the
// held elements that the shortest part may not reach (the 32nd and 33rd of
// each thread) are masked.
// CHECK-LABEL: func.func @uneven_parts
// CHECK: %[[START:.+]] = arith.muli %cluster_block_id_x, %c16385
// CHECK: %[[PAST:.+]] = arith.addi %[[START]], %c16385
// CHECK: %[[END:.+]] = arith.minui %[[PAST]], %c131073
// CHECK-COUNT-2: arith.cmpi ult, %{{.+}}, %[[END]]
// CHECK-NOT: arith.cmpi ult
// CHECK-COUNT-33: memref.load {{.*}} : memref<4x131073xbf16>
// CHECK-NOT: memref.load {{.*}} : memref<4x131073xbf16>
// CHECK: gpu.all_reduce add
func.func @uneven_parts(%x: tensor<4x131073xbf16>) -> tensor<4xbf16> {
  %0 = fusion.kernel wide_row "uneven_parts" (%x) {plan = #fusion.plan<cluster_rows, threads = 512, vector = 1, row = registers, cluster = 8, passes = [1]>} : (tensor<4x131073xbf16>) -> tensor<4xbf16> {
  ^bb0(%a: tensor<4x131073xbf16>):
    %s = fusion.reduce_sum %a axes = [1] : tensor<4x131073xbf16> -> tensor<4xbf16>
    fusion.yield %s : tensor<4xbf16>
  }
  return %0 : tensor<4xbf16>
}
