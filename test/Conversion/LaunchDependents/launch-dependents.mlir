// RUN: fusion-opt %s --fusion-launch-dependents --split-input-file | FileCheck %s

// A kernel built for sm_90 or newer waits for the kernels before it, then
// lets the next kernel launch, before anything else; its module gets the
// marker the CUDA runtime launches it by. Functions that are not kernels
// stay as they are.

// CHECK-LABEL: gpu.module @hopper
// CHECK: llvm.mlir.global external constant @fusion_launch_dependents(1 : i8)
// CHECK: gpu.func @helper
// CHECK-NOT: nvvm.griddepcontrol
// CHECK: gpu.return
// CHECK: gpu.func @copy(%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>) kernel
// CHECK-NEXT: nvvm.griddepcontrol wait
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-NEXT: gpu.thread_id x
// CHECK: gpu.func @second() kernel
// CHECK-NEXT: nvvm.griddepcontrol wait
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-NEXT: gpu.return
gpu.module @hopper [#nvvm.target<chip = "sm_90">] {
  gpu.func @helper() {
    gpu.return
  }
  gpu.func @copy(%in: memref<4xf32>, %out: memref<4xf32>) kernel {
    %i = gpu.thread_id x
    %v = memref.load %in[%i] : memref<4xf32>
    memref.store %v, %out[%i] : memref<4xf32>
    gpu.return
  }
  gpu.func @second() kernel {
    gpu.return
  }
}

// -----

// A kernel that waits itself, later (after loads of inputs no kernel
// before it writes), and triggers after its wait gets neither instruction;
// its module the marker. sm_90a and sm_100a count.

// CHECK-LABEL: gpu.module @waits_itself
// CHECK: llvm.mlir.global external constant @fusion_launch_dependents
// CHECK: gpu.func @k() kernel
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: nvvm.griddepcontrol wait
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-NEXT: gpu.return
// CHECK: gpu.module @blackwell
// CHECK: nvvm.griddepcontrol wait
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
gpu.module @waits_itself [#nvvm.target<chip = "sm_90a">] {
  gpu.func @k() kernel {
    gpu.barrier
    nvvm.griddepcontrol wait
    nvvm.griddepcontrol launch_dependents
    gpu.return
  }
}
gpu.module @blackwell [#nvvm.target<chip = "sm_100a">] {
  gpu.func @k() kernel {
    gpu.return
  }
}

// -----

// Older chips have no griddepcontrol, and a module without a target is
// not known to be for one that does: both unchanged, without the marker.

// CHECK-LABEL: gpu.module @ampere
// CHECK-NOT: fusion_launch_dependents
// CHECK-NOT: nvvm.griddepcontrol
// CHECK: gpu.module @untargeted
// CHECK-NOT: fusion_launch_dependents
// CHECK-NOT: nvvm.griddepcontrol
gpu.module @ampere [#nvvm.target<chip = "sm_80">] {
  gpu.func @k() kernel {
    gpu.return
  }
}
gpu.module @untargeted {
  gpu.func @k() kernel {
    gpu.return
  }
}
