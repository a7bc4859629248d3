//===- FuseAttention.cpp - softmax(f(Q K^T)) V as one kernel --------------===//
//
// Attention is fused by recognizing it, not by merging neighbours: the
// softmax needs whole rows of scores, so the greedy passes would write the
// scores and read them back. Matched from its softmax outwards, before the
// composites are decomposed, and wrapped into one `attention` kernel that
// the other fusion passes leave alone.
//
//===----------------------------------------------------------------------===//

#include "fusion/Dialect/Fusion/Analysis/KernelPlan.h"
#include "fusion/Dialect/Fusion/Analysis/LibraryMatmul.h"
#include "fusion/Dialect/Fusion/Analysis/Traffic.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"

#include <array>

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSIONFUSEATTENTION
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// The ops of one attention, in program order: [transpose of K], the scores'
/// product, the math on the scores and on its other inputs, the softmax,
/// [the log-sum-exp of the scores' rows], [the probabilities' convert to
/// V's type], the output's product; and K as the kernel reads it (K^T, or K
/// when its transpose joins).
struct Attention {
  SmallVector<Operation *> ops;
  MatmulOp scores, output;
  /// The log-sum-exp of the rows of what the softmax reads, where the
  /// program computes it (training keeps it for the backward pass): the
  /// kernel's second result.
  LogSumExpOp logSumExp;
  Value keys;
  /// The kernel's first result: the output's product, or its transpose
  /// (collectOutputView).
  Value result;
};

ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

/// Walks from `value` (what the softmax reads) back to the product of the
/// scores along elementwise ops of its shape, each read only by the next;
/// appends the ops from the product on. The operands off the path are the
/// math's other inputs (a mask, a bias, constants). Fails with a reason,
/// empty when no product is reached at all (not an attention candidate).
/// `value` has `uses` readers (the softmax, and a log-sum-exp), each value
/// before it one. Looks at most `depth` ops back.
FailureOr<MatmulOp> collectScoreMath(Value value, ArrayRef<int64_t> scores,
                                     SmallVectorImpl<Operation *> &math,
                                     std::string &reason, unsigned uses = 1,
                                     int depth = 32) {
  Operation *op = value.getDefiningOp();
  if (auto product = dyn_cast_or_null<MatmulOp>(op)) {
    if (!value.hasNUses(uses)) {
      reason = "the scores (the product) are read elsewhere too: they would "
               "be written anyway";
      return failure();
    }
    return product;
  }
  if (!op || !isElementwiseMath(op) || depth == 0)
    return failure();
  // The path goes through the one operand computed from a product.
  FailureOr<MatmulOp> product = failure();
  for (Value operand : op->getOperands()) {
    size_t before = math.size();
    std::string inner;
    FailureOr<MatmulOp> found = collectScoreMath(operand, scores, math, inner,
                                                 /*uses=*/1, depth - 1);
    if (succeeded(found)) {
      if (succeeded(product)) {
        reason = "two operands of '" + op->getName().getStringRef().str() +
                 "' come from products";
        return failure();
      }
      product = found;
    } else {
      math.resize(before);
      if (!inner.empty()) {
        reason = inner;
        return failure();
      }
    }
  }
  if (failed(product))
    return failure();
  if (!value.hasNUses(uses)) {
    reason = "a value of the math on the scores ('" +
             op->getName().getStringRef().str() + "') is read elsewhere too";
    return failure();
  }
  if (shapeOf(value) != scores) {
    reason = "'" + op->getName().getStringRef().str() +
             "' changes the shape of the scores";
    return failure();
  }
  math.push_back(op);
  return product;
}

bool isIndexMath(Value value, int depth = 8);

/// Most ops collectInputMath takes into an attention.
constexpr size_t kMaxInputMath = 16;

/// Adds to `ops` (the attention's, in one block) the elementwise math that
/// computes the other inputs of the score math `math` (a bias converted, a
/// mask scaled) where nothing outside the attention reads its results: the
/// kernel evaluates it per score where it reads those inputs, so that they
/// are read as stored (a bf16 bias, not an f32 copy written first). Index
/// math stays out (formKernel clones it). Sorts `ops` in program order
/// where it adds any.
void collectInputMath(ArrayRef<Operation *> math,
                      SmallVectorImpl<Operation *> &ops) {
  Block *block = ops.front()->getBlock();
  if (llvm::any_of(ops, [&](Operation *op) { return op->getBlock() != block; }))
    return;
  llvm::SmallPtrSet<Operation *, 16> inside(ops.begin(), ops.end());
  SmallVector<Operation *> readers(math.begin(), math.end());
  size_t taken = 0;
  while (!readers.empty() && taken < kMaxInputMath) {
    Operation *reader = readers.pop_back_val();
    for (Value operand : reader->getOperands()) {
      Operation *op = operand.getDefiningOp();
      if (!op || inside.contains(op) || op->getBlock() != block ||
          !isElementwiseMath(op) || isIndexMath(operand) ||
          !llvm::all_of(op->getUsers(),
                        [&](Operation *user) { return inside.contains(user); }))
        continue;
      inside.insert(op);
      ops.push_back(op);
      readers.push_back(op);
      if (++taken == kMaxInputMath)
        break;
    }
  }
  if (taken != 0)
    llvm::sort(
        ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
}

/// How a reshape splits one axis of its operand into several, the others
/// kept: the axis and the pieces' sizes (static and multiplying to the
/// axis, or units around the whole axis, which may be dynamic).
struct AxisSplit {
  int64_t axis;
  SmallVector<int64_t> pieces;
};

/// The split of shape `from` into `to`, if `to` splits one axis of it.
std::optional<AxisSplit> getAxisSplit(ArrayRef<int64_t> from,
                                      ArrayRef<int64_t> to) {
  int64_t rank = from.size(), parts = to.size() - rank + 1;
  if (parts < 2)
    return std::nullopt;
  int64_t a = 0;
  while (a < rank && from[a] == to[a])
    ++a;
  if (a == rank || from.drop_front(a + 1) != to.drop_front(a + parts))
    return std::nullopt;
  ArrayRef<int64_t> pieces = to.slice(a, parts);
  if (ShapedType::isDynamic(from[a])) {
    if (llvm::count_if(pieces, [](int64_t p) { return p != 1; }) != 1 ||
        !llvm::is_contained(pieces, ShapedType::kDynamic))
      return std::nullopt;
  } else {
    int64_t product = 1;
    for (int64_t piece : pieces)
      product = ShapedType::isDynamic(piece) ? 0 : product * piece;
    if (product != from[a])
      return std::nullopt;
  }
  return AxisSplit{a, llvm::to_vector(pieces)};
}

std::optional<AxisSplit> getAxisSplit(ReshapeOp reshape) {
  return getAxisSplit(shapeOf(reshape.getX()), shapeOf(reshape));
}

/// `permutation` of a shape whose axis `axis` is split into `parts`, as a
/// permutation of the split shape (the pieces moved together, in order).
SmallVector<int64_t> splitPermutation(ArrayRef<int64_t> permutation,
                                      int64_t axis, int64_t parts) {
  SmallVector<int64_t> split;
  for (int64_t d : permutation) {
    if (d == axis) {
      for (int64_t k = 0; k < parts; ++k)
        split.push_back(axis + k);
      continue;
    }
    split.push_back(d < axis ? d : d + parts - 1);
  }
  return split;
}

/// A reshape of `source` to `shape` before `before`: one already there, or
/// a new one.
Value reshapeBefore(Value source, ArrayRef<int64_t> shape, Operation *before) {
  auto type = RankedTensorType::get(shape, getElementTypeOrSelf(source));
  for (Operation *user : source.getUsers())
    if (auto other = dyn_cast<ReshapeOp>(user);
        other && other.getType() == type &&
        other->getBlock() == before->getBlock() &&
        other->isBeforeInBlock(before))
      return other;
  OpBuilder b(before);
  return ReshapeOp::create(b, before->getLoc(), type, source);
}

/// `hoisted` (the same values as `reshape`) in place of `reshape`, and
/// `read` (what `reshape` read) erased where nothing else reads it.
template <typename OpT>
OpT replaceReshape(ReshapeOp reshape, OpT hoisted, Operation *read) {
  reshape.replaceAllUsesWith(hoisted.getResult());
  reshape.erase();
  if (read->use_empty())
    read->erase();
  return hoisted;
}

/// `reshape` of a slice of `x` that splits the sliced axis at multiples of
/// the new inner sizes (heads of D split out of the slice of a projection
/// `[B, S, 3 H D]` that holds Q's features) rewritten as that slice of `x`
/// reshaped (`[B, S, 3 H, D]`, a view between kernels), so that the slice
/// can join a kernel; the same values. Null where `reshape` is not such a
/// reshape.
SliceOp hoistReshapeAboveSlice(ReshapeOp reshape) {
  auto slice = reshape.getX().getDefiningOp<SliceOp>();
  std::optional<AxisSplit> split = getAxisSplit(reshape);
  if (!slice || !split ||
      llvm::any_of(slice.getStrides(), [](int64_t s) { return s != 1; }))
    return SliceOp();
  ArrayRef<int64_t> whole = shapeOf(slice.getX()), cut = shapeOf(slice);
  int64_t a = split->axis, rank = cut.size();
  ArrayRef<int64_t> pieces = split->pieces;
  if (ShapedType::isDynamic(cut[a]) || ShapedType::isDynamic(whole[a]))
    return SliceOp();
  int64_t inner = 1;
  for (int64_t size : ArrayRef(pieces).drop_front())
    inner *= size;
  int64_t offset = slice.getOffsets()[a];
  if (offset % inner != 0 || whole[a] % inner != 0)
    return SliceOp();
  for (int64_t d = 0; d < rank; ++d)
    if (d != a && (slice.getOffsets()[d] != 0 || cut[d] != whole[d]))
      return SliceOp();

  SmallVector<int64_t> reshaped(whole.take_front(a));
  reshaped.push_back(whole[a] / inner);
  llvm::append_range(reshaped, ArrayRef(pieces).drop_front());
  llvm::append_range(reshaped, whole.drop_front(a + 1));
  Value view = reshapeBefore(slice.getX(), reshaped, slice);
  SmallVector<int64_t> offsets(reshaped.size(), 0), sizes,
      strides(reshaped.size(), 1);
  offsets[a] = offset / inner;
  for (int64_t size : shapeOf(reshape))
    sizes.push_back(ShapedType::isDynamic(size) ? -1 : size);
  OpBuilder b(reshape);
  return replaceReshape(reshape,
                        SliceOp::create(b, reshape.getLoc(), reshape.getType(),
                                        view, offsets, sizes, strides),
                        slice);
}

/// `reshape` of a transpose of `x` that splits one axis (the heads of
/// `[B, H, S, D]` into groups `[B, Hkv, G, S, D]`, as grouped-query
/// attention reads them) rewritten as a transpose of `x` with that axis
/// split (a view between kernels), so that the transpose can join a
/// kernel; the same values. Null where `reshape` is not such a reshape.
TransposeOp hoistReshapeAboveTranspose(ReshapeOp reshape) {
  auto transpose = reshape.getX().getDefiningOp<TransposeOp>();
  std::optional<AxisSplit> split = getAxisSplit(reshape);
  if (!transpose || !split)
    return TransposeOp();
  ArrayRef<int64_t> permutation = transpose.getPermutation();
  ArrayRef<int64_t> source = shapeOf(transpose.getX());
  int64_t parts = split->pieces.size(), at = permutation[split->axis];
  SmallVector<int64_t> reshaped(source.take_front(at));
  llvm::append_range(reshaped, split->pieces);
  llvm::append_range(reshaped, source.drop_front(at + 1));
  SmallVector<int64_t> moved = splitPermutation(permutation, at, parts);
  Value view = reshapeBefore(transpose.getX(), reshaped, transpose);
  OpBuilder b(reshape);
  return replaceReshape(reshape,
                        TransposeOp::create(b, reshape.getLoc(),
                                            reshape.getType(), view,
                                            b.getDenseI64ArrayAttr(moved)),
                        transpose);
}

/// `reshape` with a reshape operand reads that one's operand instead (as
/// the fold does, before canonicalization); the value itself where that
/// makes it the identity.
Value foldReshapes(ReshapeOp reshape) {
  while (auto inner = reshape.getX().getDefiningOp<ReshapeOp>())
    reshape.getXMutable().assign(inner.getX());
  if (reshape.getX().getType() != reshape.getType())
    return reshape;
  Value source = reshape.getX();
  reshape.replaceAllUsesWith(source);
  reshape.erase();
  return source;
}

/// Whether the attention kernel would read its operands through views
/// and store its output through one: where attention_tiles runs it (more
/// than kAttentionRowsMaxQueries query rows, or a dynamic number); the
/// rows strategy reads and writes whole tensors.
bool readsViews(Attention &attention) {
  int64_t queries = shapeOf(attention.scores.getA()).end()[-2];
  return ShapedType::isDynamic(queries) || queries > kAttentionRowsMaxQueries;
}

/// `merge`, a reshape joining adjacent axes of its operand (grouped heads
/// `[B, Hkv, G, S, D]` back into `[B, H, S, D]`) read only by a transpose,
/// rewritten as that transpose of the operand with the joined axes moved
/// together, then the reshape joining them (a view between kernels), so
/// that the transpose can join the attention kernel; the same values.
void sinkMergeBelowTranspose(ReshapeOp merge) {
  std::optional<AxisSplit> split =
      getAxisSplit(shapeOf(merge), shapeOf(merge.getX()));
  if (!split || !merge->hasOneUse())
    return;
  auto transpose = dyn_cast<TransposeOp>(*merge->user_begin());
  if (!transpose)
    return;
  SmallVector<int64_t> moved = splitPermutation(
      transpose.getPermutation(), split->axis, split->pieces.size());
  ArrayRef<int64_t> unmerged = shapeOf(merge.getX());
  SmallVector<int64_t> shape =
      llvm::map_to_vector(moved, [&](int64_t d) { return unmerged[d]; });
  OpBuilder b(transpose);
  auto early = TransposeOp::create(
      b, transpose.getLoc(),
      RankedTensorType::get(shape, getElementTypeOrSelf(merge)), merge.getX(),
      b.getDenseI64ArrayAttr(moved));
  auto joined = ReshapeOp::create(b, merge.getLoc(), transpose.getType(),
                                  early.getResult());
  transpose.replaceAllUsesWith(joined.getResult());
  transpose.erase();
  merge.erase();
}

/// Adds to `attention` the transpose that alone reads the output's product
/// where it keeps the last axis last (the heads moved back after the
/// sequence before an output projection) and the kernel has no second
/// result (through a reshape joining grouped heads first:
/// sinkMergeBelowTranspose): the kernel stores its output through it, where
/// a transpose kernel would have copied it.
void collectOutputView(Attention &attention) {
  Value product = attention.output.getResult();
  if (!readsViews(attention) || attention.logSumExp || !product.hasOneUse())
    return;
  if (auto merge = dyn_cast<ReshapeOp>(*product.user_begin()))
    sinkMergeBelowTranspose(merge);
  auto transpose = dyn_cast<TransposeOp>(*product.user_begin());
  if (!transpose || transpose->getBlock() != attention.output->getBlock() ||
      transpose.getPermutation().back() !=
          static_cast<int64_t>(shapeOf(product).size()) - 1)
    return;
  attention.ops.push_back(transpose);
  attention.result = transpose.getResult();
}

/// Adds to `attention` the views Q, K and V are computed by from kernel
/// inputs (isInPlaceView; a reshape of a slice or a transpose hoisted
/// above it first)
/// where nothing outside the attention reads them, so that the kernel reads
/// its operands where they lie instead of copies written before it
/// (readsViews). Sorts the ops in program order where it adds any.
void collectOperandViews(Attention &attention) {
  if (!readsViews(attention))
    return;
  Block *block = attention.output->getBlock();
  llvm::SmallPtrSet<Operation *, 16> inside(attention.ops.begin(),
                                            attention.ops.end());
  bool added = false;
  // Q, K and V as the ops read them now (a hoisted reshape replaces the
  // value it computed).
  auto operands = [&] {
    return std::array<Value, 3>{attention.scores.getA(),
                                storedOperand(attention.scores.getB()).first,
                                attention.output.getB()};
  };
  for (size_t i = 0; i < 3; ++i) {
    Value operand = operands()[i];
    while (Operation *op = operand.getDefiningOp()) {
      if (auto reshape = dyn_cast<ReshapeOp>(op)) {
        Value result = reshape.getResult();
        Value folded = foldReshapes(reshape);
        if (folded != result) {
          operand = folded;
          continue;
        }
        if (SliceOp slice = hoistReshapeAboveSlice(reshape))
          op = slice;
        else if (TransposeOp transpose = hoistReshapeAboveTranspose(reshape))
          op = transpose;
        else
          break;
      }
      if (op->getBlock() != block || inside.contains(op) || !isInPlaceView(op))
        break;
      // Positions sized by the view (a causal mask's) take the size from
      // its operand: a dynamic axis is the operand's, whole.
      for (Operation *user : llvm::make_early_inc_range(op->getUsers()))
        if (auto iota = dyn_cast<IotaOp>(user)) {
          int64_t dim = *iota.getSourceDimension();
          if (auto transpose = dyn_cast<TransposeOp>(op))
            dim = transpose.getPermutation()[dim];
          iota.getSourceMutable().assign(op->getOperand(0));
          iota.setSourceDimension(dim);
        }
      if (!llvm::all_of(op->getUsers(),
                        [&](Operation *user) { return inside.contains(user); }))
        break;
      inside.insert(op);
      attention.ops.push_back(op);
      added = true;
      operand = op->getOperand(0);
    }
  }
  attention.keys = operands()[1];
  if (added)
    llvm::sort(attention.ops, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
}

/// The attention around `softmax`, or a reason; an empty reason when the
/// softmax neither reads nor feeds a product (not a candidate).
FailureOr<Attention> matchAttention(SoftmaxOp softmax, std::string &reason) {
  Value probabilities = softmax.getResult();
  // Or their convert to V's type: a softmax over f32 scores, the
  // probabilities rounded once for the product (as FlashAttention does).
  ConvertOp rounded = probabilities.hasOneUse()
                          ? dyn_cast<ConvertOp>(*probabilities.user_begin())
                          : ConvertOp();
  Value read = rounded ? rounded.getResult() : probabilities;
  auto output =
      read.hasOneUse() ? dyn_cast<MatmulOp>(*read.user_begin()) : MatmulOp();
  bool feedsProduct = llvm::any_of(
      read.getUsers(), [](Operation *u) { return isa<MatmulOp>(u); });
  // A log-sum-exp over the keys of what the softmax reads.
  int64_t rank = shapeOf(probabilities).size();
  LogSumExpOp logSumExp;
  for (Operation *user : softmax.getX().getUsers())
    if (auto lse = dyn_cast<LogSumExpOp>(user);
        lse && static_cast<int64_t>(lse.getAxis()) == rank - 1)
      logSumExp = lse;

  SmallVector<Operation *> math;
  std::string pathReason;
  FailureOr<MatmulOp> scores =
      collectScoreMath(softmax.getX(), shapeOf(softmax.getX()), math,
                       pathReason, /*uses=*/logSumExp ? 2 : 1);
  if (failed(scores) && pathReason.empty() && !feedsProduct)
    return failure(); // not a candidate: say nothing
  auto refuse = [&](const std::string &why) -> FailureOr<Attention> {
    reason = "[attention] not an attention: " + why;
    return failure();
  };
  if (failed(scores))
    return refuse(pathReason.empty() ? "the softmax does not read a product "
                                       "through elementwise math"
                                     : pathReason);
  if (rank < 2 || static_cast<int64_t>(softmax.getAxis()) != rank - 1)
    return refuse("the softmax is not over the last axis (the keys)");
  if (!output)
    return refuse("the probabilities are read by something other than one "
                  "product");
  if (output.getA() != read)
    return refuse("the probabilities are not the left operand of the "
                  "product");
  // The kernel takes the output's place: what reads the log-sum-exp comes
  // after it.
  if (logSumExp && llvm::any_of(logSumExp->getUsers(), [&](Operation *user) {
        Operation *here = output->getBlock()->findAncestorOpInBlock(*user);
        return !here || here->isBeforeInBlock(output);
      }))
    return refuse("the log-sum-exp of the scores is read before the output's "
                  "product");

  Attention attention;
  auto [keys, transposed] = storedOperand(scores->getB());
  if (transposed)
    attention.ops.push_back(scores->getB().getDefiningOp());
  attention.ops.push_back(*scores);
  llvm::append_range(attention.ops, math);
  attention.ops.push_back(softmax);
  if (logSumExp)
    attention.ops.push_back(logSumExp);
  if (rounded)
    attention.ops.push_back(rounded);
  attention.ops.push_back(output);
  collectInputMath(math, attention.ops);
  attention.scores = *scores;
  attention.output = output;
  attention.logSumExp = logSumExp;
  attention.keys = keys;
  attention.result = output.getResult();
  collectOperandViews(attention);
  collectOutputView(attention);
  return attention;
}

/// Whether `value` is computed from positions and splat constants alone (a
/// causal mask, say): the kernel computes it where it is used instead of
/// reading it, and sees it as a predicate of the indices.
bool isIndexMath(Value value, int depth) {
  if (isSplatConstant(value) || value.getDefiningOp<IotaOp>())
    return true;
  Operation *op = value.getDefiningOp();
  return op && depth > 0 && isElementwiseMath(op) &&
         llvm::all_of(op->getOperands(),
                      [&](Value v) { return isIndexMath(v, depth - 1); });
}

/// Appends the ops computing index math `value`, operands first, each once
/// (an iota's source, whose size alone it reads, is not index math).
void collectIndexMath(Value value, llvm::SetVector<Operation *> &ops) {
  Operation *op = value.getDefiningOp();
  if (ops.contains(op))
    return;
  if (!isa<IotaOp>(op))
    for (Value operand : op->getOperands())
      collectIndexMath(operand, ops);
  ops.insert(op);
}

/// Puts the body of `kernel` back in its place, its inputs for its
/// arguments (an attention no GPU strategy runs stays its ops there).
void inlineKernel(KernelOp kernel) {
  Block &body = kernel.getBodyBlock();
  for (auto [arg, input] : llvm::zip(body.getArguments(), kernel.getInputs()))
    arg.replaceAllUsesWith(input);
  YieldOp yield = kernel.getYield();
  kernel->replaceAllUsesWith(yield.getValues());
  yield.erase();
  kernel->getBlock()->getOperations().splice(kernel->getIterator(),
                                             body.getOperations());
  kernel.erase();
}

/// Replaces the ops of `attention` by one attention kernel at the output's
/// place: its inputs are Q, K (or K^T), V, then the other operands from
/// outside in program order (splat constants and index math are cloned
/// in, with the source an iota takes its size from: Q or K where the
/// program takes the sequence lengths from them); its results are the
/// output product's (or its transpose's) and the log-sum-exp's, if any.
KernelOp formKernel(const Attention &attention) {
  llvm::SmallPtrSet<Operation *, 16> inside(attention.ops.begin(),
                                            attention.ops.end());
  MatmulOp output = attention.output;
  SmallVector<Value> inputs;
  auto addInput = [&](Value operand) {
    if (!inside.contains(operand.getDefiningOp()) && !isIndexMath(operand) &&
        !llvm::is_contained(inputs, operand))
      inputs.push_back(operand);
  };
  MatmulOp scores = attention.scores;
  // Q, K and V, or the inputs their views read, first.
  auto viewed = [&](Value operand) {
    while (inside.contains(operand.getDefiningOp()) &&
           isInPlaceView(operand.getDefiningOp()))
      operand = operand.getDefiningOp()->getOperand(0);
    return operand;
  };
  addInput(viewed(scores.getA()));
  addInput(viewed(attention.keys));
  addInput(viewed(output.getB()));
  for (Operation *op : attention.ops)
    for (Value operand : op->getOperands())
      addInput(operand);
  llvm::SetVector<Operation *> indexMath;
  for (Operation *op : attention.ops)
    for (Value operand : op->getOperands())
      if (!inside.contains(operand.getDefiningOp()) && isIndexMath(operand))
        collectIndexMath(operand, indexMath);
  for (Operation *op : indexMath)
    if (auto iota = dyn_cast<IotaOp>(op);
        iota && iota.getSource() &&
        !inside.contains(iota.getSource().getDefiningOp()) &&
        !llvm::is_contained(inputs, iota.getSource()))
      inputs.push_back(iota.getSource());

  OpBuilder builder(output);
  SmallVector<Location> locations = llvm::map_to_vector(
      attention.ops, [](Operation *op) { return op->getLoc(); });
  SmallVector<Value> results = {attention.result};
  if (attention.logSumExp)
    results.push_back(attention.logSumExp->getResult(0));
  auto kernel = KernelOp::create(builder, builder.getFusedLoc(locations),
                                 ValueRange(results).getTypes(),
                                 KernelKind::attention, inputs);
  Block &body = kernel.getBodyBlock();
  IRMapping mapping;
  mapping.map(inputs, body.getArguments());
  builder.setInsertionPointToStart(&body);
  // The masks and constants computed in the kernel, each cloned once
  // before its first reader.
  llvm::SetVector<Operation *> computedInside;
  for (Operation *op : attention.ops) {
    for (Value operand : op->getOperands()) {
      if (inside.contains(operand.getDefiningOp()) || !isIndexMath(operand))
        continue;
      size_t cloned = computedInside.size();
      collectIndexMath(operand, computedInside);
      for (Operation *indexOp : llvm::drop_begin(computedInside, cloned))
        builder.clone(*indexOp, mapping);
    }
    builder.clone(*op, mapping);
  }
  YieldOp::create(builder, output.getLoc(),
                  llvm::map_to_vector(results, [&](Value result) {
                    return mapping.lookup(result);
                  }));
  for (auto [result, replacement] : llvm::zip(results, kernel.getResults()))
    result.replaceAllUsesWith(replacement);
  for (Operation *op : llvm::reverse(attention.ops))
    op->erase();
  // Those nothing else reads, readers first.
  for (Operation *op : llvm::reverse(computedInside))
    if (op->use_empty())
      op->erase();
  return kernel;
}

struct FuseAttentionPass
    : fusion::impl::FusionFuseAttentionBase<FuseAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<GpuTarget> target = GpuTarget::fromChip(chip);
    if (gpu && failed(target)) {
      getOperation()->emitError("fusion-fuse-attention: unknown chip '")
          << chip << "' (expected sm_<version>, such as sm_90)";
      return signalPassFailure();
    }
    SmallVector<SoftmaxOp> softmaxes;
    getOperation()->walk([&](SoftmaxOp softmax) {
      // Not inside a kernel already formed (by hand or an earlier run).
      if (!softmax->getParentOfType<KernelOp>())
        softmaxes.push_back(softmax);
    });
    for (SoftmaxOp softmax : softmaxes) {
      std::string reason;
      FailureOr<Attention> attention = matchAttention(softmax, reason);
      if (succeeded(attention)) {
        KernelOp kernel = formKernel(*attention);
        std::string noStrategy = gpu ? whyNoGpuAttention(kernel, *target) : "";
        if (noStrategy.empty())
          continue;
        if (emitRemarks)
          kernel.emitRemark()
              << "[attention] not formed for the GPU: " << noStrategy;
        inlineKernel(kernel);
        continue;
      }
      if (emitRemarks && !reason.empty())
        softmax.emitRemark() << reason;
    }
  }
};

} // namespace
