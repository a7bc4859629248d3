// RUN: fusion-opt %s --split-input-file --fusion-kernels-to-gpu | FileCheck %s

// cluster_rows: a row of 131072 bf16 over a cluster of 8 blocks, each
// holding its 16384 elements in registers (512 threads x 4 vectors of 8).
// Each block's total goes to a shared slot (two: rows alternate); every
// block combines the eight slots of its cluster (mapa to each block's slot)
// after a cluster barrier; the last cluster barrier is the kernel's exit.
// CHECK-LABEL: func.func @wide_sum
// CHECK: gpu.launch clusters({{.*}}) in ({{.*}} = %c8{{.*}}, {{.*}}) blocks
// CHECK-SAME: threads({{.*}}) in ({{.*}} = %c512
// CHECK-SAME: dynamic_shared_memory_size %c8_i32
// CHECK: gpu.dynamic_shared_memory
// CHECK: gpu.cluster_block_id x
// CHECK-COUNT-4: vector.load {{.*}} : memref<4x131072xbf16>, vector<8xbf16>
// CHECK: gpu.all_reduce add
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-COUNT-8: nvvm.mapa
// CHECK: memref.store {{.*}} : memref<4xbf16>
// CHECK: gpu.barrier
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-NEXT: gpu.terminator
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

// -----

// Staged rows: each block's part of the row (2048 bf16, 4096 bytes) lands in
// dynamic shared memory by one bulk copy on an mbarrier (thread 0 arms it
// with the bytes and issues the copy to its own memory as the cluster
// addresses it), every thread waits for the row's phase, and each pass
// reads the part from shared memory. The softmax's max and its online sum
// go to the cluster's slots together, behind one cluster barrier per row
// (slots alternate by row parity: 4 of them, after the 1024 bytes of slack
// and the part); the cluster barrier at the end is the kernel's exit.
// CHECK-LABEL: func.func @staged
// CHECK: gpu.launch clusters({{.*}}) in ({{.*}} = %c2{{.*}}, {{.*}}) blocks
// CHECK-SAME: threads({{.*}}) in ({{.*}} = %c128
// CHECK-SAME: dynamic_shared_memory_size %c5136_i32
// CHECK: %[[PART:.+]] = memref.view {{.*}} to memref<2048xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[FULL:.+]] = nvgpu.mbarrier.create
// CHECK: nvgpu.mbarrier.init %[[FULL]]
// CHECK: %[[SLOTS:.+]] = memref.view {{.*}} to memref<4xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[FULL]]
// CHECK: nvvm.mapa {{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
// CHECK: scf.while
// CHECK: nvvm.mbarrier.try_wait
// CHECK: scf.for {{.*}} -> (f32, f32)
// CHECK: vector.load %[[PART]]
// CHECK-NOT: vector.load %arg0
// CHECK: gpu.all_reduce maximumf
// CHECK: gpu.all_reduce add
// CHECK: memref.store {{.*}}, %[[SLOTS]]
// CHECK: memref.store {{.*}}, %[[SLOTS]]
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-COUNT-4: nvvm.mapa
// CHECK-NOT: nvvm.cluster.arrive
// CHECK: vector.load %[[PART]]
// CHECK: vector.store {{.*}} : memref<64x4096xbf16>, vector<8xbf16>
// CHECK: gpu.barrier
// CHECK: }
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-NEXT: gpu.terminator
func.func @staged(%x: tensor<64x4096xbf16>) -> tensor<64x4096xbf16> {
  %0 = fusion.kernel row_reduction "staged" (%x) {plan = #fusion.plan<cluster_rows, threads = 128, vector = 8, row = staged, cluster = 2, passes = [1]>} : (tensor<64x4096xbf16>) -> tensor<64x4096xbf16> {
  ^bb0(%a: tensor<64x4096xbf16>):
    %c = fusion.convert %a : tensor<64x4096xbf16> to tensor<64x4096xf32>
    %m = fusion.reduce_max %c axes = [1] keep_dims : tensor<64x4096xf32> -> tensor<64x1xf32>
    %d = fusion.sub %c, %m : (tensor<64x4096xf32>, tensor<64x1xf32>) -> tensor<64x4096xf32>
    %e = fusion.exp %d : tensor<64x4096xf32>
    %s = fusion.reduce_sum %e axes = [1] keep_dims : tensor<64x4096xf32> -> tensor<64x1xf32>
    %y = fusion.div %e, %s : (tensor<64x4096xf32>, tensor<64x1xf32>) -> tensor<64x4096xf32>
    %r = fusion.convert %y : tensor<64x4096xf32> to tensor<64x4096xbf16>
    fusion.yield %r : tensor<64x4096xbf16>
  }
  return %0 : tensor<64x4096xbf16>
}

// -----

// Staged rows no vector divides, over a cluster: each block copies the
// whole vectors of its part, from the part's start LAG columns in (a
// vector boundary) up to the row's last whole vector, and only where it
// has any (a cluster's last block may not: then it arrives on its barrier
// without a copy). Edge elements are read from global memory by the first
// block.
// CHECK-LABEL: func.func @staged_shifted
// CHECK: %[[PART:.+]] = memref.view {{.*}} to memref<2048xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[INDEX:.+]] = gpu.cluster_block_id x
// CHECK: %[[START:.+]] = arith.muli %[[INDEX]], %c2048
// CHECK: %[[SHIFT:.+]] = arith.remui
// CHECK: %[[LAG:.+]] = arith.remui %{{.+}}, %c8
// CHECK: %[[FIRST:.+]] = arith.addi %[[START]], %[[LAG]] : index
// CHECK: %[[UPTO:.+]] = arith.maxui %{{.+}}, %[[FIRST]]
// CHECK: %[[LENGTH:.+]] = arith.subi %[[UPTO]], %[[FIRST]]
// CHECK: %[[ANY:.+]] = arith.cmpi ne, %[[LENGTH]], %c0
// CHECK: nvgpu.mbarrier.arrive.expect_tx
// CHECK: scf.if %[[ANY]] {
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
// CHECK: nvvm.mbarrier.try_wait
// CHECK: vector.load %[[PART]]
// CHECK: memref.load %arg0[{{.*}}] : memref<64x4095xbf16>
// CHECK: nvvm.cluster.arrive
func.func @staged_shifted(%x: tensor<64x4095xbf16>) -> tensor<64x4095xbf16> {
  %0 = fusion.kernel row_reduction "staged_shifted" (%x) {plan = #fusion.plan<cluster_rows, threads = 64, vector = 8, row = staged, cluster = 2, passes = [1]>} : (tensor<64x4095xbf16>) -> tensor<64x4095xbf16> {
  ^bb0(%a: tensor<64x4095xbf16>):
    %c = fusion.convert %a : tensor<64x4095xbf16> to tensor<64x4095xf32>
    %m = fusion.reduce_max %c axes = [1] keep_dims : tensor<64x4095xf32> -> tensor<64x1xf32>
    %d = fusion.sub %c, %m : (tensor<64x4095xf32>, tensor<64x1xf32>) -> tensor<64x4095xf32>
    %e = fusion.exp %d : tensor<64x4095xf32>
    %s = fusion.reduce_sum %e axes = [1] keep_dims : tensor<64x4095xf32> -> tensor<64x1xf32>
    %y = fusion.div %e, %s : (tensor<64x4095xf32>, tensor<64x1xf32>) -> tensor<64x4095xf32>
    %r = fusion.convert %y : tensor<64x4095xf32> to tensor<64x4095xbf16>
    fusion.yield %r : tensor<64x4095xbf16>
  }
  return %0 : tensor<64x4095xbf16>
}
