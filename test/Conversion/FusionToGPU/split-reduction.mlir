// RUN: fusion-opt %s --split-input-file --fusion-kernels-to-gpu | FileCheck %s

// split_reduction over every element of a dynamic 2-D tensor, in ranges of
// at most 4 (fewer when there are fewer block steps of elements): one
// launch; blocks whose threads take vectors of the range in turn (4 per
// step, then one by one), a block-wide reduction, thread 0 storing the
// range's partial; the block that arrives last sets its arrival count
// back to zero (the runtime's counters, kept per stream, need no memset),
// folds the ranges and divides the mean by the element count.
// CHECK-LABEL: func.func @mean_all
// CHECK: %[[ROWS:.+]] = memref.dim %{{.+}}, %c0 : memref<?x64xf32>
// CHECK: arith.ceildivui %{{.+}}, %c512
// CHECK: arith.minui %{{.+}}, %c4
// CHECK: %[[ARRIVALS:.+]] = call @fusion_cuda_arrival_counters(%{{.+}}) : (index) -> memref<?xi32>
// CHECK: %[[PARTIALS:.+]], %{{.+}} = gpu.alloc async {{.*}} : memref<?xf32>
// CHECK-NOT: gpu.memset
// CHECK: gpu.launch
// CHECK-SAME: threads({{.*}}) in ({{.*}} = %c128
// CHECK-SAME: function(@mean_all)
// CHECK: scf.for {{.*}} step %c512{{.*}} iter_args
// CHECK-COUNT-4: vector.bitcast {{.*}} : vector<4xi32> to vector<4xf32>
// CHECK: scf.for {{.*}} step %c128{{.*}} iter_args
// CHECK: vector.reduction <add>
// CHECK: gpu.all_reduce add
// CHECK: scf.if
// CHECK: memref.store {{.*}}, %[[PARTIALS]]
// CHECK: memref.atomic_rmw addi %{{.+}}, %[[ARRIVALS]]
// CHECK: memref.atomic_rmw assign %c0_i32{{[_0-9]*}}, %[[ARRIVALS]]
// CHECK: scf.if
// CHECK: memref.load %[[PARTIALS]]
// CHECK: "llvm.nvvm.div.full"
// CHECK: memref.store {{.*}} : memref<f32>
// CHECK: gpu.barrier
// CHECK-NOT: gpu.launch
// CHECK: gpu.dealloc async {{.*}} %[[PARTIALS]]
// CHECK: call @fusion_cuda_release_arrival_counters(%[[ARRIVALS]])
func.func @mean_all(%x: tensor<?x64xf32>) -> tensor<f32> {
  %0 = fusion.kernel reduction "mean_all" (%x) {plan = #fusion.plan<split_reduction, threads = 128, vector = 4, row = none, cluster = 1, split = 4, passes = [1]>} : (tensor<?x64xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<?x64xf32>):
    %m = fusion.reduce_mean %a axes = [0, 1] : tensor<?x64xf32> -> tensor<f32>
    fusion.yield %m : tensor<f32>
  }
  return %0 : tensor<f32>
}

// -----

// Without a split: one launch, a block per output writing it.
// CHECK-LABEL: func.func @max_outer_inner
// CHECK: gpu.launch
// CHECK: gpu.all_reduce maximumf
// CHECK: memref.store {{.*}} : memref<300xbf16>
// CHECK-NOT: gpu.launch
func.func @max_outer_inner(%x: tensor<5x300x24xbf16>) -> tensor<300xbf16> {
  %0 = fusion.kernel reduction "max_outer_inner" (%x) {plan = #fusion.plan<split_reduction, threads = 32, vector = 8, row = none, cluster = 1, passes = [1]>} : (tensor<5x300x24xbf16>) -> tensor<300xbf16> {
  ^bb0(%a: tensor<5x300x24xbf16>):
    %m = fusion.reduce_max %a axes = [0, 2] : tensor<5x300x24xbf16> -> tensor<300xbf16>
    fusion.yield %m : tensor<300xbf16>
  }
  return %0 : tensor<300xbf16>
}
