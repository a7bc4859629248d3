//===- InitAll.h - Register everything Fusion provides ----------*- C++ -*-===//
//
// One call each for a compiler that embeds Fusion.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_INITALL_H
#define FUSION_INITALL_H

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace fusion {

/// Adds the fusion dialect to `registry`.
void registerDialects(mlir::DialectRegistry &registry);

/// Registers Fusion's passes with the global pass registry (for textual
/// pipelines and `*-opt` command lines).
void registerPasses();

/// Registers Fusion's pass pipelines (`fusion-pipeline`).
void registerPipelines();

/// Points the NVVM target at /usr/local/cuda (libdevice, ptxas) when none of
/// CUDA_HOME, CUDA_ROOT, CUDA_PATH is set and that directory exists, as nvcc
/// would. For tools; call before any pass runs.
void setDefaultCudaPath();

/// Input the MLIR 22 parser crashes on instead of diagnosing: dense arrays
/// of `index` (`array<index: ...>`, llvm/llvm-project#179045, fixed after
/// 22.1), and uses of a huge result number (`%0#2147483648`, which runs it
/// out of memory). Reports each such spot of the main buffer of
/// `sourceMgr` as an error, as the parser would have; true if there is
/// one. For tools; call before parsing.
bool reportKnownParserCrashes(llvm::SourceMgr &sourceMgr);

} // namespace fusion

#endif // FUSION_INITALL_H
