// With `gpu` (the GPU pipeline's form), only the attentions a GPU strategy
// runs on `chip` become kernels (attention_rows: few query rows, K stored
// by rows; attention_tiles on sm_90: bf16 or f16, head size 64 or 128, K
// stored by rows); the others stay their ops, and emit-remarks says why.
// RUN: fusion-opt %s --split-input-file --fusion-fuse-attention="emit-remarks gpu" --verify-diagnostics | FileCheck %s
// RUN: fusion-opt %s --split-input-file --fusion-fuse-attention="gpu chip=sm_80" | FileCheck %s --check-prefix=SM80
// RUN: not fusion-opt %s --split-input-file --fusion-fuse-attention="gpu chip=gfx90a" 2>&1 | FileCheck %s --check-prefix=CHIP

// CHIP: fusion-fuse-attention: unknown chip 'gfx90a'

// Decoding: one query row per head (attention_rows, any chip).
// CHECK-LABEL: func @decode
// CHECK: fusion.kernel attention
// SM80-LABEL: func @decode
// SM80: fusion.kernel attention
func.func @decode(%q: tensor<8x1x64xbf16>, %k: tensor<8x512x64xbf16>, %v: tensor<8x512x64xbf16>) -> tensor<8x1x64xbf16> {
  %kt = fusion.transpose %k permutation = [0, 2, 1] : tensor<8x512x64xbf16> -> tensor<8x64x512xbf16>
  %s = fusion.matmul %q, %kt : (tensor<8x1x64xbf16>, tensor<8x64x512xbf16>) -> tensor<8x1x512xbf16>
  %p = fusion.softmax %s axis = 2 : tensor<8x1x512xbf16>
  %o = fusion.matmul %p, %v : (tensor<8x1x512xbf16>, tensor<8x512x64xbf16>) -> tensor<8x1x64xbf16>
  return %o : tensor<8x1x64xbf16>
}

// -----

// Prefill (128 query rows): attention_tiles on sm_90; on sm_80 no strategy
// runs it.
// CHECK-LABEL: func @prefill
// CHECK: fusion.kernel attention
// SM80-LABEL: func @prefill
// SM80-NOT: fusion.kernel
func.func @prefill(%q: tensor<8x128x64xbf16>, %k: tensor<8x512x64xbf16>, %v: tensor<8x512x64xbf16>) -> tensor<8x128x64xbf16> {
  %kt = fusion.transpose %k permutation = [0, 2, 1] : tensor<8x512x64xbf16> -> tensor<8x64x512xbf16>
  %s = fusion.matmul %q, %kt : (tensor<8x128x64xbf16>, tensor<8x64x512xbf16>) -> tensor<8x128x512xbf16>
  %p = fusion.softmax %s axis = 2 : tensor<8x128x512xbf16>
  %o = fusion.matmul %p, %v : (tensor<8x128x512xbf16>, tensor<8x512x64xbf16>) -> tensor<8x128x64xbf16>
  return %o : tensor<8x128x64xbf16>
}

// -----

// The log-sum-exp of the scores as a second result: attention_rows writes
// the output only, attention_tiles writes both (sm_90); on sm_80 neither.
// CHECK-LABEL: func @with_logsumexp
// CHECK: fusion.kernel attention
// CHECK: fusion.logsumexp
// CHECK: fusion.yield %{{.+}}, %{{.+}} : tensor<8x1x64xbf16>, tensor<8x1xbf16>
// SM80-LABEL: func @with_logsumexp
// SM80-NOT: fusion.kernel
func.func @with_logsumexp(%q: tensor<8x1x64xbf16>, %k: tensor<8x512x64xbf16>, %v: tensor<8x512x64xbf16>) -> (tensor<8x1x64xbf16>, tensor<8x1xbf16>) {
  %kt = fusion.transpose %k permutation = [0, 2, 1] : tensor<8x512x64xbf16> -> tensor<8x64x512xbf16>
  %s = fusion.matmul %q, %kt : (tensor<8x1x64xbf16>, tensor<8x64x512xbf16>) -> tensor<8x1x512xbf16>
  %l = fusion.logsumexp %s axis = 2 : tensor<8x1x512xbf16> -> tensor<8x1xbf16>
  %p = fusion.softmax %s axis = 2 : tensor<8x1x512xbf16>
  %o = fusion.matmul %p, %v : (tensor<8x1x512xbf16>, tensor<8x512x64xbf16>) -> tensor<8x1x64xbf16>
  return %o, %l : tensor<8x1x64xbf16>, tensor<8x1xbf16>
}

// -----

// A prefill in f32 and one of head size 32: no GPU strategy runs them.
// CHECK-LABEL: func @not_for_gpu
// CHECK-NOT: fusion.kernel
// CHECK: return
func.func @not_for_gpu(%q2: tensor<8x128x64xf32>, %k2: tensor<8x512x64xf32>, %v2: tensor<8x512x64xf32>, %q3: tensor<8x128x32xbf16>, %k3: tensor<8x512x32xbf16>, %v3: tensor<8x512x32xbf16>) -> (tensor<8x128x64xf32>, tensor<8x128x32xbf16>) {
  // expected-remark @+1 {{[attention] not formed for the GPU: attention_rows: more than 16 query rows, or a dynamic number (the rows strategy reads K and V once per query row); attention_tiles: Q, K and V are not bf16 or f16}}
  %kt2 = fusion.transpose %k2 permutation = [0, 2, 1] : tensor<8x512x64xf32> -> tensor<8x64x512xf32>
  %s2 = fusion.matmul %q2, %kt2 : (tensor<8x128x64xf32>, tensor<8x64x512xf32>) -> tensor<8x128x512xf32>
  %p2 = fusion.softmax %s2 axis = 2 : tensor<8x128x512xf32>
  %o2 = fusion.matmul %p2, %v2 : (tensor<8x128x512xf32>, tensor<8x512x64xf32>) -> tensor<8x128x64xf32>
  // expected-remark @+1 {{attention_tiles: head sizes other than one D = Dv of 64 or 128}}
  %kt3 = fusion.transpose %k3 permutation = [0, 2, 1] : tensor<8x512x32xbf16> -> tensor<8x32x512xbf16>
  %s3 = fusion.matmul %q3, %kt3 : (tensor<8x128x32xbf16>, tensor<8x32x512xbf16>) -> tensor<8x128x512xbf16>
  %p3 = fusion.softmax %s3 axis = 2 : tensor<8x128x512xbf16>
  %o3 = fusion.matmul %p3, %v3 : (tensor<8x128x512xbf16>, tensor<8x512x32xbf16>) -> tensor<8x128x32xbf16>
  return %o2, %o3 : tensor<8x128x64xf32>, tensor<8x128x32xbf16>
}
