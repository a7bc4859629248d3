//===- Passes.h - Transforms of the fusion dialect --------------*- C++ -*-===//

#ifndef FUSION_DIALECT_FUSION_TRANSFORMS_PASSES_H
#define FUSION_DIALECT_FUSION_TRANSFORMS_PASSES_H

#include "fusion/Dialect/Fusion/Analysis/KernelPlan.h"
#include "fusion/Dialect/Fusion/IR/FusionDialect.h"
#include "fusion/Dialect/Fusion/Transforms/KernelFusion.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;

namespace fusion {

#define GEN_PASS_DECL
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"

/// Patterns rewriting rms_norm, layer_norm, softmax and logsumexp, and with
/// `elementwise` also gelu, silu and sigmoid, into primitive fusion ops
/// computed in f32; with `insideAttention`, also inside attention kernels
/// (for lowerings that compute them op by op).
void populateDecomposePatterns(RewritePatternSet &patterns,
                               bool elementwise = true,
                               bool insideAttention = true);

#define GEN_PASS_REGISTRATION
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"

} // namespace fusion
} // namespace mlir

#endif // FUSION_DIALECT_FUSION_TRANSFORMS_PASSES_H
