//===- KernelFusion.h - Grouping fusion ops into kernels --------*- C++ -*-===//
//
// The mechanism shared by the three fusion passes. Every compute op first
// becomes a one-op fusion.kernel; fusing is then merging a producer kernel
// into a consumer kernel (vertical) or two independent kernels (horizontal).
// What may merge is decided by one policy (FusionRules + FusionOptions); the
// passes only choose the rules.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_DIALECT_FUSION_TRANSFORMS_KERNELFUSION_H
#define FUSION_DIALECT_FUSION_TRANSFORMS_KERNELFUSION_H

#include "fusion/Dialect/Fusion/IR/FusionOps.h"

#include "llvm/Support/CommandLine.h"

#include <string>

namespace mlir::fusion {

/// Which elementwise consumers of a matmul join its kernel as an epilogue.
enum class MatmulEpilogue {
  /// None: the matmul is a fusion boundary.
  none,
  /// What a library call computes on its accumulator (LibraryMatmul.h):
  /// scale, residual add, row bias, relu or tanh-gelu. Never moves more
  /// bytes than leaving them out, and every matmul backend runs it.
  library,
  /// Any elementwise chain of the product's shape, and elementwise math on
  /// an operand that only the matmul reads (a prologue): generated kernels.
  any,
};

/// The values of a `matmul-epilogue` option.
inline auto matmulEpilogueValues() {
  return llvm::cl::values(
      clEnumValN(MatmulEpilogue::none, "none",
                 "none: matmul is a fusion boundary"),
      clEnumValN(MatmulEpilogue::library, "library",
                 "what a library call computes (scale, residual, row bias, "
                 "relu, tanh-gelu)"),
      clEnumValN(MatmulEpilogue::any, "any",
                 "any elementwise chain of the product's shape, and "
                 "elementwise prologues on its operands (generated "
                 "kernels)"));
}

/// Which attentions become `attention` kernels (fusion-fuse-attention).
enum class AttentionKernels {
  /// None: attention stays its products and softmax.
  none,
  /// Every attention (the CPU computes any op by op).
  all,
  /// Those a GPU strategy runs (KernelPlan.h, whyNotAttentionRows).
  gpu,
};

/// The values of an `attention` option.
inline auto attentionKernelsValues() {
  return llvm::cl::values(
      clEnumValN(AttentionKernels::none, "none",
                 "none: attention stays its products and softmax"),
      clEnumValN(AttentionKernels::all, "all", "every attention"),
      clEnumValN(AttentionKernels::gpu, "gpu",
                 "the attentions a GPU strategy runs (attention_rows)"));
}

/// Budgets and switches of the fusion policy. The defaults suit an H200.
struct FusionOptions {
  /// Compute ops in one kernel.
  int64_t maxOps = 128;
  /// Kernel parameters: inputs plus results.
  int64_t maxParams = 32;
  /// Estimated values live at once per thread (a register estimate).
  int64_t maxLiveValues = 64;
  /// Longest row a row_reduction kernel keeps on chip; longer rows become a
  /// wide_row plan split over several blocks.
  int64_t maxRowElements = 32768;
  /// Largest producer (in ops) that may be recomputed in each consumer
  /// instead of being written once.
  int64_t maxRecomputeOps = 8;
  /// Elementwise ops that join a matmul: its epilogue, and with `any` its
  /// operands' prologues.
  MatmulEpilogue matmulEpilogue = MatmulEpilogue::library;
};

/// Which merges a pass performs.
enum class FusionRules {
  /// Elementwise and injective ops with each other (and matmul epilogues).
  ProducerConsumer,
  /// The above, plus reductions with their producers, consumers and
  /// siblings over the same rows.
  Reductions,
};

/// Groups the compute ops of one block into fusion.kernel ops.
class KernelFuser {
public:
  KernelFuser(Block &block, const FusionOptions &options)
      : block(block), options(options) {}

  /// Wraps every compute op not yet in a kernel into a one-op kernel (splat
  /// constants are cloned in; other constants stay outside as inputs).
  void outline();

  /// Merges producers into consumers greedily, consumers first, until
  /// nothing changes; under `matmul-epilogue=library`, each matmul first
  /// takes the epilogue ops a library call computes. A producer with several
  /// consumers joins one of them (its value written once for the others) or is
  /// recomputed in each, whichever moves fewer bytes.
  void fuseVertically(FusionRules rules);

  /// Merges independent kernels with the same iteration space into
  /// multi-output kernels. With `siblingReductionsOnly`, only row kernels
  /// that read a common input (sibling reductions over the same rows).
  void fuseHorizontally(bool siblingReductionsOnly = false);

  /// Names kernels `<prefix>_k<i>` in block order.
  void nameKernels(StringRef prefix);

  /// A remark on the producing op of every kernel-to-kernel edge left,
  /// naming the consumer and the reason (`[cycle]`, `[budget]`, ...).
  void emitRemarks(FusionRules rules);

  /// Why the edge from `producer` into `consumer` is left between kernels:
  /// "[code] detail", as the remarks say it.
  std::string explainEdge(KernelOp producer, KernelOp consumer,
                          FusionRules rules);

private:
  /// The kind a merge of `producer` into `consumer` gets, or failure with a
  /// reason "[code] detail" in `reason`.
  FailureOr<KernelKind> classify(KernelOp producer, KernelOp consumer,
                                 FusionRules rules, std::string &reason);
  /// Why `producer` cannot join `consumer` given the other users of its
  /// results; empty when it can, with the merged kind in `kind`. With
  /// `privateCopy`, asks the same for a copy of the producer that only
  /// `consumer` uses.
  std::string checkMerge(KernelOp producer, KernelOp consumer,
                         FusionRules rules, KernelKind &kind,
                         bool privateCopy = false);
  /// Why a matmul kernel did not take `consumer`'s op as a library
  /// epilogue.
  std::string explainLibraryEpilogueEdge(KernelOp producer, KernelOp consumer);
  /// Whether a use of `producer` by an op other than `consumer` reaches
  /// `consumer`.
  bool reachesThroughOthers(KernelOp producer, KernelOp consumer);
  /// Grows every matmul kernel by the chain of one-op consumers that a
  /// library call computes as its epilogue (before other merges take them).
  void fuseLibraryEpilogues();
  /// Takes into every library matmul kernel the one-op kernels that only
  /// transpose its operands' last two dimensions (the library reads them
  /// with op = T, so the transpose is never written).
  void fuseLibraryOperandLayouts();
  /// Tries to fuse `producer` into its consumers; true if the IR changed.
  bool fuseProducer(KernelOp producer, FusionRules rules);

  Block &block;
  const FusionOptions &options;
};

/// Runs `fuse` with a KernelFuser on every block of every function below
/// `root` (after outlining its compute ops), then names the kernels.
void fuseFunctions(Operation *root, const FusionOptions &options,
                   function_ref<void(KernelFuser &)> fuse);

/// The vertical fusion passes record the budgets they decided with on each
/// function (`fusion.budgets`), so that tools explaining the decisions
/// afterwards (fusion-view) give the reasons of that run, not of their own
/// defaults. `readFusionOptions` returns `defaults` where nothing was
/// recorded.
void recordFusionOptions(Operation *root, const FusionOptions &options);
FusionOptions readFusionOptions(Operation *function,
                                const FusionOptions &defaults);
/// Drops the recorded budgets below `root` (the lowerings do: nothing of
/// the fusion dialect outlives them).
void eraseFusionOptions(Operation *root);

} // namespace mlir::fusion

#endif // FUSION_DIALECT_FUSION_TRANSFORMS_KERNELFUSION_H
