//===- FusionOps.h - Operations of the fusion dialect -----------*- C++ -*-===//

#ifndef FUSION_DIALECT_FUSION_IR_FUSIONOPS_H
#define FUSION_DIALECT_FUSION_IR_FUSIONOPS_H

#include "fusion/Dialect/Fusion/IR/FusionDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "fusion/Dialect/Fusion/IR/FusionEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "fusion/Dialect/Fusion/IR/FusionAttrs.h.inc"

namespace mlir::fusion {

/// Numpy broadcast of `shapes` (trailing dimensions aligned). A dynamic
/// dimension against a static size n > 1 gives n. Fails when two static
/// sizes other than 1 differ.
FailureOr<SmallVector<int64_t>>
broadcastShapes(ArrayRef<ArrayRef<int64_t>> shapes);

/// The broadcast of the ranked tensor `types` with `elementType`. The types
/// must be broadcast-compatible (builders call this on verified input).
RankedTensorType getBroadcastResultType(ArrayRef<Type> types, Type elementType);

/// The type of reducing `type` over `axes` (assumed valid).
RankedTensorType getReducedType(RankedTensorType type, ArrayRef<int64_t> axes,
                                bool keepDims);

/// The axes of a reduce_* op; empty for any other op.
ArrayRef<int64_t> getReduceAxes(Operation *op);

/// A reduce_* op whose axes all have static size 1: it only reshapes.
bool isTrivialReduction(Operation *op);

/// Numpy broadcasting of an operand of `operandShape` in the index space
/// of `resultShape` (trailing dimensions aligned): for each operand
/// dimension, the result dimension whose index it reads, or std::nullopt
/// where it has size 1 against a larger size (it reads index 0). The one
/// definition both lowerings index by (matmul batch dimensions included).
SmallVector<std::optional<int64_t>>
getBroadcastSources(ArrayRef<int64_t> operandShape,
                    ArrayRef<int64_t> resultShape);

/// The indices of the dynamic dimensions of `shape`, in order (a
/// fusion.reshape keeps the k-th of its operand as the k-th of its result).
SmallVector<int64_t> getDynamicDims(ArrayRef<int64_t> shape);

/// The dimensions of `shape` grouped so that each group holds exactly one
/// dynamic dimension: the k-th group runs from the k-th dynamic dimension
/// to the next one (the first also takes the static dimensions before it).
/// Empty when no dimension is dynamic. A fusion.reshape of dynamic sizes
/// collapses its operand by these groups and expands the result by its own
/// (the k-th dynamic dimension of each is the same size).
SmallVector<SmallVector<int64_t, 2>>
groupByDynamicDims(ArrayRef<int64_t> shape);

/// A dimension of a tensor value.
struct DimRef {
  Value value;
  int64_t dim;
};

/// The dimensions that `op`'s shape rule makes equal, as pairs: each result
/// dimension with the operand dimension it takes its size from (not one
/// broadcast from a static 1), and operand dimensions that must agree
/// (matmul's K, a norm parameter and x's last dimension). Dynamic
/// dimensions never broadcast (docs/dialect.md), so the pairs hold at run
/// time for every valid call: the one rule for tracing a dynamic size to
/// the arguments, checking calls, and proving two index spaces equal.
SmallVector<std::pair<DimRef, DimRef>> getEqualDims(Operation *op);

/// How a reduce_* op combines elements: reduce_sum and reduce_mean add
/// (the mean then divides by the count), reduce_max and reduce_min take the
/// maximum and minimum (NaN-propagating, as torch does).
enum class ReductionCombiner { add, maximum, minimum };
ReductionCombiner getReductionCombiner(Operation *op);
/// The combiner's identity: 0, -inf or +inf.
double getReductionIdentity(ReductionCombiner combiner);

/// A reduce_* op that combines more than one element per result.
inline bool isRealReduction(Operation *op) {
  return !getReduceAxes(op).empty() && !isTrivialReduction(op);
}

/// Whether `op` is elementwise math: one result element from the operand
/// elements at the same (broadcast) index. Composite gelu, silu and
/// sigmoid count; `convert` too.
bool isElementwiseMath(Operation *op);

} // namespace mlir::fusion

#define GET_OP_CLASSES
#include "fusion/Dialect/Fusion/IR/FusionOps.h.inc"

#endif // FUSION_DIALECT_FUSION_IR_FUSIONOPS_H
