//===- FuseProducerConsumer.cpp - Vertical elementwise fusion -------------===//

#include "fusion/Dialect/Fusion/Transforms/KernelFusion.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSIONFUSEPRODUCERCONSUMER
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {
struct FuseProducerConsumerPass
    : fusion::impl::FusionFuseProducerConsumerBase<FuseProducerConsumerPass> {
  using Base::Base;

  void runOnOperation() override {
    FusionOptions options;
    options.maxOps = maxOps;
    options.maxParams = maxParams;
    options.maxLiveValues = maxLiveValues;
    options.maxRecomputeOps = maxRecomputeOps;
    options.matmulEpilogue = matmulEpilogue;
    options.maxRowElements = maxRowElements;
    recordFusionOptions(getOperation(), options);
    fuseFunctions(getOperation(), options, [&](KernelFuser &fuser) {
      fuser.fuseVertically(FusionRules::ProducerConsumer);
      if (emitRemarks)
        fuser.emitRemarks(FusionRules::ProducerConsumer);
    });
  }
};
} // namespace
