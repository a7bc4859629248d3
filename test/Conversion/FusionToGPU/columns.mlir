// RUN: fusion-opt %s --split-input-file --fusion-kernels-to-gpu | FileCheck %s

// columns without a split: one launch. Lanes of 8 column vectors (32
// columns of f32 in vectors of 4), 32 threads down the rows, 4 rows a
// step; each thread's partial goes to shared memory, a tree of 5 halving
// steps (32 row threads) folds them, and the first row of threads writes
// the column.
// CHECK-LABEL: func.func @column_sum
// CHECK: gpu.launch
// CHECK-SAME: threads({{.*}}) in ({{.*}} = %c256
// CHECK-SAME: function(@column_sum)
// CHECK-SAME: workgroup(%[[SHARED:.+]] : memref<1024xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c128{{.*}} iter_args(%{{.+}} = %{{.+}}) -> (vector<4xf32>)
// CHECK: llvm.inline_asm has_side_effects "{{.*}}createpolicy.fractional.L2::evict_first.b64{{.*}}ld.global.L1::no_allocate.L2::cache_hint.v4.b32
// CHECK-COUNT-4: vector.bitcast {{.*}} : vector<4xi32> to vector<4xf32>
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c32{{.*}} iter_args(%{{.+}} = %{{.+}}) -> (vector<4xf32>)
// CHECK: vector.bitcast {{.*}} : vector<4xi32> to vector<4xf32>
// CHECK: math.exp {{.*}} : vector<4xf32>
// CHECK: vector.store {{.*}}, %[[SHARED]]
// CHECK: gpu.barrier
// CHECK-COUNT-5: scf.if
// CHECK: vector.load %[[SHARED]]
// CHECK: scf.if
// CHECK: vector.store {{.*}} : memref<32xf32>, vector<4xf32>
// CHECK: gpu.barrier
// CHECK-NOT: gpu.launch
func.func @column_sum(%x: tensor<64x32xf32>) -> tensor<32xf32> {
  %0 = fusion.kernel column_reduction "column_sum" (%x) {plan = #fusion.plan<columns, threads = 256, vector = 4, row = none, cluster = 1, passes = [1]>} : (tensor<64x32xf32>) -> tensor<32xf32> {
  ^bb0(%a: tensor<64x32xf32>):
    %e = fusion.exp %a : tensor<64x32xf32>
    %s = fusion.reduce_sum %e axes = [0] : tensor<64x32xf32> -> tensor<32xf32>
    fusion.yield %s : tensor<32xf32>
  }
  return %0 : tensor<32xf32>
}

// -----

// With a split: a workspace of line-aligned f32 partials (per tile,
// reduction and row range; ranges: at most the split, at most one per row
// a thread goes down; 8 bf16 columns are one vector, so all 256 threads go
// down the rows) and an arrival count per tile, from the runtime's counters
// kept per stream (zero, no memset). One launch: each block stores its
// partial, fences, counts its arrival; the block that arrives last sets
// the count back to zero, fences again, folds the ranges (4 a step),
// divides the mean by the row count and writes the output. Then the
// partials are freed and the counters handed back.
// CHECK-LABEL: func.func @column_mean_split
// CHECK: %[[ROWS:.+]] = memref.dim %{{.+}}, %c0 : memref<?x8xbf16>
// CHECK: %[[PER_THREAD:.+]] = arith.ceildivui %{{.+}}, %c256
// CHECK: %[[SPLIT:.+]] = arith.minui %[[PER_THREAD]], %c16
// CHECK: %[[RANGES:.+]] = arith.maxui %c1{{.*}}, %[[SPLIT]]
// CHECK: %[[ARRIVALS:.+]] = call @fusion_cuda_arrival_counters(%{{.+}}) : (index) -> memref<?xi32>
// CHECK: %[[PARTIALS:.+]], %{{.+}} = gpu.alloc async {{.*}} : memref<?xf32>
// CHECK-NOT: gpu.memset
// CHECK: gpu.launch
// CHECK-SAME: function(@column_mean_split)
// CHECK-SAME: workgroup(%[[FOLD:.+]] : memref<2048xf32, #gpu.address_space<workgroup>>, %[[ARRIVAL:.+]] : memref<1xi32, #gpu.address_space<workgroup>>)
// CHECK: vector.bitcast {{.*}} : vector<4xi32> to vector<8xbf16>
// CHECK: vector.store {{.*}}, %[[PARTIALS]][{{.*}}] {{.*}} : memref<?xf32>, vector<8xf32>
// CHECK: llvm.fence syncscope("device") acq_rel
// CHECK: gpu.barrier
// CHECK: %[[BEFORE:.+]] = memref.atomic_rmw addi %{{.+}}, %[[ARRIVALS]][%[[TILE:.+]]]
// CHECK: memref.store %[[BEFORE]], %[[ARRIVAL]]
// CHECK: %[[LAST:.+]] = arith.cmpi eq, %[[BEFORE]]
// CHECK: scf.if %[[LAST]]
// CHECK: memref.atomic_rmw assign %c0_i32{{[_0-9]*}}, %[[ARRIVALS]][%[[TILE]]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[ARRIVAL]]
// CHECK: scf.if
// CHECK: llvm.fence syncscope("device") acq_rel
// CHECK: scf.for {{.*}} iter_args
// CHECK-COUNT-4: vector.load %[[PARTIALS]]
// The mean: the count's reciprocal once, a product per vector.
// CHECK: %[[COUNT:.+]] = arith.uitofp
// CHECK: %[[SCALED:.+]] = arith.mulf %[[COUNT]], %{{.+}} : f32
// CHECK: %[[RECIPROCAL:.+]] = arith.divf %{{.+}}, %[[SCALED]] : f32
// CHECK: vector.broadcast %[[RECIPROCAL]]
// CHECK-NOT: "llvm.nvvm.div.full"
// CHECK: arith.mulf {{.*}} : vector<8xf32>
// CHECK: arith.truncf {{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK: vector.store {{.*}} : memref<1x8xbf16>, vector<8xbf16>
// CHECK-NOT: gpu.launch
// CHECK: gpu.dealloc async {{.*}} %[[PARTIALS]]
// CHECK: call @fusion_cuda_release_arrival_counters(%[[ARRIVALS]])
func.func @column_mean_split(%x: tensor<?x8xbf16>) -> tensor<1x8xbf16> {
  %0 = fusion.kernel column_reduction "column_mean_split" (%x) {plan = #fusion.plan<columns, threads = 256, vector = 8, row = none, cluster = 1, split = 16, passes = [1]>} : (tensor<?x8xbf16>) -> tensor<1x8xbf16> {
  ^bb0(%a: tensor<?x8xbf16>):
    %m = fusion.reduce_mean %a axes = [0] keep_dims : tensor<?x8xbf16> -> tensor<1x8xbf16>
    fusion.yield %m : tensor<1x8xbf16>
  }
  return %0 : tensor<1x8xbf16>
}

// -----

// Columns no vector divides (30 f32), rows in whole segments of 2: the
// operand is read flat in aligned vectors over rows of 60 columns, each
// segment column's totals go to a scratch buffer, and a second launch
// folds each column's 2 totals in order and divides the mean by all 64
// rows.
// CHECK-LABEL: func.func @column_segments
// CHECK: %[[FLAT:.+]] = memref.collapse_shape %{{.+}} {{\[\[}}0, 1]] : memref<64x30xf32> into memref<1920xf32>
// CHECK: %[[TOTALS:.+]], %{{.+}} = gpu.alloc async
// CHECK: gpu.launch
// CHECK-SAME: function(@column_segments)
// CHECK: memref.extract_aligned_pointer_as_index %[[FLAT]] : memref<1920xf32>
// CHECK: llvm.inline_asm has_side_effects "{{.*}}L2::evict_first
// CHECK: vector.store %{{.+}}, %[[TOTALS]][%{{.+}}] {{.*}} : memref<?xf32>, vector<4xf32>
// CHECK: gpu.launch
// CHECK-SAME: function(@column_segments_segments)
// CHECK-COUNT-2: memref.load %[[TOTALS]]
// CHECK: %[[COUNT:.+]] = arith.uitofp %{{.+}} : i64 to f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.div.full"(%{{.+}}, %[[COUNT]])
// CHECK: memref.store %{{.+}}, %{{.+}}[%{{.+}}] : memref<30xf32>
// CHECK: gpu.dealloc async {{.*}} %[[TOTALS]]
func.func @column_segments(%x: tensor<64x30xf32>) -> tensor<30xf32> {
  %0 = fusion.kernel column_reduction "column_segments" (%x) {plan = #fusion.plan<columns, threads = 256, vector = 4, row = none, cluster = 1, split = 2, passes = [1]>} : (tensor<64x30xf32>) -> tensor<30xf32> {
  ^bb0(%a: tensor<64x30xf32>):
    %e = fusion.exp %a : tensor<64x30xf32>
    %s = fusion.reduce_mean %e axes = [0] : tensor<64x30xf32> -> tensor<30xf32>
    fusion.yield %s : tensor<30xf32>
  }
  return %0 : tensor<30xf32>
}
