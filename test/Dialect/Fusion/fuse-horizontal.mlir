// RUN: fusion-opt %s --split-input-file --fusion-fuse-producer-consumer --fusion-fuse-horizontal | FileCheck %s

// Two independent parameter updates of the same size: one launch.
// CHECK-LABEL: func @two_updates
// CHECK: %[[K:.+]]:2 = fusion.kernel elementwise "two_updates_k0" (%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) : (tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>) -> (tensor<4096xf32>, tensor<4096xf32>)
// CHECK-NOT: fusion.kernel
func.func @two_updates(%p0: tensor<4096xf32>, %g0: tensor<4096xf32>, %p1: tensor<4096xf32>, %g1: tensor<4096xf32>) -> (tensor<4096xf32>, tensor<4096xf32>) {
  %lr = fusion.constant dense<1.0e-3> : tensor<f32>
  %s0 = fusion.mul %g0, %lr : (tensor<4096xf32>, tensor<f32>) -> tensor<4096xf32>
  %n0 = fusion.sub %p0, %s0 : tensor<4096xf32>
  %s1 = fusion.mul %g1, %lr : (tensor<4096xf32>, tensor<f32>) -> tensor<4096xf32>
  %n1 = fusion.sub %p1, %s1 : tensor<4096xf32>
  return %n0, %n1 : tensor<4096xf32>, tensor<4096xf32>
}

// -----

// Different iteration spaces keep their own launches.
// CHECK-LABEL: func @different_sizes
// CHECK: fusion.kernel elementwise "different_sizes_k0"
// CHECK: fusion.kernel elementwise "different_sizes_k1"
func.func @different_sizes(%a: tensor<4096xf32>, %b: tensor<1024xf32>) -> (tensor<4096xf32>, tensor<1024xf32>) {
  %0 = fusion.exp %a : tensor<4096xf32>
  %1 = fusion.exp %b : tensor<1024xf32>
  return %0, %1 : tensor<4096xf32>, tensor<1024xf32>
}

// -----

// Kernels that depend on each other through a matmul stay apart.
// CHECK-LABEL: func @dependent
// CHECK: fusion.kernel elementwise "dependent_k0"
// CHECK: fusion.kernel matmul "dependent_k1"
// CHECK: fusion.kernel elementwise "dependent_k2"
func.func @dependent(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %a = fusion.exp %x : tensor<64x64xf32>
  %m = fusion.matmul %a, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %b = fusion.tanh %m : tensor<64x64xf32>
  return %b : tensor<64x64xf32>
}

// -----

// Two dynamic sizes nothing ties together may differ at run time: no
// shared launch (its bounds would come from one of them).
// CHECK-LABEL: func @independent_dynamic
// CHECK: fusion.kernel elementwise "independent_dynamic_k0"
// CHECK: fusion.kernel elementwise "independent_dynamic_k1"
func.func @independent_dynamic(%a: tensor<?x64xf32>, %b: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  %0 = fusion.exp %a : tensor<?x64xf32>
  %1 = fusion.exp %b : tensor<?x64xf32>
  return %0, %1 : tensor<?x64xf32>, tensor<?x64xf32>
}

// -----

// The add makes the two row counts equal (dynamic sizes never broadcast),
// so the three kernels share one launch.
// CHECK-LABEL: func @tied_dynamic
// CHECK: fusion.kernel elementwise "tied_dynamic_k0" {{.*}} -> (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>)
// CHECK-NOT: fusion.kernel
func.func @tied_dynamic(%a: tensor<?x64xf32>, %b: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>) {
  %0 = fusion.exp %a : tensor<?x64xf32>
  %1 = fusion.exp %b : tensor<?x64xf32>
  %2 = fusion.add %a, %b : tensor<?x64xf32>
  return %0, %1, %2 : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>
}
