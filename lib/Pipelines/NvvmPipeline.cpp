//===- NvvmPipeline.cpp - Fused kernels to NVVM, PTX and cubin ------------===//

#include "fusion/Pipelines/Pipelines.h"

#include "fusion/Conversion/Passes.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"

#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::fusion;

void fusion::buildFusionToNvvmPipeline(OpPassManager &pm,
                                       const FusionToNvvmOptions &options) {
  // The sizes a call must agree on, checked at entry once lowered.
  pm.addPass(createFusionRecordSizeChecks());
  buildFusionKernels(pm, options.fuse, options.matmulEpilogue);
  // The plan of every kernel for the chip: what the report counts and the
  // codegen carries out.
  FusionPlanKernelsOptions plan;
  plan.chip = options.chip;
  plan.matmulBackend = options.matmulBackend;
  pm.addPass(createFusionPlanKernels(plan));
  FusionKernelsToGPUOptions gpu;
  gpu.matmulBackend = options.matmulBackend;
  gpu.matmulTf32 = options.matmulTf32;
  gpu.chip = options.chip;
  pm.addPass(createFusionKernelsToGPU(gpu));
  pm.addPass(createFusionGuardSizes());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Canonicalization hoists constants out of the launches; put them back so
  // they stay constants in the kernels instead of becoming parameters.
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());

  // Upstream from here: outlining, NVVM, the binary, host code.
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip;
  // sm_90 needs PTX 7.8 or newer; CUDA 13's ptxas reads PTX 8.x.
  nvvm.cubinFeatures = "+ptx80";
  nvvm.cubinFormat = options.format;
  nvvm.optLevel = options.optLevel;
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
}

void fusion::registerFusionToNvvmPipeline() {
  PassPipelineRegistration<FusionToNvvmOptions>(
      "fusion-to-nvvm",
      "Fusion ops to GPU kernels embedded as PTX or cubin, and host code in "
      "the LLVM dialect",
      buildFusionToNvvmPipeline);
}
