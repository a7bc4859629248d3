//===- RecordSizeChecks.cpp - The dynamic sizes a call must agree on ------===//

#include "fusion/Dialect/Fusion/Analysis/DynamicDims.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSIONRECORDSIZECHECKS
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {
struct RecordSizeChecksPass
    : fusion::impl::FusionRecordSizeChecksBase<RecordSizeChecksPass> {
  void runOnOperation() override {
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      if (!function.isPublic() || function.isExternal())
        continue;
      // A caller sizes its outputs from the inputs: a dynamic result size
      // that no input gives could not be allocated.
      auto sources = getResultSizeSources(function);
      for (auto [index, type] : llvm::enumerate(function.getResultTypes())) {
        auto tensor = dyn_cast<RankedTensorType>(type);
        for (int64_t d = 0; tensor && d < tensor.getRank(); ++d)
          if (tensor.isDynamicDim(d) && !sources[index][d]) {
            function.emitError("result ")
                << index << " dimension " << d
                << " is dynamic and no input dimension gives its size";
            return signalPassFailure();
          }
      }
      FunctionSizeChecks checks = getSizeChecks(function);
      if (checks.checks.empty())
        function->removeAttr(kSizeChecksAttrName);
      else
        function->setAttr(kSizeChecksAttrName,
                          encodeSizeChecks(&getContext(), checks));
    }
  }
};
} // namespace
