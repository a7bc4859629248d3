//===- InPlace.cpp - Results that may overwrite an input ------------------===//

#include "fusion/Dialect/Fusion/Analysis/InPlace.h"

#include "fusion/Dialect/Fusion/Analysis/DynamicDims.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fusion;

/// Whether `kernel` reads each of its inputs at the index of every result
/// element it writes and nothing else: elementwise math throughout, each
/// op's result as large as the block argument it reads.
static bool readsOnlyAtResultIndex(KernelOp kernel, BlockArgument input) {
  if (kernel.getKind() != KernelKind::elementwise)
    return false;
  for (Operation &op : kernel.getBody().front().without_terminator())
    if (!isa<ConstantOp>(op) && !isElementwiseMath(&op))
      return false;
  auto inputType = cast<RankedTensorType>(input.getType());
  for (Operation *user : input.getUsers()) {
    if (isa<YieldOp>(user))
      return false; // the input itself is returned: another buffer
    auto resultType = cast<RankedTensorType>(user->getResult(0).getType());
    if (resultType.getShape() != inputType.getShape())
      return false;
  }
  return true;
}

SmallVector<std::pair<unsigned, unsigned>>
fusion::getInPlaceResults(FunctionOpInterface function) {
  SmallVector<std::pair<unsigned, unsigned>> pairs;
  Region &body = function.getFunctionBody();
  if (!body.hasOneBlock())
    return pairs;
  Block &block = body.front();
  Operation *ret = block.getTerminator();
  SizeClasses sizes(function);
  // The same size in every call, dynamic dimensions included.
  auto sameSizes = [&](Value a, Value b) {
    auto type = cast<RankedTensorType>(a.getType());
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d) && !sizes.areEqual({a, d}, {b, d}))
        return false;
    return true;
  };
  for (BlockArgument argument : block.getArguments()) {
    // The input's only reader: one kernel (it may take it twice).
    KernelOp reader;
    bool single = !argument.use_empty();
    for (OpOperand &use : argument.getUses()) {
      auto kernel = dyn_cast<KernelOp>(use.getOwner());
      if (!kernel || (reader && kernel != reader)) {
        single = false;
        break;
      }
      reader = kernel;
    }
    if (!single)
      continue;
    bool readable = true;
    for (OpOperand &use : argument.getUses())
      readable &= readsOnlyAtResultIndex(
          reader, reader.getBody().getArgument(use.getOperandNumber()));
    if (!readable)
      continue;
    // A result of that kernel of the input's type, returned once.
    for (OpOperand &returned : ret->getOpOperands()) {
      unsigned index = returned.getOperandNumber();
      Value value = returned.get();
      if (value.getDefiningOp() != reader ||
          value.getType() != argument.getType() || !sameSizes(argument, value))
        continue;
      if (llvm::count(ret->getOperands(), value) != 1)
        continue;
      pairs.emplace_back(argument.getArgNumber(), index);
    }
  }
  return pairs;
}
