//===- DynamicDims.h - Where a dynamic size comes from ----------*- C++ -*-===//

#ifndef FUSION_DIALECT_FUSION_ANALYSIS_DYNAMICDIMS_H
#define FUSION_DIALECT_FUSION_ANALYSIS_DYNAMICDIMS_H

#include "mlir/IR/Value.h"

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

} // namespace mlir::fusion

#endif // FUSION_DIALECT_FUSION_ANALYSIS_DYNAMICDIMS_H
