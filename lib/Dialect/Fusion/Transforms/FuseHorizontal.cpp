//===- FuseHorizontal.cpp - Independent kernels share a launch ------------===//

#include "fusion/Dialect/Fusion/Transforms/KernelFusion.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

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
    // Functions anywhere below the anchor: the pass runs on a module as
    // well as on one function.
    getOperation()->walk([&](FunctionOpInterface function) {
      for (Block &block : function.getFunctionBody()) {
        KernelFuser fuser(block, options);
        fuser.outline();
        fuser.fuseHorizontally();
        fuser.nameKernels(function.getName());
      }
    });
  }
};
} // namespace
