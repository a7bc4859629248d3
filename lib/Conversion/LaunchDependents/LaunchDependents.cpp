//===- LaunchDependents.cpp - Kernels that overlap their launches ---------===//
//
// Programmatic dependent launch: a kernel launched with the runtime's
// programmatic stream serialization may start once every block of the
// kernel before it has executed `griddepcontrol.launch_dependents`, and
// `griddepcontrol.wait` holds it until that kernel has finished and its
// writes are visible. Both at a kernel's entry, the wait first, keep every
// kernel's reads and writes in stream order while the launch, the block
// scheduling and the kernel's prologue overlap the previous kernel's last
// blocks; a kernel starts only once the grids before the previous one are
// done, so it may read what none of its function's kernels writes before
// its wait (KernelBuffers::settled).
//
//===----------------------------------------------------------------------===//

#include "fusion/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSIONLAUNCHDEPENDENTS
#include "fusion/Conversion/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {
/// The global whose presence tells the CUDA runtime (CudaRuntime.cpp) that
/// the module's kernels wait for the grids before them.
constexpr llvm::StringLiteral kMarker = "fusion_launch_dependents";

/// Whether every target of `module` is an NVVM chip with `griddepcontrol`
/// (sm_90 and newer).
bool hasGridDependencyControl(gpu::GPUModuleOp module) {
  ArrayAttr targets = module.getTargetsAttr();
  if (!targets || targets.empty())
    return false;
  return llvm::all_of(targets, [](Attribute attr) {
    auto target = dyn_cast<NVVM::NVVMTargetAttr>(attr);
    if (!target)
      return false;
    StringRef chip = target.getChip();
    unsigned version = 0;
    if (!chip.consume_front("sm_"))
      return false;
    // "90a", "100f": the number ahead of the suffix.
    chip = chip.take_while([](char c) { return llvm::isDigit(c); });
    return !chip.getAsInteger(10, version) && version >= 90;
  });
}

struct FusionLaunchDependents
    : fusion::impl::FusionLaunchDependentsBase<FusionLaunchDependents> {
  using Base::Base;

  void runOnOperation() override {
    for (auto module : getOperation().getOps<gpu::GPUModuleOp>()) {
      if (!hasGridDependencyControl(module))
        continue;
      bool anyKernel = false;
      for (auto kernel : module.getOps<gpu::GPUFuncOp>()) {
        if (!kernel.isKernel() || kernel.getBody().empty())
          continue;
        anyKernel = true;
        // A kernel that waits itself (after loading inputs no grid before
        // it writes: emitGridDependencyWait) also triggers itself.
        bool waits = kernel
                         .walk([](NVVM::GriddepcontrolOp op) {
                           return op.getKind() == NVVM::GridDepActionKind::wait
                                      ? WalkResult::interrupt()
                                      : WalkResult::advance();
                         })
                         .wasInterrupted();
        if (waits)
          continue;
        // Triggering only once the grids before are done lets the next
        // kernel read inputs that no kernel of its function writes before
        // its own wait.
        Location loc = kernel.getLoc();
        auto builder = OpBuilder::atBlockBegin(&kernel.getBody().front());
        NVVM::GriddepcontrolOp::create(builder, loc,
                                       NVVM::GridDepActionKind::wait);
        NVVM::GriddepcontrolOp::create(
            builder, loc, NVVM::GridDepActionKind::launch_dependents);
      }
      if (!anyKernel || module.lookupSymbol(kMarker))
        continue;
      auto builder = OpBuilder::atBlockBegin(module.getBody());
      auto i8 = builder.getI8Type();
      LLVM::GlobalOp::create(builder, module.getLoc(), i8, /*isConstant=*/true,
                             LLVM::Linkage::External, kMarker,
                             builder.getI8IntegerAttr(1));
    }
  }
};
} // namespace
