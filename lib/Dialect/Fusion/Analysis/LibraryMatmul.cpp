//===- LibraryMatmul.cpp - Matmul kernels a BLAS library can run ----------===//

#include "fusion/Dialect/Fusion/Analysis/LibraryMatmul.h"

#include "fusion/Dialect/Fusion/Analysis/KernelPlan.h"
#include "fusion/Dialect/Fusion/Analysis/Traffic.h"

using namespace mlir;
using namespace mlir::fusion;

static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

/// Whether `shape` is one row broadcast over the rows of `product`: [N],
/// [1, N], [1, 1, N], ... with N the product's column count.
static bool isRowOf(ArrayRef<int64_t> shape, ArrayRef<int64_t> product) {
  if (shape.empty() || shape.size() > product.size() ||
      shape.back() != product.back())
    return false;
  return llvm::all_of(shape.drop_back(), [](int64_t d) { return d == 1; });
}

std::string LibraryEpilogue::extend(Operation *op, Value current,
                                    function_ref<bool(Value)> isInput) {
  const std::string prefix = "[library-epilogue] ";
  if (op->getNumResults() != 1 ||
      op->getResult(0).getType() != current.getType())
    return "[shape] an epilogue keeps the product's shape and type";
  bool hasLater = residual || bias || activation != LibraryActivation::none;

  // The operand of a binary op that is not the chain's value.
  Value other;
  if (op->getNumOperands() == 2) {
    Value lhs = op->getOperand(0), rhs = op->getOperand(1);
    if (lhs == current && rhs == current)
      return prefix + "the op reads the product twice";
    other = lhs == current ? rhs : lhs;
  }

  if (isa<MulOp>(op)) {
    std::optional<double> scale = getSplatFloat(other);
    if (!scale)
      return prefix + "only a scale by a constant multiplies the product";
    if (hasLater)
      return prefix + "a scale after the residual, bias or activation";
    alpha *= *scale;
    return "";
  }
  if (isa<AddOp>(op)) {
    if (isSplatConstant(other))
      return prefix + "adding a constant has no library form";
    if (!isInput(other))
      return prefix + "the addend is computed in the kernel, not read";
    ArrayRef<int64_t> product = shapeOf(current);
    if (shapeOf(other) == product) {
      if (hasLater)
        return prefix + "a residual after the bias or activation";
      residual = other;
      return "";
    }
    if (isRowOf(shapeOf(other), product)) {
      if (bias || activation != LibraryActivation::none)
        return prefix + "a second bias, or a bias after the activation";
      bias = other;
      return "";
    }
    return prefix + "an addend that is neither the product's shape nor one "
                    "row broadcast over its rows";
  }
  bool isRelu = isa<ReluOp>(op);
  if (isa<MaxOp>(op)) {
    std::optional<double> bound = getSplatFloat(other);
    isRelu = bound && *bound == 0.0;
  }
  auto gelu = dyn_cast<GeluOp>(op);
  if (isRelu || gelu) {
    if (activation != LibraryActivation::none)
      return prefix + "a second activation";
    if (gelu && gelu.getApproximation() != GeluApproximation::tanh)
      return prefix + "erf gelu: the library's GELU is the tanh approximation";
    activation = isRelu ? LibraryActivation::relu : LibraryActivation::gelu;
    return "";
  }
  return prefix + "'" + op->getName().getStringRef().str() +
         "' is not a library epilogue";
}

bool fusion::isMatrixTranspose(ArrayRef<int64_t> permutation) {
  int64_t rank = permutation.size();
  if (rank < 2)
    return false;
  for (int64_t i = 0; i < rank - 2; ++i)
    if (permutation[i] != i)
      return false;
  return permutation[rank - 2] == rank - 1 && permutation[rank - 1] == rank - 2;
}

std::pair<Value, bool> fusion::storedOperand(Value operand) {
  auto transpose = operand.getDefiningOp<TransposeOp>();
  if (transpose && isMatrixTranspose(transpose.getPermutation()) &&
      transpose->hasOneUse())
    return {transpose.getX(), true};
  return {operand, false};
}

/// Whether `op` is a transpose the library call reads as op = T: a matrix
/// transpose whose only user is a matmul operand.
static bool isOperandLayout(Operation *op) {
  return isa<TransposeOp>(op) && storedOperand(op->getResult(0)).second &&
         isa<MatmulOp>(*op->user_begin());
}

FailureOr<LibraryMatmul> fusion::matchLibraryMatmul(KernelOp kernel,
                                                    std::string *reason) {
  auto fail = [&](const std::string &why) -> FailureOr<LibraryMatmul> {
    if (reason)
      *reason = why;
    return failure();
  };
  FailureOr<TiledProducts> tiled = getTiledProducts(kernel);
  if (succeeded(tiled) && tiled->isPair())
    return fail("[library-epilogue] a pair of products: a call computes one "
                "product and writes it whole");
  Block &body = kernel.getBodyBlock();
  auto isInput = [&](Value v) {
    return isa<BlockArgument>(v) && v.getParentBlock() == &body;
  };
  LibraryMatmul match;
  for (Operation &op : body.without_terminator()) {
    if (!isComputeOp(&op) || (!match.matmul && isOperandLayout(&op)))
      continue;
    if (!match.matmul) {
      match.matmul = dyn_cast<MatmulOp>(op);
      if (!match.matmul)
        return fail("[library-epilogue] the kernel does not start with its "
                    "matmul (a prologue)");
      std::tie(match.a, match.transposeA) = storedOperand(match.matmul.getA());
      std::tie(match.b, match.transposeB) = storedOperand(match.matmul.getB());
      if (!isInput(match.a) || !isInput(match.b))
        return fail("[library-epilogue] a matmul operand is computed in the "
                    "kernel (a prologue)");
      match.result = match.matmul.getResult();
      continue;
    }
    if (!llvm::is_contained(op.getOperands(), match.result))
      return fail("[library-epilogue] '" + op.getName().getStringRef().str() +
                  "' does not continue the product's chain");
    if (!match.result.hasOneUse())
      return fail("[library-epilogue] an intermediate epilogue value is used "
                  "twice");
    std::string why = match.epilogue.extend(&op, match.result, isInput);
    if (!why.empty())
      return fail(why);
    match.result = op.getResult(0);
  }
  if (!match.matmul)
    return fail("[library-epilogue] the kernel has no matmul");
  ValueRange yielded = kernel.getYield().getValues();
  if (yielded.size() != 1 || yielded[0] != match.result)
    return fail("[library-epilogue] the library writes one output: the end "
                "of the product's chain");
  return match;
}
