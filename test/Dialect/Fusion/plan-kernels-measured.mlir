// RUN: fusion-opt %s --fusion-plan-kernels | FileCheck %s
// RUN: fusion-opt %s --fusion-plan-kernels=measured-row-plans=false | FileCheck %s --check-prefix=RULE
// RUN: fusion-opt %s --fusion-plan-kernels=chip=sm_80 | FileCheck %s --check-prefix=SM80
// RUN: fusion-opt %s --fusion-plan-kernels=max-row-elements=2048 | FileCheck %s --check-prefix=SHORT

// Row plans from the measured table (lib/Dialect/Fusion/Analysis/RowPlans.def)
// on sm_90, by class (the passes a streamed plan makes over a row), how the
// columns may be read, element size and width; the rule where the table
// does not serve the kernel. CHECK lines of the table's plans change when
// the table is measured again; RULE gives the rule's plan of the same
// kernel. Other chips take the rule (SM80), and so do plans that would hold
// more than max-row-elements (SHORT).

// A pass of reductions then the write (TwoPass), whole vectors of 2-byte
// elements, 4096 wide, 256 rows: the table's entry for 4096 (128 threads
// x 4 vectors, the rule's plan).
// CHECK-LABEL: func @two_pass
// CHECK: plan = #fusion.plan<rows, threads = 128, vector = 8, row = registers, cluster = 1, passes = [1]>
// RULE-LABEL: func @two_pass
// RULE: plan = #fusion.plan<rows, threads = 128, vector = 8, row = registers, cluster = 1, passes = [1]>
// SM80-LABEL: func @two_pass
// SM80: plan = #fusion.plan<rows, threads = 128, vector = 8, row = registers, cluster = 1, passes = [1]>
// SHORT-LABEL: func @two_pass
// SHORT: plan = #fusion.plan<cluster_rows, threads = 32, vector = 8, row = registers, cluster = 4, passes = [1]>
func.func @two_pass(%x: tensor<256x4096xbf16>) -> tensor<256x4096xbf16> {
  %0 = fusion.kernel row_reduction (%x) : (tensor<256x4096xbf16>) -> tensor<256x4096xbf16> {
  ^bb0(%a: tensor<256x4096xbf16>):
    %q = fusion.mul %a, %a : (tensor<256x4096xbf16>, tensor<256x4096xbf16>) -> tensor<256x4096xbf16>
    %s = fusion.reduce_sum %q axes = [1] keep_dims : tensor<256x4096xbf16> -> tensor<256x1xbf16>
    %y = fusion.div %a, %s : (tensor<256x4096xbf16>, tensor<256x1xbf16>) -> tensor<256x4096xbf16>
    fusion.yield %y : tensor<256x4096xbf16>
  }
  return %0 : tensor<256x4096xbf16>
}

// Mean, then variance, then the write (ThreePass) over rows no vector
// divides (4095): shifted vectors as the table's entry says; the rule
// agrees.
// CHECK-LABEL: func @three_pass_shiftable
// CHECK: plan = #fusion.plan<rows, threads = 64, vector = 8, row = registers, cluster = 1, passes = [1]>
func.func @three_pass_shiftable(%x: tensor<256x4095xbf16>) -> tensor<256x4095xbf16> {
  %0 = fusion.kernel row_reduction (%x) : (tensor<256x4095xbf16>) -> tensor<256x4095xbf16> {
  ^bb0(%a: tensor<256x4095xbf16>):
    %s = fusion.reduce_sum %a axes = [1] keep_dims : tensor<256x4095xbf16> -> tensor<256x1xbf16>
    %d = fusion.sub %a, %s : (tensor<256x4095xbf16>, tensor<256x1xbf16>) -> tensor<256x4095xbf16>
    %q = fusion.mul %d, %d : (tensor<256x4095xbf16>, tensor<256x4095xbf16>) -> tensor<256x4095xbf16>
    %v = fusion.reduce_sum %q axes = [1] keep_dims : tensor<256x4095xbf16> -> tensor<256x1xbf16>
    %y = fusion.div %d, %v : (tensor<256x4095xbf16>, tensor<256x1xbf16>) -> tensor<256x4095xbf16>
    fusion.yield %y : tensor<256x4095xbf16>
  }
  return %0 : tensor<256x4095xbf16>
}

// A slice rules out shifted vectors: the table's Elements entries.
// CHECK-LABEL: func @elements_only
// CHECK: plan = #fusion.plan<rows, threads = 64, vector = 1, row = registers, cluster = 1, passes = [1]>
// RULE-LABEL: func @elements_only
// RULE: plan = #fusion.plan<rows, threads = 128, vector = 1, row = registers, cluster = 1, passes = [1]>
func.func @elements_only(%x: tensor<256x4096xbf16>) -> tensor<256x4095xbf16> {
  %0 = fusion.kernel row_reduction (%x) : (tensor<256x4096xbf16>) -> tensor<256x4095xbf16> {
  ^bb0(%a: tensor<256x4096xbf16>):
    %v = fusion.slice %a offsets = [0, 1] sizes = [256, 4095] strides = [1, 1] : tensor<256x4096xbf16> -> tensor<256x4095xbf16>
    %m = fusion.reduce_max %v axes = [1] keep_dims : tensor<256x4095xbf16> -> tensor<256x1xbf16>
    %d = fusion.sub %v, %m : (tensor<256x4095xbf16>, tensor<256x1xbf16>) -> tensor<256x4095xbf16>
    fusion.yield %d : tensor<256x4095xbf16>
  }
  return %0 : tensor<256x4095xbf16>
}

// GPT-2's vocabulary (50257), a softmax in bf16 (ThreePass): the table
// stages it in shared memory in shifted vectors, one block of 512
// threads; the rule holds it in elements in a cluster of 4.
// CHECK-LABEL: func @vocabulary
// CHECK: plan = #fusion.plan<rows, threads = 512, vector = 8, row = staged, cluster = 1, passes = [1]>
// RULE-LABEL: func @vocabulary
// RULE: plan = #fusion.plan<cluster_rows, threads = 128, vector = 1, row = registers, cluster = 4, passes = [1]>
func.func @vocabulary(%x: tensor<256x50257xbf16>) -> tensor<256x50257xbf16> {
  %0 = fusion.kernel wide_row (%x) : (tensor<256x50257xbf16>) -> tensor<256x50257xbf16> {
  ^bb0(%a: tensor<256x50257xbf16>):
    %m = fusion.reduce_max %a axes = [1] keep_dims : tensor<256x50257xbf16> -> tensor<256x1xbf16>
    %d = fusion.sub %a, %m : (tensor<256x50257xbf16>, tensor<256x1xbf16>) -> tensor<256x50257xbf16>
    %e = fusion.exp %d : tensor<256x50257xbf16>
    %s = fusion.reduce_sum %e axes = [1] keep_dims : tensor<256x50257xbf16> -> tensor<256x1xbf16>
    %y = fusion.div %e, %s : (tensor<256x50257xbf16>, tensor<256x1xbf16>) -> tensor<256x50257xbf16>
    fusion.yield %y : tensor<256x50257xbf16>
  }
  return %0 : tensor<256x50257xbf16>
}

// Only a reduction reads the row (OnePass), 4-byte elements: streamed by
// the table's 128 threads (the rule's too).
// CHECK-LABEL: func @one_pass
// CHECK: plan = #fusion.plan<rows, threads = 128, vector = 4, row = streamed, cluster = 1, passes = [1]>
// RULE-LABEL: func @one_pass
// RULE: plan = #fusion.plan<rows, threads = 128, vector = 4, row = streamed, cluster = 1, passes = [1]>
func.func @one_pass(%x: tensor<256x16384xf32>) -> tensor<256xf32> {
  %0 = fusion.kernel row_reduction (%x) : (tensor<256x16384xf32>) -> tensor<256xf32> {
  ^bb0(%a: tensor<256x16384xf32>):
    %m = fusion.reduce_max %a axes = [1] : tensor<256x16384xf32> -> tensor<256xf32>
    fusion.yield %m : tensor<256xf32>
  }
  return %0 : tensor<256xf32>
}

// 262144 wide: the table stages 8 parts of 128 threads (each block's part
// copied into shared memory once: one read, passes [1]); the rule holds 8
// parts in 512 threads. max-row-elements bounds what registers hold, not
// what shared memory does: SHORT keeps the staged entry.
// CHECK-LABEL: func @widest
// CHECK: plan = #fusion.plan<cluster_rows, threads = 128, vector = 8, row = staged, cluster = 8, passes = [1]>
// RULE-LABEL: func @widest
// RULE: plan = #fusion.plan<cluster_rows, threads = 512, vector = 8, row = registers, cluster = 8, passes = [1]>
// SHORT-LABEL: func @widest
// SHORT: plan = #fusion.plan<cluster_rows, threads = 128, vector = 8, row = staged, cluster = 8, passes = [1]>
func.func @widest(%x: tensor<256x262144xbf16>) -> tensor<256x262144xbf16> {
  %0 = fusion.kernel wide_row (%x) : (tensor<256x262144xbf16>) -> tensor<256x262144xbf16> {
  ^bb0(%a: tensor<256x262144xbf16>):
    %q = fusion.mul %a, %a : (tensor<256x262144xbf16>, tensor<256x262144xbf16>) -> tensor<256x262144xbf16>
    %s = fusion.reduce_sum %q axes = [1] keep_dims : tensor<256x262144xbf16> -> tensor<256x1xbf16>
    %y = fusion.div %a, %s : (tensor<256x262144xbf16>, tensor<256x1xbf16>) -> tensor<256x262144xbf16>
    fusion.yield %y : tensor<256x262144xbf16>
  }
  return %0 : tensor<256x262144xbf16>
}

// Fewer rows than multiprocessors (decoding): the rule, not the table's
// many-row samples.
// CHECK-LABEL: func @few_rows
// CHECK: plan = #fusion.plan<rows, threads = 128, vector = 8, row = registers, cluster = 1, passes = [1]>
func.func @few_rows(%x: tensor<16x4096xbf16>) -> tensor<16x4096xbf16> {
  %0 = fusion.kernel row_reduction (%x) : (tensor<16x4096xbf16>) -> tensor<16x4096xbf16> {
  ^bb0(%a: tensor<16x4096xbf16>):
    %q = fusion.mul %a, %a : (tensor<16x4096xbf16>, tensor<16x4096xbf16>) -> tensor<16x4096xbf16>
    %s = fusion.reduce_sum %q axes = [1] keep_dims : tensor<16x4096xbf16> -> tensor<16x1xbf16>
    %y = fusion.div %a, %s : (tensor<16x4096xbf16>, tensor<16x1xbf16>) -> tensor<16x4096xbf16>
    fusion.yield %y : tensor<16x4096xbf16>
  }
  return %0 : tensor<16x4096xbf16>
}

// A row count known only at run time: the rule.
// CHECK-LABEL: func @dynamic_rows
// CHECK: plan = #fusion.plan<rows, threads = 128, vector = 8, row = registers, cluster = 1, passes = [1]>
func.func @dynamic_rows(%x: tensor<?x4096xbf16>) -> tensor<?x4096xbf16> {
  %0 = fusion.kernel row_reduction (%x) : (tensor<?x4096xbf16>) -> tensor<?x4096xbf16> {
  ^bb0(%a: tensor<?x4096xbf16>):
    %q = fusion.mul %a, %a : (tensor<?x4096xbf16>, tensor<?x4096xbf16>) -> tensor<?x4096xbf16>
    %s = fusion.reduce_sum %q axes = [1] keep_dims : tensor<?x4096xbf16> -> tensor<?x1xbf16>
    %y = fusion.div %a, %s : (tensor<?x4096xbf16>, tensor<?x1xbf16>) -> tensor<?x4096xbf16>
    fusion.yield %y : tensor<?x4096xbf16>
  }
  return %0 : tensor<?x4096xbf16>
}

// Narrower than the table's first sample (1024): the rule.
// CHECK-LABEL: func @narrow
// CHECK: plan = #fusion.plan<rows, threads = 32, vector = 8, row = registers, cluster = 1, passes = [1]>
func.func @narrow(%x: tensor<256x512xbf16>) -> tensor<256x512xbf16> {
  %0 = fusion.kernel row_reduction (%x) : (tensor<256x512xbf16>) -> tensor<256x512xbf16> {
  ^bb0(%a: tensor<256x512xbf16>):
    %q = fusion.mul %a, %a : (tensor<256x512xbf16>, tensor<256x512xbf16>) -> tensor<256x512xbf16>
    %s = fusion.reduce_sum %q axes = [1] keep_dims : tensor<256x512xbf16> -> tensor<256x1xbf16>
    %y = fusion.div %a, %s : (tensor<256x512xbf16>, tensor<256x1xbf16>) -> tensor<256x512xbf16>
    fusion.yield %y : tensor<256x512xbf16>
  }
  return %0 : tensor<256x512xbf16>
}

// 4100 (shifted vectors) between the samples 4095 and 16383: the entry of
// 16383, the first at least as wide (staged, 64 threads).
// CHECK-LABEL: func @between_samples
// CHECK: plan = #fusion.plan<rows, threads = 64, vector = 8, row = staged, cluster = 1, passes = [1]>
// RULE-LABEL: func @between_samples
// RULE: plan = #fusion.plan<rows, threads = 128, vector = 8, row = registers, cluster = 1, passes = [1]>
func.func @between_samples(%x: tensor<256x4100xbf16>) -> tensor<256x4100xbf16> {
  %0 = fusion.kernel row_reduction (%x) : (tensor<256x4100xbf16>) -> tensor<256x4100xbf16> {
  ^bb0(%a: tensor<256x4100xbf16>):
    %q = fusion.mul %a, %a : (tensor<256x4100xbf16>, tensor<256x4100xbf16>) -> tensor<256x4100xbf16>
    %s = fusion.reduce_sum %q axes = [1] keep_dims : tensor<256x4100xbf16> -> tensor<256x1xbf16>
    %y = fusion.div %a, %s : (tensor<256x4100xbf16>, tensor<256x1xbf16>) -> tensor<256x4100xbf16>
    fusion.yield %y : tensor<256x4100xbf16>
  }
  return %0 : tensor<256x4100xbf16>
}

// Rows of a length known only at run time, 256 of them: the table's
// Dynamic entry for a pass of reductions then the write (128 threads, in
// the vectors the inputs' static sizes allow); the rule's 256.
// CHECK-LABEL: func @dynamic_length
// CHECK: plan = #fusion.plan<rows, threads = 128, vector = 8, row = streamed, cluster = 1, passes = [2]>
// RULE-LABEL: func @dynamic_length
// RULE: plan = #fusion.plan<rows, threads = 256, vector = 8, row = streamed, cluster = 1, passes = [2]>
func.func @dynamic_length(%x: tensor<256x?xbf16>) -> tensor<256x?xbf16> {
  %0 = fusion.kernel wide_row (%x) : (tensor<256x?xbf16>) -> tensor<256x?xbf16> {
  ^bb0(%a: tensor<256x?xbf16>):
    %q = fusion.mul %a, %a : (tensor<256x?xbf16>, tensor<256x?xbf16>) -> tensor<256x?xbf16>
    %s = fusion.reduce_sum %q axes = [1] keep_dims : tensor<256x?xbf16> -> tensor<256x1xbf16>
    %y = fusion.div %a, %s : (tensor<256x?xbf16>, tensor<256x1xbf16>) -> tensor<256x?xbf16>
    fusion.yield %y : tensor<256x?xbf16>
  }
  return %0 : tensor<256x?xbf16>
}
