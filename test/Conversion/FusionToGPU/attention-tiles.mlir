// RUN: fusion-opt %s --split-input-file --fusion-kernels-to-gpu | FileCheck %s
// RUN: fusion-opt %s --split-input-file --fusion-to-nvvm=format=isa | FileCheck %s --check-prefix=PTX
// RUN: %if ptxas %{ fusion-opt %s --split-input-file --fusion-to-nvvm=format=bin | FileCheck %s --check-prefix=CUBIN %}

// attention_tiles: on the host, 3-D tensor maps of Q, K and V (batch axes
// collapsed, so that TMA fills zeros past each batch's rows) in 64 x 64
// boxes; a persistent launch of blocks of 384 threads, as many as the
// device has multiprocessors (or tiles, if fewer), each going through the
// tiles of a batch's 128 query rows a grid apart (`done`, the steps of its
// tiles before, numbers the stages' rounds), with the tiles in dynamic
// shared memory (two Q buffers of 16 KiB, taking the tiles in turn, two
// stages of K and V 32 KiB each, 1 KiB of alignment slack). The last
// warpgroup prefetches the tensor maps (K's and V's only with keys), then
// loads: a tile's Q once the multiplying warps have released its buffer's
// tile before (the tile two before it), then each step's K and V, each
// after the "empty" barrier of its stage's previous round (K and V
// released apart), keeping 24 registers a thread; the other two
// multiply, with 240 (D = 64), and release Q after their tile's last S.
// They issue their products in turn (named barriers 1 and 2 of 256
// threads: a warpgroup waits at its own, then arrives at the other's; the
// second arrives at the first's before step 0). Step 0: S = Q K^T in 4
// MMAs of 16 along the head
// (K read K-major: B `col`, the first MMA replacing the accumulator), K
// released, the scores' math (the scale) for pairs of adjacent keys, its
// roundings to bf16 packed conversions with a zero low half (no scalar
// truncf),
// keys past the end masked only in a partial step, the rows' maxima over the lane quads (shuffles 1 and 2),
// ex2.approx, the probabilities rounded to bf16 pairs, each a 32-bit word
// kept in registers (carried by the loop: the output, two maxima, two
// sums, 32 words). Each later step issues its S with the previous step's
// O += P V (8 MMAs with A from registers, inline PTX, four words each; V
// N-major: trans-b 1), waits for S alone (wait group 1) and runs its
// softmax while P V runs, then waits for that, releases its V and rescales
// O. Nothing goes through shared memory but Q, K and V until the output:
// after the last P V (after the loop), each warpgroup writes its 64 rows
// into its rows of the tile's Q buffer, swizzled as a TMA box, fences them
// for the async proxy, meets its own threads at a named barrier (3 + the
// warpgroup, 128 threads) and its first thread stores them by TMA (a bulk
// group). That thread releases the buffer to the loader in the next tile,
// after its first S, once TMA has read it (the tile two after loads into
// it; the next tile's loads run meanwhile), and waits for its stores
// before the block exits. The empty barriers: K and V each stage's (8
// warps), the Q buffers' (2: a thread of each warpgroup).
// CHECK-LABEL: func.func @prefill
// CHECK: %[[MPS:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK: memref.collapse_shape %{{.+}} {{\[\[}}0, 1], [2], [3]] : memref<2x4x?x64xbf16> into memref<8x?x64xbf16>
// CHECK-COUNT-3: nvgpu.tma.create.descriptor %{{.+}} box[%{{.+}}, %{{.+}}, %{{.+}}] : memref<*xbf16> -> <tensor = memref<1x64x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
// CHECK: memref.collapse_shape %arg3 {{\[\[}}0, 1], [2], [3]] : memref<2x4x?x64xbf16> into memref<8x?x64xbf16>
// CHECK: %[[MAPO:.+]] = nvgpu.tma.create.descriptor %{{.+}} box[%{{.+}}, %{{.+}}, %{{.+}}] : memref<*xbf16> -> <tensor = memref<1x64x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
// CHECK: %[[PERSISTENT:.+]] = arith.minui %{{.+}}, %[[MPS]] : index
// CHECK: arith.maxui %[[PERSISTENT]], %c1
// CHECK: gpu.launch blocks(%[[BLOCK:[a-z0-9]+]], {{[^)]+}}) in (%[[GRIDDIM:[a-z0-9]+]] = %{{[0-9]+}},
// CHECK-SAME: threads({{.*}}) in ({{.*}} = %c384
// CHECK-SAME: dynamic_shared_memory_size %c99328_i32
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 6>
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 6>
// CHECK-COUNT-4: nvgpu.mbarrier.init %{{.+}}[%{{.+}}], %c8
// CHECK-COUNT-2: nvgpu.mbarrier.init %{{.+}}[%{{.+}}], %c2
// CHECK: nvvm.setmaxregister  decrease 24
// CHECK: nvgpu.tma.prefetch.descriptor
// CHECK: scf.if
// CHECK-COUNT-2: nvgpu.tma.prefetch.descriptor
// CHECK: scf.for %[[TILE:.+]] = %[[BLOCK]] to %{{.+}} step %[[GRIDDIM]] iter_args(%[[DONE:.+]] = %c0
// CHECK: %[[ROUND:.+]] = arith.divui %{{.+}}, %[[GRIDDIM]] : index
// CHECK: %[[QBUF:.+]] = arith.remui %[[ROUND]], %c2{{.*}} : index
// CHECK: arith.muli %[[QBUF]], %c16384
// CHECK: arith.divui %[[ROUND]], %c2
// CHECK: %[[QRELEASED:.+]] = arith.addi %[[QBUF]], %c4
// CHECK: nvvm.mbarrier.try_wait
// CHECK: %[[QLOADED:.+]] = arith.addi %[[QBUF]], %c0
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.+}}[%[[QLOADED]]], %c16384
// CHECK: nvgpu.tma.async.load
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait
// CHECK: nvgpu.mbarrier.arrive.expect_tx
// CHECK: nvgpu.tma.async.load
// CHECK: nvvm.mbarrier.try_wait
// CHECK: nvgpu.mbarrier.arrive.expect_tx
// CHECK: nvgpu.tma.async.load
// CHECK: nvvm.setmaxregister  increase 240
// CHECK: scf.if %{{[0-9]+}} {{[{]$}}
// CHECK: nvvm.barrier.arrive id = %c1_i32 number_of_threads = %c256_i32
// CHECK: scf.for %{{.+}} = %[[BLOCK]] to %{{.+}} step %[[GRIDDIM]] iter_args(%{{.+}} = %c0
// CHECK: %[[OWN:.+]] = arith.addi %{{.+}}, %c1_i32{{.*}} : i32
// CHECK: %[[NEXT:.+]] = arith.addi %{{.+}}, %c1_i32{{.*}} : i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-NEXT: nvvm.barrier id = %[[OWN]] number_of_threads = %c256_i32
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <zero>, <wrapped>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <one>, <wrapped>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.barrier.arrive id = %[[NEXT]] number_of_threads = %c256_i32
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: %[[BEFORE:.+]] = arith.subi %{{.+}}, %c1
// CHECK: %[[QBEFORE:.+]] = arith.remui %[[BEFORE]], %c2
// CHECK-NEXT: %[[QRELEASE:.+]] = arith.addi %[[QBEFORE]], %c4
// CHECK-NEXT: nvgpu.mbarrier.arrive %{{.+}}[%[[QRELEASE]]] : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 6>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvgpu.mbarrier.arrive
// CHECK-NOT: arith.truncf %{{[0-9]+}} : f32 to bf16
// CHECK: nvvm.convert.f32x2.to.bf16x2
// CHECK-NOT: arith.truncf %{{[0-9]+}} : f32 to bf16
// CHECK: scf.if %{{.+}} -> (f32, f32
// CHECK: gpu.shuffle  xor %{{.+}}, %c1_i32
// CHECK: gpu.shuffle  xor %{{.+}}, %c2_i32
// CHECK: math.fma
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-COUNT-32: vector.bitcast %{{.+}} : vector<2xbf16> to vector<1xi32>
// CHECK-NOT: vector.store %{{.+}} : memref<{{.+}}, #gpu.address_space<workgroup>>
// CHECK-NOT: nvvm.barrier id
// CHECK: scf.for %{{.+}} iter_args(%{{[a-z0-9]+}} = %{{[0-9]+}}, %{{[a-z0-9]+}} = %{{[0-9]+}}, %{{[a-z0-9]+}} = %{{[0-9]+}}, %{{[a-z0-9]+}} = %{{[0-9]+}}, %{{[a-z0-9]+}} = %{{[0-9]+}}, %[[W0:arg[0-9]+]] = %{{[0-9]+}}, %[[W1:arg[0-9]+]] = %{{[0-9]+}}, %[[W2:arg[0-9]+]] = %{{[0-9]+}}, %[[W3:arg[0-9]+]] = %{{[0-9]+}},
// CHECK-SAME: -> (!llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>, f32, f32, f32, f32, i32, i32,
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-NEXT: nvvm.barrier id = %[[OWN]] number_of_threads = %c256_i32
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, $37, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0, {{.+}}, $31}, {$32, $33, $34, $35}, $36, p, 1, 1, 1;\0A}", "=f,{{.+}},=f,r,r,r,r,l,r,0,{{.+}},31" %[[W0]], %[[W1]], %[[W2]], %[[W3]],
// CHECK-COUNT-7: llvm.inline_asm has_side_effects {{.+}}wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.barrier.arrive id = %[[NEXT]] number_of_threads = %c256_i32
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvgpu.mbarrier.arrive
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvgpu.mbarrier.arrive
// CHECK-NOT: vector.store %{{.+}} : memref<{{.+}}, #gpu.address_space<workgroup>>
// CHECK: scf.yield
// CHECK-NOT: nvgpu.mbarrier.arrive %{{.+}}[%{{.+}}] : <memorySpace = #gpu.address_space<workgroup>, num_barriers = 6>
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-NEXT: nvvm.barrier id = %[[OWN]] number_of_threads = %c256_i32
// CHECK-COUNT-8: llvm.inline_asm has_side_effects {{.+}}wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.barrier.arrive id = %[[NEXT]] number_of_threads = %c256_i32
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-16: vector.store %{{.+}} {alignment = 4 : i64} : memref<4096xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK-NOT: vector.store
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id = %{{.+}} number_of_threads = %c128_i32
// CHECK: nvgpu.tma.async.store %{{.+}} to %[[MAPO]][%c0{{.*}}, %{{.+}}, %{{.+}}] : memref<1x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK: scf.yield
// CHECK: nvvm.cp.async.bulk.wait_group 0
// CHECK-NOT: fusion.

// The kernel's module is built for sm_90a (wgmma): 3-D TMA loads and
// stores, both products' MMAs, ptxas takes it.
// PTX: llvm.call @mgpuTensorMapEncodeTiledMemref(
// PTX: gpu.binary @prefill_k0_module [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">
// PTX-SAME: .target sm_90a
// PTX-SAME: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-SAME: cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group
// PTX-SAME: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX-SAME: cvt.rn.bf16x2.f32
// PTX-SAME: ex2.approx.ftz.f32
// PTX-SAME: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// CUBIN: gpu.binary @prefill_k0_module
// CUBIN-SAME: bin = "\7FELF
func.func @prefill(%q: tensor<2x4x?x64xbf16>, %k: tensor<2x4x?x64xbf16>, %v: tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16> {
  %0 = fusion.kernel attention "prefill_k0" (%q, %k, %v) {plan = #fusion.plan<attention_tiles, threads = 384, vector = 2, row = none, cluster = 1, passes = [1, 1, 1]>} : (tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16> {
  ^bb0(%a: tensor<2x4x?x64xbf16>, %b: tensor<2x4x?x64xbf16>, %c: tensor<2x4x?x64xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<2x4x?x64xbf16> -> tensor<2x4x64x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<2x4x?x64xbf16>, tensor<2x4x64x?xbf16>) -> tensor<2x4x?x?xbf16>
    %scale = fusion.constant dense<0.125> : tensor<bf16>
    %t = fusion.mul %s, %scale : (tensor<2x4x?x?xbf16>, tensor<bf16>) -> tensor<2x4x?x?xbf16>
    %p = fusion.softmax %t axis = 3 : tensor<2x4x?x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<2x4x?x?xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16>
    fusion.yield %o : tensor<2x4x?x64xbf16>
  }
  return %0 : tensor<2x4x?x64xbf16>
}

// -----

// A plan of 512 threads (D = 64): on the host, the launch of three
// multiplying warpgroups, a block per batch and 192 query rows, where its
// waves of blocks (over the device's multiprocessors) weighed 13 take
// fewer than those of two warpgroups and 128 rows weighed 10; else that
// narrow launch (`_narrow`, as a plan of 384 threads). The wide block:
// Q 24 KiB and two stages of K and V, each stage's "empty" barriers
// counting 12 warps; the loading warpgroup keeps 24 registers a thread and
// the others 160 (the block's pool: 128 for each of 512 threads). Q's rows
// in three TMA boxes, one per warpgroup.
// CHECK-LABEL: func.func @prefill_wide
// CHECK: %[[SMS:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK-DAG: %[[NARROW:.+]] = arith.ceildivui %{{.+}}, %c128 : index
// CHECK-DAG: %[[WIDE:.+]] = arith.ceildivui %{{.+}}, %c192 : index
// CHECK: %[[WIDE_WAVES:.+]] = arith.muli %{{.+}}, %c13 : index
// CHECK: %[[CHOICE:.+]] = arith.cmpi ult, %[[WIDE_WAVES]], %{{.+}} : index
// CHECK: scf.if %[[CHOICE]] {
// CHECK: gpu.launch
// CHECK-SAME: threads({{.*}}) in ({{.*}} = %c512
// CHECK-SAME: dynamic_shared_memory_size %c115712_i32 module(@prefill_wide_k0_module) function(@prefill_wide_k0)
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 6>
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 6>
// CHECK: nvgpu.mbarrier.init %{{.+}}[%{{.+}}], %c12 :
// CHECK: nvvm.setmaxregister  decrease 24
// CHECK: arith.cmpi eq, %{{.+}}, %c384 : index
// CHECK-COUNT-3: nvgpu.tma.async.load
// CHECK: scf.for
// CHECK: nvvm.setmaxregister  increase 160
// CHECK: nvvm.wgmma.mma_async
// CHECK: } else {
// CHECK: gpu.launch
// CHECK-SAME: threads({{.*}}) in ({{.*}} = %c384
// CHECK-SAME: dynamic_shared_memory_size %c99328_i32 module(@prefill_wide_k0_narrow_module) function(@prefill_wide_k0_narrow)
// CHECK: nvvm.setmaxregister  decrease 24
// CHECK: nvvm.setmaxregister  increase 240
// PTX: gpu.binary @prefill_wide_k0_module
// PTX-SAME: .maxntid 512, 1, 1
// PTX-SAME: setmaxnreg.dec.sync.aligned.u32 \0924;
// PTX-SAME: setmaxnreg.inc.sync.aligned.u32 \09160;
// PTX: gpu.binary @prefill_wide_k0_narrow_module
// PTX-SAME: .maxntid 384, 1, 1
// CUBIN: gpu.binary @prefill_wide_k0_module
// CUBIN-SAME: bin = "\7FELF
// CUBIN: gpu.binary @prefill_wide_k0_narrow_module
func.func @prefill_wide(%q: tensor<2x4x?x64xbf16>, %k: tensor<2x4x?x64xbf16>, %v: tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16> {
  %0 = fusion.kernel attention "prefill_wide_k0" (%q, %k, %v) {plan = #fusion.plan<attention_tiles, threads = 512, vector = 2, row = none, cluster = 1, passes = [1, 1, 1]>} : (tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16> {
  ^bb0(%a: tensor<2x4x?x64xbf16>, %b: tensor<2x4x?x64xbf16>, %c: tensor<2x4x?x64xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<2x4x?x64xbf16> -> tensor<2x4x64x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<2x4x?x64xbf16>, tensor<2x4x64x?xbf16>) -> tensor<2x4x?x?xbf16>
    %p = fusion.softmax %s axis = 3 : tensor<2x4x?x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<2x4x?x?xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16>
    fusion.yield %o : tensor<2x4x?x64xbf16>
  }
  return %0 : tensor<2x4x?x64xbf16>
}

// -----

// With the log-sum-exp of the scores as a second result: each row's
// maximum plus the log of its sum, from the first lane of the row's quad,
// rounded into the second output (rows past the end skipped), after the
// output's rows are written to shared memory for TMA.
// CHECK-LABEL: func.func @prefill_lse
// CHECK: gpu.launch
// CHECK: nvvm.wgmma.mma_async
// CHECK: vector.store %{{.+}} : memref<4096xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK: math.log %{{.+}} : f32
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: memref.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] : memref<2x4x?xbf16>
func.func @prefill_lse(%q: tensor<2x4x?x64xbf16>, %k: tensor<2x4x?x64xbf16>, %v: tensor<2x4x?x64xbf16>) -> (tensor<2x4x?x64xbf16>, tensor<2x4x?xbf16>) {
  %0:2 = fusion.kernel attention "prefill_lse_k0" (%q, %k, %v) {plan = #fusion.plan<attention_tiles, threads = 384, vector = 2, row = none, cluster = 1, passes = [1, 1, 1]>} : (tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>) -> (tensor<2x4x?x64xbf16>, tensor<2x4x?xbf16>) {
  ^bb0(%a: tensor<2x4x?x64xbf16>, %b: tensor<2x4x?x64xbf16>, %c: tensor<2x4x?x64xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<2x4x?x64xbf16> -> tensor<2x4x64x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<2x4x?x64xbf16>, tensor<2x4x64x?xbf16>) -> tensor<2x4x?x?xbf16>
    %l = fusion.logsumexp %s axis = 3 : tensor<2x4x?x?xbf16> -> tensor<2x4x?xbf16>
    %p = fusion.softmax %s axis = 3 : tensor<2x4x?x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<2x4x?x?xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16>
    fusion.yield %o, %l : tensor<2x4x?x64xbf16>, tensor<2x4x?xbf16>
  }
  return %0#0, %0#1 : tensor<2x4x?x64xbf16>, tensor<2x4x?xbf16>
}

// -----

// A key limit (what the softmax reads is -inf where key > row + 128, from
// positions): blocks go in groups of batches of about 128 blocks, the last
// query rows' blocks of a group first (its batches inner); each goes
// through the key tiles up to its last row's last key (none where that is
// before the first), the predicate is not evaluated per score, and keys
// are masked only in the steps that reach past the warpgroup's first row's
// limit (or the end).
// CHECK-LABEL: func.func @prefill_causal
// CHECK: gpu.launch
// CHECK: %[[PER:.+]] = arith.divui %c128{{.*}}, %[[TILES:.+]] : index
// CHECK: %[[GROUP_BATCHES:.+]] = arith.maxui %c1{{.*}}, %[[PER]] : index
// CHECK: %[[GROUP_BLOCKS:.+]] = arith.muli %[[GROUP_BATCHES]], %[[TILES]] : index
// CHECK: %[[GROUP:.+]] = arith.divui %{{.+}}, %[[GROUP_BLOCKS]] : index
// CHECK: %[[WITHIN:.+]] = arith.remui %{{.+}}, %[[GROUP_BLOCKS]] : index
// CHECK: %[[HERE:.+]] = arith.minui %[[GROUP_BATCHES]], %{{.+}} : index
// CHECK: arith.remui %[[WITHIN]], %[[HERE]] : index
// CHECK: %[[RANK:.+]] = arith.divui %[[WITHIN]], %[[HERE]] : index
// CHECK: %[[LAST_TILE:.+]] = arith.subi %[[TILES]], %c1
// CHECK: %[[TILE:.+]] = arith.subi %[[LAST_TILE]], %[[RANK]] : index
// CHECK: %[[ROW0:.+]] = arith.muli %[[TILE]], %c128
// CHECK: %[[LAST:.+]] = arith.minui %{{.+}}, %{{.+}} : index
// CHECK: %[[LIMIT:.+]] = arith.addi %[[LAST]], %c128
// CHECK: %[[UPTO:.+]] = arith.divui %[[LIMIT]], %c128
// CHECK: %[[SEEN:.+]] = arith.addi %[[UPTO]], %c1
// CHECK: %[[CAPPED:.+]] = arith.minui %{{.+}}, %[[SEEN]] : index
// CHECK: %[[BEFORE:.+]] = arith.cmpi slt, %[[LIMIT]], %c0
// CHECK: arith.select %[[BEFORE]], %c0{{.*}}, %[[CAPPED]] : index
// CHECK-NOT: arith.uitofp
// CHECK: nvvm.wgmma.mma_async
// CHECK: arith.cmpi sgt
// CHECK: arith.ori
// CHECK: scf.if %{{.+}} -> (f32, f32
// CHECK: arith.cmpi ult
// CHECK: arith.cmpi sle
// CHECK: arith.andi
// CHECK: return
func.func @prefill_causal(%q: tensor<2x4x256x64xbf16>, %k: tensor<2x4x384x64xbf16>, %v: tensor<2x4x384x64xbf16>) -> tensor<2x4x256x64xbf16> {
  %0 = fusion.kernel attention "prefill_causal_k0" (%q, %k, %v) {plan = #fusion.plan<attention_tiles, threads = 384, vector = 2, row = none, cluster = 1, passes = [1, 1, 1]>} : (tensor<2x4x256x64xbf16>, tensor<2x4x384x64xbf16>, tensor<2x4x384x64xbf16>) -> tensor<2x4x256x64xbf16> {
  ^bb0(%a: tensor<2x4x256x64xbf16>, %b: tensor<2x4x384x64xbf16>, %c: tensor<2x4x384x64xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<2x4x384x64xbf16> -> tensor<2x4x64x384xbf16>
    %s = fusion.matmul %a, %kt : (tensor<2x4x256x64xbf16>, tensor<2x4x64x384xbf16>) -> tensor<2x4x256x384xbf16>
    %row = fusion.iota dimension = 0 : tensor<256x1xf32>
    %key = fusion.iota dimension = 1 : tensor<1x384xf32>
    %shift = fusion.constant dense<128.0> : tensor<f32>
    %last = fusion.add %shift, %row : (tensor<f32>, tensor<256x1xf32>) -> tensor<256x1xf32>
    %past = fusion.cmp gt, %key, %last : (tensor<1x384xf32>, tensor<256x1xf32>) -> tensor<256x384xi1>
    %ninf = fusion.constant dense<0xFF80> : tensor<bf16>
    %m = fusion.select %past, %ninf, %s : (tensor<256x384xi1>, tensor<bf16>, tensor<2x4x256x384xbf16>) -> tensor<2x4x256x384xbf16>
    %p = fusion.softmax %m axis = 3 : tensor<2x4x256x384xbf16>
    %o = fusion.matmul %p, %c : (tensor<2x4x256x384xbf16>, tensor<2x4x384x64xbf16>) -> tensor<2x4x256x64xbf16>
    fusion.yield %o : tensor<2x4x256x64xbf16>
  }
  return %0 : tensor<2x4x256x64xbf16>
}

// -----

// PyTorch's is_causal at dynamic lengths (positions sized by Q and K): the
// same key limit, offset 0; the lengths are read off Q and K, and the
// predicate is not evaluated per score.
// CHECK-LABEL: func.func @prefill_causal_dynamic
// CHECK: gpu.launch
// CHECK: %[[LIMIT:.+]] = arith.addi %{{.+}}, %c0
// CHECK: arith.divui %[[LIMIT]], %c128
// CHECK-NOT: arith.uitofp
// CHECK: nvvm.wgmma.mma_async
// CHECK: arith.cmpi sle
// CHECK: return
func.func @prefill_causal_dynamic(%q: tensor<2x4x?x64xbf16>, %k: tensor<2x4x?x64xbf16>, %v: tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16> {
  %0 = fusion.kernel attention "prefill_causal_dynamic_k0" (%q, %k, %v) {plan = #fusion.plan<attention_tiles, threads = 384, vector = 2, row = none, cluster = 1, passes = [1, 1, 1]>} : (tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16> {
  ^bb0(%a: tensor<2x4x?x64xbf16>, %b: tensor<2x4x?x64xbf16>, %c: tensor<2x4x?x64xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<2x4x?x64xbf16> -> tensor<2x4x64x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<2x4x?x64xbf16>, tensor<2x4x64x?xbf16>) -> tensor<2x4x?x?xbf16>
    %row = fusion.iota dimension = 0 size_of %a[2] : tensor<2x4x?x64xbf16> -> tensor<?x1xf32>
    %key = fusion.iota dimension = 1 size_of %b[2] : tensor<2x4x?x64xbf16> -> tensor<1x?xf32>
    %seen = fusion.cmp le, %key, %row : (tensor<1x?xf32>, tensor<?x1xf32>) -> tensor<?x?xi1>
    %ninf = fusion.constant dense<0xFF80> : tensor<bf16>
    %m = fusion.select %seen, %s, %ninf : (tensor<?x?xi1>, tensor<2x4x?x?xbf16>, tensor<bf16>) -> tensor<2x4x?x?xbf16>
    %p = fusion.softmax %m axis = 3 : tensor<2x4x?x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<2x4x?x?xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16>
    fusion.yield %o : tensor<2x4x?x64xbf16>
  }
  return %0 : tensor<2x4x?x64xbf16>
}

// -----

// The softmax over f32 scores and its probabilities' convert to V's type
// (fx's spelling): the same kernel, the probabilities rounded to bf16 for
// P V as always.
// CHECK-LABEL: func.func @prefill_f32_softmax
// CHECK: gpu.launch
// CHECK: nvvm.wgmma.mma_async
// CHECK: llvm.nvvm.ex2.approx
// CHECK: arith.truncf %{{.+}} : vector<2xf32> to vector<2xbf16>
// CHECK: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k16.f32.bf16.bf16
// CHECK: return
func.func @prefill_f32_softmax(%q: tensor<2x4x?x64xbf16>, %k: tensor<2x4x?x64xbf16>, %v: tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16> {
  %0 = fusion.kernel attention "prefill_f32_softmax_k0" (%q, %k, %v) {plan = #fusion.plan<attention_tiles, threads = 384, vector = 2, row = none, cluster = 1, passes = [1, 1, 1]>} : (tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16> {
  ^bb0(%a: tensor<2x4x?x64xbf16>, %b: tensor<2x4x?x64xbf16>, %c: tensor<2x4x?x64xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<2x4x?x64xbf16> -> tensor<2x4x64x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<2x4x?x64xbf16>, tensor<2x4x64x?xbf16>) -> tensor<2x4x?x?xbf16>
    %sf = fusion.convert %s : tensor<2x4x?x?xbf16> to tensor<2x4x?x?xf32>
    %scale = fusion.constant dense<0.125> : tensor<f32>
    %t = fusion.mul %sf, %scale : (tensor<2x4x?x?xf32>, tensor<f32>) -> tensor<2x4x?x?xf32>
    %p = fusion.softmax %t axis = 3 : tensor<2x4x?x?xf32>
    %pb = fusion.convert %p : tensor<2x4x?x?xf32> to tensor<2x4x?x?xbf16>
    %o = fusion.matmul %pb, %c : (tensor<2x4x?x?xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16>
    fusion.yield %o : tensor<2x4x?x64xbf16>
  }
  return %0 : tensor<2x4x?x64xbf16>
}

// -----

// Keys seen from row + 128 on (a lower bound) is no key limit: the
// positions are compared per score, and no tile is skipped.
// CHECK-LABEL: func.func @prefill_anticausal
// CHECK: gpu.launch
// CHECK-NOT: arith.cmpi sle
// CHECK: arith.uitofp
// CHECK: arith.cmpf
// CHECK-NOT: arith.cmpi sle
// CHECK: return
func.func @prefill_anticausal(%q: tensor<2x4x256x64xbf16>, %k: tensor<2x4x384x64xbf16>, %v: tensor<2x4x384x64xbf16>) -> tensor<2x4x256x64xbf16> {
  %0 = fusion.kernel attention "prefill_anticausal_k0" (%q, %k, %v) {plan = #fusion.plan<attention_tiles, threads = 384, vector = 2, row = none, cluster = 1, passes = [1, 1, 1]>} : (tensor<2x4x256x64xbf16>, tensor<2x4x384x64xbf16>, tensor<2x4x384x64xbf16>) -> tensor<2x4x256x64xbf16> {
  ^bb0(%a: tensor<2x4x256x64xbf16>, %b: tensor<2x4x384x64xbf16>, %c: tensor<2x4x384x64xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<2x4x384x64xbf16> -> tensor<2x4x64x384xbf16>
    %s = fusion.matmul %a, %kt : (tensor<2x4x256x64xbf16>, tensor<2x4x64x384xbf16>) -> tensor<2x4x256x384xbf16>
    %row = fusion.iota dimension = 0 : tensor<256x1xf32>
    %key = fusion.iota dimension = 1 : tensor<1x384xf32>
    %shift = fusion.constant dense<128.0> : tensor<f32>
    %last = fusion.add %shift, %row : (tensor<f32>, tensor<256x1xf32>) -> tensor<256x1xf32>
    %past = fusion.cmp lt, %key, %last : (tensor<1x384xf32>, tensor<256x1xf32>) -> tensor<256x384xi1>
    %ninf = fusion.constant dense<0xFF80> : tensor<bf16>
    %m = fusion.select %past, %ninf, %s : (tensor<256x384xi1>, tensor<bf16>, tensor<2x4x256x384xbf16>) -> tensor<2x4x256x384xbf16>
    %p = fusion.softmax %m axis = 3 : tensor<2x4x256x384xbf16>
    %o = fusion.matmul %p, %c : (tensor<2x4x256x384xbf16>, tensor<2x4x384x64xbf16>) -> tensor<2x4x256x64xbf16>
    fusion.yield %o : tensor<2x4x256x64xbf16>
  }
  return %0 : tensor<2x4x256x64xbf16>
}

// -----

// A bias read per score (f32, broadcast over the batch). Where the call's
// bias starts and its rows start on 16 bytes (checked on the host), it is
// staged: its tensor map in 128-byte swizzled boxes of 64 rows x 32 keys,
// and in each step the loader brings K, then each warpgroup's 64 rows x
// 128 keys of the bias (a barrier of its own, released by the
// warpgroup's 4 warps), then V. The warpgroups read their scores' bias
// from shared memory (64 loads of a pair, none from global memory), then
// release it; they take turns and the launch is persistent. Two buffers of
// the bias (64 KiB of f32 each beside 96 of Q's two buffers, K and V),
// that the steps take in turn: 10 barriers a group, the bias's at 6 to 9.
// The bias is broadcast over the batch, so the tiles of both batches that
// read the same bias tile are next to each other: tile t is batch t % 2 of
// query tile t / 2 % tiles of head t / 2 / tiles.
// CHECK-LABEL: func.func @prefill_bias
// CHECK: %[[MPS:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK: memref.extract_aligned_pointer_as_index %arg3
// CHECK: scf.if
// CHECK: nvgpu.tma.create.descriptor {{.+}} : memref<*xf32> -> <tensor = memref<1x64x32xf32, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
// CHECK: arith.minui %{{.+}}, %[[MPS]]
// CHECK: gpu.launch {{.+}} module(@prefill_bias_k0_staged_module)
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 10>
// CHECK: nvgpu.mbarrier.init %{{.+}}[%c6{{.*}}], %c4
// CHECK: scf.for %[[TILE:.+]] = {{.+}} iter_args(%{{.+}} = %c0{{.*}}) -> (index)
// CHECK: %[[SHARING:.+]] = arith.muli %c1{{.*}}, %c2{{.*}} : index
// CHECK-NEXT: %[[OWN:.+]] = arith.divui %[[TILE]], %[[SHARING]]
// CHECK-NEXT: arith.remui %[[OWN]], %[[TILES:.+]] : index
// CHECK-NEXT: arith.divui %[[OWN]], %[[TILES]] : index
// CHECK-NEXT: arith.remui %[[TILE]], %[[SHARING]]
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.+}}, %c16384
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.+}}[%{{[0-9]+}}], %c32768
// CHECK-COUNT-4: nvgpu.tma.async.load {{.+}} -> memref<1x64x32xf32, #gpu.address_space<workgroup>>
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.+}}[%{{[0-9]+}}], %c32768
// CHECK-COUNT-4: nvgpu.tma.async.load {{.+}} -> memref<1x64x32xf32, #gpu.address_space<workgroup>>
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.+}}, %c16384
// CHECK: nvvm.barrier.arrive
// CHECK-NOT: nvvm.prefetch
// CHECK-COUNT-64: vector.load %{{.+}} : memref<8192xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-NOT: memref<1x4x?x?xf32>
// CHECK: nvgpu.mbarrier.arrive
// Otherwise each thread asks L2 for its two lines of the warpgroup's 64
// rows x 128 keys of the bias one key tile ahead (prefetch), tiles 0 and 1
// before the loop, then one tile a step while the products run; the bias
// is then read per score, a pair of keys as two loads, the second's key at
// most the row's last (in bounds where the first is the last key). The
// warpgroups do not take turns (a softmax waiting on memory would hold the
// other's products), and the launch is not persistent: a block per tile,
// no loop over tiles, Q not released.
// CHECK-NOT: arith.minui %{{.+}}, %[[MPS]]
// CHECK: gpu.launch {{.+}} module(@prefill_bias_k0_module)
// CHECK-NOT: iter_args(%{{.+}} = %c0) -> (index)
// CHECK-NOT: nvvm.barrier.arrive
// CHECK-COUNT-4: nvvm.prefetch level = L2
// CHECK-NOT: nvvm.prefetch level = L2
// CHECK: scf.for
// CHECK: nvvm.wgmma.mma_async
// CHECK-COUNT-2: nvvm.prefetch level = L2
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: %[[KEYS:.+]] = memref.dim %{{.+}}, %c3{{.*}} : memref<1x4x?x?xf32>
// CHECK: %[[LAST:.+]] = arith.subi %[[KEYS]], %c1
// CHECK: memref.load %{{.+}}{{\[}}%{{.+}}, %{{.+}}, %{{.+}}, %[[FIRST:.+]]] : memref<1x4x?x?xf32>
// CHECK: %[[NEXT:.+]] = arith.addi %[[FIRST]], %c1
// CHECK: %[[SECOND:.+]] = arith.minui %[[NEXT]], %[[LAST]] : index
// CHECK: memref.load %{{.+}}{{\[}}%{{.+}}, %{{.+}}, %{{.+}}, %[[SECOND]]] : memref<1x4x?x?xf32>
// CHECK-NOT: nvgpu.mbarrier.arrive %{{.+}}[%c4
func.func @prefill_bias(%q: tensor<2x4x?x64xbf16>, %k: tensor<2x4x?x64xbf16>, %v: tensor<2x4x?x64xbf16>, %bias: tensor<1x4x?x?xf32>) -> tensor<2x4x?x64xbf16> {
  %0 = fusion.kernel attention "prefill_bias_k0" (%q, %k, %v, %bias) {plan = #fusion.plan<attention_tiles, threads = 384, vector = 2, row = none, cluster = 1, passes = [1, 1, 1, 1]>} : (tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<1x4x?x?xf32>) -> tensor<2x4x?x64xbf16> {
  ^bb0(%a: tensor<2x4x?x64xbf16>, %b: tensor<2x4x?x64xbf16>, %c: tensor<2x4x?x64xbf16>, %d: tensor<1x4x?x?xf32>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<2x4x?x64xbf16> -> tensor<2x4x64x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<2x4x?x64xbf16>, tensor<2x4x64x?xbf16>) -> tensor<2x4x?x?xbf16>
    %sf = fusion.convert %s : tensor<2x4x?x?xbf16> to tensor<2x4x?x?xf32>
    %t = fusion.add %sf, %d : (tensor<2x4x?x?xf32>, tensor<1x4x?x?xf32>) -> tensor<2x4x?x?xf32>
    %tb = fusion.convert %t : tensor<2x4x?x?xf32> to tensor<2x4x?x?xbf16>
    %p = fusion.softmax %tb axis = 3 : tensor<2x4x?x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<2x4x?x?xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16>
    fusion.yield %o : tensor<2x4x?x64xbf16>
  }
  return %0 : tensor<2x4x?x64xbf16>
}

// -----

// D = 128: the loader keeps 56 registers and the multiplying warpgroups
// 224, taking turns; so with a bias staged (bf16: 16 KiB a warpgroup, in
// boxes of 64 keys, in one buffer: the second Q buffer takes the room a
// second would need, 2 barriers of each group more, at 6 + the warpgroup);
// with a bias read per score from global memory, 24 and 240, no turns.
// P V is 8 MMAs of 64 x 128 x 16 with A from registers. Its output rows
// go through shared memory in two TMA boxes a warpgroup. An f32 bias staged
// leaves room for one Q buffer only: the next tile's Q loads into it once
// the last S has read it, so there the output is stored from registers;
// read from memory (a block a tile), by TMA.
// CHECK-LABEL: func.func @prefill_d128
// CHECK: nvvm.setmaxregister  decrease 56
// CHECK: nvvm.setmaxregister  increase 224
// CHECK: nvvm.barrier.arrive
// CHECK-COUNT-8: llvm.inline_asm has_side_effects {{.+}}wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {$0, {{.+}}, $63}, {$64, $65, $66, $67}, $68, p, 1, 1, 1;
// CHECK-LABEL: func.func @prefill_d128_bias
// CHECK: gpu.launch {{.+}} module(@prefill_d128_bias_k0_staged_module)
// CHECK: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 8>
// CHECK: nvvm.setmaxregister  decrease 56
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.+}}[%c6{{.*}}], %c16384
// CHECK-COUNT-2: nvgpu.tma.async.load {{.+}} -> memref<1x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: nvvm.setmaxregister  increase 224
// CHECK: nvvm.barrier.arrive
// CHECK-COUNT-64: vector.load %{{.+}} : memref<8192xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK: gpu.launch {{.+}} module(@prefill_d128_bias_k0_module)
// CHECK: nvvm.setmaxregister  decrease 24
// CHECK: nvvm.setmaxregister  increase 240
// CHECK-NOT: nvvm.barrier.arrive
// CHECK-COUNT-2: nvgpu.tma.async.store
// CHECK: return
// CHECK-LABEL: func.func @prefill_d128_f32_bias
// CHECK: gpu.launch {{.+}} module(@prefill_d128_f32_bias_k0_staged_module)
// CHECK-NOT: nvgpu.tma.async.store
// CHECK: vector.store %{{.+}} {alignment = 4 : i64} : memref<1x2x?x128xbf16>, vector<2xbf16>
// CHECK: gpu.launch {{.+}} module(@prefill_d128_f32_bias_k0_module)
// CHECK-COUNT-2: nvgpu.tma.async.store
// CHECK: return
func.func @prefill_d128(%q: tensor<1x2x?x128xbf16>, %k: tensor<1x2x?x128xbf16>, %v: tensor<1x2x?x128xbf16>) -> tensor<1x2x?x128xbf16> {
  %0 = fusion.kernel attention "prefill_d128_k0" (%q, %k, %v) {plan = #fusion.plan<attention_tiles, threads = 384, vector = 2, row = none, cluster = 1, passes = [1, 1, 1]>} : (tensor<1x2x?x128xbf16>, tensor<1x2x?x128xbf16>, tensor<1x2x?x128xbf16>) -> tensor<1x2x?x128xbf16> {
  ^bb0(%a: tensor<1x2x?x128xbf16>, %b: tensor<1x2x?x128xbf16>, %c: tensor<1x2x?x128xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<1x2x?x128xbf16> -> tensor<1x2x128x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<1x2x?x128xbf16>, tensor<1x2x128x?xbf16>) -> tensor<1x2x?x?xbf16>
    %p = fusion.softmax %s axis = 3 : tensor<1x2x?x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<1x2x?x?xbf16>, tensor<1x2x?x128xbf16>) -> tensor<1x2x?x128xbf16>
    fusion.yield %o : tensor<1x2x?x128xbf16>
  }
  return %0 : tensor<1x2x?x128xbf16>
}
func.func @prefill_d128_bias(%q: tensor<1x2x?x128xbf16>, %k: tensor<1x2x?x128xbf16>, %v: tensor<1x2x?x128xbf16>, %bias: tensor<1x2x?x?xbf16>) -> tensor<1x2x?x128xbf16> {
  %0 = fusion.kernel attention "prefill_d128_bias_k0" (%q, %k, %v, %bias) {plan = #fusion.plan<attention_tiles, threads = 384, vector = 2, row = none, cluster = 1, passes = [1, 1, 1, 1]>} : (tensor<1x2x?x128xbf16>, tensor<1x2x?x128xbf16>, tensor<1x2x?x128xbf16>, tensor<1x2x?x?xbf16>) -> tensor<1x2x?x128xbf16> {
  ^bb0(%a: tensor<1x2x?x128xbf16>, %b: tensor<1x2x?x128xbf16>, %c: tensor<1x2x?x128xbf16>, %d: tensor<1x2x?x?xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<1x2x?x128xbf16> -> tensor<1x2x128x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<1x2x?x128xbf16>, tensor<1x2x128x?xbf16>) -> tensor<1x2x?x?xbf16>
    %t = fusion.add %s, %d : (tensor<1x2x?x?xbf16>, tensor<1x2x?x?xbf16>) -> tensor<1x2x?x?xbf16>
    %p = fusion.softmax %t axis = 3 : tensor<1x2x?x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<1x2x?x?xbf16>, tensor<1x2x?x128xbf16>) -> tensor<1x2x?x128xbf16>
    fusion.yield %o : tensor<1x2x?x128xbf16>
  }
  return %0 : tensor<1x2x?x128xbf16>
}
func.func @prefill_d128_f32_bias(%q: tensor<1x2x?x128xbf16>, %k: tensor<1x2x?x128xbf16>, %v: tensor<1x2x?x128xbf16>, %bias: tensor<1x2x?x?xf32>) -> tensor<1x2x?x128xbf16> {
  %0 = fusion.kernel attention "prefill_d128_f32_bias_k0" (%q, %k, %v, %bias) {plan = #fusion.plan<attention_tiles, threads = 384, vector = 2, row = none, cluster = 1, passes = [1, 1, 1, 1]>} : (tensor<1x2x?x128xbf16>, tensor<1x2x?x128xbf16>, tensor<1x2x?x128xbf16>, tensor<1x2x?x?xf32>) -> tensor<1x2x?x128xbf16> {
  ^bb0(%a: tensor<1x2x?x128xbf16>, %b: tensor<1x2x?x128xbf16>, %c: tensor<1x2x?x128xbf16>, %d: tensor<1x2x?x?xf32>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<1x2x?x128xbf16> -> tensor<1x2x128x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<1x2x?x128xbf16>, tensor<1x2x128x?xbf16>) -> tensor<1x2x?x?xbf16>
    %sf = fusion.convert %s : tensor<1x2x?x?xbf16> to tensor<1x2x?x?xf32>
    %t = fusion.add %sf, %d : (tensor<1x2x?x?xf32>, tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32>
    %tb = fusion.convert %t : tensor<1x2x?x?xf32> to tensor<1x2x?x?xbf16>
    %p = fusion.softmax %tb axis = 3 : tensor<1x2x?x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<1x2x?x?xbf16>, tensor<1x2x?x128xbf16>) -> tensor<1x2x?x128xbf16>
    fusion.yield %o : tensor<1x2x?x128xbf16>
  }
  return %0 : tensor<1x2x?x128xbf16>
}

// -----

// A bias of each batch's own shared by the heads (as a padding mask is):
// the heads are innermost in the tile order, the batch outermost: tile t
// is head t % 4 of query tile t / 4 % tiles of batch t / 4 / tiles.
// CHECK-LABEL: func.func @prefill_bias_per_batch
// CHECK: gpu.launch {{.+}} module(@prefill_bias_per_batch_k0_staged_module)
// CHECK: scf.for %[[TILE:.+]] = {{.+}} iter_args(%{{.+}} = %c0{{.*}}) -> (index)
// CHECK: %[[SHARING:.+]] = arith.muli %c1{{.*}}, %c4{{.*}} : index
// CHECK-NEXT: %[[OWN:.+]] = arith.divui %[[TILE]], %[[SHARING]]
// CHECK-NEXT: arith.remui %[[OWN]], %[[TILES:.+]] : index
// CHECK-NEXT: arith.divui %[[OWN]], %[[TILES]] : index
// CHECK-NEXT: arith.remui %[[TILE]], %[[SHARING]]
// CHECK: gpu.launch {{.+}} module(@prefill_bias_per_batch_k0_module)
func.func @prefill_bias_per_batch(%q: tensor<2x4x?x64xbf16>, %k: tensor<2x4x?x64xbf16>, %v: tensor<2x4x?x64xbf16>, %bias: tensor<2x1x?x?xbf16>) -> tensor<2x4x?x64xbf16> {
  %0 = fusion.kernel attention "prefill_bias_per_batch_k0" (%q, %k, %v, %bias) {plan = #fusion.plan<attention_tiles, threads = 384, vector = 2, row = none, cluster = 1, passes = [1, 1, 1, 1]>} : (tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x1x?x?xbf16>) -> tensor<2x4x?x64xbf16> {
  ^bb0(%a: tensor<2x4x?x64xbf16>, %b: tensor<2x4x?x64xbf16>, %c: tensor<2x4x?x64xbf16>, %d: tensor<2x1x?x?xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<2x4x?x64xbf16> -> tensor<2x4x64x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<2x4x?x64xbf16>, tensor<2x4x64x?xbf16>) -> tensor<2x4x?x?xbf16>
    %t = fusion.add %s, %d : (tensor<2x4x?x?xbf16>, tensor<2x1x?x?xbf16>) -> tensor<2x4x?x?xbf16>
    %p = fusion.softmax %t axis = 3 : tensor<2x4x?x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<2x4x?x?xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16>
    fusion.yield %o : tensor<2x4x?x64xbf16>
  }
  return %0 : tensor<2x4x?x64xbf16>
}

// -----

// A bias read through a transpose (at another index than its score's) is
// not staged: read per score from global memory, one kernel.
// CHECK-LABEL: func.func @prefill_bias_transposed
// CHECK-NOT: _staged_module
// CHECK: gpu.launch {{.+}} module(@prefill_bias_transposed_k0_module)
// CHECK-NOT: _staged_module
// CHECK: return
func.func @prefill_bias_transposed(%q: tensor<2x4x?x64xbf16>, %k: tensor<2x4x?x64xbf16>, %v: tensor<2x4x?x64xbf16>, %bias: tensor<1x4x?x?xf32>) -> tensor<2x4x?x64xbf16> {
  %0 = fusion.kernel attention "prefill_bias_transposed_k0" (%q, %k, %v, %bias) {plan = #fusion.plan<attention_tiles, threads = 384, vector = 2, row = none, cluster = 1, passes = [1, 1, 1, 1]>} : (tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<1x4x?x?xf32>) -> tensor<2x4x?x64xbf16> {
  ^bb0(%a: tensor<2x4x?x64xbf16>, %b: tensor<2x4x?x64xbf16>, %c: tensor<2x4x?x64xbf16>, %d: tensor<1x4x?x?xf32>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<2x4x?x64xbf16> -> tensor<2x4x64x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<2x4x?x64xbf16>, tensor<2x4x64x?xbf16>) -> tensor<2x4x?x?xbf16>
    %sf = fusion.convert %s : tensor<2x4x?x?xbf16> to tensor<2x4x?x?xf32>
    %dt = fusion.transpose %d permutation = [0, 1, 3, 2] : tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
    %t = fusion.add %sf, %dt : (tensor<2x4x?x?xf32>, tensor<1x4x?x?xf32>) -> tensor<2x4x?x?xf32>
    %tb = fusion.convert %t : tensor<2x4x?x?xf32> to tensor<2x4x?x?xbf16>
    %p = fusion.softmax %tb axis = 3 : tensor<2x4x?x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<2x4x?x?xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16>
    fusion.yield %o : tensor<2x4x?x64xbf16>
  }
  return %0 : tensor<2x4x?x64xbf16>
}

// -----

// Q, K and V as views of one projection (fusion-fuse-attention's heads
// sliced out and moved before the sequence): each tensor map is of the
// view, 4-D, made on the host from a subview and a transpose of the
// projection's buffer (strides only, no copy), and its TMA loads take the
// batch and head as coordinates.
// CHECK-LABEL: func.func @prefill_views
// CHECK: %[[QS:.+]] = memref.subview %arg0[0, 0, 0, 0] [2, %{{.+}}, 2, 64] [1, 1, 1, 1]
// CHECK: %[[QT:.+]] = memref.transpose %[[QS]] (d0, d1, d2, d3) -> (d0, d2, d1, d3)
// CHECK: %[[QC:.+]] = memref.cast %[[QT]]
// CHECK: nvgpu.tma.create.descriptor %[[QC]] box[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<*xbf16> -> <tensor = memref<1x1x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.subview %arg0[0, 0, 2, 0] [2, %{{.+}}, 2, 64]
// CHECK: memref.subview %arg0[0, 0, 4, 0] [2, %{{.+}}, 2, 64]
// CHECK: gpu.launch
// CHECK: nvgpu.tma.async.load %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}], %{{.+}}[%{{.+}}] to %{{.+}} : <tensor = memref<1x1x64x64xbf16
// CHECK: return
// PTX-LABEL: gpu.binary @prefill_views_k0_module
// PTX-SAME: cp.async.bulk.tensor.4d
// PTX-NOT: cp.async.bulk.tensor.3d
// PTX-SAME: wgmma.mma_async
func.func @prefill_views(%x: tensor<2x?x6x64xbf16>) -> tensor<2x2x?x64xbf16> {
  %0 = fusion.kernel attention "prefill_views_k0" (%x) {plan = #fusion.plan<attention_tiles, threads = 384, vector = 2, row = none, cluster = 1, passes = [1]>} : (tensor<2x?x6x64xbf16>) -> tensor<2x2x?x64xbf16> {
  ^bb0(%p: tensor<2x?x6x64xbf16>):
    %qs = fusion.slice %p offsets = [0, 0, 0, 0] sizes = [2, -1, 2, 64] strides = [1, 1, 1, 1] : tensor<2x?x6x64xbf16> -> tensor<2x?x2x64xbf16>
    %ks = fusion.slice %p offsets = [0, 0, 2, 0] sizes = [2, -1, 2, 64] strides = [1, 1, 1, 1] : tensor<2x?x6x64xbf16> -> tensor<2x?x2x64xbf16>
    %vs = fusion.slice %p offsets = [0, 0, 4, 0] sizes = [2, -1, 2, 64] strides = [1, 1, 1, 1] : tensor<2x?x6x64xbf16> -> tensor<2x?x2x64xbf16>
    %q = fusion.transpose %qs permutation = [0, 2, 1, 3] : tensor<2x?x2x64xbf16> -> tensor<2x2x?x64xbf16>
    %k = fusion.transpose %ks permutation = [0, 2, 1, 3] : tensor<2x?x2x64xbf16> -> tensor<2x2x?x64xbf16>
    %v = fusion.transpose %vs permutation = [0, 2, 1, 3] : tensor<2x?x2x64xbf16> -> tensor<2x2x?x64xbf16>
    %kt = fusion.transpose %k permutation = [0, 1, 3, 2] : tensor<2x2x?x64xbf16> -> tensor<2x2x64x?xbf16>
    %s = fusion.matmul %q, %kt : (tensor<2x2x?x64xbf16>, tensor<2x2x64x?xbf16>) -> tensor<2x2x?x?xbf16>
    %c = fusion.constant dense<0.125> : tensor<bf16>
    %t = fusion.mul %s, %c : (tensor<2x2x?x?xbf16>, tensor<bf16>) -> tensor<2x2x?x?xbf16>
    %pr = fusion.softmax %t axis = 3 : tensor<2x2x?x?xbf16>
    %o = fusion.matmul %pr, %v : (tensor<2x2x?x?xbf16>, tensor<2x2x?x64xbf16>) -> tensor<2x2x?x64xbf16>
    fusion.yield %o : tensor<2x2x?x64xbf16>
  }
  return %0 : tensor<2x2x?x64xbf16>
}

// -----

// The output stored through the kernel's transpose (heads moved back after
// the sequence): on the host, the tensor map of the output buffer viewed in
// the product's layout by the inverse transpose (strides only), 4-D; each
// warpgroup's rows stored by TMA where they lie, the batch and head as
// coordinates.
// CHECK-LABEL: func.func @prefill_output_view
// CHECK: %[[OUT:.+]] = memref.transpose %arg3 (d0, d1, d2, d3) -> (d0, d2, d1, d3)
// CHECK: %[[OUTC:.+]] = memref.cast %[[OUT]]
// CHECK: %[[MAPO:.+]] = nvgpu.tma.create.descriptor %[[OUTC]] box[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<*xbf16> -> <tensor = memref<1x1x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: gpu.launch
// CHECK: nvgpu.tma.async.store %{{.+}} to %[[MAPO]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<1x1x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: return
// PTX-LABEL: gpu.binary @prefill_output_view_k0_module
// PTX-SAME: cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group
// PTX-SAME: wgmma.mma_async
func.func @prefill_output_view(%q: tensor<2x4x?x64xbf16>, %k: tensor<2x4x?x64xbf16>, %v: tensor<2x4x?x64xbf16>) -> tensor<2x?x4x64xbf16> {
  %0 = fusion.kernel attention "prefill_output_view_k0" (%q, %k, %v) {plan = #fusion.plan<attention_tiles, threads = 384, vector = 2, row = none, cluster = 1, passes = [1, 1, 1]>} : (tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x?x4x64xbf16> {
  ^bb0(%a: tensor<2x4x?x64xbf16>, %b: tensor<2x4x?x64xbf16>, %c: tensor<2x4x?x64xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<2x4x?x64xbf16> -> tensor<2x4x64x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<2x4x?x64xbf16>, tensor<2x4x64x?xbf16>) -> tensor<2x4x?x?xbf16>
    %p = fusion.softmax %s axis = 3 : tensor<2x4x?x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<2x4x?x?xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16>
    %t = fusion.transpose %o permutation = [0, 2, 1, 3] : tensor<2x4x?x64xbf16> -> tensor<2x?x4x64xbf16>
    fusion.yield %t : tensor<2x?x4x64xbf16>
  }
  return %0 : tensor<2x?x4x64xbf16>
}
