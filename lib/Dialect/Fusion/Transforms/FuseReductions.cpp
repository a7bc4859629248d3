//===- FuseReductions.cpp - Row reductions with their neighbours ----------===//

#include "fusion/Dialect/Fusion/Transforms/KernelFusion.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSIONFUSEREDUCTIONS
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {
struct FuseReductionsPass
    : fusion::impl::FusionFuseReductionsBase<FuseReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    FusionOptions options;
    options.maxOps = maxOps;
    options.maxParams = maxParams;
    options.maxLiveValues = maxLiveValues;
    options.maxRowElements = maxRowElements;
    options.maxRecomputeOps = maxRecomputeOps;
    // Functions anywhere below the anchor: the pass runs on a module as
    // well as on one function.
    getOperation()->walk([&](FunctionOpInterface function) {
      for (Block &block : function.getFunctionBody()) {
        KernelFuser fuser(block, options);
        fuser.outline();
        fuser.fuseVertically(FusionRules::Reductions);
        // Siblings over the same rows share a kernel, which can open new
        // vertical merges.
        fuser.fuseHorizontally(/*siblingReductionsOnly=*/true);
        fuser.fuseVertically(FusionRules::Reductions);
        fuser.nameKernels(function.getName());
        if (emitRemarks)
          fuser.emitRemarks(FusionRules::Reductions);
      }
    });
  }
};
} // namespace
