//===- NvvmPipeline.cpp - Fused kernels to NVVM, PTX and cubin ------------===//

#include "fusion/Pipelines/Pipelines.h"

#include "fusion/Conversion/Passes.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/OptimizeForNVVM.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::fusion;

void fusion::buildFusionToNvvmPipeline(OpPassManager &pm,
                                       const FusionToNvvmOptions &options) {
  // The sizes a call must agree on, checked at entry once lowered.
  pm.addPass(createFusionRecordSizeChecks());
  buildFusionKernels(pm, options.fuse, options.matmulEpilogue,
                     kGpuAttentionKernels, options.chip);
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
  gpu.launchDependents = options.launchDependents;
  pm.addPass(createFusionKernelsToGPU(gpu));
  pm.addPass(createFusionGuardSizes());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Canonicalization hoists constants out of the launches; put them back so
  // they stay constants in the kernels instead of becoming parameters.
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());

  // Upstream's gpu-lower-to-nvvm-pipeline from here (outlining, NVVM, the
  // binary, host code), its passes in its order, but for the targets: each
  // module gets its own chip (sm_90a where it uses warpgroup MMA).
  pm.addPass(createConvertNVGPUToNVVMPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  FusionAttachNvvmTargetsOptions targets;
  targets.chip = options.chip;
  // sm_90 needs PTX 7.8 or newer; CUDA 13's ptxas reads PTX 8.x.
  targets.features = "+ptx80";
  targets.optLevel = options.optLevel;
  pm.addPass(createFusionAttachNvvmTargets(targets));
  if (options.launchDependents)
    pm.addPass(createFusionLaunchDependents());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(createStripDebugInfoPass());
  device.addPass(createConvertGpuOpsToNVVMOps());
  device.addPass(LLVM::createNVVMOptimizeForTargetPass());
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createReconcileUnrealizedCastsPass());

  pm.addPass(createGpuToLLVMConversionPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void fusion::registerFusionToNvvmPipeline() {
  PassPipelineRegistration<FusionToNvvmOptions>(
      "fusion-to-nvvm",
      "Fusion ops to GPU kernels embedded as PTX or cubin, and host code in "
      "the LLVM dialect",
      buildFusionToNvvmPipeline);
}
