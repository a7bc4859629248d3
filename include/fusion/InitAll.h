//===- InitAll.h - Register everything Fusion provides ----------*- C++ -*-===//
//
// One call each for a compiler that embeds Fusion.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_INITALL_H
#define FUSION_INITALL_H

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

} // namespace fusion

#endif // FUSION_INITALL_H
