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
// the op's shape (it is reshaped in turn), or broadcasts against the
// reshaped shape as it did against the original (its sizes other than 1
// within the trailing dimensions both shapes share), or is the original's
// trailing dimensions whole where the reshaped shape has a run of trailing
// dimensions of the same elements (reshaped to that run: a bias of `[H D]`
// when heads are split out as `[..., H, D]`).
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

/// Where `operand` (of an op whose result has shape `from`) is `from`'s
/// trailing dimensions whole, of the same elements as a run of `to`'s
/// trailing dimensions (static sizes: a bias of `[H D]` under heads split as
/// `[..., H, D]`): that run, the operand's shape under `to`.
std::optional<SmallVector<int64_t>> trailingRunOf(ArrayRef<int64_t> operand,
                                                  ArrayRef<int64_t> from,
                                                  ArrayRef<int64_t> to) {
  if (operand.empty() || operand.size() > from.size() ||
      operand != from.take_back(operand.size()) ||
      ShapedType::isDynamicShape(operand))
    return std::nullopt;
  int64_t elements = ShapedType::getNumElements(operand), run = 1;
  for (size_t k = 0; k < to.size() && run < elements; ++k) {
    if (ShapedType::isDynamic(to[to.size() - 1 - k]))
      return std::nullopt;
    run *= to[to.size() - 1 - k];
    if (run == elements)
      return SmallVector<int64_t>(to.take_back(k + 1));
  }
  return std::nullopt;
}

/// Moves reshapes above elementwise math (file comment), each view of a
/// value made once.
class Hoister {
public:
  /// Moves `reshape` above the elementwise op producing its operand, if it
  /// may; whether it did.
  bool hoist(ReshapeOp reshape);

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

bool Hoister::hoist(ReshapeOp reshape) {
  Operation *producer = reshape.getX().getDefiningOp();
  if (!producer || !isElementwiseMath(producer) ||
      producer->getNumResults() != 1 || !reshape.getX().hasOneUse() ||
      producer->getParentOfType<KernelOp>())
    return false;
  ArrayRef<int64_t> from = shapeOf(reshape.getX());
  ArrayRef<int64_t> to = shapeOf(reshape.getResult());
  size_t shared = sharedTrailingDims(from, to);
  // Each operand's shape under the reshape: `to` for one of the op's
  // shape, a trailing run of `to` for one of `from`'s trailing dimensions
  // (both reshaped), or its own where it broadcasts alike.
  SmallVector<SmallVector<int64_t>> shapes;
  bool full = false;
  for (Value operand : producer->getOperands()) {
    ArrayRef<int64_t> shape = shapeOf(operand);
    full |= shape == from;
    if (shape == from || broadcastsAlike(shape, to.size(), shared))
      shapes.emplace_back(shape == from ? to : shape);
    else if (auto run = trailingRunOf(shape, from, to))
      shapes.push_back(std::move(*run));
    else
      return false;
  }
  // The op's shape comes from an operand of that shape, reshaped with it.
  if (!full)
    return false;

  SmallVector<Value> operands;
  for (auto [operand, shape] : llvm::zip(producer->getOperands(), shapes)) {
    if (ArrayRef<int64_t>(shape) == shapeOf(operand)) {
      operands.push_back(operand);
      continue;
    }
    operands.push_back(viewOf(operand, shape, reshape.getLoc()));
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
  return true;
}

struct HoistReshapesPass
    : fusion::impl::FusionHoistReshapesBase<HoistReshapesPass> {
  void runOnOperation() override {
    // Sweeps until none moves: a value read by several hoisted ops moves
    // once the last of them has (its view is then its only reader). A sweep
    // erases only the reshape it moves.
    Hoister hoister;
    for (bool moved = true; moved;) {
      moved = false;
      SmallVector<ReshapeOp> reshapes;
      getOperation()->walk([&](ReshapeOp reshape) {
        if (!reshape->getParentOfType<KernelOp>())
          reshapes.push_back(reshape);
      });
      for (ReshapeOp reshape : reshapes)
        moved |= hoister.hoist(reshape);
    }
    // Reshapes left unread: of a reshape folded into a view of its operand.
    getOperation()->walk<WalkOrder::PostOrder, ReverseIterator>(
        [](ReshapeOp reshape) {
      if (reshape->use_empty() && !reshape->getParentOfType<KernelOp>())
        reshape.erase();
    });
  }
};

} // namespace
