// RUN: fusion-opt %s --split-input-file --fusion-kernels-to-gpu | FileCheck %s

// The elementwise strategy on hand-written kernels.

// Same-shape math: buffers collapsed to 1-D, vectors of the plan's width,
// then a scalar tail (21 = 2 x 8 + 5).
// CHECK-LABEL: func.func @flat
// CHECK: gpu.launch
// CHECK: memref.collapse_shape {{.*}} into memref<21xf16>
// CHECK: scf.for
// CHECK: vector.load {{.*}} : memref<21xf16>, vector<8xf16>
// CHECK: vector.store {{.*}} : memref<21xf16>, vector<8xf16>
// CHECK: scf.for
// CHECK: memref.load {{.*}} : memref<21xf16>
// CHECK: memref.store {{.*}} : memref<21xf16>
func.func @flat(%x: tensor<7x3xf16>, %y: tensor<7x3xf16>) -> tensor<7x3xf16> {
  %0 = fusion.kernel elementwise "flat" (%x, %y) {plan = #fusion.plan<elementwise, threads = 256, vector = 8, row = none, cluster = 1, passes = [1, 1]>} : (tensor<7x3xf16>, tensor<7x3xf16>) -> tensor<7x3xf16> {
  ^bb0(%a: tensor<7x3xf16>, %b: tensor<7x3xf16>):
    %s = fusion.add %a, %b : tensor<7x3xf16>
    fusion.yield %s : tensor<7x3xf16>
  }
  return %0 : tensor<7x3xf16>
}

// -----

// A flat plan of scalars (vector = 1, written by hand): one scalar loop.
// CHECK-LABEL: func.func @flat_scalar
// CHECK: gpu.launch
// CHECK-SAME: threads({{.*}}) in ({{.*}} = %c64
// CHECK-NOT: vector.load
// CHECK: memref.load {{.*}} : memref<21xf16>
func.func @flat_scalar(%x: tensor<7x3xf16>, %y: tensor<7x3xf16>) -> tensor<7x3xf16> {
  %0 = fusion.kernel elementwise "flat_scalar" (%x, %y) {plan = #fusion.plan<elementwise, threads = 64, vector = 1, row = none, cluster = 1, passes = [1, 1]>} : (tensor<7x3xf16>, tensor<7x3xf16>) -> tensor<7x3xf16> {
  ^bb0(%a: tensor<7x3xf16>, %b: tensor<7x3xf16>):
    %s = fusion.add %a, %b : tensor<7x3xf16>
    fusion.yield %s : tensor<7x3xf16>
  }
  return %0 : tensor<7x3xf16>
}

// -----

// A broadcast operand: vectors along the innermost dimension, the
// broadcast row loaded as a vector too.
// CHECK-LABEL: func.func @broadcast
// CHECK: gpu.launch
// CHECK: vector.load {{.*}} : memref<7x64xf32>, vector<4xf32>
// CHECK: vector.load {{.*}} : memref<64xf32>, vector<4xf32>
// CHECK: vector.store {{.*}} : memref<7x64xf32>, vector<4xf32>
func.func @broadcast(%x: tensor<7x64xf32>, %y: tensor<64xf32>) -> tensor<7x64xf32> {
  %0 = fusion.kernel elementwise "broadcast" (%x, %y) {plan = #fusion.plan<elementwise, threads = 256, vector = 4, row = none, cluster = 1, passes = [1, 1]>} : (tensor<7x64xf32>, tensor<64xf32>) -> tensor<7x64xf32> {
  ^bb0(%a: tensor<7x64xf32>, %b: tensor<64xf32>):
    %s = fusion.add %a, %b : (tensor<7x64xf32>, tensor<64xf32>) -> tensor<7x64xf32>
    fusion.yield %s : tensor<7x64xf32>
  }
  return %0 : tensor<7x64xf32>
}

// -----

// A rotary embedding's rotate_half, concat(-x[:, 32:], x[:, :32]): each
// vector reads the operand it lies in, in a branch of its own (operands
// start on vectors).
// CHECK-LABEL: func.func @rotate_half
// CHECK: gpu.launch
// CHECK: %[[COL:.+]] = arith.remui
// CHECK: %[[FIRST:.+]] = arith.cmpi ult, %[[COL]], %c32
// CHECK: scf.if %[[FIRST]] -> (vector<4xf32>)
// CHECK: %[[UP:.+]] = arith.addi %[[COL]], %c32
// CHECK: vector.load %{{.+}}[%{{.+}}, %[[UP]]] {{.*}} : memref<?x64xf32>, vector<4xf32>
// CHECK: arith.negf
// CHECK: } else {
// CHECK: %[[DOWN:.+]] = arith.subi %[[COL]], %c32
// CHECK: vector.load %{{.+}}[%{{.+}}, %[[DOWN]]] {{.*}} : memref<?x64xf32>, vector<4xf32>
// CHECK-NOT: arith.negf
// CHECK: vector.store {{.*}} : memref<?x64xf32>, vector<4xf32>
func.func @rotate_half(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %0 = fusion.kernel elementwise "rotate_half" (%x) {plan = #fusion.plan<elementwise, threads = 256, vector = 4, row = none, cluster = 1, passes = [1]>} : (tensor<?x64xf32>) -> tensor<?x64xf32> {
  ^bb0(%a: tensor<?x64xf32>):
    %lo = fusion.slice %a offsets = [0, 0] sizes = [-1, 32] strides = [1, 1] : tensor<?x64xf32> -> tensor<?x32xf32>
    %hi = fusion.slice %a offsets = [0, 32] sizes = [-1, 32] strides = [1, 1] : tensor<?x64xf32> -> tensor<?x32xf32>
    %n = fusion.neg %hi : tensor<?x32xf32>
    %r = fusion.concat %n, %lo axis = 1 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x64xf32>
    fusion.yield %r : tensor<?x64xf32>
  }
  return %0 : tensor<?x64xf32>
}

// -----

// Operands that do not start on a vector (at 3 of 4 lanes): each lane is
// evaluated on its own, in the operand it lies in.
// CHECK-LABEL: func.func @concat_unaligned
// CHECK: gpu.launch
// CHECK-COUNT-4: scf.if %{{.+}} -> (f32)
// CHECK: vector.from_elements
func.func @concat_unaligned(%x: tensor<5x8xf32>, %y: tensor<5x8xf32>) -> tensor<5x8xf32> {
  %0 = fusion.kernel elementwise "concat_unaligned" (%x, %y) {plan = #fusion.plan<elementwise, threads = 256, vector = 4, row = none, cluster = 1, passes = [1, 1]>} : (tensor<5x8xf32>, tensor<5x8xf32>) -> tensor<5x8xf32> {
  ^bb0(%a: tensor<5x8xf32>, %b: tensor<5x8xf32>):
    %head = fusion.slice %a offsets = [0, 0] sizes = [5, 3] strides = [1, 1] : tensor<5x8xf32> -> tensor<5x3xf32>
    %tail = fusion.slice %b offsets = [0, 3] sizes = [5, 5] strides = [1, 1] : tensor<5x8xf32> -> tensor<5x5xf32>
    %r = fusion.concat %head, %tail axis = 1 : (tensor<5x3xf32>, tensor<5x5xf32>) -> tensor<5x8xf32>
    fusion.yield %r : tensor<5x8xf32>
  }
  return %0 : tensor<5x8xf32>
}

// -----

// A reshape in the kernel splitting the innermost axis: vectors stay
// vectors (8 divides both innermost sizes), the operand's index taken by
// constants (the position in the run of 1024, split as 8 x 128).
// CHECK-LABEL: func.func @reshape_keeps_vectors
// CHECK: gpu.launch
// CHECK: arith.remui {{.*}} %c128
// CHECK: vector.load {{.*}} : memref<64x1024xbf16>, vector<8xbf16>
// CHECK: vector.load {{.*}} : memref<8x128xbf16>, vector<8xbf16>
// CHECK: vector.store {{.*}} : memref<64x8x128xbf16>, vector<8xbf16>
func.func @reshape_keeps_vectors(%x: tensor<64x1024xbf16>, %w: tensor<8x128xbf16>) -> tensor<64x8x128xbf16> {
  %0 = fusion.kernel elementwise "reshape_keeps_vectors" (%x, %w) {plan = #fusion.plan<elementwise, threads = 256, vector = 8, row = none, cluster = 1, passes = [1, 1]>} : (tensor<64x1024xbf16>, tensor<8x128xbf16>) -> tensor<64x8x128xbf16> {
  ^bb0(%a: tensor<64x1024xbf16>, %b: tensor<8x128xbf16>):
    %g = fusion.gelu %a : tensor<64x1024xbf16>
    %r = fusion.reshape %g : tensor<64x1024xbf16> -> tensor<64x8x128xbf16>
    %y = fusion.mul %r, %b : (tensor<64x8x128xbf16>, tensor<8x128xbf16>) -> tensor<64x8x128xbf16>
    fusion.yield %y : tensor<64x8x128xbf16>
  }
  return %0 : tensor<64x8x128xbf16>
}

// -----

// Pairs interleaved (a concat of unit axes flattened): the lanes of a
// vector come from both halves, so each lane is read on its own; the
// dynamic rows keep their index.
// CHECK-LABEL: func.func @reshape_interleaves
// CHECK: gpu.launch
// CHECK: vector.load {{.*}} : memref<?x8xf32>, vector<4xf32>
// CHECK: arith.remui {{.*}} %c2
// CHECK: memref.load {{.*}} : memref<?x8xf32>
// CHECK: vector.from_elements
// CHECK: vector.store {{.*}} : memref<?x8xf32>, vector<4xf32>
func.func @reshape_interleaves(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = fusion.kernel elementwise "reshape_interleaves" (%x) {plan = #fusion.plan<elementwise, threads = 256, vector = 4, row = none, cluster = 1, passes = [1]>} : (tensor<?x8xf32>) -> tensor<?x8xf32> {
  ^bb0(%a: tensor<?x8xf32>):
    %odd = fusion.slice %a offsets = [0, 1] sizes = [-1, 4] strides = [1, 2] : tensor<?x8xf32> -> tensor<?x4xf32>
    %neg = fusion.neg %odd : tensor<?x4xf32>
    %even = fusion.slice %a offsets = [0, 0] sizes = [-1, 4] strides = [1, 2] : tensor<?x8xf32> -> tensor<?x4xf32>
    %p = fusion.reshape %neg : tensor<?x4xf32> -> tensor<?x4x1xf32>
    %q = fusion.reshape %even : tensor<?x4xf32> -> tensor<?x4x1xf32>
    %pairs = fusion.concat %p, %q axis = 2 : (tensor<?x4x1xf32>, tensor<?x4x1xf32>) -> tensor<?x4x2xf32>
    %flat = fusion.reshape %pairs : tensor<?x4x2xf32> -> tensor<?x8xf32>
    %y = fusion.add %a, %flat : tensor<?x8xf32>
    fusion.yield %y : tensor<?x8xf32>
  }
  return %0 : tensor<?x8xf32>
}
