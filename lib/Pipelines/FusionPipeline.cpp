//===- FusionPipeline.cpp - From composite ops to fused kernels -----------===//

#include "fusion/Pipelines/Pipelines.h"

#include "fusion/Dialect/Fusion/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::fusion;

void fusion::buildFusionPipeline(OpPassManager &pm,
                                 const FusionPipelineOptions &options) {
  // Attention first, while its softmax is whole: merging neighbours never
  // forms it (the softmax needs whole rows of scores).
  if (options.attention != AttentionKernels::none) {
    FusionFuseAttentionOptions attention;
    attention.gpu = options.attention == AttentionKernels::gpu;
    attention.chip = options.chip;
    attention.emitRemarks = options.emitRemarks;
    pm.addPass(createFusionFuseAttention(attention));
  }

  // Primitive ops, with constants folded and duplicates merged, so the
  // fusion passes see the real dataflow.
  // Elementwise composites (gelu, silu, sigmoid) stay whole: they fuse like
  // any elementwise op, the lowerings expand them, and a library matmul
  // recognizes gelu as its epilogue.
  FusionDecomposeOptions decompose;
  decompose.elementwise = false;
  pm.addPass(createFusionDecompose(decompose));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Reshapes above the elementwise math before them, so that the math fuses
  // with what reads the reshape (only elementwise kernels fuse across one).
  pm.addPass(createFusionHoistReshapes());

  // Elementwise chains first: the reduction pass then merges whole chains
  // into row kernels, and sees the elementwise merges its own merges open.
  FusionFuseProducerConsumerOptions producerConsumer;
  producerConsumer.maxOps = options.maxOps;
  producerConsumer.maxParams = options.maxParams;
  producerConsumer.maxLiveValues = options.maxLiveValues;
  producerConsumer.maxRecomputeOps = options.maxRecomputeOps;
  producerConsumer.matmulEpilogue = options.matmulEpilogue;
  producerConsumer.maxRowElements = options.maxRowElements;
  producerConsumer.emitRemarks = false;
  pm.addPass(createFusionFuseProducerConsumer(producerConsumer));

  FusionFuseReductionsOptions reductions;
  reductions.maxOps = options.maxOps;
  reductions.maxParams = options.maxParams;
  reductions.maxLiveValues = options.maxLiveValues;
  reductions.maxRowElements = options.maxRowElements;
  reductions.maxRecomputeOps = options.maxRecomputeOps;
  reductions.matmulEpilogue = options.matmulEpilogue;
  // The last vertical pass sees the final edges: it explains them.
  reductions.emitRemarks = options.emitRemarks;
  pm.addPass(createFusionFuseReductions(reductions));

  if (options.horizontal) {
    FusionFuseHorizontalOptions horizontal;
    horizontal.maxOps = options.maxOps;
    horizontal.maxParams = options.maxParams;
    horizontal.maxLiveValues = options.maxLiveValues;
    pm.addPass(createFusionFuseHorizontal(horizontal));
  }

  // Copies of constants and converts that merging brought into one kernel.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void fusion::buildFusionKernels(OpPassManager &pm, bool fuse,
                                MatmulEpilogue matmulEpilogue,
                                AttentionKernels attention, StringRef chip) {
  if (fuse) {
    FusionPipelineOptions options;
    options.matmulEpilogue = matmulEpilogue;
    options.attention = attention;
    options.chip = chip.str();
    buildFusionPipeline(pm, options);
    return;
  }
  pm.addPass(createFusionDecompose());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createFusionOutline());
}

void fusion::registerFusionPipelines() {
  PassPipelineRegistration<FusionPipelineOptions>(
      "fusion-pipeline",
      "Decompose composite ops and fuse everything into fusion.kernel ops",
      buildFusionPipeline);
  registerFusionToCpuPipeline();
  registerFusionToNvvmPipeline();
}
