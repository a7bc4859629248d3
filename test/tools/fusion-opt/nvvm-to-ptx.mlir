// fusion-opt carries the NVVM target and the LLVM/NVVM translations: a GPU
// module lowers to PTX for sm_90 (and to a cubin where ptxas is installed).
// RUN: fusion-opt %s --convert-gpu-to-nvvm --gpu-module-to-binary=format=isa | FileCheck %s --check-prefix=PTX
// RUN: %if ptxas %{ fusion-opt %s --convert-gpu-to-nvvm --gpu-module-to-binary=format=bin | FileCheck %s --check-prefix=CUBIN %}

// PTX: gpu.binary @kernels
// PTX-SAME: .target sm_90
// PTX-SAME: .visible .entry scale(
// PTX-SAME: ld.global
// CUBIN: gpu.binary @kernels
// CUBIN-SAME: bin = "\7FELF

module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90">] {
    gpu.func @scale(%buf: memref<?xf32>) kernel {
      %tid = gpu.thread_id x
      %v = memref.load %buf[%tid] : memref<?xf32>
      %r = arith.addf %v, %v : f32
      memref.store %r, %buf[%tid] : memref<?xf32>
      gpu.return
    }
  }
}
