// RUN: fusion-opt %s --split-input-file --fusion-kernels-to-gpu | FileCheck %s

// The rows strategy on hand-written kernels: what the plan says is what
// runs.

// Held in registers: 1024 vectors of 4 over 256 threads, 4 each. The max
// pass loads the row (no loop over it); the write pass reuses the loads.
// CHECK-LABEL: func.func @held
// CHECK: gpu.launch blocks({{.*}}) threads({{.*}}) in ({{.*}} = %c256
// CHECK-COUNT-4: vector.load {{.*}} : memref<64x4096xf32>, vector<4xf32>
// CHECK-NOT: vector.load
// CHECK: gpu.all_reduce maximumf
// CHECK-NOT: vector.load
// CHECK-COUNT-4: vector.store
// CHECK: gpu.barrier
func.func @held(%x: tensor<64x4096xf32>) -> tensor<64x4096xf32> {
  %0 = fusion.kernel row_reduction "held" (%x) {plan = #fusion.plan<rows, threads = 256, vector = 4, row = registers, cluster = 1, passes = [1]>} : (tensor<64x4096xf32>) -> tensor<64x4096xf32> {
  ^bb0(%a: tensor<64x4096xf32>):
    %m = fusion.reduce_max %a axes = [1] keep_dims : tensor<64x4096xf32> -> tensor<64x1xf32>
    %d = fusion.sub %a, %m : (tensor<64x4096xf32>, tensor<64x1xf32>) -> tensor<64x4096xf32>
    fusion.yield %d : tensor<64x4096xf32>
  }
  return %0 : tensor<64x4096xf32>
}

// -----

// The same kernel streamed by hand: loops over the row per pass, each
// loading it again; 8 vectors a step, all loaded before they are used,
// then the rest one by one.
// CHECK-LABEL: func.func @streamed
// CHECK: gpu.launch blocks({{.*}}) threads({{.*}}) in ({{.*}} = %c128
// CHECK: scf.for {{.*}} step %c4096{{.*}} iter_args
// CHECK-COUNT-8: vector.load {{.*}} : memref<64x4096xf32>, vector<4xf32>
// CHECK-NEXT: vector.reduction <maximumf>
// CHECK: scf.for {{.*}} step %c512{{.*}} iter_args
// CHECK: gpu.all_reduce maximumf
// CHECK: scf.for {{.*}} step %c4096
// CHECK-COUNT-8: vector.store
// CHECK: scf.for {{.*}} step %c512
// CHECK: vector.load {{.*}} : memref<64x4096xf32>, vector<4xf32>
// CHECK: vector.store
func.func @streamed(%x: tensor<64x4096xf32>) -> tensor<64x4096xf32> {
  %0 = fusion.kernel row_reduction "streamed" (%x) {plan = #fusion.plan<rows, threads = 128, vector = 4, row = streamed, cluster = 1, passes = [2]>} : (tensor<64x4096xf32>) -> tensor<64x4096xf32> {
  ^bb0(%a: tensor<64x4096xf32>):
    %m = fusion.reduce_max %a axes = [1] keep_dims : tensor<64x4096xf32> -> tensor<64x1xf32>
    %d = fusion.sub %a, %m : (tensor<64x4096xf32>, tensor<64x1xf32>) -> tensor<64x4096xf32>
    fusion.yield %d : tensor<64x4096xf32>
  }
  return %0 : tensor<64x4096xf32>
}

// -----

// Softmax streamed: its sum of exp(x - max) is computed in the max's pass
// ("online"): each thread carries its running max and sum, rescaling the
// sum by exp(old max - new max) (capped at 1) when the max grows, with a
// shift of 0 where the max is not finite; the block sum is rescaled to the
// row's max. Then the pass that writes: one read of the row fewer. The
// sum's terms take ex2.approx lane by lane (MathPrecision::sumTerm), the
// written values math.exp.
// CHECK-LABEL: func.func @online
// CHECK: %[[PASS:.+]]:2 = scf.for {{.*}} iter_args(%[[MAX:.+]] = %cst{{.*}}, %[[SUM:.+]] = %cst{{.*}}) -> (f32, f32)
// CHECK-COUNT-8: vector.load
// CHECK-COUNT-7: arith.maximumf
// CHECK: %[[STEPMAX:.+]] = arith.maximumf
// CHECK: %[[ABS:.+]] = math.absf %[[MAX]]
// CHECK: arith.cmpf olt, %[[ABS]]
// CHECK: arith.minimumf
// CHECK: %[[FACTOR:.+]] = math.exp
// CHECK: arith.mulf %[[SUM]], %[[FACTOR]]
// CHECK-COUNT-32: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: scf.yield %[[STEPMAX]], %{{.+}} : f32, f32
// CHECK: %[[REST:.+]]:2 = scf.for
// CHECK: %[[ROWMAX:.+]] = gpu.all_reduce maximumf %[[REST]]#0
// CHECK: math.exp
// CHECK: %[[SCALED:.+]] = arith.mulf %[[REST]]#1
// CHECK: gpu.all_reduce add %[[SCALED]]
// The division by the row's sum: a reciprocal before the loop, products in it.
// CHECK: %[[ROWSUM:.+]] = arith.mulf
// CHECK: math.absf %[[ROWSUM]]
// CHECK: %[[RSCALE:.+]] = arith.mulf %[[ROWSUM]], %{{.+}} : f32
// CHECK: arith.divf %{{.+}}, %[[RSCALE]] : f32
// CHECK: scf.for
// CHECK: vector.load
// CHECK: math.exp
// CHECK-NOT: nvvm.div.full
// CHECK: arith.mulf {{.*}} : vector<4xf32>
// CHECK: vector.store
func.func @online(%x: tensor<64x4096xf32>) -> tensor<64x4096xf32> {
  %0 = fusion.kernel row_reduction "online" (%x) {plan = #fusion.plan<rows, threads = 128, vector = 4, row = streamed, cluster = 1, passes = [2]>} : (tensor<64x4096xf32>) -> tensor<64x4096xf32> {
  ^bb0(%a: tensor<64x4096xf32>):
    %m = fusion.reduce_max %a axes = [1] keep_dims : tensor<64x4096xf32> -> tensor<64x1xf32>
    %d = fusion.sub %a, %m : (tensor<64x4096xf32>, tensor<64x1xf32>) -> tensor<64x4096xf32>
    %e = fusion.exp %d : tensor<64x4096xf32>
    %s = fusion.reduce_sum %e axes = [1] keep_dims : tensor<64x4096xf32> -> tensor<64x1xf32>
    %y = fusion.div %e, %s : (tensor<64x4096xf32>, tensor<64x1xf32>) -> tensor<64x4096xf32>
    fusion.yield %y : tensor<64x4096xf32>
  }
  return %0 : tensor<64x4096xf32>
}

// -----

// Threads that do not divide the row: 513 vectors of 8 over 128 threads,
// 5 each. The fifth is past the end for all but thread 0: it reads the
// row's last vector instead (in bounds), is left out of the max and is not
// stored.
// CHECK-LABEL: func.func @masked
// CHECK: %[[LAST:.+]] = arith.subi %c4104{{.*}}, %c8
// CHECK: %[[COL:.+]] = arith.addi %{{.+}}, %c4096
// CHECK: %[[VALID:.+]] = arith.cmpi ult, %[[COL]], %c4104
// CHECK: %[[CLAMPED:.+]] = arith.minui %[[COL]], %[[LAST]]
// CHECK-COUNT-4: vector.load {{.*}} : memref<64x4104xbf16>, vector<8xbf16>
// CHECK: vector.load %{{.+}}[%{{.+}}, %[[CLAMPED]]]
// CHECK: arith.select %[[VALID]]
// CHECK-NEXT: gpu.all_reduce maximumf
// CHECK-COUNT-4: vector.store
// CHECK: scf.if %[[VALID]] {
// CHECK: vector.store %{{.+}}, %{{.+}}[%{{.+}}, %[[CLAMPED]]]
// CHECK-NEXT: {{^ +}$}}
func.func @masked(%x: tensor<64x4104xbf16>) -> tensor<64x4104xbf16> {
  %0 = fusion.kernel row_reduction "masked" (%x) {plan = #fusion.plan<rows, threads = 128, vector = 8, row = registers, cluster = 1, passes = [1]>} : (tensor<64x4104xbf16>) -> tensor<64x4104xbf16> {
  ^bb0(%a: tensor<64x4104xbf16>):
    %m = fusion.reduce_max %a axes = [1] keep_dims : tensor<64x4104xbf16> -> tensor<64x1xbf16>
    %d = fusion.sub %a, %m : (tensor<64x4104xbf16>, tensor<64x1xbf16>) -> tensor<64x4104xbf16>
    fusion.yield %d : tensor<64x4104xbf16>
  }
  return %0 : tensor<64x4104xbf16>
}

// -----

// Rows no vector divides, in shifted vectors: row r starts (r * 4095) % 8
// elements past a vector boundary of the buffer; its whole vectors start
// `lag` columns in (aligned in %a), the last one leaving a vector's margin
// for %w. 64 threads hold 8 of them (the eighth masked where past the end);
// thread t also holds edge element t: the t-th of the columns before the
// lag and after the whole vectors, clamped into the row and left out of
// the max and the stores where there is none. %w, broadcast over the rows,
// is read from the two aligned vectors around each column, shifted by the
// lag with selects.
// CHECK-LABEL: func.func @shifted
// CHECK: scf.for %[[ROW:.+]] = %{{.+}} to
// CHECK: %[[STEP:.+]] = arith.muli %[[ROW]], %c7
// CHECK: %[[SHIFT:.+]] = arith.remui %[[STEP]], %c8
// CHECK: %[[BACK:.+]] = arith.subi %c8, %[[SHIFT]]
// CHECK: %[[LAG:.+]] = arith.remui %[[BACK]], %c8
// CHECK: %[[AFTER:.+]] = arith.addi %[[LAG]], %c8
// CHECK: %[[REST:.+]] = arith.subi %c4095{{.*}}, %[[AFTER]]
// CHECK: %[[WHOLE:.+]] = arith.divui %[[REST]], %c8
// CHECK: %[[SPAN:.+]] = arith.muli %[[WHOLE]], %c8
// CHECK: %[[END:.+]] = arith.addi %[[LAG]], %[[SPAN]]
// CHECK: %[[PART:.+]] = arith.addi %{{.+}}, %[[LAG]]
// CHECK: %[[FIRST:.+]] = arith.addi %[[PART]], %{{.+}}
// CHECK: %[[COL0:.+]] = arith.addi %[[FIRST]], %c0
// CHECK: %[[COL7:.+]] = arith.addi %[[FIRST]], %c3584
// CHECK: %[[VALID7:.+]] = arith.cmpi ult, %[[COL7]], %[[END]]
// CHECK: %[[HEAD:.+]] = arith.cmpi ult, %[[TID:.+]], %[[LAG]]
// CHECK: %[[PAST:.+]] = arith.subi %[[TID]], %[[LAG]]
// CHECK: %[[TAIL:.+]] = arith.addi %[[END]], %[[PAST]]
// CHECK: %[[EDGE:.+]] = arith.select %[[HEAD]], %[[TID]], %[[TAIL]]
// CHECK: %[[INROW:.+]] = arith.cmpi ult, %[[EDGE]], %c4095
// CHECK: %[[EDGEVALID:.+]] = arith.andi %[[INROW]]
// CHECK: %[[EDGECOL:.+]] = arith.minui %[[EDGE]]
// CHECK: vector.load %arg0[%[[ROW]], %[[COL0]]] {alignment = 16 : i64}
// CHECK: arith.select %[[VALID7]]
// CHECK: memref.load %arg0[%[[ROW]], %[[EDGECOL]]]
// CHECK: arith.select %[[EDGEVALID]]
// CHECK-NEXT: gpu.all_reduce maximumf
// CHECK: %[[AT:.+]] = arith.subi %[[COL0]], %[[LAG]]
// CHECK-NEXT: %[[LO:.+]] = vector.load %arg1[%[[AT]]] {alignment = 16 : i64}
// CHECK: %[[NEXT:.+]] = arith.addi %[[AT]], %c8
// CHECK-NEXT: %[[HI:.+]] = vector.load %arg1[%[[NEXT]]] {alignment = 16 : i64}
// CHECK-NEXT: vector.shuffle %[[LO]], %[[HI]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]
// CHECK: arith.select %{{.+}} : vector<11xbf16>
// CHECK: arith.select %{{.+}} : vector<9xbf16>
// CHECK: arith.select %{{.+}} : vector<8xbf16>
// CHECK: vector.store %{{.+}}, %arg2[%[[ROW]], %[[COL0]]] {alignment = 16 : i64}
// CHECK: memref.load %arg1[%[[EDGECOL]]]
// CHECK: scf.if %[[EDGEVALID]] {
// CHECK-NEXT: arith.truncf
// CHECK-NEXT: memref.store %{{.+}}, %arg2[%[[ROW]], %[[EDGECOL]]]
func.func @shifted(%x: tensor<64x4095xbf16>, %g: tensor<4095xbf16>) -> tensor<64x4095xbf16> {
  %0 = fusion.kernel row_reduction "shifted" (%x, %g) {plan = #fusion.plan<rows, threads = 64, vector = 8, row = registers, cluster = 1, passes = [1, 1]>} : (tensor<64x4095xbf16>, tensor<4095xbf16>) -> tensor<64x4095xbf16> {
  ^bb0(%a: tensor<64x4095xbf16>, %w: tensor<4095xbf16>):
    %m = fusion.reduce_max %a axes = [1] keep_dims : tensor<64x4095xbf16> -> tensor<64x1xbf16>
    %d = fusion.sub %a, %m : (tensor<64x4095xbf16>, tensor<64x1xbf16>) -> tensor<64x4095xbf16>
    %y = fusion.mul %d, %w : (tensor<64x4095xbf16>, tensor<4095xbf16>) -> tensor<64x4095xbf16>
    fusion.yield %y : tensor<64x4095xbf16>
  }
  return %0 : tensor<64x4095xbf16>
}

// -----

// Shifted vectors streamed: each pass runs over the whole vectors (8 a
// step, then one by one) from the lag to their end, then takes the
// thread's edge element: the max pass selects it in, the write pass
// stores it under its predicate (the value loaded once, in the max pass).
// CHECK-LABEL: func.func @shifted_streamed
// CHECK: scf.for %[[ROW:.+]] = %{{.+}} to
// CHECK: %[[LAG:.+]] = arith.remui %{{.+}}, %c8
// CHECK: %[[EDGEVALID:.+]] = arith.andi
// CHECK: %[[EDGECOL:.+]] = arith.minui
// CHECK: scf.for %{{.+}} step %c4096 iter_args
// CHECK: vector.load %arg0[%[[ROW]], %{{.+}}] {alignment = 16 : i64}
// CHECK: scf.for %{{.+}} step %c512 iter_args
// CHECK: memref.load %arg0[%[[ROW]], %[[EDGECOL]]]
// CHECK: arith.select %[[EDGEVALID]]
// CHECK-NEXT: gpu.all_reduce maximumf
// CHECK: scf.for %{{.+}} step %c4096
// CHECK: vector.store %{{.+}}, %arg1[%[[ROW]], %{{.+}}] {alignment = 16 : i64}
// CHECK: scf.for %{{.+}} step %c512
// CHECK: vector.store
// CHECK: scf.if %[[EDGEVALID]] {
// CHECK: memref.store %{{.+}}, %arg1[%[[ROW]], %[[EDGECOL]]]
func.func @shifted_streamed(%x: tensor<64x4095xbf16>) -> tensor<64x4095xbf16> {
  %0 = fusion.kernel row_reduction "shifted_streamed" (%x) {plan = #fusion.plan<rows, threads = 64, vector = 8, row = streamed, cluster = 1, passes = [2]>} : (tensor<64x4095xbf16>) -> tensor<64x4095xbf16> {
  ^bb0(%a: tensor<64x4095xbf16>):
    %m = fusion.reduce_max %a axes = [1] keep_dims : tensor<64x4095xbf16> -> tensor<64x1xbf16>
    %d = fusion.sub %a, %m : (tensor<64x4095xbf16>, tensor<64x1xbf16>) -> tensor<64x4095xbf16>
    fusion.yield %d : tensor<64x4095xbf16>
  }
  return %0 : tensor<64x4095xbf16>
}

// -----

// A row of dynamic length (planned here: no plan given): streamed with
// scalar loads up to the row's run-time length, the mean dividing by it.
// CHECK-LABEL: func.func @dynamic_mean
// CHECK-SAME: (%[[X:.+]]: memref<?x?xf32>,
// CHECK: gpu.launch blocks({{.*}}) threads({{.*}}) in ({{.*}} = %c256
// CHECK: %[[H:.+]] = memref.dim %[[X]], %c1
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[H]] step %c256{{.*}} iter_args
// CHECK: memref.load %[[X]]
// CHECK: gpu.all_reduce add
// CHECK: %[[H64:.+]] = arith.index_castui %[[H]] : index to i64
// CHECK: arith.uitofp %[[H64]]
// CHECK: memref.store
func.func @dynamic_mean(%x: tensor<?x?xf32>) -> tensor<?x1xf32> {
  %0 = fusion.kernel wide_row "dynamic_mean" (%x) : (tensor<?x?xf32>) -> tensor<?x1xf32> {
  ^bb0(%a: tensor<?x?xf32>):
    %m = fusion.reduce_mean %a axes = [1] keep_dims : tensor<?x?xf32> -> tensor<?x1xf32>
    fusion.yield %m : tensor<?x1xf32>
  }
  return %0 : tensor<?x1xf32>
}

// -----

// A slice feeding the row: rows are sized from the slice, not from a
// buffer of the row's shape (there is none).
// CHECK-LABEL: func.func @sliced_rows
// CHECK: gpu.launch
// CHECK: gpu.all_reduce add
// CHECK: memref.store {{.*}} : memref<8xf32>
func.func @sliced_rows(%x: tensor<8x96xf32>) -> tensor<8xf32> {
  %0 = fusion.kernel row_reduction "sliced_rows" (%x) : (tensor<8x96xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8x96xf32>):
    %s = fusion.slice %a offsets = [0, 32] sizes = [8, 64] strides = [1, 1] : tensor<8x96xf32> -> tensor<8x64xf32>
    %r = fusion.reduce_sum %s axes = [1] : tensor<8x64xf32> -> tensor<8xf32>
    fusion.yield %r : tensor<8xf32>
  }
  return %0 : tensor<8xf32>
}

// -----

// A row of dynamic length in vectors of 4: a launch in vectors where the
// length is a multiple of 4, else one element by element, chosen on the
// host.
// CHECK-LABEL: func.func @dynamic_vectors
// CHECK: %[[LENGTH:.+]] = memref.dim %arg0, %c1
// CHECK: %[[REM:.+]] = arith.remui %[[LENGTH]], %c4
// CHECK: %[[WHOLE:.+]] = arith.cmpi eq, %[[REM]], %c0
// CHECK: scf.if %[[WHOLE]] {
// CHECK: gpu.launch {{.*}} function(@dynamic_vectors) {
// CHECK: llvm.inline_asm has_side_effects "{{.*}}L2::evict_first
// CHECK: vector.bitcast {{.*}} : vector<4xi32> to vector<4xf32>
// CHECK: } else {
// CHECK: gpu.launch {{.*}} function(@dynamic_vectors_elements) {
// CHECK-NOT: vector.load
// CHECK: memref.load {{.*}} : memref<64x?xf32>
func.func @dynamic_vectors(%x: tensor<64x?xf32>) -> tensor<64xf32> {
  %0 = fusion.kernel wide_row "dynamic_vectors" (%x) {plan = #fusion.plan<rows, threads = 256, vector = 4, row = streamed, cluster = 1, passes = [1]>} : (tensor<64x?xf32>) -> tensor<64xf32> {
  ^bb0(%a: tensor<64x?xf32>):
    %s = fusion.reduce_sum %a axes = [1] : tensor<64x?xf32> -> tensor<64xf32>
    fusion.yield %s : tensor<64xf32>
  }
  return %0 : tensor<64xf32>
}

// -----

// A staged row whose part (4096) splits into 4 chunks of whole strides (64
// threads x 8): each chunk copied on its own barrier, and the first pass
// waits for each chunk before its vectors, carrying the online max and sum
// from chunk to chunk; the output pass reads the staged part unwaited.
// CHECK-LABEL: func.func @staged_chunks
// CHECK: %[[FULL:.+]] = nvgpu.mbarrier.create -> <{{.*}}num_barriers = 4>
// CHECK-COUNT-4: nvgpu.mbarrier.init %[[FULL]]
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%c0
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%c1
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%c2
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
// CHECK: nvgpu.mbarrier.arrive.expect_tx %[[FULL]][%c3
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
// CHECK-NOT: nvvm.mbarrier.try_wait
// CHECK: scf.for %[[CHUNK:.+]] = %{{.+}} to %c4 step %{{.+}} iter_args({{.*}}) -> (f32, f32)
// CHECK: scf.while
// CHECK: nvvm.mbarrier.try_wait
// CHECK: arith.muli %[[CHUNK]], %c1024
// CHECK: scf.for {{.*}} -> (f32, f32)
// CHECK: vector.load %view
// CHECK: gpu.all_reduce maximumf
// CHECK-NOT: nvvm.mbarrier.try_wait
// CHECK: vector.store
func.func @staged_chunks(%x: tensor<64x4096xbf16>) -> tensor<64x4096xbf16> {
  %0 = fusion.kernel row_reduction "staged_chunks" (%x) {plan = #fusion.plan<rows, threads = 64, vector = 8, row = staged, cluster = 1, passes = [1]>} : (tensor<64x4096xbf16>) -> tensor<64x4096xbf16> {
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

// A staged row no vector divides (4095 bf16, shifted vectors): the copy
// takes the row's whole vectors, from its first vector boundary (LAG
// columns in) to END, into a buffer of the most whole vectors a row has
// (4088 elements), and every pass reads them there; the edge elements are
// read from global memory.
// CHECK-LABEL: func.func @staged_shifted
// CHECK: memref.view {{.*}} to memref<4088xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[SHIFT:.+]] = arith.remui
// CHECK: %[[LAG:.+]] = arith.remui %{{.+}}, %c8
// CHECK: %[[SPAN:.+]] = arith.muli %{{.+}}, %c8
// CHECK: %[[END:.+]] = arith.addi %[[LAG]], %[[SPAN]] : index
// CHECK: %[[FIRST:.+]] = arith.addi %c0{{.*}}, %[[LAG]] : index
// CHECK: %[[UPTO:.+]] = arith.maxui %[[END]], %[[FIRST]]
// CHECK: %[[LENGTH:.+]] = arith.subi %[[UPTO]], %[[FIRST]]
// CHECK: scf.if
// CHECK: %[[BYTES:.+]] = arith.muli %[[LENGTH]], %c2
// CHECK: %[[TOTAL:.+]] = arith.addi %c0{{.*}}, %[[BYTES]]
// CHECK: nvgpu.mbarrier.arrive.expect_tx %{{.+}}[%{{.+}}], %[[TOTAL]]
// CHECK: %[[FROM:.+]] = arith.addi %[[FIRST]], %c0
// CHECK: arith.muli %[[FROM]], %strides#1
// CHECK: nvvm.cp.async.bulk.shared.cluster.global
// CHECK: nvvm.mbarrier.try_wait
// CHECK: scf.for
// CHECK: vector.load %view[{{.*}}] {alignment = 16 : i64} : memref<4088xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: memref.load %arg0[{{.*}}] : memref<64x4095xbf16>
// CHECK: gpu.all_reduce maximumf
// CHECK: vector.load %view
// CHECK: vector.store {{.*}} : memref<64x4095xbf16>, vector<8xbf16>
// CHECK: memref.store {{.*}} : memref<64x4095xbf16>
func.func @staged_shifted(%x: tensor<64x4095xbf16>) -> tensor<64x4095xbf16> {
  %0 = fusion.kernel row_reduction "staged_shifted" (%x) {plan = #fusion.plan<rows, threads = 64, vector = 8, row = staged, cluster = 1, passes = [1]>} : (tensor<64x4095xbf16>) -> tensor<64x4095xbf16> {
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
