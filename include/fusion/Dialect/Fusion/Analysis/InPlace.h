//===- InPlace.h - Results that may overwrite an input ----------*- C++ -*-===//
//
// A caller that replaces an input by a result (an optimizer step updating
// its parameters, a residual stream updated in place) can have the result
// written straight into the input's buffer when no element of the input is
// read after the element of the result at the same index is written. The
// analysis proves that only for the simplest case, one elementwise kernel
// that is the input's only reader; anything else keeps separate buffers.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_DIALECT_FUSION_ANALYSIS_INPLACE_H
#define FUSION_DIALECT_FUSION_ANALYSIS_INPLACE_H

#include "mlir/Interfaces/FunctionInterfaces.h"

#include <utility>

namespace mlir::fusion {

/// Pairs (input, result) of `function`, whose body the fusion passes have
/// grouped into fusion.kernel ops, such that the result may be written into
/// the input's buffer: the input has the result's type and is read only by
/// the `elementwise` kernel that yields the result, whose body is
/// elementwise math alone, reading the input at every result index once
/// (never broadcast), so each element is read before the same thread writes
/// it. All such pairs: a caller writing several results in place picks
/// pairs with distinct inputs and results.
SmallVector<std::pair<unsigned, unsigned>>
getInPlaceResults(FunctionOpInterface function);

} // namespace mlir::fusion

#endif // FUSION_DIALECT_FUSION_ANALYSIS_INPLACE_H
