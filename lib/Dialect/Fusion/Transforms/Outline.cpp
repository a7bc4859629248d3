//===- Outline.cpp - One kernel per op ------------------------------------===//

#include "fusion/Dialect/Fusion/Transforms/KernelFusion.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSIONOUTLINE
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {
struct OutlinePass : fusion::impl::FusionOutlineBase<OutlinePass> {
  void runOnOperation() override {
    fuseFunctions(getOperation(), FusionOptions(), [](KernelFuser &) {});
  }
};
} // namespace
