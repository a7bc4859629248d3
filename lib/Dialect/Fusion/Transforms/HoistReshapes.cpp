//===- HoistReshapes.cpp - Reshapes moved above elementwise math ----------===//
//
// A reshape between elementwise math and what reads it keeps them in two
// kernels unless both are elementwise: row, column and matmul strategies
// read their operands at their own indices, so only elementwise kernels
// fuse across a reshape (KernelFuser::classify). Elementwise math commutes
// with a reshape, `reshape(f(a, b))` = `f(reshape(a), b)`, so this pass
// moves each reshape above the elementwise ops that produce its operand, up
// to the function's arguments, constants (folded into the new shape) or ops
// that are not elementwise, where it stays a view between kernels. The
// math then runs in the reshaped shape and fuses with its reader: a
// residual add of `[B, S, D]` viewed as `[B S, D]` rows of a norm becomes
// one row kernel, where it was an elementwise kernel writing the sum and
// its square for the norm to read.
//
// An op is moved across only where its result is read by the reshape alone
// (else both shapes would be computed), and where each operand either has
// the op's shape (it is reshaped in turn) or broadcasts against the
// reshaped shape as it did against the original: its sizes other than 1
// within the trailing dimensions both shapes share.
//
//===----------------------------------------------------------------------===//

#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Iterators.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSIONHOISTRESHAPES
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

/// How many trailing dimensions `from` and `to` share: equal static sizes,
/// or dynamic sizes that are the same one (the reshape keeps dynamic sizes
/// in order, so with every later dimension equal they are the same count
/// from the end).
size_t sharedTrailingDims(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  size_t shared = 0;
  while (shared < from.size() && shared < to.size() &&
         from[from.size() - 1 - shared] == to[to.size() - 1 - shared])
    ++shared;
  return shared;
}

/// Whether `operand` of an op whose result has shape `from` broadcasts
/// against `to` as it did against `from`: at most `to`'s rank, its sizes
/// other than 1 among the `shared` trailing dimensions.
bool broadcastsAlike(ArrayRef<int64_t> operand, size_t toRank, size_t shared) {
  if (operand.size() > toRank)
    return false;
  for (size_t k = 0; k < operand.size(); ++k)
    if (operand[operand.size() - 1 - k] != 1 && k >= shared)
      return false;
  return true;
}

/// Moves reshapes above elementwise math (file comment), each view of a
/// value made once.
class Hoister {
public:
  /// Moves `reshape` above the elementwise op producing its operand, if it
  /// may; the reshapes of that op's operands are appended to `worklist`.
  void hoist(ReshapeOp reshape, SmallVectorImpl<ReshapeOp> &worklist);

private:
  /// `value` under shape `shape`: a reshape right after its definition (so
  /// that every reader of `value` may read it), made once, or folded.
  Value viewOf(Value value, ArrayRef<int64_t> shape, Location loc);

  /// The views made, by the value they view (an entry goes with the value:
  /// an erased value's storage may be reused by a new one).
  DenseMap<Value, SmallVector<std::pair<Type, Value>, 1>> views;
};

Value Hoister::viewOf(Value value, ArrayRef<int64_t> shape, Location loc) {
  auto type =
      RankedTensorType::get(shape, getElementTypeOrSelf(value.getType()));
  auto &made = views[value];
  for (auto [madeType, view] : made)
    if (madeType == type)
      return view;
  OpBuilder b(value.getContext());
  b.setInsertionPointAfterValue(value);
  Value view = b.createOrFold<ReshapeOp>(loc, type, value);
  made.push_back({type, view});
  return view;
}

void Hoister::hoist(ReshapeOp reshape, SmallVectorImpl<ReshapeOp> &worklist) {
  Operation *producer = reshape.getX().getDefiningOp();
  if (!producer || !isElementwiseMath(producer) ||
      producer->getNumResults() != 1 || !reshape.getX().hasOneUse() ||
      producer->getParentOfType<KernelOp>())
    return;
  ArrayRef<int64_t> from = shapeOf(reshape.getX());
  ArrayRef<int64_t> to = shapeOf(reshape.getResult());
  size_t shared = sharedTrailingDims(from, to);
  bool full = false;
  for (Value operand : producer->getOperands()) {
    full |= shapeOf(operand) == from;
    if (shapeOf(operand) != from &&
        !broadcastsAlike(shapeOf(operand), to.size(), shared))
      return;
  }
  // The op's shape comes from an operand of that shape, reshaped with it.
  if (!full)
    return;

  SmallVector<Value> operands;
  for (Value operand : producer->getOperands()) {
    if (shapeOf(operand) != from) {
      operands.push_back(operand);
      continue;
    }
    Value view = viewOf(operand, to, reshape.getLoc());
    if (auto next = view.getDefiningOp<ReshapeOp>())
      worklist.push_back(next);
    operands.push_back(view);
  }
  OpBuilder b(reshape);
  OperationState state(producer->getLoc(), producer->getName());
  state.addOperands(operands);
  state.addTypes(RankedTensorType::get(
      to, getElementTypeOrSelf(producer->getResult(0).getType())));
  state.addAttributes(producer->getAttrs());
  Operation *moved = b.create(state);
  reshape.replaceAllUsesWith(moved->getResult(0));
  reshape.erase();
  views.erase(producer->getResult(0));
  producer->erase();
}

struct HoistReshapesPass
    : fusion::impl::FusionHoistReshapesBase<HoistReshapesPass> {
  void runOnOperation() override {
    SmallVector<ReshapeOp> worklist;
    getOperation()->walk([&](ReshapeOp reshape) {
      if (!reshape->getParentOfType<KernelOp>())
        worklist.push_back(reshape);
    });
    Hoister hoister;
    while (!worklist.empty())
      hoister.hoist(worklist.pop_back_val(), worklist);
    // Reshapes left unread: of a reshape folded into a view of its operand.
    getOperation()->walk<WalkOrder::PostOrder, ReverseIterator>(
        [](ReshapeOp reshape) {
      if (reshape->use_empty() && !reshape->getParentOfType<KernelOp>())
        reshape.erase();
    });
  }
};

} // namespace
