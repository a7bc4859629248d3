//===- AttachNvvmTargets.cpp - NVVM targets, sm_90a where it is needed ----===//

#include "fusion/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSIONATTACHNVVMTARGETS
#include "fusion/Conversion/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {
/// Whether `module` uses instructions only the `a` variant of sm_90 has:
/// warpgroup MMA and its fences and waits, and setmaxnreg (a kernel left
/// without an MMA by a size of 0, such as attention over no keys, keeps
/// its register split: LLVM cannot select it for sm_90, found by
/// scripts/fuzz.py).
bool usesSm90aInstructions(gpu::GPUModuleOp module) {
  return module
      .walk([](Operation *op) {
        bool only90a =
            isa<NVVM::WgmmaMmaAsyncOp, NVVM::WgmmaFenceAlignedOp,
                NVVM::WgmmaGroupSyncAlignedOp, NVVM::WgmmaWaitGroupSyncOp,
                NVVM::SetMaxRegisterOp, nvgpu::WarpgroupMmaOp>(op);
        return only90a ? WalkResult::interrupt() : WalkResult::advance();
      })
      .wasInterrupted();
}

struct FusionAttachNvvmTargets
    : fusion::impl::FusionAttachNvvmTargetsBase<FusionAttachNvvmTargets> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    for (auto module : getOperation().getOps<gpu::GPUModuleOp>()) {
      if (module.getTargets())
        continue;
      std::string moduleChip = chip;
      if (usesSm90aInstructions(module) && StringRef(chip) == "sm_90")
        moduleChip += "a";
      auto target = NVVM::NVVMTargetAttr::get(
          context, optLevel, "nvptx64-nvidia-cuda", moduleChip, features);
      module.setTargetsAttr(ArrayAttr::get(context, {target}));
    }
  }
};
} // namespace
