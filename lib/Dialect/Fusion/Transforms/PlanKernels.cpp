//===- PlanKernels.cpp - A GPU kernel plan on every fusion.kernel ---------===//

#include "fusion/Dialect/Fusion/Analysis/KernelPlan.h"
#include "fusion/Dialect/Fusion/Analysis/LibraryMatmul.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSIONPLANKERNELS
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {
struct PlanKernelsPass : fusion::impl::FusionPlanKernelsBase<PlanKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<GpuTarget> target = GpuTarget::fromChip(chip);
    if (failed(target)) {
      // Located at the module, without printing it.
      mlir::emitError(getOperation()->getLoc(),
                      "fusion-plan-kernels: unknown chip '")
          << chip << "' (expected sm_<version>, such as sm_90)";
      return signalPassFailure();
    }
    PlanOptions options;
    options.target = *target;
    options.matmulBackend = matmulBackend;
    options.maxRowElements = maxRowElements;
    options.measuredRowPlans = measuredRowPlans;
    WalkResult result = getOperation()->walk([&](KernelOp kernel) {
      if (KernelPlanAttr plan = kernel.getPlanAttr()) {
        std::string misfit = checkPlan(kernel, plan, *target);
        if (misfit.empty())
          return WalkResult::advance();
        kernel.emitOpError("plan does not fit: ") << misfit;
        return WalkResult::interrupt();
      }
      std::string fallback;
      KernelPlanAttr plan = planKernel(kernel, options, &fallback);
      if (kernel.getKind() == KernelKind::matmul &&
          matmulBackend == MatmulBackend::library &&
          plan.getStrategy() != KernelStrategy::library_matmul) {
        std::string reason;
        (void)matchLibraryMatmul(kernel, &reason);
        kernel.emitOpError("is not one library call (matmul-backend=library): ")
            << reason << "; matmul-backend=auto runs it as a generated kernel";
        return WalkResult::interrupt();
      }
      kernel.setPlanAttr(plan);
      // Under auto, a matmul kernel the library does not take is generated:
      // say what the library lacks.
      if (emitRemarks && kernel.getKind() == KernelKind::matmul &&
          matmulBackend == MatmulBackend::automatic &&
          plan.getStrategy() != KernelStrategy::library_matmul) {
        std::string reason;
        (void)matchLibraryMatmul(kernel, &reason);
        kernel.emitRemark("[plan] runs ")
            << stringifyKernelStrategy(plan.getStrategy())
            << ", not the library: " << reason;
      }
      // Columns read element by element though the target loads wider
      // vectors: say why they are not read over segments of rows.
      if (emitRemarks && plan.getStrategy() == KernelStrategy::columns &&
          plan.getVector() == 1) {
        std::string ignored;
        int64_t lanes = getVectorLanes(kernel, *target);
        FailureOr<ReductionKernelShape> columns =
            getReductionKernelShape(kernel, ignored);
        std::string why = lanes > 1 && succeeded(columns)
                              ? whyNotColumnSegments(kernel, *columns, lanes)
                              : "";
        if (!why.empty())
          kernel.emitRemark("[plan] columns read element by element, not "
                            "over segments of rows: ")
              << why;
      }
      if (emitRemarks && !fallback.empty() &&
          (plan.getStrategy() == KernelStrategy::per_element ||
           plan.getStrategy() == KernelStrategy::matmul_tiles))
        kernel.emitRemark("[plan] runs ")
            << stringifyKernelStrategy(plan.getStrategy()) << ": " << fallback;
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
