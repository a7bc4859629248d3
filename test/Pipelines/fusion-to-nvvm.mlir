// The GPU pipeline: one PTX entry per fused kernel, 16-byte global loads in
// elementwise kernels, warp shuffles in row kernels, host code calling the
// mgpu* runtime.
// RUN: fusion-opt %s --fusion-to-nvvm="format=isa" | FileCheck %s
// RUN: fusion-opt %s --fusion-to-nvvm="format=isa fuse=false" | FileCheck %s --check-prefix=UNFUSED
// RUN: %if ptxas %{ fusion-opt %s --fusion-to-nvvm="format=bin" | FileCheck %s --check-prefix=CUBIN %}

// CHECK: llvm.func @chain(
// CHECK: gpu.launch_func @chain_k0_module::@chain_k0
// CHECK: llvm.func @_mlir_ciface_chain(
// CHECK: gpu.binary @chain_k0_module
// CHECK-SAME: .target sm_90
// CHECK-SAME: .visible .entry chain_k0(
// CHECK-SAME: ld.global.v4.b32
// CHECK-SAME: st.global.v4.b32
// CHECK: llvm.func @softmax(
// CHECK: gpu.launch_func @softmax_k0_module::@softmax_k0
// CHECK: gpu.binary @softmax_k0_module
// CHECK-SAME: .visible .entry softmax_k0(
// CHECK-SAME: shfl.sync.bfly

// The unfused program: one entry per primitive op.
// UNFUSED-COUNT-4: .visible .entry chain_k
// UNFUSED-NOT: .visible .entry chain_k

// CUBIN: gpu.binary @chain_k0_module
// CUBIN-SAME: bin = "\7FELF

func.func @chain(%x: tensor<4096xf32>, %w: tensor<4096xf32>) -> tensor<4096xf32> {
  %two = fusion.constant dense<2.0> : tensor<f32>
  %one = fusion.constant dense<1.0> : tensor<f32>
  %zero = fusion.constant dense<0.0> : tensor<f32>
  %0 = fusion.mul %x, %two : (tensor<4096xf32>, tensor<f32>) -> tensor<4096xf32>
  %1 = fusion.add %0, %one : (tensor<4096xf32>, tensor<f32>) -> tensor<4096xf32>
  %2 = fusion.max %1, %zero : (tensor<4096xf32>, tensor<f32>) -> tensor<4096xf32>
  %3 = fusion.mul %2, %w : tensor<4096xf32>
  return %3 : tensor<4096xf32>
}

func.func @softmax(%x: tensor<?x1024xbf16>) -> tensor<?x1024xbf16> {
  %0 = fusion.softmax %x axis = 1 : tensor<?x1024xbf16>
  return %0 : tensor<?x1024xbf16>
}
