//===- GpuTarget.cpp - What a kernel plan knows about a GPU ---------------===//

#include "fusion/Dialect/Fusion/Analysis/GpuTarget.h"

#include "llvm/ADT/StringRef.h"

using namespace mlir;
using namespace mlir::fusion;

FailureOr<GpuTarget> GpuTarget::fromChip(StringRef chip) {
  StringRef version = chip;
  if (!version.consume_front("sm_"))
    return failure();
  version.consume_back("a");
  unsigned number = 0;
  if (version.getAsInteger(10, number) || number < 50)
    return failure();
  GpuTarget target;
  target.chip = chip.str();
  // Thread-block clusters come with Hopper (sm_90).
  if (number < 90)
    target.maxClusterBlocks = 1;
  // Before Hopper, plans size grids for an A100 (108 multiprocessors).
  if (number < 90)
    target.multiprocessors = 108;
  // wgmma exists only in sm_90a: not in later families' PTX.
  target.warpgroupMma = number == 90;
  target.tensorCopies = number >= 90;
  return target;
}
