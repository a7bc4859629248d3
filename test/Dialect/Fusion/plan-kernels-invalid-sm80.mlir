// Plans that need what sm_80 does not have are located errors.
// RUN: fusion-opt %s --fusion-plan-kernels=chip=sm_80 -split-input-file -verify-diagnostics

// K and V staged through shared memory by TMA (sm_90 and later).
func.func @attention_rows_staged(%q: tensor<4x1x64xbf16>, %k: tensor<4x?x64xbf16>, %v: tensor<4x?x64xbf16>) -> tensor<4x1x64xbf16> {
  // expected-error @+1 {{plan does not fit: staged rows need TMA, sm_90 or later (sm_80 has none)}}
  %0 = fusion.kernel attention (%q, %k, %v) {plan = #fusion.plan<attention_rows, threads = 128, vector = 16, row = staged, cluster = 1, passes = [1, 1, 1]>} : (tensor<4x1x64xbf16>, tensor<4x?x64xbf16>, tensor<4x?x64xbf16>) -> tensor<4x1x64xbf16> {
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

// Rows staged in shared memory by bulk copies (sm_90 and later).
func.func @rows_staged(%x: tensor<64x4096xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{plan does not fit: staged rows need bulk copies, sm_90 or later (sm_80 has none)}}
  %0 = fusion.kernel row_reduction (%x) {plan = #fusion.plan<rows, threads = 128, vector = 4, row = staged, cluster = 1, passes = [1]>} : (tensor<64x4096xf32>) -> tensor<64xf32> {
  ^bb0(%a: tensor<64x4096xf32>):
    %s = fusion.reduce_sum %a axes = [1] : tensor<64x4096xf32> -> tensor<64xf32>
    fusion.yield %s : tensor<64xf32>
  }
  return %0 : tensor<64xf32>
}
