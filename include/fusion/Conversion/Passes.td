//===- Passes.td - Conversions out of the fusion dialect ---*- tablegen -*-===//

#ifndef FUSION_CONVERSION_PASSES_TD
#define FUSION_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def FusionToLinalg : Pass<"fusion-to-linalg", "ModuleOp"> {
  let summary = "Outline fused kernels into functions and lower fusion ops "
                "to linalg on tensors";
  let description = [{
    Every `fusion.kernel` becomes a private `func.func` named after the
    kernel (`<function>_k<i>`), called where the kernel was; it carries its
    kind in a `fusion.kernel_kind` attribute and its index in the module in
    `fusion.kernel_id`. Composite ops are decomposed first; then every fusion
    op becomes linalg, tensor and arith/math ops on tensors:

    - elementwise ops: one `linalg.generic` each, broadcasting through its
      indexing maps (a size-1 dimension reads index 0); f16 and bf16 values
      are extended to f32 for the math and rounded back, as the dialect's
      f32-inside rule says; splat constants become scalars in the body;
    - reductions: a `linalg.generic` with reduction iterators into an f32
      accumulator, divided by the count for means, rounded back and, with
      `keep_dims`, reshaped with `tensor.expand_shape`;
    - `slice`: `tensor.extract_slice`; `transpose`: `linalg.transpose`;
    - `matmul`: a `linalg.generic` over batch, M, N and K with an f32
      accumulator (batch dimensions broadcast).

    A dynamic dimension is assumed not to broadcast at run time (only a
    static size 1 does), as in upstream's TOSA lowering.

    The public functions get `llvm.emit_c_interface`, so after bufferization
    and lowering they are callable as `_mlir_ciface_<name>`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"
  ];
}

def FusionDropOutputResults : Pass<"fusion-drop-output-results", "ModuleOp"> {
  let summary = "Drop returned buffers that are the function's own output "
                "arguments";
  let description = [{
    After bufferization, the destination-passing functions that
    `fusion-to-linalg` made still return their output buffers. This pass
    removes those results from every function (public ones included, unlike
    upstream `drop-equivalent-buffer-results`) and from their calls, so the
    C interface is `void f(inputs..., outputs...)`.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def FusionGuardSizes : Pass<"fusion-guard-sizes", "ModuleOp"> {
  let summary = "Check the recorded dynamic sizes at the entry of each "
                "lowered function";
  let description = [{
    Runs on destination-passing functions on buffers (inputs, then outputs),
    after `fusion-drop-output-results` on the CPU path and after
    `fusion-kernels-to-gpu` on the GPU path. For each check that
    `fusion-record-size-checks` left in `fusion.size_checks`, it compares
    the buffers' sizes at entry; each disagreement calls
    `fusion_size_mismatch(arg, dim, size, expected_arg, expected_dim,
    expected_size, num_inputs)` in the Fusion runtime (`expected_arg` -1 for
    a static size), and the function then returns without touching memory.
    The runtime keeps the first message for the caller (`fusion.cpu` and
    `fusion.cuda` raise it as a Python exception).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"
  ];
}

def FusionAttachNvvmTargets : Pass<"fusion-attach-nvvm-targets",
                                   "ModuleOp"> {
  let summary = "Give every gpu.module an NVVM target, sm_90a where its "
                "kernels use instructions only sm_90a has";
  let description = [{
    Upstream's `nvvm-attach-target` with one chip per module: a module whose
    kernels use `wgmma` (its MMAs, fences or waits) or `setmaxnreg` (the
    `matmul_wgmma` and `attention_tiles` strategies; a kernel with nothing
    to multiply keeps its register split and waits) is built for the
    architecture-specific `a` variant of `chip` (`sm_90` -> `sm_90a`), the
    only one with those instructions; every other module for `chip` as
    given. Modules that already have targets keep them.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "Target chip of modules without warpgroup MMA">,
    Option<"features", "features", "std::string", /*default=*/"\"+ptx80\"",
           "PTX features">,
    Option<"optLevel", "O", "int", /*default=*/"2", "Optimization level">
  ];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def FusionLaunchDependents : Pass<"fusion-launch-dependents", "ModuleOp"> {
  let summary = "Let each kernel's launch overlap the end of the kernel before "
                "it in the stream (programmatic dependent launch, sm_90 on)";
  let description = [{
    Runs after `fusion-attach-nvvm-targets`. In every `gpu.module` built for
    sm_90 or newer, each kernel begins with `griddepcontrol.wait` (nothing
    is read or written before the kernels before it in the stream have
    finished and their writes are visible) and then
    `griddepcontrol.launch_dependents` (the next kernel in the stream may
    be scheduled as soon as every block of this one has passed its wait),
    and the module gets the marker global `fusion_launch_dependents`. The
    CUDA runtime launches the kernels of a module with that marker as
    programmatic dependents
    (`CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`), so a launch
    and its blocks' start overlap the previous kernel instead of following
    its end. Kernels of other modules (older chips, older builds) launch as
    before. Since a kernel starts only once the grids before the previous
    one are done, a strategy may load inputs that no kernel of its function
    writes before its own wait; a kernel that already waits (such a
    strategy's) gets neither instruction and triggers itself after its
    wait. `fusion-to-nvvm{launch-dependents=true}` runs it; off by default
    until measured on the GPU.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect"
  ];
}

def FusionCountTraffic : Pass<"fusion-count-traffic", "ModuleOp"> {
  let summary = "Count, at run time, the bytes each kernel moves to and from "
                "its external buffers";
  let description = [{
    Runs on the CPU path after bufferization and `convert-linalg-to-loops`.
    In every outlined kernel function (`fusion.kernel_id`), each
    `memref.load` and `memref.store` whose buffer is (a view of) one of the
    function's arguments calls
    `fusion_traffic_record(kernel_id, address, bytes, is_write)` from the
    Fusion CPU runtime (`libfusion_cpu_runtime.so`). The runtime counts each
    distinct address once per kernel and direction, so the totals are the
    bytes a kernel must move through memory: the quantity `fusion-report`
    predicts. Temporary buffers inside a kernel are not counted.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def FusionKernelsToGPU : Pass<"fusion-kernels-to-gpu", "ModuleOp"> {
  let summary = "One GPU launch per fusion.kernel, with codegen by kind";
  let description = [{
    Rebuilds every public function on device buffers
    (`f(inputs..., outputs...)`, C interface) with one `gpu.launch` per
    `fusion.kernel`, named after the kernel. Intermediate results live in
    `gpu.alloc` buffers; results returned by the function are written
    straight into its output buffers.

    How each kernel runs is its plan (`#fusion.plan`, see
    `fusion-plan-kernels`); kernels without one are planned here with this
    pass's `chip`, `matmul-backend` and `max-row-elements`, and a plan
    written by hand is checked against the kernel. One strategy per plan
    carries it out, evaluating the kernel's ops per element in f32 and
    rounding to each op's element type as the CPU path does; f32 division
    is `div.full.f32` (full range, at most 2 ulp) rather than IEEE.

    - `elementwise`: a grid-stride loop, each thread taking vectors of the
      plan's width (`vector.load`/`vector.store`; a broadcast operand is one
      scalar load). Kernels of same-shape elementwise math run on buffers
      collapsed to 1-D, whole vectors then a scalar tail, for any size;
      others vectorize along the innermost dimension.
    - `rows`: a block per row (grid-stride over rows). Each reduction is a
      per-thread partial and a block-wide `gpu.all_reduce` (warp shuffles,
      then shared memory); its result is a per-row scalar for what follows.
      A row held in `registers` is loaded once; a `streamed` row (dynamic
      lengths included) is read by every pass. Full-row outputs are written
      by all threads in one last pass, per-row outputs by thread 0.
    - `cluster_rows`: as `rows`, the row split over a thread-block cluster
      of `cluster` blocks, which combine their partial reductions through
      distributed shared memory (`nvvm.mapa`) between cluster barriers;
      launched with `mgpuLaunchClusterKernel`.
    - `library_matmul`: the matmul on two inputs, then the epilogue
      `act(alpha * (A @ B) + C + bias)` that `matmul-epilogue=library` fuses,
      as a host call of the runtime's `fusion_cuda_matmul` (cuBLASLt), given
      the buffers as unranked memrefs; any M, N, K, broadcast batch
      dimensions as strided batched calls.
    - `matmul_wgmma`: a warpgroup per 128x128 output tile on sm_90 tensor
      cores (nvgpu): TMA loads into 128-byte-swizzled shared memory, four
      mbarrier stages, `nvgpu.warpgroup.mma` with f32 accumulators, and the
      epilogue evaluated on the accumulators (staged through shared memory)
      as vectors along N. Tensor maps are made on the host before the
      launch.
    - `matmul_tiles`: 16x16 output tiles, operand tiles staged in shared
      memory per K step, the epilogue on the accumulator.
    - `per_element`: a thread per output element, reductions as loops (what
      the planner gives kernels no other strategy takes).
  }];
  let options = [
    Option<"matmulBackend", "matmul-backend", "::mlir::fusion::MatmulBackend",
           /*default=*/"::mlir::fusion::MatmulBackend::automatic",
           "How matmul kernels run", "::mlir::fusion::matmulBackendValues()">,
    Option<"matmulTf32", "matmul-tf32", "bool", /*default=*/"false",
           "Library f32 matmuls may use TF32 tensor cores">,
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "Target GPU, for kernels without a plan">,
    Option<"maxRowElements", "max-row-elements", "int64_t",
           /*default=*/"32768",
           "Longest row one block holds, for kernels without a plan">,
    Option<"launchDependents", "launch-dependents", "bool",
           /*default=*/"false",
           "The kernels will launch as programmatic dependents "
           "(fusion-launch-dependents): a warp-specialized matmul_wgmma "
           "kernel loads its first stages of the function's inputs before "
           "it waits for the kernel before it">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect", "::mlir::ub::UBDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def ConvertTosaToFusion : Pass<"convert-tosa-to-fusion"> {
  let summary = "Rewrite the TOSA ops that map onto the fusion dialect";
  let description = [{
    The TOSA front end: on floating-point tensors, `tosa.add`, `sub`, `mul`
    (shift 0), `maximum`, `minimum`, `pow`, `negate` (zero points 0), `exp`,
    `log`, `tanh`, `sigmoid`, `rsqrt`, `reciprocal`, `abs`, `erf`, `cast`
    (between floats), `clamp` (as `max` then `min`), `greater`,
    `greater_equal`, `equal`, `select`, `reduce_sum`/`max`/`min` (the axis
    kept, as TOSA does), `slice` (constant start and size), `concat`
    (static sizes along the axis), `transpose`,
    `matmul` (zero points 0; operands converted to the result type when TOSA
    accumulates wider) and `const` become fusion ops. Anything else (integer
    or quantized tensors, reshapes, convolutions, ...) is left as it is with
    a remark naming the op and the reason, so a mixed module keeps working
    and the fusion passes fuse what was converted.

        fusion-opt model.mlir --convert-tosa-to-fusion --fusion-pipeline
  }];
  let dependentDialects = ["::mlir::fusion::FusionDialect"];
}

#endif // FUSION_CONVERSION_PASSES_TD
