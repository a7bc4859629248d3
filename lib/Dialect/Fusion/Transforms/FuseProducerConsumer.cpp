//===- FuseProducerConsumer.cpp - Vertical elementwise fusion -------------===//

#include "fusion/Dialect/Fusion/Transforms/KernelFusion.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

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
    // Functions anywhere below the anchor: the pass runs on a module as
    // well as on one function.
    getOperation()->walk([&](FunctionOpInterface function) {
      for (Block &block : function.getFunctionBody()) {
        KernelFuser fuser(block, options);
        fuser.outline();
        fuser.fuseVertically(FusionRules::ProducerConsumer);
        fuser.nameKernels(function.getName());
        if (emitRemarks)
          fuser.emitRemarks(FusionRules::ProducerConsumer);
      }
    });
  }
};
} // namespace
