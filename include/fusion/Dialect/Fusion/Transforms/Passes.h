//===- Passes.h - Transforms of the fusion dialect --------------*- C++ -*-===//

#ifndef FUSION_DIALECT_FUSION_TRANSFORMS_PASSES_H
#define FUSION_DIALECT_FUSION_TRANSFORMS_PASSES_H

#include "fusion/Dialect/Fusion/Analysis/KernelPlan.h"
#include "fusion/Dialect/Fusion/IR/FusionDialect.h"
#include "fusion/Dialect/Fusion/Transforms/KernelFusion.h"
#include "mlir/Pass/Pass.h"

#include <functional>

namespace mlir {
class RewritePatternSet;

namespace fusion {

#define GEN_PASS_DECL
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"

/// Which composite ops a decomposition leaves whole (an attention kernel's
/// softmax, for a strategy that computes it online); none when empty.
using KeepWhole = std::function<bool(Operation *)>;

/// Patterns rewriting rms_norm, layer_norm, softmax and logsumexp, and with
/// `elementwise` also gelu, silu and sigmoid, into primitive fusion ops
/// computed in f32, but for the ops `keepWhole` holds.
void populateDecomposePatterns(RewritePatternSet &patterns,
                               bool elementwise = true,
                               KeepWhole keepWhole = {});

#define GEN_PASS_REGISTRATION
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"

} // namespace fusion
} // namespace mlir

#endif // FUSION_DIALECT_FUSION_TRANSFORMS_PASSES_H
