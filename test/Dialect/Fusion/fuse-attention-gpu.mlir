// With `gpu` (the GPU pipeline's form), only the attentions a GPU strategy
// runs become kernels (attention_rows: few query rows, K stored by rows);
// the others stay their ops, and emit-remarks says why.
// RUN: fusion-opt %s --split-input-file --fusion-fuse-attention="emit-remarks gpu" --verify-diagnostics | FileCheck %s

// Decoding: one query row per head.
// CHECK-LABEL: func @decode
// CHECK: fusion.kernel attention
func.func @decode(%q: tensor<8x1x64xbf16>, %k: tensor<8x512x64xbf16>, %v: tensor<8x512x64xbf16>) -> tensor<8x1x64xbf16> {
  %kt = fusion.transpose %k permutation = [0, 2, 1] : tensor<8x512x64xbf16> -> tensor<8x64x512xbf16>
  %s = fusion.matmul %q, %kt : (tensor<8x1x64xbf16>, tensor<8x64x512xbf16>) -> tensor<8x1x512xbf16>
  %p = fusion.softmax %s axis = 2 : tensor<8x1x512xbf16>
  %o = fusion.matmul %p, %v : (tensor<8x1x512xbf16>, tensor<8x512x64xbf16>) -> tensor<8x1x64xbf16>
  return %o : tensor<8x1x64xbf16>
}

// -----

// The same with the log-sum-exp as a second output, and a prefill (128
// query rows): no GPU strategy runs them yet.
// CHECK-LABEL: func @not_for_gpu
// CHECK-NOT: fusion.kernel
// CHECK: fusion.logsumexp
func.func @not_for_gpu(%q: tensor<8x1x64xbf16>, %k: tensor<8x512x64xbf16>, %v: tensor<8x512x64xbf16>, %q2: tensor<8x128x64xbf16>) -> (tensor<8x1x64xbf16>, tensor<8x1xbf16>, tensor<8x128x64xbf16>) {
  // expected-remark @+1 {{[attention] not formed for the GPU: the log-sum-exp of the scores as a second result (the rows strategy writes the output only)}}
  %kt = fusion.transpose %k permutation = [0, 2, 1] : tensor<8x512x64xbf16> -> tensor<8x64x512xbf16>
  %s = fusion.matmul %q, %kt : (tensor<8x1x64xbf16>, tensor<8x64x512xbf16>) -> tensor<8x1x512xbf16>
  %l = fusion.logsumexp %s axis = 2 : tensor<8x1x512xbf16> -> tensor<8x1xbf16>
  %p = fusion.softmax %s axis = 2 : tensor<8x1x512xbf16>
  %o = fusion.matmul %p, %v : (tensor<8x1x512xbf16>, tensor<8x512x64xbf16>) -> tensor<8x1x64xbf16>
  // expected-remark @+1 {{[attention] not formed for the GPU: more than 16 query rows}}
  %kt2 = fusion.transpose %k permutation = [0, 2, 1] : tensor<8x512x64xbf16> -> tensor<8x64x512xbf16>
  %s2 = fusion.matmul %q2, %kt2 : (tensor<8x128x64xbf16>, tensor<8x64x512xbf16>) -> tensor<8x128x512xbf16>
  %p2 = fusion.softmax %s2 axis = 2 : tensor<8x128x512xbf16>
  %o2 = fusion.matmul %p2, %v : (tensor<8x128x512xbf16>, tensor<8x512x64xbf16>) -> tensor<8x128x64xbf16>
  return %o, %l, %o2 : tensor<8x1x64xbf16>, tensor<8x1xbf16>, tensor<8x128x64xbf16>
}
