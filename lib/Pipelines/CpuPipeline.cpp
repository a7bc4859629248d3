//===- CpuPipeline.cpp - Fused kernels as loops, down to LLVM -------------===//

#include "fusion/Pipelines/Pipelines.h"

#include "fusion/Conversion/Passes.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::fusion;

/// One-shot bufferization across function boundaries; outputs stay
/// arguments (destination passing).
static void buildBufferization(OpPassManager &pm) {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createFusionDropOutputResults());
  bufferization::BufferDeallocationPipelineOptions deallocation;
  bufferization::buildBufferDeallocationPipeline(pm, deallocation);
  pm.addPass(createConvertBufferizationToMemRefPass());
}

void fusion::buildFusionToCpuPipeline(OpPassManager &pm,
                                      const FusionToCpuOptions &options) {
  // The sizes a call must agree on, checked at entry once lowered.
  pm.addPass(createFusionRecordSizeChecks());
  buildFusionKernels(pm, options.fuse, options.matmulEpilogue,
                     kCpuAttentionKernels);
  pm.addPass(createFusionToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  buildBufferization(pm);
  pm.addPass(createFusionGuardSizes());
  pm.addPass(createConvertLinalgToLoopsPass());
  if (options.countTraffic)
    pm.addPass(createFusionCountTraffic());

  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true; // bf16 rounding without a libgcc helper
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass()); // erf, tanh
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void fusion::registerFusionToCpuPipeline() {
  PassPipelineRegistration<FusionToCpuOptions>(
      "fusion-to-cpu",
      "Fusion ops to the LLVM dialect for the CPU: the same kernels as loops",
      buildFusionToCpuPipeline);
}
