// Elementwise math on a matmul operand joins the matmul's kernel as a
// prologue with matmul-epilogue=any (generated kernels evaluate it as they
// load the operand's tiles, and the value is never written); the library
// epilogue (the default) leaves the matmul a boundary.
// RUN: fusion-opt %s --split-input-file --fusion-fuse-producer-consumer="matmul-epilogue=any emit-remarks" --verify-diagnostics | FileCheck %s
// RUN: fusion-opt %s --split-input-file --fusion-fuse-producer-consumer | FileCheck %s --check-prefix=LIBRARY

// Autocast: both operands converted from f32, a bias after the product;
// one kernel reading the f32 tensors.
// CHECK-LABEL: func @autocast
// CHECK: fusion.kernel matmul "autocast_k0" (%arg0, %arg1, %arg2)
// CHECK-DAG: fusion.convert %{{.+}} : tensor<?x64xf32> to tensor<?x64xbf16>
// CHECK-DAG: fusion.convert %{{.+}} : tensor<64x96xf32> to tensor<64x96xbf16>
// CHECK: fusion.matmul
// CHECK: fusion.add
// CHECK-NOT: fusion.kernel
// LIBRARY-LABEL: func @autocast
// LIBRARY-COUNT-2: fusion.kernel elementwise
// LIBRARY: fusion.kernel matmul
func.func @autocast(%x: tensor<?x64xf32>, %w: tensor<64x96xf32>, %bias: tensor<96xbf16>) -> tensor<?x96xbf16> {
  %xb = fusion.convert %x : tensor<?x64xf32> to tensor<?x64xbf16>
  %wb = fusion.convert %w : tensor<64x96xf32> to tensor<64x96xbf16>
  %0 = fusion.matmul %xb, %wb : (tensor<?x64xbf16>, tensor<64x96xbf16>) -> tensor<?x96xbf16>
  %1 = fusion.add %0, %bias : (tensor<?x96xbf16>, tensor<96xbf16>) -> tensor<?x96xbf16>
  return %1 : tensor<?x96xbf16>
}

// -----

// A chain on x (a scale per column, then a scale per row) and the gated
// pair sharing it: one kernel, the chain evaluated once for both products.
// CHECK-LABEL: func @scaled_pair
// CHECK: fusion.kernel matmul "scaled_pair_k0" (%arg0, %arg1, %arg2, %arg3, %arg4)
// CHECK: %[[S:.+]] = fusion.mul
// CHECK: %[[R:.+]] = fusion.mul %[[S]]
// CHECK: fusion.matmul %[[R]]
// CHECK: fusion.matmul %[[R]]
// CHECK-NOT: fusion.kernel
func.func @scaled_pair(%x: tensor<?x64xbf16>, %s: tensor<64xbf16>, %r: tensor<?x1xbf16>, %wg: tensor<64x96xbf16>, %wu: tensor<64x96xbf16>) -> tensor<?x96xbf16> {
  %xs = fusion.mul %x, %s : (tensor<?x64xbf16>, tensor<64xbf16>) -> tensor<?x64xbf16>
  %xr = fusion.mul %xs, %r : (tensor<?x64xbf16>, tensor<?x1xbf16>) -> tensor<?x64xbf16>
  %g = fusion.matmul %xr, %wg : (tensor<?x64xbf16>, tensor<64x96xbf16>) -> tensor<?x96xbf16>
  %u = fusion.matmul %xr, %wu : (tensor<?x64xbf16>, tensor<64x96xbf16>) -> tensor<?x96xbf16>
  %sg = fusion.silu %g : tensor<?x96xbf16>
  %0 = fusion.mul %sg, %u : tensor<?x96xbf16>
  return %0 : tensor<?x96xbf16>
}

// -----

// Refused: a value also returned (a prologue's result is never written),
// and a transpose (a layout change, which the tiles do not make).
// CHECK-LABEL: func @refused
// CHECK: fusion.kernel elementwise
// CHECK: fusion.kernel elementwise
// CHECK: fusion.kernel matmul
// CHECK-NOT: fusion.convert
// CHECK-NOT: fusion.transpose
func.func @refused(%x: tensor<32x64xf32>, %w: tensor<96x64xbf16>) -> (tensor<32x96xbf16>, tensor<32x64xbf16>) {
  // expected-remark @+1 {{[prologue] the value is also read elsewhere; a prologue's result is never written}}
  %xb = fusion.convert %x : tensor<32x64xf32> to tensor<32x64xbf16>
  // expected-remark @+1 {{[prologue] a prologue is elementwise math on the operand's elements (no slice, transpose or other layout change)}}
  %wt = fusion.transpose %w permutation = [1, 0] : tensor<96x64xbf16> -> tensor<64x96xbf16>
  %0 = fusion.matmul %xb, %wt : (tensor<32x64xbf16>, tensor<64x96xbf16>) -> tensor<32x96xbf16>
  return %0, %xb : tensor<32x96xbf16>, tensor<32x64xbf16>
}

// -----

// Refused: a norm (a row reduction) before the product.
// CHECK-LABEL: func @norm_first
// CHECK: fusion.kernel row_reduction
// CHECK: fusion.kernel matmul
func.func @norm_first(%x: tensor<32x64xbf16>, %g: tensor<64xbf16>, %w: tensor<64x96xbf16>) -> tensor<32x96xbf16> {
  // expected-remark @+1 {{[matmul-boundary] matmul is a fusion boundary}}
  %n = fusion.rms_norm %x, %g epsilon = 1.0e-06 : tensor<32x64xbf16>, tensor<64xbf16>
  %0 = fusion.matmul %n, %w : (tensor<32x64xbf16>, tensor<64x96xbf16>) -> tensor<32x96xbf16>
  return %0 : tensor<32x96xbf16>
}

// -----

// Math on a product (silu * mul of the up projection's halves) is its
// epilogue, not the down projection's prologue; the normalizing step of a
// norm stays with its reduction (fusion-fuse-reductions).
// CHECK-LABEL: func @between_products
// CHECK: fusion.kernel matmul "between_products_k{{[0-9]+}}"
// CHECK: fusion.slice
// CHECK: fusion.slice
// CHECK: fusion.silu
// CHECK: fusion.mul
// CHECK: fusion.kernel matmul
// CHECK-NOT: fusion.silu
func.func @between_products(%x: tensor<?x64xbf16>, %w: tensor<64x192xbf16>, %wd: tensor<96x64xbf16>) -> tensor<?x64xbf16> {
  %p = fusion.matmul %x, %w : (tensor<?x64xbf16>, tensor<64x192xbf16>) -> tensor<?x192xbf16>
  %g = fusion.slice %p offsets = [0, 0] sizes = [-1, 96] strides = [1, 1] : tensor<?x192xbf16> -> tensor<?x96xbf16>
  %u = fusion.slice %p offsets = [0, 96] sizes = [-1, 96] strides = [1, 1] : tensor<?x192xbf16> -> tensor<?x96xbf16>
  %s = fusion.silu %g : tensor<?x96xbf16>
  // expected-remark @+1 {{[matmul-pair] only two single products}}
  %h = fusion.mul %s, %u : tensor<?x96xbf16>
  %0 = fusion.matmul %h, %wd : (tensor<?x96xbf16>, tensor<96x64xbf16>) -> tensor<?x64xbf16>
  return %0 : tensor<?x64xbf16>
}

// -----

// The normalizing step of a norm (written out: a mean of squares, then x
// scaled by its rsqrt) reads the reduction's result: it stays out of the
// matmul, for fusion-fuse-reductions to join to its reduction.
// CHECK-LABEL: func @norm_step
// CHECK: fusion.reduce_mean
// CHECK: fusion.kernel elementwise
// CHECK: fusion.rsqrt
// CHECK: fusion.kernel matmul
// CHECK-NOT: fusion.rsqrt
func.func @norm_step(%x: tensor<32x64xf32>, %w: tensor<64x96xbf16>) -> tensor<32x96xbf16> {
  // expected-remark @+1 {{[reduction]}}
  %sq = fusion.mul %x, %x : tensor<32x64xf32>
  // expected-remark @+1 {{[reduction]}}
  %ms = fusion.reduce_mean %sq axes = [1] keep_dims : tensor<32x64xf32> -> tensor<32x1xf32>
  %r = fusion.rsqrt %ms : tensor<32x1xf32>
  %n = fusion.mul %x, %r : (tensor<32x64xf32>, tensor<32x1xf32>) -> tensor<32x64xf32>
  // expected-remark @+1 {{[prologue] the value is computed from a product or a reduction, whose kernel it joins instead}}
  %nb = fusion.convert %n : tensor<32x64xf32> to tensor<32x64xbf16>
  %0 = fusion.matmul %nb, %w : (tensor<32x64xbf16>, tensor<64x96xbf16>) -> tensor<32x96xbf16>
  return %0 : tensor<32x96xbf16>
}
