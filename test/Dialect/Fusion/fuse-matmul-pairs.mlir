// Pairs of products sharing a left operand, combined by their epilogue (the
// gated MLP), become one matmul kernel with matmul-epilogue=any, in both
// spellings; the library epilogue (the default) leaves them apart.
// RUN: fusion-opt %s --split-input-file --fusion-fuse-producer-consumer="matmul-epilogue=any emit-remarks" --verify-diagnostics | FileCheck %s
// RUN: fusion-opt %s --split-input-file --fusion-fuse-producer-consumer | FileCheck %s --check-prefix=LIBRARY

// Two products of one x: one kernel holding both matmuls and the epilogue.
// CHECK-LABEL: func @gated_pair
// CHECK: fusion.kernel matmul "gated_pair_k0" (%arg0, %arg1, %arg2)
// CHECK-COUNT-2: fusion.matmul
// CHECK: fusion.silu
// CHECK: fusion.mul
// CHECK-NOT: fusion.kernel
// LIBRARY-LABEL: func @gated_pair
// LIBRARY-COUNT-3: fusion.kernel
func.func @gated_pair(%x: tensor<?x64xbf16>, %wg: tensor<64x96xbf16>, %wu: tensor<64x96xbf16>) -> tensor<?x96xbf16> {
  %g = fusion.matmul %x, %wg : (tensor<?x64xbf16>, tensor<64x96xbf16>) -> tensor<?x96xbf16>
  %u = fusion.matmul %x, %wu : (tensor<?x64xbf16>, tensor<64x96xbf16>) -> tensor<?x96xbf16>
  %s = fusion.silu %g : tensor<?x96xbf16>
  %0 = fusion.mul %s, %u : tensor<?x96xbf16>
  return %0 : tensor<?x96xbf16>
}

// -----

// The halves of one product: the slices join the product's kernel, which
// writes the gated half-width output only.
// CHECK-LABEL: func @gated_halves
// CHECK: %[[K:.*]] = fusion.kernel matmul "gated_halves_k0" (%arg0, %arg1)
// CHECK-SAME: -> tensor<?x96xbf16>
// CHECK: %[[P:.*]] = fusion.matmul
// CHECK-DAG: fusion.slice %[[P]] offsets = [0, 0] sizes = [-1, 96]
// CHECK-DAG: fusion.slice %[[P]] offsets = [0, 96] sizes = [-1, 96]
// CHECK: fusion.mul
// CHECK-NOT: fusion.kernel
// CHECK: return %[[K]]
func.func @gated_halves(%x: tensor<?x64xbf16>, %w: tensor<64x192xbf16>) -> tensor<?x96xbf16> {
  %p = fusion.matmul %x, %w : (tensor<?x64xbf16>, tensor<64x192xbf16>) -> tensor<?x192xbf16>
  %g = fusion.slice %p offsets = [0, 0] sizes = [-1, 96] strides = [1, 1] : tensor<?x192xbf16> -> tensor<?x96xbf16>
  %u = fusion.slice %p offsets = [0, 96] sizes = [-1, 96] strides = [1, 1] : tensor<?x192xbf16> -> tensor<?x96xbf16>
  %s = fusion.silu %g : tensor<?x96xbf16>
  %0 = fusion.mul %s, %u : tensor<?x96xbf16>
  return %0 : tensor<?x96xbf16>
}

// -----

// Products of different left operands are not a pair.
// CHECK-LABEL: func @different_left
// CHECK-COUNT-2: fusion.kernel matmul
func.func @different_left(%x: tensor<8x64xbf16>, %y: tensor<8x64xbf16>, %wg: tensor<64x96xbf16>, %wu: tensor<64x96xbf16>) -> tensor<8x96xbf16> {
  // expected-remark @+1 {{[matmul-pair] the products do not share their left operand}}
  %g = fusion.matmul %x, %wg : (tensor<8x64xbf16>, tensor<64x96xbf16>) -> tensor<8x96xbf16>
  %u = fusion.matmul %y, %wu : (tensor<8x64xbf16>, tensor<64x96xbf16>) -> tensor<8x96xbf16>
  %s = fusion.silu %g : tensor<8x96xbf16>
  %0 = fusion.mul %s, %u : tensor<8x96xbf16>
  return %0 : tensor<8x96xbf16>
}

// -----

// A product also returned whole is not read as a pair of slices: the
// kernel would not write it.
// CHECK-LABEL: func @halves_and_whole
// CHECK: fusion.kernel matmul
// CHECK: fusion.kernel elementwise
func.func @halves_and_whole(%x: tensor<8x64xbf16>, %w: tensor<64x192xbf16>) -> (tensor<8x96xbf16>, tensor<8x192xbf16>) {
  // expected-remark @+1 {{[shape] an epilogue must produce the matmul's shape [8x192] (or be a pair: two column slices of the product)}}
  %p = fusion.matmul %x, %w : (tensor<8x64xbf16>, tensor<64x192xbf16>) -> tensor<8x192xbf16>
  %g = fusion.slice %p offsets = [0, 0] sizes = [8, 96] strides = [1, 1] : tensor<8x192xbf16> -> tensor<8x96xbf16>
  %u = fusion.slice %p offsets = [0, 96] sizes = [8, 96] strides = [1, 1] : tensor<8x192xbf16> -> tensor<8x96xbf16>
  %0 = fusion.mul %g, %u : tensor<8x96xbf16>
  return %0, %p : tensor<8x96xbf16>, tensor<8x192xbf16>
}

// -----

// An epilogue must read the product at the element it computes: a square
// product's transpose has its shape but not its index.
// CHECK-LABEL: func @transposed_epilogue
// CHECK: fusion.kernel matmul
// CHECK: fusion.kernel elementwise
func.func @transposed_epilogue(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>) -> tensor<32x32xf32> {
  // expected-remark @+1 {{[epilogue] the consumer reads the product at other elements (a slice, transpose or reduction of it)}}
  %p = fusion.matmul %a, %b : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %t = fusion.transpose %p permutation = [1, 0] : tensor<32x32xf32> -> tensor<32x32xf32>
  %0 = fusion.add %p, %t : tensor<32x32xf32>
  return %0 : tensor<32x32xf32>
}

// -----

// A product read by two consumers is written once, not recomputed in each.
// CHECK-LABEL: func @two_consumers
// CHECK-COUNT-1: fusion.matmul
// CHECK-NOT: fusion.matmul
func.func @two_consumers(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>) -> (tensor<32x32xf32>, tensor<32x32xf32>) {
  %p = fusion.matmul %a, %b : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %0 = fusion.exp %p : tensor<32x32xf32>
  %1 = fusion.tanh %p : tensor<32x32xf32>
  return %0, %1 : tensor<32x32xf32>, tensor<32x32xf32>
}
