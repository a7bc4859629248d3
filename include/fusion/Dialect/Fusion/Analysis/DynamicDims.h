//===- DynamicDims.h - Where a dynamic size comes from ----------*- C++ -*-===//
//
// Both analyses follow getEqualDims (FusionOps.h), the op semantics' one
// statement of which dimensions have equal sizes.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_DIALECT_FUSION_ANALYSIS_DYNAMICDIMS_H
#define FUSION_DIALECT_FUSION_ANALYSIS_DYNAMICDIMS_H

#include "fusion/Dialect/Fusion/IR/FusionOps.h"

#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <utility>

namespace mlir::fusion {

/// Where dynamic dimension `dim` of the fusion value `value` comes from: a
/// value defined outside the kernel being traced (a kernel input is mapped to
/// the kernel's operand) or a non-fusion value, and its dimension. Follows
/// each op's shape rule back to its operands; nullopt if no operand carries
/// the size.
std::optional<std::pair<Value, int64_t>> traceDynamicDim(Value value,
                                                         int64_t dim);

/// The dimensions of the tensors under `root` (a function) partitioned into
/// classes whose sizes are equal at run time in every valid call: the
/// closure of getEqualDims over every op, a kernel's operands with its block
/// arguments and its results with what its body yields. A class may hold
/// static dimensions, which give it its size.
class SizeClasses {
public:
  explicit SizeClasses(Operation *root);

  /// The class of `ref` (a class of its own for a dimension never seen).
  unsigned getClass(DimRef ref);
  /// The static size of `ref`'s class, if any of its dimensions is static.
  std::optional<int64_t> getStaticSize(DimRef ref);
  /// Whether `a` and `b` have the same size in every valid call.
  bool areEqual(DimRef a, DimRef b);

private:
  unsigned idOf(DimRef ref);
  unsigned find(unsigned id);
  void unite(DimRef a, DimRef b);

  llvm::DenseMap<std::pair<Value, int64_t>, unsigned> ids;
  SmallVector<unsigned> parent;
  /// Per class root: its static size, or -1.
  SmallVector<int64_t> staticSize;
};

/// The run-time size checks of a public function: one per class of its
/// argument and result dimensions that has a dynamic member and either a
/// second member or a static size. Arguments are numbered inputs first,
/// then results (the destination-passing order of the lowered function).
struct SizeCheck {
  /// The size all members must have, or -1 where the first member gives it.
  int64_t staticSize = -1;
  /// (argument, dimension) of each member.
  SmallVector<std::pair<int64_t, int64_t>> members;
};
struct FunctionSizeChecks {
  /// Arguments below this number are inputs, the others results.
  int64_t numInputs = 0;
  SmallVector<SizeCheck> checks;
};
FunctionSizeChecks getSizeChecks(Operation *function);

/// The attribute fusion-record-size-checks leaves on a function.
constexpr llvm::StringLiteral kSizeChecksAttrName = "fusion.size_checks";
/// `checks` as that attribute: {inputs = N, checks = [array<i64: size,
/// arg, dim, arg, dim, ...>, ...]}.
Attribute encodeSizeChecks(MLIRContext *context,
                           const FunctionSizeChecks &checks);
/// The checks in `attr`; failure if it is not such an attribute.
FailureOr<FunctionSizeChecks> decodeSizeChecks(Attribute attr);

/// For each result of a function and each of its dimensions: the (input,
/// dimension) a dynamic size is taken from (the first input dimension of
/// its class), nullopt for a static dimension or where no input gives it.
SmallVector<SmallVector<std::optional<std::pair<int64_t, int64_t>>>>
getResultSizeSources(Operation *function);

} // namespace mlir::fusion

#endif // FUSION_DIALECT_FUSION_ANALYSIS_DYNAMICDIMS_H
