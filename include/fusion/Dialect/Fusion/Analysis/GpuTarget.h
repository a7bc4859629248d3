//===- GpuTarget.h - What a kernel plan knows about a GPU -------*- C++ -*-===//
//
// The limits of a GPU that kernel plans respect, built from a chip name
// (`sm_90`, as the NVVM pipeline's `chip` option takes it). Only what a
// plan reads is here; more limits join as strategies need them.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_DIALECT_FUSION_ANALYSIS_GPUTARGET_H
#define FUSION_DIALECT_FUSION_ANALYSIS_GPUTARGET_H

#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::fusion {

struct GpuTarget {
  std::string chip = "sm_90";
  int64_t maxThreadsPerBlock = 1024;
  /// Blocks of a thread-block cluster that every launch may ask for (the
  /// portable size; 1 where the chip has no clusters).
  int64_t maxClusterBlocks = 8;
  /// Bytes of the widest global load or store of one thread.
  int64_t vectorBytes = 16;
  /// Streaming multiprocessors: how many blocks a launch needs to fill the
  /// chip (132 on the H100 SXM and the H200; what plans size grids by).
  int64_t multiprocessors = 132;
  /// Warpgroup MMA (wgmma) and TMA: sm_90, whose kernels using them are
  /// built for sm_90a (the architecture-specific variant that has them).
  bool warpgroupMma = true;
  /// TMA: tensor copies from global into shared memory by the copy engine,
  /// completing on mbarriers (sm_90 and later).
  bool tensorCopies = true;

  /// The target of `chip` (`sm_<major><minor>`, optionally with an `a`
  /// suffix); failure for anything else.
  static FailureOr<GpuTarget> fromChip(StringRef chip);
};

} // namespace mlir::fusion

#endif // FUSION_DIALECT_FUSION_ANALYSIS_GPUTARGET_H
