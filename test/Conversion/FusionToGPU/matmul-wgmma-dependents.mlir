// RUN: fusion-opt %s --fusion-pipeline="matmul-epilogue=any" --fusion-kernels-to-gpu="matmul-backend=generated launch-dependents=true" | FileCheck %s
// RUN: fusion-opt %s --fusion-pipeline="matmul-epilogue=any" --fusion-kernels-to-gpu="matmul-backend=generated" | FileCheck %s --check-prefix=ALONE --implicit-check-not=griddepcontrol

// Launched as programmatic dependents, a kernel starts only once the grids
// before the previous one are done, and the previous one (the RMSNorm,
// of the same function) writes none of the function's inputs: the decode
// product's loading thread fills its first stages' tiles of the weights
// (B, a function input, two boxes of 64 columns a stage) before it waits
// for the norm, then lets the next kernel launch, then loads the norm's
// rows (A) into those stages, and every later stage whole after its MMAs
// release it. The multiplying warps wait before touching anything the
// grid before may write.
// CHECK-LABEL: func.func @decode
// CHECK: gpu.launch {{.*}} function(@decode_k0)
// CHECK-NOT: griddepcontrol
// CHECK: gpu.launch {{.*}} function(@decode_k1_few_rows)
// CHECK: nvvm.setmaxregister  decrease 56
// CHECK: nvgpu.tma.prefetch.descriptor %[[MAPA:[^ ]+]]
// CHECK: nvgpu.tma.prefetch.descriptor %[[MAPB:[^ ]+]]
// CHECK-COUNT-4: nvgpu.mbarrier.arrive.expect_tx %{{.+}}, %c24576
// CHECK-NOT: nvgpu.tma.async.load %[[MAPA]]
// CHECK: nvvm.griddepcontrol  wait
// CHECK-NEXT: nvvm.griddepcontrol  launch_dependents
// CHECK: scf.for
// CHECK: scf.if
// CHECK-NOT: nvgpu.mbarrier.arrive.expect_tx
// CHECK: nvgpu.tma.async.load %[[MAPA]]
// CHECK-NOT: nvgpu.tma.async.load %[[MAPB]]
// CHECK: } else {
// CHECK: nvvm.mbarrier.try_wait
// CHECK: nvgpu.mbarrier.arrive.expect_tx
// CHECK: nvgpu.tma.async.load %[[MAPA]]
// CHECK: nvgpu.tma.async.load %[[MAPB]]
// CHECK: nvvm.setmaxregister  increase 224
// CHECK-NEXT: nvvm.griddepcontrol  wait
// CHECK-NOT: griddepcontrol
// CHECK: return

// Not launched as dependents, nothing waits or loads early.
// ALONE-LABEL: func.func @decode
// ALONE-LABEL: func.func @first
func.func @decode(%x: tensor<16x4096xbf16>, %g: tensor<4096xbf16>,
                  %w: tensor<4096x4096xbf16>) -> tensor<16x4096xbf16> {
  %n = fusion.rms_norm %x, %g epsilon = 1.0e-06
      : tensor<16x4096xbf16>, tensor<4096xbf16>
  %y = fusion.matmul %n, %w
      : (tensor<16x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<16x4096xbf16>
  return %y : tensor<16x4096xbf16>
}

// A function's first kernel may follow any grid, which may write its
// inputs: it loads after the wait that fusion-launch-dependents adds.
// CHECK-LABEL: func.func @first
// CHECK-NOT: griddepcontrol
// CHECK: return
func.func @first(%x: tensor<16x4096xbf16>, %w: tensor<4096x4096xbf16>)
    -> tensor<16x4096xbf16> {
  %y = fusion.matmul %x, %w
      : (tensor<16x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<16x4096xbf16>
  return %y : tensor<16x4096xbf16>
}
