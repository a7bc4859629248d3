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

} // namespace fusion

#endif // FUSION_INITALL_H
