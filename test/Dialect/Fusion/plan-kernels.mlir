// RUN: fusion-opt %s --fusion-plan-kernels | FileCheck %s
// RUN: fusion-opt %s --fusion-plan-kernels=chip=sm_80 | FileCheck %s --check-prefix=SM80
// RUN: fusion-opt %s --fusion-plan-kernels=matmul-backend=generated | FileCheck %s --check-prefix=GENERATED
// RUN: fusion-opt %s --fusion-plan-kernels=emit-remarks -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: fusion-opt %s --fusion-plan-kernels="matmul-backend=generated emit-remarks" -o /dev/null 2>&1 | FileCheck %s --check-prefix=GENERATED-REMARK

// Plan selection over kernel shapes: held, streamed, split over a cluster,
// dynamic, elementwise, columns, split reductions, fallback, matmul; sm_80
// has no clusters. The row kernels here have fewer rows than the chip has
// multiprocessors, so the planner's rule plans them, not the measured table
// (plan-kernels-measured.mlir).

// A row of 4096 f32: 1024 vectors of 4, 128 threads holding 8 each.
// CHECK-LABEL: func @held
// CHECK: plan = #fusion.plan<rows, threads = 128, vector = 4, row = registers, cluster = 1, passes = [1]>
func.func @held(%x: tensor<64x4096xf32>) -> tensor<64x4096xf32> {
  %0 = fusion.kernel row_reduction (%x) : (tensor<64x4096xf32>) -> tensor<64x4096xf32> {
  ^bb0(%a: tensor<64x4096xf32>):
    %m = fusion.reduce_max %a axes = [1] keep_dims : tensor<64x4096xf32> -> tensor<64x1xf32>
    %d = fusion.sub %a, %m : (tensor<64x4096xf32>, tensor<64x1xf32>) -> tensor<64x4096xf32>
    fusion.yield %d : tensor<64x4096xf32>
  }
  return %0 : tensor<64x4096xf32>
}

// A row of 262144 f32 in the 8 parts a cluster allows is 8192 vectors a
// part, 16 a thread at 512 threads, more than a thread of so large a block
// holds (8): one block streams it. %x is read by the max pass and again by
// the write pass; %w by the write pass only.
// CHECK-LABEL: func @streamed
// CHECK: plan = #fusion.plan<rows, threads = 512, vector = 4, row = streamed, cluster = 1, passes = [2, 1]>
func.func @streamed(%x: tensor<64x262144xf32>, %w: tensor<262144xf32>) -> tensor<64x262144xf32> {
  %0 = fusion.kernel row_reduction (%x, %w) : (tensor<64x262144xf32>, tensor<262144xf32>) -> tensor<64x262144xf32> {
  ^bb0(%a: tensor<64x262144xf32>, %b: tensor<262144xf32>):
    %m = fusion.reduce_max %a axes = [1] keep_dims : tensor<64x262144xf32> -> tensor<64x1xf32>
    %d = fusion.sub %a, %m : (tensor<64x262144xf32>, tensor<64x1xf32>) -> tensor<64x262144xf32>
    %e = fusion.mul %d, %b : (tensor<64x262144xf32>, tensor<262144xf32>) -> tensor<64x262144xf32>
    fusion.yield %e : tensor<64x262144xf32>
  }
  return %0 : tensor<64x262144xf32>
}

// A sum over rows of 131072 bf16 would be held in a cluster of 8 parts,
// but it reads its row once anyway: streamed rather than held, and as a
// kernel whose outputs are its reductions, split over blocks (8 per row
// here, to fill the chip). Likewise without clusters (sm_80).
// CHECK-LABEL: func @split
// CHECK: plan = #fusion.plan<split_reduction, threads = 256, vector = 8, row = none, cluster = 1, split = 8, passes = [1]>
// SM80-LABEL: func @split
// SM80: plan = #fusion.plan<split_reduction, threads = 256, vector = 8, row = none, cluster = 1, split = 8, passes = [1]>
func.func @split(%x: tensor<8x131072xbf16>) -> tensor<8xbf16> {
  %0 = fusion.kernel wide_row (%x) : (tensor<8x131072xbf16>) -> tensor<8xbf16> {
  ^bb0(%a: tensor<8x131072xbf16>):
    %s = fusion.reduce_sum %a axes = [1] : tensor<8x131072xbf16> -> tensor<8xbf16>
    fusion.yield %s : tensor<8xbf16>
  }
  return %0 : tensor<8xbf16>
}

// A row of dynamic length is streamed, in vectors of 4 f32 where its
// length is a multiple of 4 at run time (else element by element): the
// pass of the max and of the sum of exp(x - max) together (an online sum),
// then the write pass, each read %x.
// CHECK-LABEL: func @dynamic
// CHECK: plan = #fusion.plan<rows, threads = 256, vector = 4, row = streamed, cluster = 1, passes = [2]>
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

// logsumexp as fusion-decompose writes it: the sum's shift is the max
// where it is finite, else 0 (a value per row computed from the max), and
// the max over a size-1 axis is no real reduction. One pass reads %x.
// CHECK-LABEL: func @dynamic_logsumexp
// CHECK: plan = #fusion.plan<rows, threads = 256, vector = 4, row = streamed, cluster = 1, passes = [1]>
func.func @dynamic_logsumexp(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %0 = fusion.kernel wide_row (%x) : (tensor<?x?xf32>) -> tensor<?xf32> {
  ^bb0(%a: tensor<?x?xf32>):
    %zero = fusion.constant dense<0.0> : tensor<f32>
    %inf = fusion.constant dense<0x7F800000> : tensor<f32>
    %m = fusion.reduce_max %a axes = [1] keep_dims : tensor<?x?xf32> -> tensor<?x1xf32>
    %abs = fusion.abs %m : tensor<?x1xf32>
    %finite = fusion.cmp lt, %abs, %inf : (tensor<?x1xf32>, tensor<f32>) -> tensor<?x1xi1>
    %c = fusion.select %finite, %m, %zero : (tensor<?x1xi1>, tensor<?x1xf32>, tensor<f32>) -> tensor<?x1xf32>
    %d = fusion.sub %a, %c : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
    %e = fusion.exp %d : tensor<?x?xf32>
    %s = fusion.reduce_sum %e axes = [1] : tensor<?x?xf32> -> tensor<?xf32>
    %cm = fusion.reduce_max %c axes = [1] : tensor<?x1xf32> -> tensor<?xf32>
    %l = fusion.log %s : tensor<?xf32>
    %r = fusion.add %l, %cm : tensor<?xf32>
    fusion.yield %r : tensor<?xf32>
  }
  return %0 : tensor<?xf32>
}

// The same over rows of 32768 bf16 (a cluster of 2 would hold them): one
// pass suffices, so 128 threads stream the row.
// CHECK-LABEL: func @logsumexp_streamed
// CHECK: plan = #fusion.plan<rows, threads = 128, vector = 8, row = streamed, cluster = 1, passes = [1]>
func.func @logsumexp_streamed(%x: tensor<64x32768xbf16>) -> tensor<64xf32> {
  %0 = fusion.kernel row_reduction (%x) : (tensor<64x32768xbf16>) -> tensor<64xf32> {
  ^bb0(%a: tensor<64x32768xbf16>):
    %zero = fusion.constant dense<0.0> : tensor<f32>
    %inf = fusion.constant dense<0x7F800000> : tensor<f32>
    %af = fusion.convert %a : tensor<64x32768xbf16> to tensor<64x32768xf32>
    %m = fusion.reduce_max %af axes = [1] keep_dims : tensor<64x32768xf32> -> tensor<64x1xf32>
    %abs = fusion.abs %m : tensor<64x1xf32>
    %finite = fusion.cmp lt, %abs, %inf : (tensor<64x1xf32>, tensor<f32>) -> tensor<64x1xi1>
    %c = fusion.select %finite, %m, %zero : (tensor<64x1xi1>, tensor<64x1xf32>, tensor<f32>) -> tensor<64x1xf32>
    %d = fusion.sub %af, %c : (tensor<64x32768xf32>, tensor<64x1xf32>) -> tensor<64x32768xf32>
    %e = fusion.exp %d : tensor<64x32768xf32>
    %s = fusion.reduce_sum %e axes = [1] : tensor<64x32768xf32> -> tensor<64xf32>
    %cm = fusion.reduce_max %c axes = [1] : tensor<64x1xf32> -> tensor<64xf32>
    %l = fusion.log %s : tensor<64xf32>
    %r = fusion.add %l, %cm : tensor<64xf32>
    fusion.yield %r : tensor<64xf32>
  }
  return %0 : tensor<64xf32>
}

// No online sum where the exponent's row is not the max's (exp(2x - max
// x)), nor where the shift reads a reduction after the max: a pass each.
// CHECK-LABEL: func @dynamic_unpaired
// CHECK: plan = #fusion.plan<rows, threads = 256, vector = 4, row = streamed, cluster = 1, passes = [5]>
func.func @dynamic_unpaired(%x: tensor<?x?xf32>) -> (tensor<?x1xf32>, tensor<?x1xf32>) {
  %0:2 = fusion.kernel wide_row (%x) : (tensor<?x?xf32>) -> (tensor<?x1xf32>, tensor<?x1xf32>) {
  ^bb0(%a: tensor<?x?xf32>):
    %m = fusion.reduce_max %a axes = [1] keep_dims : tensor<?x?xf32> -> tensor<?x1xf32>
    %a2 = fusion.add %a, %a : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    %d = fusion.sub %a2, %m : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
    %e = fusion.exp %d : tensor<?x?xf32>
    %s = fusion.reduce_sum %e axes = [1] keep_dims : tensor<?x?xf32> -> tensor<?x1xf32>
    %m2 = fusion.reduce_max %a2 axes = [1] keep_dims : tensor<?x?xf32> -> tensor<?x1xf32>
    %late = fusion.reduce_min %a axes = [1] keep_dims : tensor<?x?xf32> -> tensor<?x1xf32>
    %d2 = fusion.sub %a2, %late : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
    %e2 = fusion.exp %d2 : tensor<?x?xf32>
    %s2 = fusion.reduce_sum %e2 axes = [1] keep_dims : tensor<?x?xf32> -> tensor<?x1xf32>
    %t = fusion.add %s, %m2 : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
    fusion.yield %t, %s2 : tensor<?x1xf32>, tensor<?x1xf32>
  }
  return %0#0, %0#1 : tensor<?x1xf32>, tensor<?x1xf32>
}

// A trivial reduction that drops the innermost axis ([64, 1] -> [64]):
// lanes of the result are not lanes of its operand, so no vectors.
// CHECK-LABEL: func @drop_unit_axis
// CHECK: plan = #fusion.plan<elementwise, threads = 256, vector = 1, row = none
func.func @drop_unit_axis(%x: tensor<64x1xf32>) -> tensor<64xf32> {
  %0 = fusion.kernel elementwise (%x) : (tensor<64x1xf32>) -> tensor<64xf32> {
  ^bb0(%a: tensor<64x1xf32>):
    %m = fusion.reduce_max %a axes = [1] : tensor<64x1xf32> -> tensor<64xf32>
    fusion.yield %m : tensor<64xf32>
  }
  return %0 : tensor<64xf32>
}

// Widths that no vector divides are held in shifted vectors where one
// block holds the row: whole vectors from the row's first vector boundary
// (each row's whole vectors are aligned), the columns around them an
// element a thread. 4095 bf16: at most 511 whole vectors, 64 threads
// holding 8 (a block's threads need not divide the row: the last vectors a
// thread holds are masked).
// CHECK-LABEL: func @odd_width
// CHECK: plan = #fusion.plan<rows, threads = 64, vector = 8, row = registers, cluster = 1, passes = [1]>
func.func @odd_width(%x: tensor<16x4095xbf16>) -> tensor<16x4095xbf16> {
  %0 = fusion.kernel row_reduction (%x) : (tensor<16x4095xbf16>) -> tensor<16x4095xbf16> {
  ^bb0(%a: tensor<16x4095xbf16>):
    %m = fusion.reduce_max %a axes = [1] keep_dims : tensor<16x4095xbf16> -> tensor<16x1xbf16>
    %d = fusion.sub %a, %m : (tensor<16x4095xbf16>, tensor<16x1xbf16>) -> tensor<16x4095xbf16>
    %e = fusion.exp %d : tensor<16x4095xbf16>
    %s = fusion.reduce_sum %e axes = [1] keep_dims : tensor<16x4095xbf16> -> tensor<16x1xbf16>
    %y = fusion.div %e, %s : (tensor<16x4095xbf16>, tensor<16x1xbf16>) -> tensor<16x4095xbf16>
    fusion.yield %y : tensor<16x4095xbf16>
  }
  return %0 : tensor<16x4095xbf16>
}

// A prime width (4093 f32) likewise: at most 1023 vectors of 4.
// CHECK-LABEL: func @prime_width
// CHECK: plan = #fusion.plan<rows, threads = 128, vector = 4, row = registers, cluster = 1, passes = [1]>
func.func @prime_width(%x: tensor<16x4093xf32>) -> tensor<16x4093xf32> {
  %0 = fusion.kernel row_reduction (%x) : (tensor<16x4093xf32>) -> tensor<16x4093xf32> {
  ^bb0(%a: tensor<16x4093xf32>):
    %m = fusion.reduce_max %a axes = [1] keep_dims : tensor<16x4093xf32> -> tensor<16x1xf32>
    %d = fusion.sub %a, %m : (tensor<16x4093xf32>, tensor<16x1xf32>) -> tensor<16x4093xf32>
    %e = fusion.exp %d : tensor<16x4093xf32>
    %s = fusion.reduce_sum %e axes = [1] keep_dims : tensor<16x4093xf32> -> tensor<16x1xf32>
    %y = fusion.div %e, %s : (tensor<16x4093xf32>, tensor<16x1xf32>) -> tensor<16x4093xf32>
    fusion.yield %y : tensor<16x4093xf32>
  }
  return %0 : tensor<16x4093xf32>
}

// An odd row read through a slice is read element by element: the
// slice's rows start where the row's do not.
// CHECK-LABEL: func @odd_slice
// CHECK: plan = #fusion.plan<rows, threads = 128, vector = 1, row = registers, cluster = 1, passes = [1]>
func.func @odd_slice(%x: tensor<16x4096xbf16>) -> tensor<16x4095xbf16> {
  %0 = fusion.kernel row_reduction (%x) : (tensor<16x4096xbf16>) -> tensor<16x4095xbf16> {
  ^bb0(%a: tensor<16x4096xbf16>):
    %v = fusion.slice %a offsets = [0, 1] sizes = [16, 4095] strides = [1, 1] : tensor<16x4096xbf16> -> tensor<16x4095xbf16>
    %m = fusion.reduce_max %v axes = [1] keep_dims : tensor<16x4095xbf16> -> tensor<16x1xbf16>
    %d = fusion.sub %v, %m : (tensor<16x4095xbf16>, tensor<16x1xbf16>) -> tensor<16x4095xbf16>
    fusion.yield %d : tensor<16x4095xbf16>
  }
  return %0 : tensor<16x4095xbf16>
}

// 4104 bf16 is 513 vectors of 8: 128 threads holding 5, the fifth masked.
// CHECK-LABEL: func @masked_vectors
// CHECK: plan = #fusion.plan<rows, threads = 128, vector = 8, row = registers, cluster = 1, passes = [1]>
func.func @masked_vectors(%x: tensor<16x4104xbf16>) -> tensor<16x4104xbf16> {
  %0 = fusion.kernel row_reduction (%x) : (tensor<16x4104xbf16>) -> tensor<16x4104xbf16> {
  ^bb0(%a: tensor<16x4104xbf16>):
    %m = fusion.reduce_max %a axes = [1] keep_dims : tensor<16x4104xbf16> -> tensor<16x1xbf16>
    %d = fusion.sub %a, %m : (tensor<16x4104xbf16>, tensor<16x1xbf16>) -> tensor<16x4104xbf16>
    %e = fusion.exp %d : tensor<16x4104xbf16>
    %s = fusion.reduce_sum %e axes = [1] keep_dims : tensor<16x4104xbf16> -> tensor<16x1xbf16>
    %y = fusion.div %e, %s : (tensor<16x4104xbf16>, tensor<16x1xbf16>) -> tensor<16x4104xbf16>
    fusion.yield %y : tensor<16x4104xbf16>
  }
  return %0 : tensor<16x4104xbf16>
}

// GPT-2's vocabulary (50257, odd): no block holds it, and shifted vectors
// are held by one block only: a cluster of 4 parts of 12565 scalars (99 a
// thread of 128). Without clusters (sm_80) one block of 512 threads
// streams the row.
// CHECK-LABEL: func @vocabulary_width
// CHECK: plan = #fusion.plan<cluster_rows, threads = 128, vector = 1, row = registers, cluster = 4, passes = [1]>
// SM80-LABEL: func @vocabulary_width
// SM80: plan = #fusion.plan<rows, threads = 512, vector = 1, row = streamed, cluster = 1, passes = [3]>
func.func @vocabulary_width(%x: tensor<16x50257xbf16>) -> tensor<16x50257xbf16> {
  %0 = fusion.kernel wide_row (%x) : (tensor<16x50257xbf16>) -> tensor<16x50257xbf16> {
  ^bb0(%a: tensor<16x50257xbf16>):
    %m = fusion.reduce_max %a axes = [1] keep_dims : tensor<16x50257xbf16> -> tensor<16x1xbf16>
    %d = fusion.sub %a, %m : (tensor<16x50257xbf16>, tensor<16x1xbf16>) -> tensor<16x50257xbf16>
    %e = fusion.exp %d : tensor<16x50257xbf16>
    %s = fusion.reduce_sum %e axes = [1] keep_dims : tensor<16x50257xbf16> -> tensor<16x1xbf16>
    %y = fusion.div %e, %s : (tensor<16x50257xbf16>, tensor<16x1xbf16>) -> tensor<16x50257xbf16>
    fusion.yield %y : tensor<16x50257xbf16>
  }
  return %0 : tensor<16x50257xbf16>
}

// 32001 scalars (within max-row-elements) are more than 128 threads hold:
// 2 parts of 16001 (125 a thread).
// CHECK-LABEL: func @beyond_one_block
// CHECK: plan = #fusion.plan<cluster_rows, threads = 128, vector = 1, row = registers, cluster = 2, passes = [1]>
func.func @beyond_one_block(%x: tensor<16x32001xf32>) -> tensor<16x32001xf32> {
  %0 = fusion.kernel row_reduction (%x) : (tensor<16x32001xf32>) -> tensor<16x32001xf32> {
  ^bb0(%a: tensor<16x32001xf32>):
    %m = fusion.reduce_max %a axes = [1] keep_dims : tensor<16x32001xf32> -> tensor<16x1xf32>
    %d = fusion.sub %a, %m : (tensor<16x32001xf32>, tensor<16x1xf32>) -> tensor<16x32001xf32>
    fusion.yield %d : tensor<16x32001xf32>
  }
  return %0 : tensor<16x32001xf32>
}
// 131073 needs 9 parts of 16384; the cluster stops at 8 parts of 16385,
// the last one 16378, held by 512 threads (33 scalars each; a full
// cluster's blocks hold at most 64).
// CHECK-LABEL: func @odd_wide
// CHECK: plan = #fusion.plan<cluster_rows, threads = 512, vector = 1, row = registers, cluster = 8, passes = [1]>
func.func @odd_wide(%x: tensor<16x131073xbf16>) -> tensor<16x131073xbf16> {
  %0 = fusion.kernel wide_row (%x) : (tensor<16x131073xbf16>) -> tensor<16x131073xbf16> {
  ^bb0(%a: tensor<16x131073xbf16>):
    %m = fusion.reduce_max %a axes = [1] keep_dims : tensor<16x131073xbf16> -> tensor<16x1xbf16>
    %d = fusion.sub %a, %m : (tensor<16x131073xbf16>, tensor<16x1xbf16>) -> tensor<16x131073xbf16>
    %e = fusion.exp %d : tensor<16x131073xbf16>
    %s = fusion.reduce_sum %e axes = [1] keep_dims : tensor<16x131073xbf16> -> tensor<16x1xbf16>
    %y = fusion.div %e, %s : (tensor<16x131073xbf16>, tensor<16x1xbf16>) -> tensor<16x131073xbf16>
    fusion.yield %y : tensor<16x131073xbf16>
  }
  return %0 : tensor<16x131073xbf16>
}

// 262144 bf16 would be 16 parts of 16384: 8 parts of 32768 are still held
// by 512 threads (8 vectors each).
// CHECK-LABEL: func @widest_held
// CHECK: plan = #fusion.plan<cluster_rows, threads = 512, vector = 8, row = registers, cluster = 8, passes = [1]>
func.func @widest_held(%x: tensor<16x262144xbf16>) -> tensor<16x262144xbf16> {
  %0 = fusion.kernel wide_row (%x) : (tensor<16x262144xbf16>) -> tensor<16x262144xbf16> {
  ^bb0(%a: tensor<16x262144xbf16>):
    %m = fusion.reduce_max %a axes = [1] keep_dims : tensor<16x262144xbf16> -> tensor<16x1xbf16>
    %d = fusion.sub %a, %m : (tensor<16x262144xbf16>, tensor<16x1xbf16>) -> tensor<16x262144xbf16>
    %e = fusion.exp %d : tensor<16x262144xbf16>
    %s = fusion.reduce_sum %e axes = [1] keep_dims : tensor<16x262144xbf16> -> tensor<16x1xbf16>
    %y = fusion.div %e, %s : (tensor<16x262144xbf16>, tensor<16x1xbf16>) -> tensor<16x262144xbf16>
    fusion.yield %y : tensor<16x262144xbf16>
  }
  return %0 : tensor<16x262144xbf16>
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

// Columns: 32 columns of f32 in vectors of 4 (8 lanes), the other 32
// threads of the block down the 64 rows; too few rows to split.
// CHECK-LABEL: func @column
// CHECK: plan = #fusion.plan<columns, threads = 256, vector = 4, row = none, cluster = 1, passes = [1]>
func.func @column(%x: tensor<64x32xf32>) -> tensor<32xf32> {
  %0 = fusion.kernel column_reduction (%x) : (tensor<64x32xf32>) -> tensor<32xf32> {
  ^bb0(%a: tensor<64x32xf32>):
    %s = fusion.reduce_sum %a axes = [0] : tensor<64x32xf32> -> tensor<32xf32>
    fusion.yield %s : tensor<32xf32>
  }
  return %0 : tensor<32xf32>
}

// A bias gradient: 4096 bf16 columns are 512 vectors of 8, 16 tiles of a
// warp; the rows are split 33 ways for 132 x 4 blocks.
// CHECK-LABEL: func @column_split
// CHECK: plan = #fusion.plan<columns, threads = 256, vector = 8, row = none, cluster = 1, split = 33, passes = [1]>
func.func @column_split(%x: tensor<16384x4096xbf16>) -> tensor<4096xf32> {
  %0 = fusion.kernel column_reduction (%x) : (tensor<16384x4096xbf16>) -> tensor<4096xf32> {
  ^bb0(%a: tensor<16384x4096xbf16>):
    %f = fusion.convert %a : tensor<16384x4096xbf16> to tensor<16384x4096xf32>
    %s = fusion.reduce_sum %f axes = [0] : tensor<16384x4096xf32> -> tensor<4096xf32>
    fusion.yield %s : tensor<4096xf32>
  }
  return %0 : tensor<4096xf32>
}

// Several reduced axes (4096 rows of 768 columns, kept dims): 192 vectors,
// 6 tiles; the split stops where each thread would reduce fewer than 8
// rows (4096 / (8 x 8) = 64).
// CHECK-LABEL: func @column_3d
// CHECK: plan = #fusion.plan<columns, threads = 256, vector = 4, row = none, cluster = 1, split = 64, passes = [1]>
func.func @column_3d(%x: tensor<8x512x768xf32>) -> tensor<1x1x768xf32> {
  %0 = fusion.kernel column_reduction (%x) : (tensor<8x512x768xf32>) -> tensor<1x1x768xf32> {
  ^bb0(%a: tensor<8x512x768xf32>):
    %s = fusion.reduce_mean %a axes = [0, 1] keep_dims : tensor<8x512x768xf32> -> tensor<1x1x768xf32>
    fusion.yield %s : tensor<1x1x768xf32>
  }
  return %0 : tensor<1x1x768xf32>
}

// An odd width (77: no vector divides it) whose rows are no whole
// segments (1009 rows, segments of 4) reads scalars; a prime row count
// splits like any other; sum and max share the sweep.
// REMARK: remark: [plan] columns read element by element, not over segments of rows: its 1009 rows are not whole segments of 4
// CHECK-LABEL: func @column_odd
// CHECK: plan = #fusion.plan<columns, threads = 256, vector = 1, row = none, cluster = 1, split = 16, passes = [1]>
func.func @column_odd(%x: tensor<1009x77xf32>) -> (tensor<77xf32>, tensor<77xf32>) {
  %0:2 = fusion.kernel column_reduction (%x) : (tensor<1009x77xf32>) -> (tensor<77xf32>, tensor<77xf32>) {
  ^bb0(%a: tensor<1009x77xf32>):
    %s = fusion.reduce_sum %a axes = [0] : tensor<1009x77xf32> -> tensor<77xf32>
    %m = fusion.reduce_max %a axes = [0] : tensor<1009x77xf32> -> tensor<77xf32>
    fusion.yield %s, %m : tensor<77xf32>, tensor<77xf32>
  }
  return %0#0, %0#1 : tensor<77xf32>, tensor<77xf32>
}

// An odd width whose rows make whole segments: 4 rows of 77 f32 are 77
// aligned vectors of 4, so 1008 rows are read as 252 rows of 308 columns
// (77 vectors, 3 tiles; split 176 capped at 252 / (8 x 8) = 4).
// CHECK-LABEL: func @column_odd_segments
// CHECK: plan = #fusion.plan<columns, threads = 256, vector = 4, row = none, cluster = 1, split = 4, passes = [1]>
func.func @column_odd_segments(%x: tensor<1008x77xf32>) -> tensor<77xf32> {
  %0 = fusion.kernel column_reduction (%x) : (tensor<1008x77xf32>) -> tensor<77xf32> {
  ^bb0(%a: tensor<1008x77xf32>):
    %e = fusion.exp %a : tensor<1008x77xf32>
    %s = fusion.reduce_sum %e axes = [0] : tensor<1008x77xf32> -> tensor<77xf32>
    fusion.yield %s : tensor<77xf32>
  }
  return %0 : tensor<77xf32>
}

// Segments need the kept axes innermost: a middle axis reduced (an outer
// one kept) reads scalars.
// REMARK: remark: [plan] columns read element by element, not over segments of rows: its kept axes are not the innermost ones
// CHECK-LABEL: func @column_odd_middle
// CHECK: plan = #fusion.plan<columns, threads = 256, vector = 1, row = none, cluster = 1, split = 16, passes = [1]>
func.func @column_odd_middle(%x: tensor<4x1008x77xf32>) -> tensor<4x77xf32> {
  %0 = fusion.kernel column_reduction (%x) : (tensor<4x1008x77xf32>) -> tensor<4x77xf32> {
  ^bb0(%a: tensor<4x1008x77xf32>):
    %s = fusion.reduce_sum %a axes = [1] : tensor<4x1008x77xf32> -> tensor<4x77xf32>
    fusion.yield %s : tensor<4x77xf32>
  }
  return %0 : tensor<4x77xf32>
}

// A dynamic row count: split for a full chip (2 tiles, 264 ranges); the
// lowering uses fewer where the rows are few.
// CHECK-LABEL: func @column_dynamic
// CHECK: plan = #fusion.plan<columns, threads = 256, vector = 4, row = none, cluster = 1, split = 264, passes = [1]>
func.func @column_dynamic(%x: tensor<?x256xf32>) -> tensor<256xf32> {
  %0 = fusion.kernel column_reduction (%x) : (tensor<?x256xf32>) -> tensor<256xf32> {
  ^bb0(%a: tensor<?x256xf32>):
    %s = fusion.reduce_sum %a axes = [0] : tensor<?x256xf32> -> tensor<256xf32>
    fusion.yield %s : tensor<256xf32>
  }
  return %0 : tensor<256xf32>
}

// A reduction that reads another's result needs the first finished over
// all rows before the second starts: not one sweep.
// REMARK: remark: [plan] runs per_element: a reduction reads another reduction's result
// CHECK-LABEL: func @column_dependent
// CHECK: plan = #fusion.plan<per_element, threads = 256, vector = 1, row = none, cluster = 1, passes = [1]>
func.func @column_dependent(%x: tensor<64x32xf32>) -> tensor<1x32xf32> {
  %0 = fusion.kernel column_reduction (%x) : (tensor<64x32xf32>) -> tensor<1x32xf32> {
  ^bb0(%a: tensor<64x32xf32>):
    %m = fusion.reduce_mean %a axes = [0] keep_dims : tensor<64x32xf32> -> tensor<1x32xf32>
    %d = fusion.sub %a, %m : (tensor<64x32xf32>, tensor<1x32xf32>) -> tensor<64x32xf32>
    %q = fusion.square %d : tensor<64x32xf32>
    %v = fusion.reduce_mean %q axes = [0] keep_dims : tensor<64x32xf32> -> tensor<1x32xf32>
    fusion.yield %v : tensor<1x32xf32>
  }
  return %0 : tensor<1x32xf32>
}

// A sum over every axis: split_reduction, 1000 f32 vectors of 4 among
// 128 threads (4 to 8 vectors a thread, as for rows), no split for so few.
// CHECK-LABEL: func @sum_all
// CHECK: plan = #fusion.plan<split_reduction, threads = 128, vector = 4, row = none, cluster = 1, passes = [1]>
func.func @sum_all(%x: tensor<8x500xf32>) -> tensor<f32> {
  %0 = fusion.kernel reduction (%x) : (tensor<8x500xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<8x500xf32>):
    %s = fusion.reduce_sum %a axes = [0, 1] : tensor<8x500xf32> -> tensor<f32>
    fusion.yield %s : tensor<f32>
  }
  return %0 : tensor<f32>
}

// One row of 64M f32: too long for a cluster; a kernel of reductions only
// is split over 132 x 4 blocks.
// CHECK-LABEL: func @one_long_row
// CHECK: plan = #fusion.plan<split_reduction, threads = 256, vector = 4, row = none, cluster = 1, split = 528, passes = [1]>
func.func @one_long_row(%x: tensor<67108864xf32>) -> tensor<f32> {
  %0 = fusion.kernel wide_row (%x) : (tensor<67108864xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<67108864xf32>):
    %s = fusion.reduce_sum %a axes = [0] : tensor<67108864xf32> -> tensor<f32>
    fusion.yield %s : tensor<f32>
  }
  return %0 : tensor<f32>
}

// Reduced axes around a kept one (0 and 2 of 64 x 4096 x 128 bf16): 4096
// outputs of 1024 vectors, enough blocks without a split.
// CHECK-LABEL: func @outer_and_inner
// CHECK: plan = #fusion.plan<split_reduction, threads = 256, vector = 8, row = none, cluster = 1, passes = [1]>
func.func @outer_and_inner(%x: tensor<64x4096x128xbf16>) -> tensor<4096xbf16> {
  %0 = fusion.kernel reduction (%x) : (tensor<64x4096x128xbf16>) -> tensor<4096xbf16> {
  ^bb0(%a: tensor<64x4096x128xbf16>):
    %s = fusion.reduce_max %a axes = [0, 2] : tensor<64x4096x128xbf16> -> tensor<4096xbf16>
    fusion.yield %s : tensor<4096xbf16>
  }
  return %0 : tensor<4096xbf16>
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
// GENERATED: plan = #fusion.plan<matmul_wgmma, threads = 256, vector = 8, row = none, cluster = 1, passes = [1, 1]>
// SM80-LABEL: func @library
// SM80: plan = #fusion.plan<library_matmul
func.func @library(%a: tensor<64x32xbf16>, %b: tensor<32x16xbf16>) -> tensor<64x16xbf16> {
  %0 = fusion.kernel matmul (%a, %b) : (tensor<64x32xbf16>, tensor<32x16xbf16>) -> tensor<64x16xbf16> {
  ^bb0(%x: tensor<64x32xbf16>, %y: tensor<32x16xbf16>):
    %p = fusion.matmul %x, %y : (tensor<64x32xbf16>, tensor<32x16xbf16>) -> tensor<64x16xbf16>
    fusion.yield %p : tensor<64x16xbf16>
  }
  return %0 : tensor<64x16xbf16>
}

// Generated matmuls: tensor cores (matmul_wgmma) where TMA can read the
// operands, else shared-memory tiles, with a remark saying why.
// GENERATED-LABEL: func @wgmma_refused
// GENERATED: plan = #fusion.plan<matmul_tiles
// GENERATED-REMARK: remark: [plan] runs matmul_tiles: N must be a static multiple of 8
func.func @wgmma_refused(%a: tensor<64x32xbf16>, %b: tensor<32x20xbf16>) -> tensor<64x20xbf16> {
  %0 = fusion.kernel matmul (%a, %b) : (tensor<64x32xbf16>, tensor<32x20xbf16>) -> tensor<64x20xbf16> {
  ^bb0(%x: tensor<64x32xbf16>, %y: tensor<32x20xbf16>):
    %p = fusion.matmul %x, %y : (tensor<64x32xbf16>, tensor<32x20xbf16>) -> tensor<64x20xbf16>
    %r = fusion.relu %p : tensor<64x20xbf16>
    fusion.yield %r : tensor<64x20xbf16>
  }
  return %0 : tensor<64x20xbf16>
}

// At most 256 rows, matmul_wgmma splits K over blocks, as far as they still
// fit on the H200's 132 multiprocessors at one each, in ranges of at least
// 4 steps of 64. A single product of kernel inputs has tiles of 128
// columns: decode's down projection (11008 -> 4096: 32 tiles, 172 steps)
// takes 4 (128 blocks); with M dynamic the plan holds the split for the
// rows that take it. 16 x 1024 -> 256 (2 tiles, 16 steps) is cut in 4; the
// up projection's pair (86 tiles of 128 columns of each product) fills one
// wave unsplit, as does a single up projection (86 tiles); a prologue (a
// scale of B) keeps tiles of 256 columns (16 tiles, split 8); 130 static
// rows are 3 tiles of 64 rows of 1024 -> 256 (split 22, at most 4); more
// than 256 rows are never split.
// GENERATED-LABEL: func @split_decode_down
// GENERATED: plan = #fusion.plan<matmul_wgmma, threads = 256, vector = 8, row = none, cluster = 1, split = 4, passes = [1, 1]>
func.func @split_decode_down(%a: tensor<?x11008xbf16>, %b: tensor<11008x4096xbf16>) -> tensor<?x4096xbf16> {
  %0 = fusion.kernel matmul (%a, %b) : (tensor<?x11008xbf16>, tensor<11008x4096xbf16>) -> tensor<?x4096xbf16> {
  ^bb0(%x: tensor<?x11008xbf16>, %y: tensor<11008x4096xbf16>):
    %p = fusion.matmul %x, %y : (tensor<?x11008xbf16>, tensor<11008x4096xbf16>) -> tensor<?x4096xbf16>
    fusion.yield %p : tensor<?x4096xbf16>
  }
  return %0 : tensor<?x4096xbf16>
}
// GENERATED-LABEL: func @split_static_rows
// GENERATED: plan = #fusion.plan<matmul_wgmma, threads = 256, vector = 8, row = none, cluster = 1, split = 4, passes = [1, 1]>
func.func @split_static_rows(%a: tensor<16x1024xbf16>, %b: tensor<1024x256xbf16>) -> tensor<16x256xbf16> {
  %0 = fusion.kernel matmul (%a, %b) : (tensor<16x1024xbf16>, tensor<1024x256xbf16>) -> tensor<16x256xbf16> {
  ^bb0(%x: tensor<16x1024xbf16>, %y: tensor<1024x256xbf16>):
    %p = fusion.matmul %x, %y : (tensor<16x1024xbf16>, tensor<1024x256xbf16>) -> tensor<16x256xbf16>
    fusion.yield %p : tensor<16x256xbf16>
  }
  return %0 : tensor<16x256xbf16>
}
// GENERATED-LABEL: func @split_decode_up
// GENERATED: plan = #fusion.plan<matmul_wgmma, threads = 256, vector = 8, row = none, cluster = 1, passes = [1, 1]>
func.func @split_decode_up(%a: tensor<?x4096xbf16>, %b: tensor<4096x11008xbf16>) -> tensor<?x11008xbf16> {
  %0 = fusion.kernel matmul (%a, %b) : (tensor<?x4096xbf16>, tensor<4096x11008xbf16>) -> tensor<?x11008xbf16> {
  ^bb0(%x: tensor<?x4096xbf16>, %y: tensor<4096x11008xbf16>):
    %p = fusion.matmul %x, %y : (tensor<?x4096xbf16>, tensor<4096x11008xbf16>) -> tensor<?x11008xbf16>
    fusion.yield %p : tensor<?x11008xbf16>
  }
  return %0 : tensor<?x11008xbf16>
}
// GENERATED-LABEL: func @split_decode_down_scaled
// GENERATED: plan = #fusion.plan<matmul_wgmma, threads = 256, vector = 8, row = none, cluster = 1, split = 8, passes = [1, 1, 1]>
func.func @split_decode_down_scaled(%a: tensor<?x11008xbf16>, %b: tensor<11008x4096xbf16>, %s: tensor<4096xbf16>) -> tensor<?x4096xbf16> {
  %0 = fusion.kernel matmul (%a, %b, %s) : (tensor<?x11008xbf16>, tensor<11008x4096xbf16>, tensor<4096xbf16>) -> tensor<?x4096xbf16> {
  ^bb0(%x: tensor<?x11008xbf16>, %y: tensor<11008x4096xbf16>, %z: tensor<4096xbf16>):
    %w = fusion.mul %y, %z : (tensor<11008x4096xbf16>, tensor<4096xbf16>) -> tensor<11008x4096xbf16>
    %p = fusion.matmul %x, %w : (tensor<?x11008xbf16>, tensor<11008x4096xbf16>) -> tensor<?x4096xbf16>
    fusion.yield %p : tensor<?x4096xbf16>
  }
  return %0 : tensor<?x4096xbf16>
}
// GENERATED-LABEL: func @split_decode_pair
// GENERATED: plan = #fusion.plan<matmul_wgmma, threads = 256, vector = 8, row = none, cluster = 1, passes = [1, 1]>
func.func @split_decode_pair(%a: tensor<?x4096xbf16>, %w: tensor<4096x22016xbf16>) -> tensor<?x11008xbf16> {
  %0 = fusion.kernel matmul (%a, %w) : (tensor<?x4096xbf16>, tensor<4096x22016xbf16>) -> tensor<?x11008xbf16> {
  ^bb0(%x: tensor<?x4096xbf16>, %y: tensor<4096x22016xbf16>):
    %p = fusion.matmul %x, %y : (tensor<?x4096xbf16>, tensor<4096x22016xbf16>) -> tensor<?x22016xbf16>
    %g = fusion.slice %p offsets = [0, 0] sizes = [-1, 11008] strides = [1, 1] : tensor<?x22016xbf16> -> tensor<?x11008xbf16>
    %u = fusion.slice %p offsets = [0, 11008] sizes = [-1, 11008] strides = [1, 1] : tensor<?x22016xbf16> -> tensor<?x11008xbf16>
    %s = fusion.silu %g : tensor<?x11008xbf16>
    %r = fusion.mul %s, %u : tensor<?x11008xbf16>
    fusion.yield %r : tensor<?x11008xbf16>
  }
  return %0 : tensor<?x11008xbf16>
}
// GENERATED-LABEL: func @split_static_row_tiles
// GENERATED: plan = #fusion.plan<matmul_wgmma, threads = 256, vector = 8, row = none, cluster = 1, split = 4, passes = [1, 1]>
func.func @split_static_row_tiles(%a: tensor<130x1024xbf16>, %b: tensor<1024x256xbf16>) -> tensor<130x256xbf16> {
  %0 = fusion.kernel matmul (%a, %b) : (tensor<130x1024xbf16>, tensor<1024x256xbf16>) -> tensor<130x256xbf16> {
  ^bb0(%x: tensor<130x1024xbf16>, %y: tensor<1024x256xbf16>):
    %p = fusion.matmul %x, %y : (tensor<130x1024xbf16>, tensor<1024x256xbf16>) -> tensor<130x256xbf16>
    fusion.yield %p : tensor<130x256xbf16>
  }
  return %0 : tensor<130x256xbf16>
}
// GENERATED-LABEL: func @split_many_rows
// GENERATED: plan = #fusion.plan<matmul_wgmma, threads = 256, vector = 8, row = none, cluster = 1, passes = [1, 1]>
func.func @split_many_rows(%a: tensor<257x1024xbf16>, %b: tensor<1024x256xbf16>) -> tensor<257x256xbf16> {
  %0 = fusion.kernel matmul (%a, %b) : (tensor<257x1024xbf16>, tensor<1024x256xbf16>) -> tensor<257x256xbf16> {
  ^bb0(%x: tensor<257x1024xbf16>, %y: tensor<1024x256xbf16>):
    %p = fusion.matmul %x, %y : (tensor<257x1024xbf16>, tensor<1024x256xbf16>) -> tensor<257x256xbf16>
    fusion.yield %p : tensor<257x256xbf16>
  }
  return %0 : tensor<257x256xbf16>
}

// A pair of products sharing A (the gated MLP) runs on tensor cores as
// two matmuls or two slices of one; the library cannot take it, so auto
// plans it generated too. In f32 it runs on shared-memory tiles.
// CHECK-LABEL: func @pair
// CHECK: plan = #fusion.plan<matmul_wgmma, threads = 256, vector = 8, row = none, cluster = 1, passes = [1, 1, 1]>
// GENERATED-LABEL: func @pair
// GENERATED: plan = #fusion.plan<matmul_wgmma, threads = 256, vector = 8, row = none, cluster = 1, passes = [1, 1, 1]>
// SM80-LABEL: func @pair
// SM80: plan = #fusion.plan<matmul_tiles
func.func @pair(%x: tensor<?x64xbf16>, %wg: tensor<64x96xbf16>, %wu: tensor<64x96xbf16>) -> tensor<?x96xbf16> {
  %0 = fusion.kernel matmul (%x, %wg, %wu) : (tensor<?x64xbf16>, tensor<64x96xbf16>, tensor<64x96xbf16>) -> tensor<?x96xbf16> {
  ^bb0(%a: tensor<?x64xbf16>, %g: tensor<64x96xbf16>, %u: tensor<64x96xbf16>):
    %pg = fusion.matmul %a, %g : (tensor<?x64xbf16>, tensor<64x96xbf16>) -> tensor<?x96xbf16>
    %pu = fusion.matmul %a, %u : (tensor<?x64xbf16>, tensor<64x96xbf16>) -> tensor<?x96xbf16>
    %s = fusion.silu %pg : tensor<?x96xbf16>
    %r = fusion.mul %s, %pu : tensor<?x96xbf16>
    fusion.yield %r : tensor<?x96xbf16>
  }
  return %0 : tensor<?x96xbf16>
}

// REMARK: remark: [plan] runs matmul_wgmma, not the library: [library-epilogue] a pair of products: a call computes one product and writes it whole
// CHECK-LABEL: func @pair_halves
// CHECK: plan = #fusion.plan<matmul_wgmma, threads = 256, vector = 8
// GENERATED-REMARK-NOT: pair_halves
func.func @pair_halves(%x: tensor<?x64xbf16>, %w: tensor<64x192xbf16>) -> tensor<?x96xbf16> {
  %0 = fusion.kernel matmul (%x, %w) : (tensor<?x64xbf16>, tensor<64x192xbf16>) -> tensor<?x96xbf16> {
  ^bb0(%a: tensor<?x64xbf16>, %b: tensor<64x192xbf16>):
    %p = fusion.matmul %a, %b : (tensor<?x64xbf16>, tensor<64x192xbf16>) -> tensor<?x192xbf16>
    %g = fusion.slice %p offsets = [0, 0] sizes = [-1, 96] strides = [1, 1] : tensor<?x192xbf16> -> tensor<?x96xbf16>
    %u = fusion.slice %p offsets = [0, 96] sizes = [-1, 96] strides = [1, 1] : tensor<?x192xbf16> -> tensor<?x96xbf16>
    %s = fusion.silu %g : tensor<?x96xbf16>
    %r = fusion.mul %s, %u : tensor<?x96xbf16>
    fusion.yield %r : tensor<?x96xbf16>
  }
  return %0 : tensor<?x96xbf16>
}

// CHECK-LABEL: func @pair_f32
// CHECK: plan = #fusion.plan<matmul_tiles, threads = 256, vector = 1
// GENERATED-REMARK: remark: [plan] runs matmul_tiles: the operands must be bf16 or f16
func.func @pair_f32(%x: tensor<8x16xf32>, %wg: tensor<16x24xf32>, %wu: tensor<16x24xf32>) -> tensor<8x24xf32> {
  %0 = fusion.kernel matmul (%x, %wg, %wu) : (tensor<8x16xf32>, tensor<16x24xf32>, tensor<16x24xf32>) -> tensor<8x24xf32> {
  ^bb0(%a: tensor<8x16xf32>, %g: tensor<16x24xf32>, %u: tensor<16x24xf32>):
    %pg = fusion.matmul %a, %g : (tensor<8x16xf32>, tensor<16x24xf32>) -> tensor<8x24xf32>
    %pu = fusion.matmul %a, %u : (tensor<8x16xf32>, tensor<16x24xf32>) -> tensor<8x24xf32>
    %r = fusion.mul %pg, %pu : tensor<8x24xf32>
    fusion.yield %r : tensor<8x24xf32>
  }
  return %0 : tensor<8x24xf32>
}

// A hand-written kernel reading its product transposed: no tile strategy
// knows the product at another element, so it runs per element.
// GENERATED-LABEL: func @product_read_transposed
// GENERATED: plan = #fusion.plan<per_element
func.func @product_read_transposed(%a: tensor<16x16xbf16>, %b: tensor<16x16xbf16>) -> tensor<16x16xbf16> {
  %0 = fusion.kernel matmul (%a, %b) : (tensor<16x16xbf16>, tensor<16x16xbf16>) -> tensor<16x16xbf16> {
  ^bb0(%x: tensor<16x16xbf16>, %y: tensor<16x16xbf16>):
    %p = fusion.matmul %x, %y : (tensor<16x16xbf16>, tensor<16x16xbf16>) -> tensor<16x16xbf16>
    %t = fusion.transpose %p permutation = [1, 0] : tensor<16x16xbf16> -> tensor<16x16xbf16>
    %r = fusion.add %p, %t : tensor<16x16xbf16>
    fusion.yield %r : tensor<16x16xbf16>
  }
  return %0 : tensor<16x16xbf16>
}

// Prologues (elementwise math on an operand): the library takes none, so
// auto plans the tensor-core kernel, which evaluates them as it loads the
// tiles (with a remark saying why not the library). A prologue with a
// layout change (a transpose) is not elementwise on the tile: shared-memory
// tiles.
// REMARK: remark: [plan] runs matmul_wgmma, not the library: [library-epilogue] the kernel does not start with its matmul (a prologue)
// CHECK-LABEL: func @prologue_autocast
// CHECK: plan = #fusion.plan<matmul_wgmma, threads = 256, vector = 8, row = none, cluster = 1, passes = [1, 1]>
// SM80-LABEL: func @prologue_autocast
// SM80: plan = #fusion.plan<matmul_tiles
func.func @prologue_autocast(%x: tensor<?x64xf32>, %w: tensor<64x96xf32>) -> tensor<?x96xbf16> {
  %0 = fusion.kernel matmul (%x, %w) : (tensor<?x64xf32>, tensor<64x96xf32>) -> tensor<?x96xbf16> {
  ^bb0(%a: tensor<?x64xf32>, %b: tensor<64x96xf32>):
    %ab = fusion.convert %a : tensor<?x64xf32> to tensor<?x64xbf16>
    %bb = fusion.convert %b : tensor<64x96xf32> to tensor<64x96xbf16>
    %p = fusion.matmul %ab, %bb : (tensor<?x64xbf16>, tensor<64x96xbf16>) -> tensor<?x96xbf16>
    fusion.yield %p : tensor<?x96xbf16>
  }
  return %0 : tensor<?x96xbf16>
}

// GENERATED-LABEL: func @prologue_transposed
// GENERATED: plan = #fusion.plan<matmul_tiles
// GENERATED-REMARK: remark: [plan] runs matmul_tiles: an operand is a kernel input or elementwise math on kernel inputs (a prologue)
func.func @prologue_transposed(%x: tensor<?x64xbf16>, %w: tensor<96x64xbf16>) -> tensor<?x96xbf16> {
  %0 = fusion.kernel matmul (%x, %w) : (tensor<?x64xbf16>, tensor<96x64xbf16>) -> tensor<?x96xbf16> {
  ^bb0(%a: tensor<?x64xbf16>, %b: tensor<96x64xbf16>):
    %bt = fusion.transpose %b permutation = [1, 0] : tensor<96x64xbf16> -> tensor<64x96xbf16>
    %p = fusion.matmul %a, %bt : (tensor<?x64xbf16>, tensor<64x96xbf16>) -> tensor<?x96xbf16>
    fusion.yield %p : tensor<?x96xbf16>
  }
  return %0 : tensor<?x96xbf16>
}

// Attention kernels: with few query rows and K stored by rows,
// attention_rows (8 rows here: 16 ranges; on sm_90 K and V staged through
// shared memory by TMA in blocks of 128 threads, before it in registers by
// blocks of 512, 13 ranges for the A100's 108 multiprocessors);
// with many, bf16 or f16, on sm_90, attention_tiles; otherwise no GPU
// strategy: per_element, and the remark says why.
// CHECK-LABEL: func @attention_decode
// CHECK: plan = #fusion.plan<attention_rows, threads = 128, vector = 16, row = staged, cluster = 1, split = 16, passes = [1, 1, 1]>
// SM80-LABEL: func @attention_decode
// SM80: plan = #fusion.plan<attention_rows, threads = 512, vector = 16, row = none, cluster = 1, split = 13, passes = [1, 1, 1]>
func.func @attention_decode(%q: tensor<2x4x1x64xbf16>, %k: tensor<2x4x?x64xbf16>, %v: tensor<2x4x?x64xbf16>) -> tensor<2x4x1x64xbf16> {
  %0 = fusion.kernel attention (%q, %k, %v) : (tensor<2x4x1x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x4x1x64xbf16> {
  ^bb0(%a: tensor<2x4x1x64xbf16>, %b: tensor<2x4x?x64xbf16>, %c: tensor<2x4x?x64xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<2x4x?x64xbf16> -> tensor<2x4x64x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<2x4x1x64xbf16>, tensor<2x4x64x?xbf16>) -> tensor<2x4x1x?xbf16>
    %p = fusion.softmax %s axis = 3 : tensor<2x4x1x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<2x4x1x?xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x4x1x64xbf16>
    fusion.yield %o : tensor<2x4x1x64xbf16>
  }
  return %0 : tensor<2x4x1x64xbf16>
}

// One sequence of 32 heads: 4 ranges a row, which a cluster of 4 blocks
// folds on sm_90 for rows of up to 8192 keys (no workspace), the workspace
// for longer ones; the A100 has no clusters: 3 ranges through the
// workspace.
// CHECK-LABEL: func @attention_decode_one
// CHECK: plan = #fusion.plan<attention_rows, threads = 128, vector = 16, row = staged, cluster = 4, split = 4, passes = [1, 1, 1]>
// SM80-LABEL: func @attention_decode_one
// SM80: plan = #fusion.plan<attention_rows, threads = 512, vector = 16, row = none, cluster = 1, split = 3, passes = [1, 1, 1]>
func.func @attention_decode_one(%q: tensor<1x32x1x128xbf16>, %k: tensor<1x32x?x128xbf16>, %v: tensor<1x32x?x128xbf16>) -> tensor<1x32x1x128xbf16> {
  %0 = fusion.kernel attention (%q, %k, %v) : (tensor<1x32x1x128xbf16>, tensor<1x32x?x128xbf16>, tensor<1x32x?x128xbf16>) -> tensor<1x32x1x128xbf16> {
  ^bb0(%a: tensor<1x32x1x128xbf16>, %b: tensor<1x32x?x128xbf16>, %c: tensor<1x32x?x128xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<1x32x?x128xbf16> -> tensor<1x32x128x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<1x32x1x128xbf16>, tensor<1x32x128x?xbf16>) -> tensor<1x32x1x?xbf16>
    %p = fusion.softmax %s axis = 3 : tensor<1x32x1x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<1x32x1x?xbf16>, tensor<1x32x?x128xbf16>) -> tensor<1x32x1x128xbf16>
    fusion.yield %o : tensor<1x32x1x128xbf16>
  }
  return %0 : tensor<1x32x1x128xbf16>
}

// Grouped query heads (K and V broadcast over the 4 heads of a group):
// rows sharing K and V keep the register plan on sm_90 too (16 rows: 8
// ranges, the blocks of a cluster for rows of up to 8192 keys).
// CHECK-LABEL: func @attention_decode_grouped
// CHECK: plan = #fusion.plan<attention_rows, threads = 512, vector = 16, row = none, cluster = 8, split = 8, passes = [1, 1, 1]>
func.func @attention_decode_grouped(%q: tensor<2x2x4x1x64xbf16>, %k: tensor<2x2x1x?x64xbf16>, %v: tensor<2x2x1x?x64xbf16>) -> tensor<2x2x4x1x64xbf16> {
  %0 = fusion.kernel attention (%q, %k, %v) : (tensor<2x2x4x1x64xbf16>, tensor<2x2x1x?x64xbf16>, tensor<2x2x1x?x64xbf16>) -> tensor<2x2x4x1x64xbf16> {
  ^bb0(%a: tensor<2x2x4x1x64xbf16>, %b: tensor<2x2x1x?x64xbf16>, %c: tensor<2x2x1x?x64xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 2, 4, 3] : tensor<2x2x1x?x64xbf16> -> tensor<2x2x1x64x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<2x2x4x1x64xbf16>, tensor<2x2x1x64x?xbf16>) -> tensor<2x2x4x1x?xbf16>
    %p = fusion.softmax %s axis = 4 : tensor<2x2x4x1x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<2x2x4x1x?xbf16>, tensor<2x2x1x?x64xbf16>) -> tensor<2x2x4x1x64xbf16>
    fusion.yield %o : tensor<2x2x4x1x64xbf16>
  }
  return %0 : tensor<2x2x4x1x64xbf16>
}

// Many query rows: tensor-core tiles, three multiplying warpgroups of 64
// rows for D = 64 (512 threads), two for D = 128 (their accumulators).
// CHECK-LABEL: func @attention_prefill
// CHECK: plan = #fusion.plan<attention_tiles, threads = 512, vector = 2, row = none, cluster = 1, passes = [1, 1, 1]>
// SM80-LABEL: func @attention_prefill
// SM80: plan = #fusion.plan<per_element
func.func @attention_prefill(%q: tensor<2x4x?x64xbf16>, %k: tensor<2x4x?x64xbf16>, %v: tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16> {
  %0 = fusion.kernel attention (%q, %k, %v) : (tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16> {
  ^bb0(%a: tensor<2x4x?x64xbf16>, %b: tensor<2x4x?x64xbf16>, %c: tensor<2x4x?x64xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<2x4x?x64xbf16> -> tensor<2x4x64x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<2x4x?x64xbf16>, tensor<2x4x64x?xbf16>) -> tensor<2x4x?x?xbf16>
    %p = fusion.softmax %s axis = 3 : tensor<2x4x?x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<2x4x?x?xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16>
    fusion.yield %o : tensor<2x4x?x64xbf16>
  }
  return %0 : tensor<2x4x?x64xbf16>
}

// D = 64 with a bias read per score: two multiplying warpgroups (the
// bias's values in flight spill three's registers).
// CHECK-LABEL: func @attention_prefill_d64_bias
// CHECK: plan = #fusion.plan<attention_tiles, threads = 384, vector = 2, row = none, cluster = 1, passes = [1, 1, 1, 1]>
func.func @attention_prefill_d64_bias(%q: tensor<2x4x?x64xbf16>, %k: tensor<2x4x?x64xbf16>, %v: tensor<2x4x?x64xbf16>, %bias: tensor<2x4x?x?xbf16>) -> tensor<2x4x?x64xbf16> {
  %0 = fusion.kernel attention (%q, %k, %v, %bias) : (tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x?xbf16>) -> tensor<2x4x?x64xbf16> {
  ^bb0(%a: tensor<2x4x?x64xbf16>, %b: tensor<2x4x?x64xbf16>, %c: tensor<2x4x?x64xbf16>, %m: tensor<2x4x?x?xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<2x4x?x64xbf16> -> tensor<2x4x64x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<2x4x?x64xbf16>, tensor<2x4x64x?xbf16>) -> tensor<2x4x?x?xbf16>
    %t = fusion.add %s, %m : (tensor<2x4x?x?xbf16>, tensor<2x4x?x?xbf16>) -> tensor<2x4x?x?xbf16>
    %p = fusion.softmax %t axis = 3 : tensor<2x4x?x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<2x4x?x?xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16>
    fusion.yield %o : tensor<2x4x?x64xbf16>
  }
  return %0 : tensor<2x4x?x64xbf16>
}

// A bias broadcast along the keys (one value a row) is not read per score:
// three.
// CHECK-LABEL: func @attention_prefill_d64_row_bias
// CHECK: plan = #fusion.plan<attention_tiles, threads = 512, vector = 2, row = none, cluster = 1, passes = [1, 1, 1, 1]>
func.func @attention_prefill_d64_row_bias(%q: tensor<2x4x?x64xbf16>, %k: tensor<2x4x?x64xbf16>, %v: tensor<2x4x?x64xbf16>, %bias: tensor<2x4x?x1xbf16>) -> tensor<2x4x?x64xbf16> {
  %0 = fusion.kernel attention (%q, %k, %v, %bias) : (tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x1xbf16>) -> tensor<2x4x?x64xbf16> {
  ^bb0(%a: tensor<2x4x?x64xbf16>, %b: tensor<2x4x?x64xbf16>, %c: tensor<2x4x?x64xbf16>, %m: tensor<2x4x?x1xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<2x4x?x64xbf16> -> tensor<2x4x64x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<2x4x?x64xbf16>, tensor<2x4x64x?xbf16>) -> tensor<2x4x?x?xbf16>
    %t = fusion.add %s, %m : (tensor<2x4x?x?xbf16>, tensor<2x4x?x1xbf16>) -> tensor<2x4x?x?xbf16>
    %p = fusion.softmax %t axis = 3 : tensor<2x4x?x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<2x4x?x?xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16>
    fusion.yield %o : tensor<2x4x?x64xbf16>
  }
  return %0 : tensor<2x4x?x64xbf16>
}

// CHECK-LABEL: func @attention_prefill_d128
// CHECK: plan = #fusion.plan<attention_tiles, threads = 384, vector = 2, row = none, cluster = 1, passes = [1, 1, 1]>
func.func @attention_prefill_d128(%q: tensor<2x4x?x128xbf16>, %k: tensor<2x4x?x128xbf16>, %v: tensor<2x4x?x128xbf16>) -> tensor<2x4x?x128xbf16> {
  %0 = fusion.kernel attention (%q, %k, %v) : (tensor<2x4x?x128xbf16>, tensor<2x4x?x128xbf16>, tensor<2x4x?x128xbf16>) -> tensor<2x4x?x128xbf16> {
  ^bb0(%a: tensor<2x4x?x128xbf16>, %b: tensor<2x4x?x128xbf16>, %c: tensor<2x4x?x128xbf16>):
    %kt = fusion.transpose %b permutation = [0, 1, 3, 2] : tensor<2x4x?x128xbf16> -> tensor<2x4x128x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<2x4x?x128xbf16>, tensor<2x4x128x?xbf16>) -> tensor<2x4x?x?xbf16>
    %p = fusion.softmax %s axis = 3 : tensor<2x4x?x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<2x4x?x?xbf16>, tensor<2x4x?x128xbf16>) -> tensor<2x4x?x128xbf16>
    fusion.yield %o : tensor<2x4x?x128xbf16>
  }
  return %0 : tensor<2x4x?x128xbf16>
}

// CHECK-LABEL: func @attention
// CHECK: plan = #fusion.plan<per_element
// REMARK: remark: [plan] runs per_element: K^T is stored as it is (the GPU strategies read rows of K)
func.func @attention(%q: tensor<64x32xf32>, %kt: tensor<32x64xf32>, %v: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %0 = fusion.kernel attention (%q, %kt, %v) : (tensor<64x32xf32>, tensor<32x64xf32>, tensor<64x32xf32>) -> tensor<64x32xf32> {
  ^bb0(%a: tensor<64x32xf32>, %b: tensor<32x64xf32>, %c: tensor<64x32xf32>):
    %s = fusion.matmul %a, %b : (tensor<64x32xf32>, tensor<32x64xf32>) -> tensor<64x64xf32>
    %p = fusion.softmax %s axis = 1 : tensor<64x64xf32>
    %o = fusion.matmul %p, %c : (tensor<64x64xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
    fusion.yield %o : tensor<64x32xf32>
  }
  return %0 : tensor<64x32xf32>
}
