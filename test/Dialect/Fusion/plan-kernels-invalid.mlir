// Plans that do not fit their kernel or target are located errors.
// RUN: fusion-opt %s --fusion-plan-kernels -split-input-file -verify-diagnostics

func.func @plan_misfit(%x: tensor<64x4098xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{plan does not fit: rows of 4098 in shifted 4-element vectors need at least 3 vectors' worth of columns and of threads}}
  %0 = fusion.kernel row_reduction (%x) {plan = #fusion.plan<rows, threads = 8, vector = 4, row = streamed, cluster = 1, passes = [1]>} : (tensor<64x4098xf32>) -> tensor<64xf32> {
  ^bb0(%a: tensor<64x4098xf32>):
    %s = fusion.reduce_sum %a axes = [1] : tensor<64x4098xf32> -> tensor<64xf32>
    fusion.yield %s : tensor<64xf32>
  }
  return %0 : tensor<64xf32>
}

// -----

// Shifted vectors need every op to read its operand at the columns of its
// result: a slice's rows start elsewhere.
func.func @plan_shifted_slice(%x: tensor<16x4096xbf16>) -> tensor<16x4095xbf16> {
  // expected-error @+1 {{plan does not fit: rows of 4095 are not whole 8-element vectors, and 'fusion.slice' does not read its operand at the columns of its result}}
  %0 = fusion.kernel row_reduction (%x) {plan = #fusion.plan<rows, threads = 128, vector = 8, row = registers, cluster = 1, passes = [1]>} : (tensor<16x4096xbf16>) -> tensor<16x4095xbf16> {
  ^bb0(%a: tensor<16x4096xbf16>):
    %v = fusion.slice %a offsets = [0, 1] sizes = [16, 4095] strides = [1, 1] : tensor<16x4096xbf16> -> tensor<16x4095xbf16>
    %m = fusion.reduce_max %v axes = [1] keep_dims : tensor<16x4095xbf16> -> tensor<16x1xbf16>
    %d = fusion.sub %v, %m : (tensor<16x4095xbf16>, tensor<16x1xbf16>) -> tensor<16x4095xbf16>
    fusion.yield %d : tensor<16x4095xbf16>
  }
  return %0 : tensor<16x4095xbf16>
}

// -----

// Parts of 8 (1 vector of 8 per block): blocks 3 to 7 of the cluster would
// have nothing of a row of 24.
func.func @plan_empty_part(%x: tensor<8x24xbf16>) -> tensor<8xbf16> {
  // expected-error @+1 {{plan does not fit: rows of 24 leave blocks of a cluster of 8 without a part}}
  %0 = fusion.kernel wide_row (%x) {plan = #fusion.plan<cluster_rows, threads = 32, vector = 8, row = registers, cluster = 8, passes = [1]>} : (tensor<8x24xbf16>) -> tensor<8xbf16> {
  ^bb0(%a: tensor<8x24xbf16>):
    %s = fusion.reduce_sum %a axes = [1] : tensor<8x24xbf16> -> tensor<8xbf16>
    fusion.yield %s : tensor<8xbf16>
  }
  return %0 : tensor<8xbf16>
}

// -----

// 16383 scalars over 32 threads: 512 each, more than twice what the
// planner has a thread hold.
func.func @plan_held_too_many(%x: tensor<8x16383xbf16>) -> tensor<8xbf16> {
  // expected-error @+1 {{plan does not fit: a part of 16383 vectors is held by 32 threads in 512 vectors each, more than 128}}
  %0 = fusion.kernel row_reduction (%x) {plan = #fusion.plan<rows, threads = 32, vector = 1, row = registers, cluster = 1, passes = [1]>} : (tensor<8x16383xbf16>) -> tensor<8xbf16> {
  ^bb0(%a: tensor<8x16383xbf16>):
    %s = fusion.reduce_sum %a axes = [1] : tensor<8x16383xbf16> -> tensor<8xbf16>
    fusion.yield %s : tensor<8xbf16>
  }
  return %0 : tensor<8xbf16>
}

// -----

func.func @plan_cluster_too_big(%x: tensor<8x131072xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{plan does not fit: asks for clusters of 16 blocks, sm_90 allows at most 8}}
  %0 = fusion.kernel wide_row (%x) {plan = #fusion.plan<cluster_rows, threads = 512, vector = 4, row = streamed, cluster = 16, passes = [1]>} : (tensor<8x131072xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8x131072xf32>):
    %s = fusion.reduce_sum %a axes = [1] : tensor<8x131072xf32> -> tensor<8xf32>
    fusion.yield %s : tensor<8xf32>
  }
  return %0 : tensor<8xf32>
}

// -----

func.func @plan_dynamic_held(%x: tensor<8x?xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{plan does not fit: a row of dynamic length is streamed by one block (cluster = 1, row = streamed)}}
  %0 = fusion.kernel wide_row (%x) {plan = #fusion.plan<rows, threads = 256, vector = 4, row = registers, cluster = 1, passes = [1]>} : (tensor<8x?xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8x?xf32>):
    %s = fusion.reduce_sum %a axes = [1] : tensor<8x?xf32> -> tensor<8xf32>
    fusion.yield %s : tensor<8xf32>
  }
  return %0 : tensor<8xf32>
}


// -----

func.func @plan_elementwise_shapes(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) {
  // expected-error @+1 {{plan does not fit: an elementwise plan needs outputs of one shape and no reduction or matmul}}
  %0:2 = fusion.kernel elementwise (%x, %y) {plan = #fusion.plan<elementwise, threads = 256, vector = 4, row = none, cluster = 1, passes = [1, 1]>} : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<8xf32>):
    %e = fusion.exp %a : tensor<4x8xf32>
    %n = fusion.neg %b : tensor<8xf32>
    fusion.yield %e, %n : tensor<4x8xf32>, tensor<8xf32>
  }
  return %0#0, %0#1 : tensor<4x8xf32>, tensor<8xf32>
}

// -----

// Vectors that do not divide the columns read segments of rows (here 2
// rows of 30, 60 elements): 63 rows are not whole segments.
func.func @plan_columns_vector(%x: tensor<63x30xf32>) -> tensor<30xf32> {
  // expected-error @+1 {{plan does not fit: vectors of 4 do not divide the innermost size of every input, and its rows cannot be read in segments: its 63 rows are not whole segments of 2}}
  %0 = fusion.kernel column_reduction (%x) {plan = #fusion.plan<columns, threads = 256, vector = 4, row = none, cluster = 1, passes = [1]>} : (tensor<63x30xf32>) -> tensor<30xf32> {
  ^bb0(%a: tensor<63x30xf32>):
    %s = fusion.reduce_sum %a axes = [0] : tensor<63x30xf32> -> tensor<30xf32>
    fusion.yield %s : tensor<30xf32>
  }
  return %0 : tensor<30xf32>
}

// -----

// A weight broadcast along the rows has no element at a segment's flat
// offset.
func.func @plan_columns_segments_broadcast(%x: tensor<64x30xf32>, %w: tensor<30xf32>) -> tensor<30xf32> {
  // expected-error @+1 {{plan does not fit: vectors of 4 do not divide the innermost size of every input, and its rows cannot be read in segments: an input is broadcast along the rows}}
  %0 = fusion.kernel column_reduction (%x, %w) {plan = #fusion.plan<columns, threads = 256, vector = 4, row = none, cluster = 1, passes = [1, 1]>} : (tensor<64x30xf32>, tensor<30xf32>) -> tensor<30xf32> {
  ^bb0(%a: tensor<64x30xf32>, %b: tensor<30xf32>):
    %p = fusion.mul %a, %b : (tensor<64x30xf32>, tensor<30xf32>) -> tensor<64x30xf32>
    %s = fusion.reduce_sum %p axes = [0] : tensor<64x30xf32> -> tensor<30xf32>
    fusion.yield %s : tensor<30xf32>
  }
  return %0 : tensor<30xf32>
}

// -----

func.func @plan_columns_threads(%x: tensor<64x32xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{plan does not fit: a columns block of 48 threads is not whole rows of 32 lanes}}
  %0 = fusion.kernel column_reduction (%x) {plan = #fusion.plan<columns, threads = 48, vector = 1, row = none, cluster = 1, split = 4, passes = [1]>} : (tensor<64x32xf32>) -> tensor<32xf32> {
  ^bb0(%a: tensor<64x32xf32>):
    %s = fusion.reduce_sum %a axes = [0] : tensor<64x32xf32> -> tensor<32xf32>
    fusion.yield %s : tensor<32xf32>
  }
  return %0 : tensor<32xf32>
}

// -----

func.func @plan_columns_dependent(%x: tensor<64x32xf32>) -> tensor<1x32xf32> {
  // expected-error @+1 {{plan does not fit: a reduction reads another reduction's result}}
  %0 = fusion.kernel column_reduction (%x) {plan = #fusion.plan<columns, threads = 256, vector = 4, row = none, cluster = 1, passes = [1]>} : (tensor<64x32xf32>) -> tensor<1x32xf32> {
  ^bb0(%a: tensor<64x32xf32>):
    %m = fusion.reduce_max %a axes = [0] keep_dims : tensor<64x32xf32> -> tensor<1x32xf32>
    %d = fusion.sub %a, %m : (tensor<64x32xf32>, tensor<1x32xf32>) -> tensor<64x32xf32>
    %s = fusion.reduce_sum %d axes = [0] keep_dims : tensor<64x32xf32> -> tensor<1x32xf32>
    fusion.yield %s : tensor<1x32xf32>
  }
  return %0 : tensor<1x32xf32>
}

// -----

// K = 128 is two steps of 64: at most two ranges.
func.func @plan_wgmma_split(%a: tensor<16x128xbf16>, %b: tensor<128x64xbf16>) -> tensor<16x64xbf16> {
  // expected-error @+1 {{plan does not fit: matmul_wgmma splits K in at most 16 ranges of at least one step (2 steps of 64 here)}}
  %0 = fusion.kernel matmul (%a, %b) {plan = #fusion.plan<matmul_wgmma, threads = 256, vector = 8, row = none, cluster = 1, split = 3, passes = [1, 1]>} : (tensor<16x128xbf16>, tensor<128x64xbf16>) -> tensor<16x64xbf16> {
  ^bb0(%x: tensor<16x128xbf16>, %y: tensor<128x64xbf16>):
    %p = fusion.matmul %x, %y : (tensor<16x128xbf16>, tensor<128x64xbf16>) -> tensor<16x64xbf16>
    fusion.yield %p : tensor<16x64xbf16>
  }
  return %0 : tensor<16x64xbf16>
}

// -----

func.func @attention_rows_stored_kt(%q: tensor<4x1x64xbf16>, %kt: tensor<4x64x?xbf16>, %v: tensor<4x?x64xbf16>) -> tensor<4x1x64xbf16> {
  // expected-error @+1 {{plan does not fit: K^T is stored as it is (the GPU strategies read rows of K)}}
  %0 = fusion.kernel attention (%q, %kt, %v) {plan = #fusion.plan<attention_rows, threads = 128, vector = 16, row = none, cluster = 1, split = 4, passes = [1, 1, 1]>} : (tensor<4x1x64xbf16>, tensor<4x64x?xbf16>, tensor<4x?x64xbf16>) -> tensor<4x1x64xbf16> {
  ^bb0(%a: tensor<4x1x64xbf16>, %b: tensor<4x64x?xbf16>, %c: tensor<4x?x64xbf16>):
    %s = fusion.matmul %a, %b : (tensor<4x1x64xbf16>, tensor<4x64x?xbf16>) -> tensor<4x1x?xbf16>
    %p = fusion.softmax %s axis = 2 : tensor<4x1x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<4x1x?xbf16>, tensor<4x?x64xbf16>) -> tensor<4x1x64xbf16>
    fusion.yield %o : tensor<4x1x64xbf16>
  }
  return %0 : tensor<4x1x64xbf16>
}

// -----

// A staged plan needs at least two steps of K's and V's rows in shared
// memory (plan-kernels-invalid-sm80.mlir: and TMA).
func.func @attention_rows_staged_too_wide(%q: tensor<4x1x128xf32>, %k: tensor<4x?x128xf32>, %v: tensor<4x?x128xf32>) -> tensor<4x1x128xf32> {
  // expected-error @+1 {{plan does not fit: fewer than two steps of K's and V's rows fit 204800 bytes of shared memory (fewer threads take fewer keys a step)}}
  %0 = fusion.kernel attention (%q, %k, %v) {plan = #fusion.plan<attention_rows, threads = 512, vector = 16, row = staged, cluster = 1, passes = [1, 1, 1]>} : (tensor<4x1x128xf32>, tensor<4x?x128xf32>, tensor<4x?x128xf32>) -> tensor<4x1x128xf32> {
  ^bb0(%a: tensor<4x1x128xf32>, %b: tensor<4x?x128xf32>, %c: tensor<4x?x128xf32>):
    %kt = fusion.transpose %b permutation = [0, 2, 1] : tensor<4x?x128xf32> -> tensor<4x128x?xf32>
    %s = fusion.matmul %a, %kt : (tensor<4x1x128xf32>, tensor<4x128x?xf32>) -> tensor<4x1x?xf32>
    %p = fusion.softmax %s axis = 2 : tensor<4x1x?xf32>
    %o = fusion.matmul %p, %c : (tensor<4x1x?xf32>, tensor<4x?x128xf32>) -> tensor<4x1x128xf32>
    fusion.yield %o : tensor<4x1x128xf32>
  }
  return %0 : tensor<4x1x128xf32>
}

// -----

func.func @attention_rows_part_warp(%q: tensor<4x1x64xbf16>, %k: tensor<4x?x64xbf16>, %v: tensor<4x?x64xbf16>) -> tensor<4x1x64xbf16> {
  // expected-error @+1 {{plan does not fit: an attention_rows plan has whole warps of threads (at most 1024) and vectors of 16}}
  %0 = fusion.kernel attention (%q, %k, %v) {plan = #fusion.plan<attention_rows, threads = 100, vector = 16, row = none, cluster = 1, split = 4, passes = [1, 1, 1]>} : (tensor<4x1x64xbf16>, tensor<4x?x64xbf16>, tensor<4x?x64xbf16>) -> tensor<4x1x64xbf16> {
  ^bb0(%a: tensor<4x1x64xbf16>, %b: tensor<4x?x64xbf16>, %c: tensor<4x?x64xbf16>):
    %kt = fusion.transpose %b permutation = [0, 2, 1] : tensor<4x?x64xbf16> -> tensor<4x64x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<4x1x64xbf16>, tensor<4x64x?xbf16>) -> tensor<4x1x?xbf16>
    %p = fusion.softmax %s axis = 2 : tensor<4x1x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<4x1x?xbf16>, tensor<4x?x64xbf16>) -> tensor<4x1x64xbf16>
    fusion.yield %o : tensor<4x1x64xbf16>
  }
  return %0 : tensor<4x1x64xbf16>
}

// -----

func.func @attention_tiles_head_32(%q: tensor<4x256x32xbf16>, %k: tensor<4x?x32xbf16>, %v: tensor<4x?x32xbf16>) -> tensor<4x256x32xbf16> {
  // expected-error @+1 {{plan does not fit: head sizes other than one D = Dv of 64 or 128}}
  %0 = fusion.kernel attention (%q, %k, %v) {plan = #fusion.plan<attention_tiles, threads = 384, vector = 2, row = none, cluster = 1, passes = [1, 1, 1]>} : (tensor<4x256x32xbf16>, tensor<4x?x32xbf16>, tensor<4x?x32xbf16>) -> tensor<4x256x32xbf16> {
  ^bb0(%a: tensor<4x256x32xbf16>, %b: tensor<4x?x32xbf16>, %c: tensor<4x?x32xbf16>):
    %kt = fusion.transpose %b permutation = [0, 2, 1] : tensor<4x?x32xbf16> -> tensor<4x32x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<4x256x32xbf16>, tensor<4x32x?xbf16>) -> tensor<4x256x?xbf16>
    %p = fusion.softmax %s axis = 2 : tensor<4x256x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<4x256x?xbf16>, tensor<4x?x32xbf16>) -> tensor<4x256x32xbf16>
    fusion.yield %o : tensor<4x256x32xbf16>
  }
  return %0 : tensor<4x256x32xbf16>
}

// -----

func.func @attention_tiles_threads(%q: tensor<4x256x64xbf16>, %k: tensor<4x?x64xbf16>, %v: tensor<4x?x64xbf16>) -> tensor<4x256x64xbf16> {
  // expected-error @+1 {{plan does not fit: an attention_tiles plan has 384 or 512 threads}}
  %0 = fusion.kernel attention (%q, %k, %v) {plan = #fusion.plan<attention_tiles, threads = 256, vector = 2, row = none, cluster = 1, passes = [1, 1, 1]>} : (tensor<4x256x64xbf16>, tensor<4x?x64xbf16>, tensor<4x?x64xbf16>) -> tensor<4x256x64xbf16> {
  ^bb0(%a: tensor<4x256x64xbf16>, %b: tensor<4x?x64xbf16>, %c: tensor<4x?x64xbf16>):
    %kt = fusion.transpose %b permutation = [0, 2, 1] : tensor<4x?x64xbf16> -> tensor<4x64x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<4x256x64xbf16>, tensor<4x64x?xbf16>) -> tensor<4x256x?xbf16>
    %p = fusion.softmax %s axis = 2 : tensor<4x256x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<4x256x?xbf16>, tensor<4x?x64xbf16>) -> tensor<4x256x64xbf16>
    fusion.yield %o : tensor<4x256x64xbf16>
  }
  return %0 : tensor<4x256x64xbf16>
}

// -----

func.func @attention_tiles_wide_d128(%q: tensor<4x256x128xbf16>, %k: tensor<4x?x128xbf16>, %v: tensor<4x?x128xbf16>) -> tensor<4x256x128xbf16> {
  // expected-error @+1 {{plan does not fit: an attention_tiles plan of 512 threads has head sizes up to 64 and no inputs read per score (other kernels' registers spill)}}
  %0 = fusion.kernel attention (%q, %k, %v) {plan = #fusion.plan<attention_tiles, threads = 512, vector = 2, row = none, cluster = 1, passes = [1, 1, 1]>} : (tensor<4x256x128xbf16>, tensor<4x?x128xbf16>, tensor<4x?x128xbf16>) -> tensor<4x256x128xbf16> {
  ^bb0(%a: tensor<4x256x128xbf16>, %b: tensor<4x?x128xbf16>, %c: tensor<4x?x128xbf16>):
    %kt = fusion.transpose %b permutation = [0, 2, 1] : tensor<4x?x128xbf16> -> tensor<4x128x?xbf16>
    %s = fusion.matmul %a, %kt : (tensor<4x256x128xbf16>, tensor<4x128x?xbf16>) -> tensor<4x256x?xbf16>
    %p = fusion.softmax %s axis = 2 : tensor<4x256x?xbf16>
    %o = fusion.matmul %p, %c : (tensor<4x256x?xbf16>, tensor<4x?x128xbf16>) -> tensor<4x256x128xbf16>
    fusion.yield %o : tensor<4x256x128xbf16>
  }
  return %0 : tensor<4x256x128xbf16>
}

// -----

// Staged rows are vectors: rows read element by element are not copied.
func.func @rows_staged_elements(%x: tensor<64x4095xbf16>) -> tensor<64xf32> {
  // expected-error @+1 {{plan does not fit: staged rows are whole or shifted vectors of a static width}}
  %0 = fusion.kernel row_reduction (%x) {plan = #fusion.plan<rows, threads = 128, vector = 1, row = staged, cluster = 1, passes = [1]>} : (tensor<64x4095xbf16>) -> tensor<64xf32> {
  ^bb0(%a: tensor<64x4095xbf16>):
    %c = fusion.convert %a : tensor<64x4095xbf16> to tensor<64x4095xf32>
    %s = fusion.reduce_sum %c axes = [1] : tensor<64x4095xf32> -> tensor<64xf32>
    fusion.yield %s : tensor<64xf32>
  }
  return %0 : tensor<64xf32>
}

// -----

// A row in shifted vectors copies whole vectors, so they are 16-byte
// multiples: 4 bf16 elements are 8 bytes.
func.func @rows_staged_shifted_small_vectors(%x: tensor<64x4095xbf16>) -> tensor<64xf32> {
  // expected-error @+1 {{plan does not fit: staged rows in shifted vectors copy whole 16-byte chunks (a vector of 4 elements of input 0 is not)}}
  %0 = fusion.kernel row_reduction (%x) {plan = #fusion.plan<rows, threads = 128, vector = 4, row = staged, cluster = 1, passes = [1]>} : (tensor<64x4095xbf16>) -> tensor<64xf32> {
  ^bb0(%a: tensor<64x4095xbf16>):
    %c = fusion.convert %a : tensor<64x4095xbf16> to tensor<64x4095xf32>
    %s = fusion.reduce_sum %c axes = [1] : tensor<64x4095xf32> -> tensor<64xf32>
    fusion.yield %s : tensor<64xf32>
  }
  return %0 : tensor<64xf32>
}

// -----

// Copies are whole 16-byte chunks: parts of 820 elements (vectors of 4
// for the f32 input, 5 parts) are 1640 bytes of the bf16 one.
func.func @rows_staged_small_chunks(%x: tensor<64x4096xbf16>, %y: tensor<64x4096xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{plan does not fit: staged rows copy rows and parts of whole 16-byte chunks (a part of 820 elements of input 0 is not)}}
  %0 = fusion.kernel row_reduction (%x, %y) {plan = #fusion.plan<cluster_rows, threads = 128, vector = 4, row = staged, cluster = 5, passes = [1, 1]>} : (tensor<64x4096xbf16>, tensor<64x4096xf32>) -> tensor<64xf32> {
  ^bb0(%a: tensor<64x4096xbf16>, %b: tensor<64x4096xf32>):
    %c = fusion.convert %a : tensor<64x4096xbf16> to tensor<64x4096xf32>
    %d = fusion.add %c, %b : tensor<64x4096xf32>
    %s = fusion.reduce_sum %d axes = [1] : tensor<64x4096xf32> -> tensor<64xf32>
    fusion.yield %s : tensor<64xf32>
  }
  return %0 : tensor<64xf32>
}

// -----

// A block's parts must fit shared memory: a whole row of 131072 f32 (512
// KiB) in one block does not.
func.func @rows_staged_too_wide(%x: tensor<8x131072xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{plan does not fit: a block's parts of the staged rows take 524288 bytes of shared memory, more than 204800}}
  %0 = fusion.kernel wide_row (%x) {plan = #fusion.plan<rows, threads = 512, vector = 4, row = staged, cluster = 1, passes = [1]>} : (tensor<8x131072xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8x131072xf32>):
    %s = fusion.reduce_sum %a axes = [1] : tensor<8x131072xf32> -> tensor<8xf32>
    fusion.yield %s : tensor<8xf32>
  }
  return %0 : tensor<8xf32>
}
