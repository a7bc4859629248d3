//===- DynamicDims.cpp - Where a dynamic size comes from ------------------===//

#include "fusion/Dialect/Fusion/Analysis/DynamicDims.h"

#include "fusion/Dialect/Fusion/IR/FusionOps.h"

using namespace mlir;
using namespace mlir::fusion;

std::optional<std::pair<Value, int64_t>> fusion::traceDynamicDim(Value value,
                                                                 int64_t dim) {
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (auto kernel = dyn_cast<KernelOp>(arg.getOwner()->getParentOp()))
        return std::make_pair(kernel.getInputs()[arg.getArgNumber()], dim);
      return std::make_pair(value, dim);
    }
    Operation *op = value.getDefiningOp();
    if (!isa<FusionDialect>(op->getDialect()))
      return std::make_pair(value, dim);
    int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
    auto inputDimOfReduction = [&](Value input, ArrayRef<int64_t> axes,
                                   bool keepDims) {
      if (keepDims)
        return dim;
      int64_t kept = -1;
      for (int64_t d = 0;; ++d)
        if (!llvm::is_contained(axes, d) && ++kept == dim)
          return d;
    };
    Value next;
    int64_t nextDim = dim;
    if (auto r = dyn_cast<ReduceSumOp>(op)) {
      next = r.getX();
      nextDim = inputDimOfReduction(next, r.getAxes(), r.getKeepDims());
    } else if (auto r = dyn_cast<ReduceMaxOp>(op)) {
      next = r.getX();
      nextDim = inputDimOfReduction(next, r.getAxes(), r.getKeepDims());
    } else if (auto r = dyn_cast<ReduceMinOp>(op)) {
      next = r.getX();
      nextDim = inputDimOfReduction(next, r.getAxes(), r.getKeepDims());
    } else if (auto r = dyn_cast<ReduceMeanOp>(op)) {
      next = r.getX();
      nextDim = inputDimOfReduction(next, r.getAxes(), r.getKeepDims());
    } else if (auto lse = dyn_cast<LogSumExpOp>(op)) {
      next = lse.getX();
      nextDim = inputDimOfReduction(next, {lse.getAxis()}, false);
    } else if (auto transpose = dyn_cast<TransposeOp>(op)) {
      next = transpose.getX();
      nextDim = transpose.getPermutation()[dim];
    } else if (auto matmul = dyn_cast<MatmulOp>(op)) {
      auto aRank = cast<RankedTensorType>(matmul.getA().getType()).getRank();
      auto bRank = cast<RankedTensorType>(matmul.getB().getType()).getRank();
      if (dim == rank - 2) {
        next = matmul.getA();
        nextDim = aRank - 2;
      } else if (dim == rank - 1) {
        next = matmul.getB();
        nextDim = bRank - 1;
      }
    }
    if (!next) {
      // Elementwise, slice, norms, softmax: the first operand that has the
      // (trailing-aligned) dimension dynamic; matmul batch dimensions too.
      for (Value operand : op->getOperands()) {
        auto type = cast<RankedTensorType>(operand.getType());
        int64_t i = dim - (rank - type.getRank());
        if (isa<MatmulOp>(op))
          i = dim - (rank - 2 - (type.getRank() - 2));
        if (i >= 0 && i < type.getRank() && type.isDynamicDim(i)) {
          next = operand;
          nextDim = i;
          break;
        }
      }
    }
    if (!next)
      return std::nullopt;
    value = next;
    dim = nextDim;
  }
}
