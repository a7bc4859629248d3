//===- FuseHorizontal.cpp - Independent kernels share a launch ------------===//

#include "fusion/Dialect/Fusion/Transforms/KernelFusion.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSIONFUSEHORIZONTAL
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {
struct FuseHorizontalPass
    : fusion::impl::FusionFuseHorizontalBase<FuseHorizontalPass> {
  using Base::Base;

  void runOnOperation() override {
    FusionOptions options;
    options.maxOps = maxOps;
    options.maxParams = maxParams;
    options.maxLiveValues = maxLiveValues;
    fuseFunctions(getOperation(), options,
                  [&](KernelFuser &fuser) { fuser.fuseHorizontally(); });
  }
};
} // namespace
