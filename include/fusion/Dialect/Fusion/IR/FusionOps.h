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

} // namespace mlir::fusion

#define GET_OP_CLASSES
#include "fusion/Dialect/Fusion/IR/FusionOps.h.inc"

#endif // FUSION_DIALECT_FUSION_IR_FUSIONOPS_H
