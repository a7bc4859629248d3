// The GPU pipeline: one PTX entry per fused kernel, 16-byte global loads in
// elementwise kernels, warp shuffles in row kernels, host code calling the
// mgpu* runtime.
// RUN: fusion-opt %s --fusion-to-nvvm="format=isa" | FileCheck %s --implicit-check-not=griddepcontrol --implicit-check-not=fusion_launch_dependents
// RUN: fusion-opt %s --fusion-to-nvvm="format=isa fuse=false" | FileCheck %s --check-prefix=UNFUSED
// RUN: %if ptxas %{ fusion-opt %s --fusion-to-nvvm="format=bin" | FileCheck %s --check-prefix=CUBIN %}
// RUN: fusion-opt %s --fusion-to-nvvm="format=isa launch-dependents=true" | FileCheck %s --check-prefix=DEPENDENTS
// RUN: fusion-opt %s --fusion-to-nvvm="format=isa" | FileCheck %s --check-prefix=COUNTERS
// RUN: %if ptxas %{ fusion-opt %s --fusion-to-nvvm="format=bin launch-dependents=true" | FileCheck %s --check-prefix=CUBIN %}

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

// By default no kernel waits for the one before it (the runtime launches
// it after that one ends; the first RUN line's implicit checks); with
// launch-dependents each does so at its entry, then lets the next kernel
// launch, and its module defines the runtime's marker.
// DEPENDENTS: gpu.binary @chain_k0_module
// DEPENDENTS-SAME: .visible .global .align 1 .u8 fusion_launch_dependents = 1;
// DEPENDENTS-SAME: .visible .entry chain_k0(
// DEPENDENTS-SAME: griddepcontrol.wait;
// DEPENDENTS-SAME: griddepcontrol.launch_dependents;
// DEPENDENTS-SAME: ld.global.v4.b32
// DEPENDENTS: gpu.binary @softmax_k0_module
// DEPENDENTS-SAME: fusion_launch_dependents = 1;
// DEPENDENTS-SAME: griddepcontrol.wait;
// DEPENDENTS-SAME: griddepcontrol.launch_dependents;
// DEPENDENTS-SAME: shfl.sync.bfly

// CUBIN: gpu.binary @chain_k0_module
// CUBIN-SAME: bin = "\7FELF

// A split reduction's arrival counters come from the runtime (its
// descriptor returned through `_mlir_ciface_`, in glue of the module's
// own), not from an allocation and a memset; the block that arrives last
// sets its counter back to zero with an exchange.
// COUNTERS: llvm.func private @fusion_cuda_release_arrival_counters(
// COUNTERS: llvm.call @_mlir_ciface_fusion_cuda_release_arrival_counters(
// COUNTERS: llvm.func @_mlir_ciface_fusion_cuda_release_arrival_counters(!llvm.ptr)
// COUNTERS: llvm.func private @fusion_cuda_arrival_counters(%{{.+}}: i64) -> !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// COUNTERS: llvm.call @_mlir_ciface_fusion_cuda_arrival_counters(
// COUNTERS: llvm.func @_mlir_ciface_fusion_cuda_arrival_counters(!llvm.ptr, i64)
// COUNTERS: llvm.func @mean_all(
// COUNTERS-NOT: mgpuMemset32
// COUNTERS: llvm.call @fusion_cuda_arrival_counters(
// COUNTERS-NOT: mgpuMemset32
// COUNTERS: gpu.launch_func @mean_all_k0_module::@mean_all_k0
// COUNTERS: llvm.call @fusion_cuda_release_arrival_counters(
// COUNTERS: gpu.binary @mean_all_k0_module
// COUNTERS-SAME: atom.global.add.u32
// COUNTERS-SAME: atom.global.exch.b32

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

func.func @mean_all(%x: tensor<?x64xf32>) -> tensor<f32> {
  %m = fusion.reduce_mean %x axes = [0, 1] : tensor<?x64xf32> -> tensor<f32>
  return %m : tensor<f32>
}
