// RUN: fusion-opt %s --fusion-pipeline="matmul-epilogue=any" --fusion-kernels-to-gpu=matmul-backend=generated | FileCheck %s

// The tensor-core matmul (sm_90) with its epilogue. On the host, a tensor
// map of each operand, in boxes of 128 x 64 (A, a warpgroup's rows) and
// 64 x 64 (B, 128 bytes wide), 128-byte swizzled, zeros past the edges;
// a persistent grid in clusters of two blocks (a cluster per pair of
// neighbouring tiles, at most one per two multiprocessors, which the
// runtime counts, at least one) of three warpgroups per 256 x 128 tile,
// two that multiply and one that loads, with 192 KiB of stages, 16 bytes
// for a split K's arrival count, 32 KiB for the warps' rows in the
// epilogue and 1 KiB to align the stages.
// CHECK-LABEL: func.func @matmul_bias_gelu
// CHECK: %[[MAPA:.+]] = nvgpu.tma.create.descriptor %{{.+}} box[%{{.+}}, %{{.+}}] : memref<*xbf16> -> <tensor = memref<128x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
// CHECK: %[[MAPB:.+]] = nvgpu.tma.create.descriptor %{{.+}} box[%{{.+}}, %{{.+}}] : memref<*xbf16> -> <tensor = memref<64x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
// CHECK: %[[SMS:.+]] = call @fusion_cuda_multiprocessors() : () -> i64
// CHECK: %[[SMSI:.+]] = arith.index_cast %[[SMS]]
// CHECK: %[[PAIRS:.+]] = arith.divui %[[SMSI]], %[[TWO:[^ ]+]] : index
// CHECK: %[[CLUSTERS:.+]] = arith.minui %{{.+}}, %[[PAIRS]]
// CHECK: %[[SOME:.+]] = arith.maxui %[[CLUSTERS]], %{{.+}}
// CHECK: arith.muli %[[SOME]], %[[TWO]]
// CHECK: gpu.launch clusters(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %c2
// CHECK-SAME: threads(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %c384
// CHECK-SAME: dynamic_shared_memory_size %c230416_i32
// Two barriers per stage, initialized by thread 0: "full", completed by
// the bytes of its loads (one arrival, the loading thread's), and
// "empty", by its MMAs (one arrival from each of the 8 multiplying warps
// of both blocks of the cluster), fenced for the cluster, whose blocks
// all wait for it.
// CHECK: %[[FULL:.+]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 4>
// CHECK: %[[EMPTY:.+]] = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 4>
// CHECK: scf.if
// CHECK: nvgpu.mbarrier.init %[[FULL]][%{{.+}}], %c1
// CHECK: nvgpu.mbarrier.init %[[EMPTY]][%{{.+}}], %c16
// CHECK: nvvm.fence.mbarrier.init
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// The warpgroup as the warp's first lane has it (uniform across the warp).
// CHECK: %[[GROUP:.+]], %{{.+}} = gpu.shuffle idx %{{.+}}, %c0_i32, %c32_i32 : i32
// CHECK: %[[GROUPI:.+]] = arith.index_cast{{.*}} %[[GROUP]]
// The third warpgroup keeps few registers; its first thread loads every
// step of the block's tiles (a grid apart, steps numbered across them,
// 5 steps of 64 for K = 296, the last partial) once the stage's empty
// barrier has completed its previous phase: the rows of A of one
// warpgroup (the block's rank's, predicated) into both blocks of the
// cluster, two boxes of B into its own.
// CHECK: %[[LOADER:.+]] = arith.cmpi eq, %[[GROUPI]], %c2
// CHECK: scf.if %[[LOADER]] {
// CHECK: nvvm.setmaxregister decrease 56
// CHECK: arith.cmpi eq, %{{.+}}, %c256
// CHECK: nvgpu.tma.prefetch.descriptor %[[MAPA]]
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %[[GRID:[^ ]+]] iter_args(%{{.+}} = %c0
// CHECK: scf.for %{{.+}} = %{{.+}} to %c5
// CHECK: builtin.unrealized_conversion_cast %[[EMPTY]] : !nvgpu.mbarrier.group<{{.+}}> to memref<4xi64, #gpu.address_space<workgroup>>
// CHECK: scf.while
// CHECK: nvvm.mbarrier.try_wait %{{.+}}, %{{.+}} : !llvm.ptr<3>, i32 -> i1
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%{{.+}}], %c49152
// CHECK-COUNT-2: nvgpu.tma.async.load %[[MAPA]]{{.+}} multicast_mask = %c3_i16, predicate
// CHECK-COUNT-2: nvgpu.tma.async.load %[[MAPB]]{{.+}} to %{{[^ ]+}} :
// CHECK: } else {
// The two others take more registers and multiply the same tiles: per
// step, wait for the stage's bytes, multiply it and, once the previous
// step's MMA is done, release that one's stage (the first lane of each
// warp, in both blocks, releasing at the block's scope: the cluster's
// would fence the epilogue's global stores); after the last, release it
// too.
// CHECK: nvvm.setmaxregister increase 224
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %[[GRID]] iter_args
// CHECK: nvgpu.warpgroup.mma.init.accumulator -> <fragmented = vector<128x128xf32>>
// CHECK: scf.for %{{.+}} = %{{.+}} to %c5 step %{{.+}} iter_args
// CHECK: builtin.unrealized_conversion_cast %[[FULL]]
// CHECK: nvvm.mbarrier.try_wait
// CHECK: nvgpu.warpgroup.generate.descriptor %{{.+}}, %[[MAPA]]
// CHECK: nvgpu.warpgroup.generate.descriptor %{{.+}}, %[[MAPB]]
// CHECK: nvgpu.warpgroup.mma {{.+}} {transposeB} : <tensor = memref<128x64xbf16, {{.+}}>>, <tensor = memref<64x128xbf16, {{.+}}>>
// CHECK-NOT: gpu.barrier
// CHECK: builtin.unrealized_conversion_cast %[[EMPTY]]
// CHECK: nvvm.mapa %{{.+}}, %c0_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: nvvm.mbarrier.arrive %{{[^ ]+}} : !llvm.ptr<7>
// CHECK: nvvm.mapa %{{.+}}, %c1_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: nvvm.mbarrier.arrive %{{[^ ]+}} : !llvm.ptr<7>
// CHECK: scf.yield
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: builtin.unrealized_conversion_cast %[[EMPTY]]
// CHECK-COUNT-2: nvvm.mbarrier.arrive
// The epilogue: each warp rounds its pairs of the accumulators to bf16
// into its 16 rows of shared memory, then reads vectors of 8 along N and
// evaluates the bias, erf gelu on them (its bf16 form: erfc's polynomial
// and a fast exponential) and stores each output once (the accesses to
// shared memory aligned: 4 and 16 bytes). A tile wholly inside the output
// evaluates its warp's 8 vectors in one batch, unmasked, and stores them
// after the last one's loads; an edge tile loops over them, masked.
// CHECK: builtin.unrealized_conversion_cast %{{.+}} : !nvgpu.warpgroup.accumulator<fragmented = vector<128x128xf32>> to !llvm.struct<(struct<(f32
// CHECK: llvm.extractvalue
// CHECK: arith.truncf %{{.+}} : vector<2xf32> to vector<2xbf16>
// CHECK: vector.store %{{.+}} {alignment = 4 : i64} : memref<16x128xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK: nvvm.bar.warp.sync
// CHECK: %[[INSIDE:.+]] = arith.andi
// CHECK: scf.if %[[INSIDE]] {
// CHECK: scf.for %{{.+}} = %c0{{(_[0-9]+)?}} to %c8{{(_[0-9]+)?}} step %c8
// CHECK-NOT: vector.store
// CHECK: vector.load %{{.+}} {alignment = 16 : i64} : memref<16x128xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK-NOT: vector.store
// CHECK: vector.load %{{.+}} {alignment = 16 : i64} : memref<16x128xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK-NOT: vector.store
// CHECK: vector.load %{{.+}} {alignment = 16 : i64} : memref<16x128xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK-NOT: vector.store
// CHECK: vector.load %{{.+}} {alignment = 16 : i64} : memref<16x128xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK-NOT: vector.store
// CHECK: vector.load %{{.+}} {alignment = 16 : i64} : memref<16x128xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK-NOT: vector.store
// CHECK: vector.load %{{.+}} {alignment = 16 : i64} : memref<16x128xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK-NOT: vector.store
// CHECK: vector.load %{{.+}} {alignment = 16 : i64} : memref<16x128xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK-NOT: vector.store
// CHECK: vector.load %{{.+}} {alignment = 16 : i64} : memref<16x128xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK-NOT: math.erf
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-NOT: vector.load %{{.+}} : memref<16x128xbf16
// CHECK-COUNT-8: vector.store {{.+}} : memref<300x200xbf16>, vector<8xbf16>
// CHECK: } else {
// CHECK: scf.for
// CHECK: scf.if
// CHECK: vector.load %{{.+}} {alignment = 16 : i64} : memref<16x128xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK-NOT: math.erf
// CHECK: math.fma
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-NOT: math.erf
// CHECK: vector.store {{.+}} vector<8xbf16>
// CHECK: nvvm.bar.warp.sync
// CHECK: scf.yield
// No block leaves while the other may still load into it or arrive on its
// barriers.
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-NEXT: gpu.terminator
func.func @matmul_bias_gelu(%a: tensor<300x296xbf16>, %b: tensor<296x200xbf16>, %bias: tensor<200xbf16>) -> tensor<300x200xbf16> {
  %0 = fusion.matmul %a, %b : (tensor<300x296xbf16>, tensor<296x200xbf16>) -> tensor<300x200xbf16>
  %1 = fusion.add %0, %bias : (tensor<300x200xbf16>, tensor<200xbf16>) -> tensor<300x200xbf16>
  %2 = fusion.gelu %1 : tensor<300x200xbf16>
  return %2 : tensor<300x200xbf16>
}

// A pair of products sharing A (the gated MLP): B's tile is a 64-column
// box of each, one tensor map per weight, so each 256 x 128 accumulator
// holds both products of 64 output columns (a grid of ceil(96 / 64) = 2
// tiles per row of tiles); the epilogue reads the first at column c and the
// second at c + 64 and writes only the gated result (a store a vector:
// 4 in a batch).
// CHECK-LABEL: func.func @gated_pair
// CHECK: %[[PA:.+]] = nvgpu.tma.create.descriptor {{.+}} -> <tensor = memref<128x64xbf16
// CHECK: %[[PG:.+]] = nvgpu.tma.create.descriptor {{.+}} -> <tensor = memref<64x64xbf16
// CHECK: %[[PU:.+]] = nvgpu.tma.create.descriptor {{.+}} -> <tensor = memref<64x64xbf16
// CHECK: arith.muli %{{.+}}, %c2
// CHECK: gpu.launch
// CHECK: nvgpu.tma.prefetch.descriptor %[[PA]]
// CHECK: nvgpu.tma.prefetch.descriptor %[[PG]]
// CHECK: nvgpu.tma.prefetch.descriptor %[[PU]]
// CHECK: nvgpu.tma.async.load %[[PG]]
// CHECK: nvgpu.tma.async.load %[[PU]]
// CHECK: nvgpu.warpgroup.mma {{.+}} {transposeB}
// CHECK: bar.warp.sync
// CHECK: scf.for %{{.+}} = %c0{{(_[0-9]+)?}} to %c4{{(_[0-9]+)?}} step %c4
// CHECK: %[[C:.+]] = arith.muli %{{.+}}, %c8{{(_[0-9]+)?}} : index
// CHECK: %[[C0:.+]] = arith.addi %[[C]], %c0{{(_[0-9]+)?}} : index
// CHECK: vector.load %{{.+}} : memref<16x128xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: %[[C64:.+]] = arith.addi %[[C]], %c64{{(_[0-9]+)?}} : index
// CHECK: vector.load %{{.+}} : memref<16x128xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-COUNT-4: vector.store {{.+}} : memref<?x96xbf16>, vector<8xbf16>
// CHECK-NEXT: }
// CHECK: } else {
// CHECK: scf.for
// CHECK: vector.store {{.+}} : memref<?x96xbf16>, vector<8xbf16>
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK: gpu.terminator
func.func @gated_pair(%x: tensor<?x64xbf16>, %wg: tensor<64x96xbf16>, %wu: tensor<64x96xbf16>) -> tensor<?x96xbf16> {
  %g = fusion.matmul %x, %wg : (tensor<?x64xbf16>, tensor<64x96xbf16>) -> tensor<?x96xbf16>
  %u = fusion.matmul %x, %wu : (tensor<?x64xbf16>, tensor<64x96xbf16>) -> tensor<?x96xbf16>
  %s = fusion.silu %g : tensor<?x96xbf16>
  %0 = fusion.mul %s, %u : tensor<?x96xbf16>
  return %0 : tensor<?x96xbf16>
}

// The halves of one product: one tensor map, the second box from the
// slice's column offset on (96) past the tile's first column.
// CHECK-LABEL: func.func @gated_halves
// CHECK: nvgpu.tma.create.descriptor
// CHECK: %[[PW:.+]] = nvgpu.tma.create.descriptor {{.+}} -> <tensor = memref<64x64xbf16
// CHECK-NOT: nvgpu.tma.create.descriptor
// CHECK: gpu.launch
// CHECK: %[[SECOND:.+]] = arith.addi %[[COL:.+]], %c96
// CHECK: %[[FIRST:.+]] = arith.addi %[[COL]], %c0
// CHECK-DAG: nvgpu.tma.async.load %[[PW]][%[[SECOND]], %{{.+}}]
// CHECK-DAG: nvgpu.tma.async.load %[[PW]][%[[FIRST]], %{{.+}}]
func.func @gated_halves(%x: tensor<?x64xbf16>, %w: tensor<64x192xbf16>) -> tensor<?x96xbf16> {
  %p = fusion.matmul %x, %w : (tensor<?x64xbf16>, tensor<64x192xbf16>) -> tensor<?x192xbf16>
  %g = fusion.slice %p offsets = [0, 0] sizes = [-1, 96] strides = [1, 1] : tensor<?x192xbf16> -> tensor<?x96xbf16>
  %u = fusion.slice %p offsets = [0, 96] sizes = [-1, 96] strides = [1, 1] : tensor<?x192xbf16> -> tensor<?x96xbf16>
  %s = fusion.silu %g : tensor<?x96xbf16>
  %0 = fusion.mul %s, %u : tensor<?x96xbf16>
  return %0 : tensor<?x96xbf16>
}

// At most 256 rows (decode), K in ranges over blocks: with M dynamic the
// host picks the kernel from M. The few-row kernel of a single product of
// kernel inputs is a warpgroup per 64 x 128 tile (96 KiB of stages) and a
// loading one; K = 1024 is 16 steps, in 4 ranges (the plan's split), a
// block each (no loop over items). Each warp stores its accumulators to a workspace (f32) as its
// lanes hold them and counts its arrival on the runtime's counters (kept
// per stream, zero: no memset; one per warp of each tile), lane 0's count
// shuffled to the others; the position's last warp sets its count back to
// zero, sums the four partials of each vector in range order as it stages
// its rows, then runs the epilogue on them.
// CHECK-LABEL: func.func @decode_relu
// CHECK: %[[ROWS:.+]] = memref.dim %{{.+}}, %c0
// CHECK-DAG: %[[AT_MOST_256:.+]] = arith.cmpi ule, %[[ROWS]], %c256
// CHECK-DAG: %[[SOME:.+]] = arith.cmpi ugt, %[[ROWS]], %c0
// CHECK: %[[FEW:.+]] = arith.andi %[[SOME]], %[[AT_MOST_256]]
// CHECK: scf.if %[[FEW]] {
// CHECK: %[[COUNTERS:.+]] = arith.muli %{{.+}}, %c4
// CHECK: %[[ARRIVALS:.+]] = func.call @fusion_cuda_arrival_counters(%[[COUNTERS]]) : (index) -> memref<?xi32>
// CHECK: %[[PARTIALS:.+]], %{{.+}} = gpu.alloc async {{.+}} : memref<?xf32>
// CHECK-NOT: gpu.memset
// CHECK: nvgpu.tma.create.descriptor {{.+}} -> <tensor = memref<64x64xbf16
// CHECK: %[[BLOCKS:.+]] = arith.muli %{{.+}}, %c4
// CHECK-NOT: fusion_cuda_multiprocessors
// CHECK: gpu.launch
// CHECK-SAME: threads(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %c256
// CHECK-SAME: dynamic_shared_memory_size %c115728_i32
// CHECK-SAME: function(@decode_relu_k0_few_rows)
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 4>
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.+}}, %c24576
// CHECK: } else {
// CHECK-NOT: scf.for {{.+}} step %arg9
// CHECK: nvgpu.warpgroup.mma {{.+}} {transposeB} : <tensor = memref<64x64xbf16, {{.+}}>>, <tensor = memref<64x128xbf16, {{.+}}>>
// CHECK-NOT: nvgpu.warpgroup.mma.store
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-16: vector.store %{{.+}}, %[[PARTIALS]][%{{.+}}] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// CHECK: llvm.fence syncscope("device") acq_rel
// CHECK: nvvm.bar.warp.sync
// CHECK: memref.atomic_rmw addi %{{.+}}, %[[ARRIVALS]]
// CHECK: memref.atomic_rmw assign %c0_i32{{[_0-9]*}}, %[[ARRIVALS]]
// CHECK: %[[COUNT:.+]], %{{.+}} = gpu.shuffle idx
// CHECK: %[[LAST:.+]] = arith.cmpi eq, %[[COUNT]], %c3_i32
// CHECK: scf.if %[[LAST]] {
// CHECK-NEXT: llvm.fence syncscope("device") acq_rel
// CHECK: scf.if %[[LAST]] {
// CHECK-COUNT-4: vector.load %[[PARTIALS]]
// CHECK: vector.store {{.+}} : memref<16x128xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK: arith.maximumf
// CHECK: vector.store {{.+}} vector<8xbf16>
// CHECK: gpu.terminator
// CHECK: gpu.dealloc async {{.+}} %[[PARTIALS]]
// CHECK: func.call @fusion_cuda_release_arrival_counters(%[[ARRIVALS]])
// CHECK: } else {
// CHECK: gpu.launch
// CHECK-SAME: threads(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %c384
// CHECK-SAME: function(@decode_relu_k0)
func.func @decode_relu(%a: tensor<?x1024xbf16>, %b: tensor<1024x256xbf16>) -> tensor<?x256xbf16> {
  %0 = fusion.matmul %a, %b : (tensor<?x1024xbf16>, tensor<1024x256xbf16>) -> tensor<?x256xbf16>
  %1 = fusion.relu %0 : tensor<?x256xbf16>
  return %1 : tensor<?x256xbf16>
}

// With few rows a prologue with an input of its shape and type (a scale
// of A along K) is computed in place: TMA loads x as A's tile (the stage
// expects A's 8 KiB and B's 32 KiB), and the threads rewrite the tile of
// the step before its MMA: the scale's vectors read from memory first, then
// the wait for the stage, each unit of 8 read from the tile, multiplied,
// rounded, zeros past the edges (select), stored back, and fenced for the
// async proxy. The first step's before the loop; the others while the MMA
// of the step before runs, before the block barrier. K is not split: the
// grid is persistent and the warps' epilogue reads their 16 rows of 256
// columns back, each warp's staged past the stages (32 KiB in all), though
// no warpgroup loads on its own (128 threads).
// CHECK-LABEL: func.func @prologue_in_place
// CHECK: %[[MAPA:.+]] = nvgpu.tma.create.descriptor %{{.+}} : memref<*xbf16> -> <tensor = memref<64x64xbf16
// CHECK: %[[MAPB:.+]] = nvgpu.tma.create.descriptor %{{.+}} : memref<*xbf16> -> <tensor = memref<64x64xbf16
// CHECK: call @fusion_cuda_multiprocessors
// CHECK: gpu.launch
// CHECK-SAME: threads(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %c128
// CHECK-SAME: dynamic_shared_memory_size %c197648_i32
// CHECK-SAME: function(@prologue_in_place_k0_few_rows)
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.+}}, %c40960
// CHECK: nvgpu.tma.async.load %[[MAPA]]
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK-COUNT-4: vector.load %arg1[%{{.+}}] {{.+}} : memref<128xbf16>, vector<8xbf16>
// CHECK: nvvm.mbarrier.try_wait
// CHECK: %[[RAW:.+]] = vector.load %[[TILE:.+]][%[[AT:.+]]] {alignment = 16 : i64} : memref<20480xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: arith.extf %[[RAW]]
// CHECK: arith.mulf
// CHECK: arith.select %{{.+}}, %{{.+}}, %{{.+}} : vector<8xbf16>
// CHECK: vector.store %{{.+}}, %[[TILE]][%[[AT]]]
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait
// CHECK: nvgpu.warpgroup.mma
// CHECK: scf.if
// CHECK: vector.load %arg1
// CHECK: nvvm.mbarrier.try_wait
// CHECK: nvvm.fence.proxy
// CHECK: gpu.barrier
// CHECK: nvgpu.tma.async.load %[[MAPA]]
// CHECK: scf.yield
// CHECK: nvvm.bar.warp.sync
// CHECK: vector.load %{{.+}} : memref<16x256xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
func.func @prologue_in_place(%x: tensor<48x128xbf16>, %s: tensor<128xbf16>, %w: tensor<128x192xbf16>) -> tensor<48x192xbf16> {
  %xs = fusion.mul %x, %s : (tensor<48x128xbf16>, tensor<128xbf16>) -> tensor<48x128xbf16>
  %0 = fusion.matmul %xs, %w : (tensor<48x128xbf16>, tensor<128x192xbf16>) -> tensor<48x192xbf16>
  return %0 : tensor<48x192xbf16>
}

// Many rows read each operand tile many times: the prologue (here a
// convert from f32) is materialized first, by a launch of its own into a
// scratch buffer, which A's tensor map then reads.
// CHECK-LABEL: func.func @prologue_materialized
// CHECK: %[[SCRATCH:.+]], %{{.+}} = gpu.alloc async [%{{.+}}] () : memref<300x128xbf16>
// CHECK: gpu.launch
// CHECK-SAME: function(@prologue_materialized_k0_prologue0)
// CHECK: vector.load %arg0[%{{.+}}, %{{.+}}] {{.+}} : memref<300x128xf32>, vector<8xf32>
// CHECK: vector.store %{{.+}}, %[[SCRATCH]][%{{.+}}, %{{.+}}] {{.+}} : memref<300x128xbf16>, vector<8xbf16>
// CHECK: memref.cast %[[SCRATCH]]
// CHECK: nvgpu.tma.create.descriptor
// CHECK: gpu.launch
// CHECK-SAME: function(@prologue_materialized_k0)
// CHECK: gpu.dealloc async [%{{.+}}] %[[SCRATCH]]
func.func @prologue_materialized(%x: tensor<300x128xf32>, %w: tensor<128x192xbf16>) -> tensor<300x192xbf16> {
  %xb = fusion.convert %x : tensor<300x128xf32> to tensor<300x128xbf16>
  %0 = fusion.matmul %xb, %w : (tensor<300x128xbf16>, tensor<128x192xbf16>) -> tensor<300x192xbf16>
  return %0 : tensor<300x192xbf16>
}

// Both operands converted from f32 (autocast) at 16 rows (the few-row
// kernel), no input of their type: the threads evaluate both tiles from
// the f32 tensors as they refill a stage (A's 64 rows, B's four 64-column
// boxes); no tensor map, no barrier wait. Such kernels take a block per
// tile, not a persistent grid, and stage the accumulators where the stages
// were.
// CHECK-LABEL: func.func @prologue_autocast
// CHECK-NOT: nvgpu.tma.create.descriptor
// CHECK-NOT: call @fusion_cuda_multiprocessors
// CHECK: gpu.launch
// CHECK-SAME: function(@prologue_autocast_k0_few_rows)
// CHECK-NOT: nvgpu.tma.async.load
// CHECK: vector.load %arg0[%{{.+}}, %{{.+}}] {{.+}} : memref<16x256xf32>, vector<8xf32>
// CHECK-COUNT-4: vector.load %arg1[%{{.+}}, %{{.+}}] {{.+}} : memref<256x256xf32>, vector<8xf32>
// CHECK-NOT: mbarrier.try_wait
// CHECK: nvgpu.warpgroup.mma
// CHECK-NOT: mbarrier.try_wait
// CHECK-NOT: nvgpu.tma.async.load
// CHECK: nvgpu.warpgroup.mma.store
// CHECK: return
func.func @prologue_autocast(%x: tensor<16x256xf32>, %w: tensor<256x256xf32>) -> tensor<16x256xbf16> {
  %xb = fusion.convert %x : tensor<16x256xf32> to tensor<16x256xbf16>
  %wb = fusion.convert %w : tensor<256x256xf32> to tensor<256x256xbf16>
  %0 = fusion.matmul %xb, %wb : (tensor<16x256xbf16>, tensor<256x256xbf16>) -> tensor<16x256xbf16>
  return %0 : tensor<16x256xbf16>
}
