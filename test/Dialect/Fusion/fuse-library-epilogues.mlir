// matmul-epilogue=library (the default): a matmul kernel takes the chain a
// library call computes on its accumulator, act(alpha * (A @ B) + C + bias),
// and leaves the rest to fuse on its own, reading the product once.
// RUN: fusion-opt %s --split-input-file --fusion-fuse-producer-consumer | FileCheck %s
// RUN: fusion-opt %s --split-input-file --fusion-fuse-producer-consumer="emit-remarks" --verify-diagnostics -o /dev/null

// Scale, residual, bias and tanh gelu, in the library's order: one kernel.
// CHECK-LABEL: func @full_chain
// CHECK: fusion.kernel matmul "full_chain_k0"
// CHECK-NEXT: ^bb0
// CHECK: fusion.matmul
// CHECK-NEXT: fusion.constant
// CHECK-NEXT: fusion.mul
// CHECK-NEXT: fusion.add
// CHECK-NEXT: fusion.add
// CHECK-NEXT: fusion.gelu {{.*}} approximation = tanh
// CHECK-NEXT: fusion.yield
// CHECK-NOT: fusion.kernel
func.func @full_chain(%a: tensor<?x64xbf16>, %b: tensor<64x32xbf16>, %r: tensor<?x32xbf16>, %bias: tensor<1x32xbf16>) -> tensor<?x32xbf16> {
  %half = fusion.constant dense<0.5> : tensor<bf16>
  %0 = fusion.matmul %a, %b : (tensor<?x64xbf16>, tensor<64x32xbf16>) -> tensor<?x32xbf16>
  %1 = fusion.mul %half, %0 : (tensor<bf16>, tensor<?x32xbf16>) -> tensor<?x32xbf16>
  %2 = fusion.add %1, %r : tensor<?x32xbf16>
  %3 = fusion.add %2, %bias : (tensor<?x32xbf16>, tensor<1x32xbf16>) -> tensor<?x32xbf16>
  %4 = fusion.gelu %3 approximation = tanh : tensor<?x32xbf16>
  return %4 : tensor<?x32xbf16>
}

// -----

// erf gelu is not the library's GELU: the bias joins the matmul, the gelu
// (and what follows it) is an elementwise kernel reading the product once.
// CHECK-LABEL: func @erf_gelu
// CHECK: %[[M:.+]] = fusion.kernel matmul "erf_gelu_k0"
// CHECK: fusion.matmul
// CHECK-NEXT: fusion.add
// CHECK-NEXT: fusion.yield
// CHECK: fusion.kernel elementwise "erf_gelu_k1" (%[[M]])
// CHECK-NEXT: ^bb0
// CHECK-NEXT: fusion.gelu
// CHECK-NEXT: fusion.exp
func.func @erf_gelu(%a: tensor<16x64xf32>, %b: tensor<64x32xf32>, %bias: tensor<32xf32>) -> tensor<16x32xf32> {
  %0 = fusion.matmul %a, %b : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  // expected-remark @+1 {{[library-epilogue] erf gelu: the library's GELU is the tanh approximation}}
  %1 = fusion.add %0, %bias : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %2 = fusion.gelu %1 : tensor<16x32xf32>
  %3 = fusion.exp %2 : tensor<16x32xf32>
  return %3 : tensor<16x32xf32>
}

// -----

// Out of order: a residual after the bias (the library adds C first).
// CHECK-LABEL: func @residual_after_bias
// CHECK: fusion.kernel matmul
// CHECK: fusion.add
// CHECK-NEXT: fusion.yield
// CHECK: fusion.kernel elementwise
func.func @residual_after_bias(%a: tensor<16x64xf32>, %b: tensor<64x32xf32>, %bias: tensor<32xf32>, %r: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %0 = fusion.matmul %a, %b : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  // expected-remark @+1 {{[library-epilogue] a residual after the bias or activation}}
  %1 = fusion.add %0, %bias : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %2 = fusion.add %1, %r : tensor<16x32xf32>
  return %2 : tensor<16x32xf32>
}

// -----

// A product with two users is written once for both: nothing joins it.
// CHECK-LABEL: func @two_users
// CHECK: fusion.kernel matmul "two_users_k0"
// CHECK-NEXT: ^bb0
// CHECK-NEXT: fusion.matmul
// CHECK-NEXT: fusion.yield
func.func @two_users(%a: tensor<16x64xf32>, %b: tensor<64x32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  // expected-remark @+1 {{[library-epilogue] the product has several users}}
  %0 = fusion.matmul %a, %b : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  %1 = fusion.relu %0 : tensor<16x32xf32>
  %2 = fusion.exp %0 : tensor<16x32xf32>
  return %1, %2 : tensor<16x32xf32>, tensor<16x32xf32>
}

// -----

// A batched product takes a row bias ([N]) and relu as max(x, 0); an
// addend of another shape (one value per row) is refused.
// CHECK-LABEL: func @batched
// CHECK: fusion.kernel matmul "batched_k0"
// CHECK: fusion.matmul
// CHECK-NEXT: fusion.add
// CHECK-NEXT: fusion.constant
// CHECK-NEXT: fusion.max
// CHECK-NEXT: fusion.yield
// CHECK: fusion.kernel elementwise "batched_k1"
func.func @batched(%a: tensor<4x16x64xbf16>, %b: tensor<64x32xbf16>, %bias: tensor<32xbf16>, %rows: tensor<4x16x1xbf16>) -> tensor<4x16x32xbf16> {
  %zero = fusion.constant dense<0.0> : tensor<bf16>
  %0 = fusion.matmul %a, %b : (tensor<4x16x64xbf16>, tensor<64x32xbf16>) -> tensor<4x16x32xbf16>
  %1 = fusion.add %bias, %0 : (tensor<32xbf16>, tensor<4x16x32xbf16>) -> tensor<4x16x32xbf16>
  // expected-remark @+1 {{[library-epilogue] an addend that is neither the product's shape nor one row broadcast over its rows}}
  %2 = fusion.max %1, %zero : (tensor<4x16x32xbf16>, tensor<bf16>) -> tensor<4x16x32xbf16>
  %3 = fusion.add %2, %rows : (tensor<4x16x32xbf16>, tensor<4x16x1xbf16>) -> tensor<4x16x32xbf16>
  return %3 : tensor<4x16x32xbf16>
}

// -----

// A scale after the bias is not the library's alpha.
// CHECK-LABEL: func @scale_after_bias
// CHECK: fusion.kernel matmul
// CHECK: fusion.add
// CHECK-NEXT: fusion.yield
func.func @scale_after_bias(%a: tensor<16x64xf32>, %b: tensor<64x32xf32>, %bias: tensor<32xf32>) -> tensor<16x32xf32> {
  %two = fusion.constant dense<2.0> : tensor<f32>
  %0 = fusion.matmul %a, %b : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  // expected-remark @+1 {{[library-epilogue] a scale after the residual, bias or activation}}
  %1 = fusion.add %0, %bias : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %2 = fusion.mul %1, %two : (tensor<16x32xf32>, tensor<f32>) -> tensor<16x32xf32>
  return %2 : tensor<16x32xf32>
}

// -----

// A Linear layer's x @ w^T: the transpose joins the matmul kernel as the
// operand's layout (the library reads w with op = T), with the bias.
// CHECK-LABEL: func @linear_transposed_weight
// CHECK: fusion.kernel matmul "linear_transposed_weight_k0"
// CHECK-NEXT: ^bb0
// CHECK-NEXT: fusion.transpose
// CHECK-NEXT: fusion.matmul
// CHECK-NEXT: fusion.add
// CHECK-NEXT: fusion.yield
// CHECK-NOT: fusion.kernel
func.func @linear_transposed_weight(%x: tensor<?x64xbf16>, %w: tensor<32x64xbf16>, %bias: tensor<32xbf16>) -> tensor<?x32xbf16> {
  %t = fusion.transpose %w permutation = [1, 0] : tensor<32x64xbf16> -> tensor<64x32xbf16>
  %0 = fusion.matmul %x, %t : (tensor<?x64xbf16>, tensor<64x32xbf16>) -> tensor<?x32xbf16>
  %1 = fusion.add %0, %bias : (tensor<?x32xbf16>, tensor<32xbf16>) -> tensor<?x32xbf16>
  return %1 : tensor<?x32xbf16>
}

// -----

// Batched q @ k^T and a transposed A: both layouts join.
// CHECK-LABEL: func @scores_and_transposed_a
// CHECK: fusion.kernel matmul "scores_and_transposed_a_k{{[0-9]}}"
// CHECK-NEXT: ^bb0
// CHECK-NEXT: fusion.transpose {{.*}} permutation = [0, 2, 1]
// CHECK-NEXT: fusion.matmul
// CHECK: fusion.kernel matmul
// CHECK-NEXT: ^bb0
// CHECK-NEXT: fusion.transpose {{.*}} permutation = [1, 0]
// CHECK-NEXT: fusion.matmul
// CHECK-NOT: fusion.kernel
func.func @scores_and_transposed_a(%q: tensor<4x?x64xf32>, %k: tensor<4x?x64xf32>, %a: tensor<64x16xf32>, %b: tensor<64x8xf32>) -> (tensor<4x?x?xf32>, tensor<16x8xf32>) {
  %kt = fusion.transpose %k permutation = [0, 2, 1] : tensor<4x?x64xf32> -> tensor<4x64x?xf32>
  %s = fusion.matmul %q, %kt : (tensor<4x?x64xf32>, tensor<4x64x?xf32>) -> tensor<4x?x?xf32>
  %at = fusion.transpose %a permutation = [1, 0] : tensor<64x16xf32> -> tensor<16x64xf32>
  %p = fusion.matmul %at, %b : (tensor<16x64xf32>, tensor<64x8xf32>) -> tensor<16x8xf32>
  return %s, %p : tensor<4x?x?xf32>, tensor<16x8xf32>
}

// -----

// A transpose someone else reads too is written once, for both; one that
// moves a batch dimension is not a matrix layout.
// CHECK-LABEL: func @transposes_kept
// CHECK: fusion.kernel elementwise
// CHECK: fusion.transpose
// CHECK: fusion.kernel matmul
// CHECK-NOT: fusion.transpose
// CHECK: fusion.kernel elementwise
// CHECK: fusion.transpose {{.*}} permutation = [1, 0, 2]
// CHECK: fusion.kernel matmul
// CHECK-NOT: fusion.transpose
func.func @transposes_kept(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>, %u: tensor<4x8x64xf32>, %v: tensor<8x64x16xf32>) -> (tensor<8x32xf32>, tensor<64x32xf32>, tensor<8x4x16xf32>) {
  // expected-remark @+1 {{[matmul-boundary] matmul is a fusion boundary}}
  %t = fusion.transpose %w permutation = [1, 0] : tensor<32x64xf32> -> tensor<64x32xf32>
  %0 = fusion.matmul %x, %t : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
  // expected-remark @+1 {{[matmul-boundary] matmul is a fusion boundary}}
  %ut = fusion.transpose %u permutation = [1, 0, 2] : tensor<4x8x64xf32> -> tensor<8x4x64xf32>
  %1 = fusion.matmul %ut, %v : (tensor<8x4x64xf32>, tensor<8x64x16xf32>) -> tensor<8x4x16xf32>
  return %0, %t, %1 : tensor<8x32xf32>, tensor<64x32xf32>, tensor<8x4x16xf32>
}
