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
