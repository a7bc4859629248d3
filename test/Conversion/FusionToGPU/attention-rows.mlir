// RUN: fusion-opt %s --split-input-file --fusion-kernels-to-gpu | FileCheck %s
// RUN: fusion-opt %s --split-input-file --fusion-to-nvvm=format=isa | FileCheck %s --check-prefix=PTX
// RUN: %if ptxas %{ fusion-opt %s --split-input-file --fusion-to-nvvm=format=bin | FileCheck %s --check-prefix=CUBIN %}

// attention_rows: a block of 128 threads here (the plan's) per query row and
// range of keys (at most 8 ranges here: the plan's split). A key's rows of
// K and V are shared by a group of 8 lanes, 16 elements each (vector
// loads); a step of the loop gives each of the 16 groups 4 adjacent keys
// (64 keys a step), the same steps in every lane (a key past the range is
// read at its last and masked), every row loaded before the first is used.
// A score is the group's sum (3 butterfly shuffles), rounded to bf16,
// scaled; the softmax stays whole until here and runs online, the state
// rescaled once a step (one exp) and each key weighted by its own exp. The
// groups of a warp fold their states by shuffles (lanes 8, then 16 apart);
// the 4 warps' states meet in shared memory (a state each, on 32-byte
// boundaries); with several ranges each block writes its state to a
// workspace and the row's last block (an arrival count on the runtime's
// counters, kept per stream and left zero: no memset) folds them and
// writes the row.
// CHECK-LABEL: func.func @decode
// CHECK: arith.minui %{{.+}}, %c8 : index
// CHECK: %[[PARTIALS:.+]], %{{.+}} = gpu.alloc async
// CHECK: %[[ARRIVALS:.+]] = call @fusion_cuda_arrival_counters(%{{.+}}) : (index) -> memref<?xi32>
// CHECK-NOT: gpu.memset
// CHECK: gpu.launch
// CHECK-SAME: threads({{.*}}) in ({{.*}} = %c128
// CHECK-SAME: function(@decode_k0)
// CHECK-SAME: workgroup(%[[STATES:.+]] : memref<544xf32, #gpu.address_space<workgroup>>, %{{.+}} : memref<1xi32, #gpu.address_space<workgroup>>)
// CHECK: vector.load %{{.+}} : memref<2x4x1x128xbf16>, vector<16xbf16>
// CHECK: scf.for %{{.+}} step %c64
// CHECK-COUNT-8: vector.load %{{.+}} : memref<2x4x?x128xbf16>, vector<16xbf16>
// CHECK: vector.reduction <add>
// CHECK-COUNT-3: gpu.shuffle  xor
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK-COUNT-5: math.exp
// CHECK-NOT: math.exp
// CHECK: scf.yield
// CHECK: gpu.shuffle  xor %{{.+}}, %c8_i32
// CHECK: gpu.shuffle  xor %{{.+}}, %c16_i32
// CHECK: vector.store %{{.+}}, %[[STATES]]
// CHECK: gpu.barrier
// CHECK: vector.store %{{.+}} : memref<2x4x1x128xbf16>, vector<16xbf16>
// CHECK: memref.atomic_rmw addi %{{.+}}, %[[ARRIVALS]]
// CHECK: memref.atomic_rmw assign %c0_i32{{[_0-9]*}}, %[[ARRIVALS]]
// CHECK: scf.for
// CHECK: vector.store %{{.+}} : memref<2x4x1x128xbf16>, vector<16xbf16>
// CHECK-NOT: fusion.
// CHECK: gpu.dealloc async {{.+}} %[[PARTIALS]]
// CHECK: call @fusion_cuda_release_arrival_counters(%[[ARRIVALS]])
func.func @decode(%q: tensor<2x4x1x128xbf16>, %k: tensor<2x4x?x128xbf16>, %v: tensor<2x4x?x128xbf16>) -> tensor<2x4x1x128xbf16> {
  %0 = fusion.kernel attention "decode_k0" (%q, %k, %v) {plan = #fusion.plan<attention_rows, threads = 128, vector = 16, row = none, cluster = 1, split = 8, passes = [1, 1, 1]>} : (tensor<2x4x1x128xbf16>, tensor<2x4x?x128xbf16>, tensor<2x4x?x128xbf16>) -> tensor<2x4x1x128xbf16> {
  ^bb0(%a: tensor<2x4x1x128xbf16>, %b: tensor<2x4x?x128xbf16>, %c: tensor<2x4x?x128xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<2x4x?x128xbf16> -> tensor<2x4x128x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<2x4x1x128xbf16>, tensor<2x4x128x?xbf16>) -> tensor<2x4x1x?xbf16>
    %scale = fusion.constant dense<0.125> : tensor<bf16>
    %t = fusion.mul %s, %scale : (tensor<2x4x1x?xbf16>, tensor<bf16>) -> tensor<2x4x1x?xbf16>
    %p = fusion.softmax %t axis = 3 : tensor<2x4x1x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<2x4x1x?xbf16>, tensor<2x4x?x128xbf16>) -> tensor<2x4x1x128xbf16>
    fusion.yield %o : tensor<2x4x1x128xbf16>
  }
  return %0 : tensor<2x4x1x128xbf16>
}

// -----

// A staged plan (sm_90): on the host a tensor map of K and one of V, 3-D
// (batches collapsed, zeros past each batch's keys) in boxes of a step's
// 64 keys, not swizzled. In the block (no workgroup buffers: all of its
// shared memory is dynamic, 3 stages of 32 KB, the 4 warps' states and the
// arrival word, 1 KB of alignment slack) the first thread fills the 3
// stages (a barrier each, 32 KB expected), then the loop over steps waits
// for its stage, reads the group's 4 keys' rows of K and V there, and once
// every lane is done (a block barrier) refills the stage 3 steps ahead.
// CHECK-LABEL: func.func @decode_staged
// CHECK-COUNT-2: nvgpu.tma.create.descriptor %{{.+}} box[%{{.+}}, %c64{{.*}}, %c128{{.*}}] : memref<*xbf16> -> <tensor = memref<1x64x128xbf16, #gpu.address_space<workgroup>>, swizzle = none
// CHECK: gpu.launch
// CHECK-SAME: threads({{.*}}) in ({{.*}} = %c128
// CHECK-SAME: dynamic_shared_memory_size %c101508_i32
// CHECK-NOT: workgroup(
// CHECK: gpu.dynamic_shared_memory
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 3>
// CHECK-COUNT-3: nvgpu.mbarrier.init
// CHECK: gpu.barrier
// CHECK: memref.view {{.+}} to memref<544xf32, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.+}} to memref<1xi32, #gpu.address_space<workgroup>>
// CHECK-COUNT-3: nvgpu.mbarrier.arrive.expect_tx %{{.+}}, %c32768
// CHECK: scf.for %{{.+}} = %c0 to %{{.+}} step %c1
// CHECK: nvvm.mbarrier.try_wait
// CHECK-COUNT-8: vector.load %{{.+}} : memref<64x128xbf16, #gpu.address_space<workgroup>>, vector<16xbf16>
// CHECK-NOT: memref<2x4x?x128xbf16>, vector<16xbf16>
// CHECK-COUNT-5: math.exp
// CHECK: gpu.barrier
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.+}}, %c32768
// CHECK-COUNT-2: nvgpu.tma.async.load
// CHECK: scf.yield
// CHECK-NOT: fusion.
// The staged kernel is plain sm_90 (TMA without wgmma), and ptxas takes it.
// PTX: llvm.call @mgpuTensorMapEncodeTiledMemref(
// PTX: gpu.binary @decode_staged_k0_module [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">
// PTX-SAME: .target sm_90
// PTX-SAME: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-SAME: mbarrier.try_wait.parity
// PTX-SAME: ld.shared.v4
// CUBIN: gpu.binary @decode_staged_k0_module
// CUBIN-SAME: bin = "\7FELF
func.func @decode_staged(%q: tensor<2x4x1x128xbf16>, %k: tensor<2x4x?x128xbf16>, %v: tensor<2x4x?x128xbf16>) -> tensor<2x4x1x128xbf16> {
  %0 = fusion.kernel attention "decode_staged_k0" (%q, %k, %v) {plan = #fusion.plan<attention_rows, threads = 128, vector = 16, row = staged, cluster = 1, passes = [1, 1, 1]>} : (tensor<2x4x1x128xbf16>, tensor<2x4x?x128xbf16>, tensor<2x4x?x128xbf16>) -> tensor<2x4x1x128xbf16> {
  ^bb0(%a: tensor<2x4x1x128xbf16>, %b: tensor<2x4x?x128xbf16>, %c: tensor<2x4x?x128xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<2x4x?x128xbf16> -> tensor<2x4x128x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<2x4x1x128xbf16>, tensor<2x4x128x?xbf16>) -> tensor<2x4x1x?xbf16>
    %p = fusion.softmax %s axis = 3 : tensor<2x4x1x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<2x4x1x?xbf16>, tensor<2x4x?x128xbf16>) -> tensor<2x4x1x128xbf16>
    fusion.yield %o : tensor<2x4x1x128xbf16>
  }
  return %0 : tensor<2x4x1x128xbf16>
}

// -----

// A staged plan whose rows share K and V (the 4 query heads of a group): a
// block takes the 4 rows, 128 threads each (512), all reading its stages
// (steps of 128 keys at D = 64); a state slot per row and warp (16 x 72
// floats); with 2 ranges, a state per row and range in the workspace and
// an arrival count per block of rows (8 rows of 4 -> 2 counts).
// CHECK-LABEL: func.func @decode_grouped_staged
// CHECK: gpu.alloc async [%{{.+}}] (%{{.+}}) : memref<?xf32>
// CHECK: call @fusion_cuda_arrival_counters(%{{.+}}) : (index) -> memref<?xi32>
// CHECK-COUNT-2: nvgpu.tma.create.descriptor %{{.+}} : memref<*xbf16> -> <tensor = memref<1x128x64xbf16, #gpu.address_space<workgroup>>, swizzle = none
// CHECK: gpu.launch
// CHECK-SAME: threads({{.*}}) in ({{.*}} = %c512
// CHECK: memref.view {{.+}} to memref<1152xf32, #gpu.address_space<workgroup>>
// CHECK-COUNT-3: nvgpu.mbarrier.arrive.expect_tx %{{.+}}, %c32768
// CHECK: scf.for
// CHECK-COUNT-8: vector.load %{{.+}} : memref<128x64xbf16, #gpu.address_space<workgroup>>, vector<16xbf16>
// CHECK: memref.atomic_rmw addi
func.func @decode_grouped_staged(%q: tensor<2x2x4x1x64xbf16>, %k: tensor<2x2x1x?x64xbf16>, %v: tensor<2x2x1x?x64xbf16>) -> tensor<2x2x4x1x64xbf16> {
  %0 = fusion.kernel attention "decode_grouped_staged_k0" (%q, %k, %v) {plan = #fusion.plan<attention_rows, threads = 128, vector = 16, row = staged, cluster = 1, split = 2, passes = [1, 1, 1]>} : (tensor<2x2x4x1x64xbf16>, tensor<2x2x1x?x64xbf16>, tensor<2x2x1x?x64xbf16>) -> tensor<2x2x4x1x64xbf16> {
  ^bb0(%a: tensor<2x2x4x1x64xbf16>, %b: tensor<2x2x1x?x64xbf16>, %c: tensor<2x2x1x?x64xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 2, 4, 3] : tensor<2x2x1x?x64xbf16> -> tensor<2x2x1x64x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<2x2x4x1x64xbf16>, tensor<2x2x1x64x?xbf16>) -> tensor<2x2x4x1x?xbf16>
    %p = fusion.softmax %s axis = 4 : tensor<2x2x4x1x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<2x2x4x1x?xbf16>, tensor<2x2x1x?x64xbf16>) -> tensor<2x2x4x1x64xbf16>
    fusion.yield %o : tensor<2x2x4x1x64xbf16>
  }
  return %0 : tensor<2x2x4x1x64xbf16>
}

// -----

// A row's ranges as the blocks of a cluster (staged, cluster = 4): no
// workspace, no arrival counts; the launch runs in clusters of 4, a row's
// 4 ranges each a block (an empty one where keys are few). Once the warps'
// states are in shared memory, the whole cluster waits; the first block's
// first group reads the 4 warps' states of every block through distributed
// shared memory (mapa, in rank order), folds them and writes the row; no
// block leaves before a second cluster barrier.
// CHECK-LABEL: func.func @decode_cluster_staged
// CHECK-NOT: gpu.alloc
// CHECK-NOT: call @fusion_cuda_arrival_counters
// CHECK: gpu.launch
// CHECK-SAME: clusters
// CHECK-SAME: threads({{.*}}) in ({{.*}} = %c128
// CHECK-SAME: dynamic_shared_memory_size %c101508_i32
// CHECK-NOT: workgroup(
// CHECK: arith.minui %{{.+}}, %{{.+}} : index
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 3>
// CHECK-COUNT-6: nvgpu.tma.async.load
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-COUNT-16: llvm.load %{{.+}} {alignment = 16 : i64} : !llvm.ptr<7> -> vector<16xf32>
// CHECK: vector.store %{{.+}} : memref<2x4x1x128xbf16>, vector<16xbf16>
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-NOT: memref.atomic_rmw
// CHECK-NOT: gpu.dealloc
// PTX: gpu.binary @decode_cluster_staged_k0_module
// PTX-SAME: barrier.cluster.arrive
// PTX-SAME: mapa.shared::cluster
// PTX-SAME: ld.shared::cluster.v4.b32
// CUBIN: gpu.binary @decode_cluster_staged_k0_module
// CUBIN-SAME: bin = "\7FELF
func.func @decode_cluster_staged(%q: tensor<2x4x1x128xbf16>, %k: tensor<2x4x?x128xbf16>, %v: tensor<2x4x?x128xbf16>) -> tensor<2x4x1x128xbf16> {
  %0 = fusion.kernel attention "decode_cluster_staged_k0" (%q, %k, %v) {plan = #fusion.plan<attention_rows, threads = 128, vector = 16, row = staged, cluster = 4, passes = [1, 1, 1]>} : (tensor<2x4x1x128xbf16>, tensor<2x4x?x128xbf16>, tensor<2x4x?x128xbf16>) -> tensor<2x4x1x128xbf16> {
  ^bb0(%a: tensor<2x4x1x128xbf16>, %b: tensor<2x4x?x128xbf16>, %c: tensor<2x4x?x128xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<2x4x?x128xbf16> -> tensor<2x4x128x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<2x4x1x128xbf16>, tensor<2x4x128x?xbf16>) -> tensor<2x4x1x?xbf16>
    %p = fusion.softmax %s axis = 3 : tensor<2x4x1x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<2x4x1x?xbf16>, tensor<2x4x?x128xbf16>) -> tensor<2x4x1x128xbf16>
    fusion.yield %o : tensor<2x4x1x128xbf16>
  }
  return %0 : tensor<2x4x1x128xbf16>
}

// -----

// The register plan in clusters of 2: a launch in clusters has no
// workgroup buffers, so the warps' state slots (16 warps x 136 floats) are
// dynamic shared memory.
// CHECK-LABEL: func.func @decode_cluster
// CHECK-NOT: gpu.alloc
// CHECK: gpu.launch
// CHECK-SAME: clusters
// CHECK-SAME: threads({{.*}}) in ({{.*}} = %c512
// CHECK-SAME: dynamic_shared_memory_size %c8704_i32
// CHECK-NOT: workgroup(
// CHECK: gpu.dynamic_shared_memory
// CHECK: nvvm.cluster.arrive
// CHECK-COUNT-32: llvm.load %{{.+}} {alignment = 16 : i64} : !llvm.ptr<7> -> vector<16xf32>
// CHECK: nvvm.cluster.arrive
func.func @decode_cluster(%q: tensor<2x4x1x128xbf16>, %k: tensor<2x4x?x128xbf16>, %v: tensor<2x4x?x128xbf16>) -> tensor<2x4x1x128xbf16> {
  %0 = fusion.kernel attention "decode_cluster_k0" (%q, %k, %v) {plan = #fusion.plan<attention_rows, threads = 512, vector = 16, row = none, cluster = 2, passes = [1, 1, 1]>} : (tensor<2x4x1x128xbf16>, tensor<2x4x?x128xbf16>, tensor<2x4x?x128xbf16>) -> tensor<2x4x1x128xbf16> {
  ^bb0(%a: tensor<2x4x1x128xbf16>, %b: tensor<2x4x?x128xbf16>, %c: tensor<2x4x?x128xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<2x4x?x128xbf16> -> tensor<2x4x128x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<2x4x1x128xbf16>, tensor<2x4x128x?xbf16>) -> tensor<2x4x1x?xbf16>
    %p = fusion.softmax %s axis = 3 : tensor<2x4x1x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<2x4x1x?xbf16>, tensor<2x4x?x128xbf16>) -> tensor<2x4x1x128xbf16>
    fusion.yield %o : tensor<2x4x1x128xbf16>
  }
  return %0 : tensor<2x4x1x128xbf16>
}

// -----

// Both a cluster and a split (what the planner gives rows fewer than the
// multiprocessors where the ranges fit a cluster): the host compares the
// call's keys with 8192 (kAttentionRowsClusterKeys) and launches the
// clustered kernel for rows up to that, else the kernel whose ranges fold
// through the workspace (its allocations, the memset of its arrival counts
// and the launch only in that branch), named apart.
// CHECK-LABEL: func.func @decode_cluster_or_split
// CHECK: %[[KEYS:.+]] = memref.dim %{{.+}}, %c2 : memref<2x4x?x128xbf16>
// CHECK: %[[SHORT:.+]] = arith.cmpi ule, %[[KEYS]], %c8192 : index
// CHECK: scf.if %[[SHORT]] {
// CHECK-NOT: gpu.alloc
// CHECK: gpu.launch clusters
// CHECK-SAME: function(@decode_cluster_or_split_k0)
// CHECK: nvvm.mapa
// CHECK: } else {
// CHECK: gpu.alloc async
// CHECK: call @fusion_cuda_arrival_counters
// CHECK: gpu.launch blocks
// CHECK-SAME: function(@decode_cluster_or_split_k0_split)
// CHECK: memref.atomic_rmw addi
// CHECK: gpu.dealloc async
// CHECK: call @fusion_cuda_release_arrival_counters
func.func @decode_cluster_or_split(%q: tensor<2x4x1x128xbf16>, %k: tensor<2x4x?x128xbf16>, %v: tensor<2x4x?x128xbf16>) -> tensor<2x4x1x128xbf16> {
  %0 = fusion.kernel attention "decode_cluster_or_split_k0" (%q, %k, %v) {plan = #fusion.plan<attention_rows, threads = 128, vector = 16, row = staged, cluster = 4, split = 4, passes = [1, 1, 1]>} : (tensor<2x4x1x128xbf16>, tensor<2x4x?x128xbf16>, tensor<2x4x?x128xbf16>) -> tensor<2x4x1x128xbf16> {
  ^bb0(%a: tensor<2x4x1x128xbf16>, %b: tensor<2x4x?x128xbf16>, %c: tensor<2x4x?x128xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<2x4x?x128xbf16> -> tensor<2x4x128x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<2x4x1x128xbf16>, tensor<2x4x128x?xbf16>) -> tensor<2x4x1x?xbf16>
    %p = fusion.softmax %s axis = 3 : tensor<2x4x1x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<2x4x1x?xbf16>, tensor<2x4x?x128xbf16>) -> tensor<2x4x1x128xbf16>
    fusion.yield %o : tensor<2x4x1x128xbf16>
  }
  return %0 : tensor<2x4x1x128xbf16>
}
