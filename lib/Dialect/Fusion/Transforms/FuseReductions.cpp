//===- FuseReductions.cpp - Row reductions with their neighbours ----------===//

#include "fusion/Dialect/Fusion/Transforms/KernelFusion.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"

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
    options.matmulEpilogue = matmulEpilogue;
    recordFusionOptions(getOperation(), options);
    fuseFunctions(getOperation(), options, [&](KernelFuser &fuser) {
      fuser.fuseVertically(FusionRules::Reductions);
      // Siblings over the same rows share a kernel, which can open new
      // vertical merges.
      fuser.fuseHorizontally(/*siblingReductionsOnly=*/true);
      fuser.fuseVertically(FusionRules::Reductions);
      if (emitRemarks)
        fuser.emitRemarks(FusionRules::Reductions);
    });
  }
};
} // namespace
