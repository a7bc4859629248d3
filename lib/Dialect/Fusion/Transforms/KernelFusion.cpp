//===- KernelFusion.cpp - Grouping fusion ops into kernels ----------------===//
//
// Every compute op becomes a one-op kernel; fusion merges kernels. The merge
// policy lives in KernelFuser::classify and KernelFuser::checkMerge, the
// byte arithmetic in fuseProducer, the IR surgery in mergeKernels.
//
// Longer than 600 lines on purpose: the three fusion passes, fusion-view and
// the remarks share one engine (KernelFuser) whose policy, cost arithmetic
// and merges read the same state; split apart, a merge rule and its remark
// would live in different files.
//
//===----------------------------------------------------------------------===//

#include "fusion/Dialect/Fusion/Transforms/KernelFusion.h"

#include "fusion/Dialect/Fusion/Analysis/DynamicDims.h"
#include "fusion/Dialect/Fusion/Analysis/KernelPlan.h"
#include "fusion/Dialect/Fusion/Analysis/LibraryMatmul.h"
#include "fusion/Dialect/Fusion/Analysis/Traffic.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

#include <functional>

using namespace mlir;
using namespace mlir::fusion;

//===----------------------------------------------------------------------===//
// Op and shape classification
//===----------------------------------------------------------------------===//

static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

/// Equal shapes, a dynamic size matching only a dynamic size.
static bool sameShape(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  return a == b;
}

static std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleave(
      shape,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << "?";
        else
          os << d;
      },
      [&] { os << "x"; });
  os << "]";
  return s;
}

static bool isReduction(Operation *op) {
  if (isTrivialReduction(op))
    return false;
  return isa<ReduceSumOp, ReduceMaxOp, ReduceMinOp, ReduceMeanOp, RmsNormOp,
             LayerNormOp, SoftmaxOp, LogSumExpOp>(op);
}

/// The shape of the rows `op` reduces over its innermost axis ([R..., H]),
/// if it is such a reduction (a reduce op, a norm, softmax or logsumexp).
static std::optional<SmallVector<int64_t>> getRowShape(Operation *op) {
  if (!isReduction(op))
    return std::nullopt;
  Value input = op->getOperand(0);
  int64_t lastAxis = cast<RankedTensorType>(input.getType()).getRank() - 1;
  if (lastAxis < 0)
    return std::nullopt;
  bool overLastAxis = false;
  if (isa<RmsNormOp, LayerNormOp>(op))
    overLastAxis = true;
  else if (auto softmax = dyn_cast<SoftmaxOp>(op))
    overLastAxis = static_cast<int64_t>(softmax.getAxis()) == lastAxis;
  else if (auto lse = dyn_cast<LogSumExpOp>(op))
    overLastAxis = static_cast<int64_t>(lse.getAxis()) == lastAxis;
  else
    overLastAxis = getReduceAxes(op) == ArrayRef<int64_t>{lastAxis};
  if (!overLastAxis)
    return std::nullopt;
  return llvm::to_vector(shapeOf(input));
}

static bool isRowKind(KernelKind kind) {
  return kind == KernelKind::row_reduction || kind == KernelKind::wide_row;
}

/// Whether a row of `width` elements is wide: longer than `maxRowElements`
/// or of dynamic length. The kernel plan decides how such a row runs
/// (split over a cluster, or streamed).
static bool isWideRow(int64_t width, const FusionOptions &options) {
  return ShapedType::isDynamic(width) || width > options.maxRowElements;
}

static KernelKind getKindOfOp(Operation *op, const FusionOptions &options) {
  if (isa<MatmulOp>(op))
    return KernelKind::matmul;
  if (std::optional<SmallVector<int64_t>> row = getRowShape(op)) {
    return isWideRow(row->back(), options) ? KernelKind::wide_row
                                           : KernelKind::row_reduction;
  }
  if (isReduction(op)) {
    ArrayRef<int64_t> axes = getReduceAxes(op);
    int64_t rank =
        cast<RankedTensorType>(op->getOperand(0).getType()).getRank();
    if (!axes.empty() && !llvm::is_contained(axes, rank - 1))
      return KernelKind::column_reduction;
    return KernelKind::reduction;
  }
  return KernelKind::elementwise;
}

//===----------------------------------------------------------------------===//
// Kernel properties
//===----------------------------------------------------------------------===//

static auto computeOps(KernelOp kernel) {
  return llvm::make_filter_range(
      kernel.getBodyBlock().without_terminator(),
      [](Operation &op) { return isComputeOp(&op); });
}

static int64_t countOps(KernelOp kernel) {
  return llvm::range_size(computeOps(kernel));
}

/// The value `input` views: itself, or the operand of the reshapes it is
/// made by (views between kernels, which an elementwise kernel that fuses
/// across them evaluates by index).
static Value getViewedValue(Value input) {
  while (auto reshape = input.getDefiningOp<ReshapeOp>())
    input = reshape.getX();
  return input;
}

/// Whether the kernel input `input` is a result of `producer`, or a
/// reshape of one.
static bool isResultOf(Value input, KernelOp producer) {
  return getViewedValue(input).getDefiningOp() == producer.getOperation();
}

/// The ops that read `value`, each reshape of it replaced by its readers.
static void collectReaders(Value value, SmallVectorImpl<Operation *> &readers) {
  for (Operation *user : value.getUsers()) {
    if (auto reshape = dyn_cast<ReshapeOp>(user))
      collectReaders(reshape.getResult(), readers);
    else if (!llvm::is_contained(readers, user))
      readers.push_back(user);
  }
}

/// Whether `consumer` reads a result of `producer` through a reshape.
static bool readsThroughReshape(KernelOp producer, KernelOp consumer) {
  return llvm::any_of(consumer.getInputs(), [&](Value input) {
    return input.getDefiningOp<ReshapeOp>() && isResultOf(input, producer);
  });
}

static bool holdsReshape(KernelOp kernel) {
  return !kernel.getBodyBlock().getOps<ReshapeOp>().empty();
}

/// The rows the reductions of a row kernel run over.
static SmallVector<int64_t> getKernelRowShape(KernelOp kernel) {
  for (Operation &op : computeOps(kernel))
    if (std::optional<SmallVector<int64_t>> row = getRowShape(&op))
      return *row;
  return {};
}

/// Whether a value of `shape` lives in the row space of `row` ([R..., H]):
/// a full row, one value per row ([R..., 1] or [R...]), or a smaller shape
/// broadcast into rows ([H], scalars).
static bool fitsRow(ArrayRef<int64_t> shape, ArrayRef<int64_t> row) {
  ArrayRef<int64_t> rows = row.drop_back();
  if (sameShape(shape, row) || sameShape(shape, rows))
    return true;
  if (shape.size() == row.size() && sameShape(shape.drop_back(), rows) &&
      shape.back() == 1)
    return true;
  if (shape.size() > row.size())
    return false;
  ArrayRef<int64_t> aligned = row.take_back(shape.size());
  for (auto [dim, rowDim] : llvm::zip(shape, aligned))
    if (dim != 1 && dim != rowDim)
      return false;
  return true;
}

/// The first value of `kernel` whose shape does not fit `row`, if any.
static std::optional<Value> findValueOutsideRow(KernelOp kernel,
                                                ArrayRef<int64_t> row) {
  for (Operation &op : computeOps(kernel))
    for (Value result : op.getResults())
      if (!fitsRow(shapeOf(result), row))
        return result;
  return std::nullopt;
}

/// Values live at once, scanning the body in order: a register estimate.
static int64_t estimateLiveValues(KernelOp kernel) {
  Block &body = kernel.getBodyBlock();
  DenseMap<Value, int64_t> lastUse;
  int64_t index = 0;
  for (Operation &op : body) {
    for (Value operand : op.getOperands())
      lastUse[operand] = index;
    ++index;
  }
  SmallVector<int64_t> delta(index + 2, 0);
  auto addLiveRange = [&](Value value, int64_t from) {
    auto it = lastUse.find(value);
    if (it == lastUse.end() || isSplatConstant(value))
      return;
    ++delta[from];
    --delta[it->second + 1];
  };
  for (BlockArgument arg : body.getArguments())
    addLiveRange(arg, 0);
  index = 0;
  for (Operation &op : body) {
    for (Value result : op.getResults())
      addLiveRange(result, index + 1);
    ++index;
  }
  int64_t live = 0, maxLive = 0;
  for (int64_t d : delta)
    maxLive = std::max(maxLive, live += d);
  return maxLive;
}

/// Bytes of the distinct values in `values`, splat constants free.
static int64_t bytesOf(ArrayRef<Value> values) {
  ByteCount bytes;
  llvm::SmallDenseSet<Value> seen;
  for (Value value : values)
    if (seen.insert(value).second && !isSplatConstant(value))
      bytes += ByteCount::ofType(value.getType());
  return bytes.estimate();
}

/// The results of `producer` that `consumer` reads (directly or through
/// reshapes).
static SmallVector<Value> resultsUsedBy(KernelOp producer,
                                        Operation *consumer) {
  SmallVector<Value> used;
  for (Value result : producer.getResults()) {
    SmallVector<Operation *> readers;
    collectReaders(result, readers);
    if (llvm::is_contained(readers, consumer))
      used.push_back(result);
  }
  return used;
}

/// The results of `producer` with a reader other than `consumer`.
static SmallVector<Value> resultsEscaping(KernelOp producer,
                                          Operation *consumer) {
  SmallVector<Value> escaping;
  for (Value result : producer.getResults()) {
    SmallVector<Operation *> readers;
    collectReaders(result, readers);
    if (llvm::any_of(readers,
                     [&](Operation *reader) { return reader != consumer; }))
      escaping.push_back(result);
  }
  return escaping;
}

/// The reshape a result of `producer`, still read elsewhere once merged
/// into `consumer`, is written as by a merged elementwise kernel (whose
/// outputs have one shape): its only user, where that is a reshape to the
/// consumer's output shape; null where it is written as it is.
static ReshapeOp getEscapingView(Value result, KernelOp consumer) {
  if (consumer->getNumResults() == 0 || !result.hasOneUse())
    return {};
  auto reshape = dyn_cast<ReshapeOp>(*result.user_begin());
  if (!reshape ||
      !sameShape(shapeOf(reshape.getResult()), shapeOf(consumer->getResult(0))))
    return {};
  return reshape;
}

//===----------------------------------------------------------------------===//
// IR surgery
//===----------------------------------------------------------------------===//

/// Wraps `op` into a one-op kernel.
static KernelOp wrapInKernel(Operation *op, const FusionOptions &options) {
  OpBuilder builder(op);
  SmallVector<Value> inputs;
  for (Value operand : op->getOperands())
    if (!isSplatConstant(operand) && !llvm::is_contained(inputs, operand))
      inputs.push_back(operand);
  KernelKind kind = getKindOfOp(op, options);
  auto kernel = KernelOp::create(builder, op->getLoc(), op->getResultTypes(),
                                 kind, inputs);
  Block &body = kernel.getBodyBlock();
  IRMapping mapping;
  mapping.map(inputs, body.getArguments());
  builder.setInsertionPointToStart(&body);
  for (Value operand : op->getOperands())
    if (isSplatConstant(operand) && !mapping.contains(operand))
      builder.clone(*operand.getDefiningOp(), mapping);
  Operation *clone = builder.clone(*op, mapping);
  YieldOp::create(builder, op->getLoc(), clone->getResults());
  op->replaceAllUsesWith(kernel.getResults());
  op->erase();
  return kernel;
}

/// Replaces `producer` and `consumer` by one kernel of `kind` that computes
/// both. Its results are the consumer's, then the producer's that are still
/// used elsewhere. The two need not be connected (horizontal fusion).
static KernelOp mergeKernels(KernelOp producer, KernelOp consumer,
                             KernelKind kind) {
  Block *block = consumer->getBlock();
  Operation *beforeProducer = producer->getPrevNode();

  SmallVector<Value> inputs;
  DenseMap<Value, unsigned> inputIndex;
  auto addInput = [&](Value value) {
    if (inputIndex.try_emplace(value, inputs.size()).second)
      inputs.push_back(value);
  };
  for (Value input : producer.getInputs())
    addInput(input);
  for (Value input : consumer.getInputs())
    if (!isResultOf(input, producer))
      addInput(input);

  SmallVector<Value> escaping = resultsEscaping(producer, consumer);
  // What each escaping result is written as: itself, or (elementwise) the
  // reshape that reads it.
  SmallVector<Value> written;
  for (Value result : escaping) {
    ReshapeOp view;
    if (kind == KernelKind::elementwise)
      view = getEscapingView(result, consumer);
    written.push_back(view ? view.getResult() : result);
  }
  // The reshapes the consumer reads the producer through: rebuilt inside,
  // erased outside once nothing else reads them.
  llvm::SetVector<Operation *> views;
  for (Value input : consumer.getInputs()) {
    if (!isResultOf(input, producer))
      continue;
    while (auto reshape = input.getDefiningOp<ReshapeOp>()) {
      views.insert(reshape);
      input = reshape.getX();
    }
  }
  for (Value value : written)
    if (auto view = value.getDefiningOp<ReshapeOp>())
      views.insert(view);
  SmallVector<Type> resultTypes(consumer.getResultTypes());
  for (Value value : written)
    resultTypes.push_back(value.getType());

  OpBuilder builder(consumer);
  Location loc = builder.getFusedLoc({producer.getLoc(), consumer.getLoc()});
  auto merged = KernelOp::create(builder, loc, resultTypes, kind, inputs);
  Block &body = merged.getBodyBlock();
  builder.setInsertionPointToStart(&body);

  IRMapping mapping;
  for (auto [arg, input] :
       llvm::zip(producer.getBodyBlock().getArguments(), producer.getInputs()))
    mapping.map(arg, body.getArgument(inputIndex[input]));
  for (Operation &op : producer.getBodyBlock().without_terminator())
    builder.clone(op, mapping);
  SmallVector<Value> producerYield =
      llvm::map_to_vector(producer.getYield().getValues(),
                          [&](Value v) { return mapping.lookupOrDefault(v); });

  // A result of the producer as the consumer reads it: the yielded value,
  // reshaped as on the way between the two.
  DenseMap<Value, Value> rebuilt;
  std::function<Value(Value)> inBody = [&](Value input) -> Value {
    auto reshape = input.getDefiningOp<ReshapeOp>();
    if (!reshape)
      return producerYield[cast<OpResult>(input).getResultNumber()];
    Value &inside = rebuilt[input];
    if (!inside)
      inside = ReshapeOp::create(builder, reshape.getLoc(), reshape.getType(),
                                 inBody(reshape.getX()));
    return inside;
  };
  for (auto [arg, input] : llvm::zip(consumer.getBodyBlock().getArguments(),
                                     consumer.getInputs())) {
    if (isResultOf(input, producer))
      mapping.map(arg, inBody(input));
    else
      mapping.map(arg, body.getArgument(inputIndex[input]));
  }
  for (Operation &op : consumer.getBodyBlock().without_terminator())
    builder.clone(op, mapping);

  SmallVector<Value> yielded =
      llvm::map_to_vector(consumer.getYield().getValues(),
                          [&](Value v) { return mapping.lookupOrDefault(v); });
  for (Value value : written)
    yielded.push_back(inBody(value));
  YieldOp::create(builder, loc, yielded);

  consumer->replaceAllUsesWith(
      merged.getResults().take_front(consumer->getNumResults()));
  for (auto [value, replacement] : llvm::zip(
           written, merged.getResults().drop_front(consumer->getNumResults())))
    value.replaceUsesWithIf(replacement, [&](OpOperand &use) {
      return use.getOwner() != consumer.getOperation();
    });
  consumer->erase();
  // Outer reshapes first: erasing one may leave the one it reads unused.
  SmallVector<Operation *> unused = views.takeVector();
  for (bool erased = true; erased;) {
    erased = false;
    for (Operation *&view : unused)
      if (view && view->use_empty()) {
        view->erase();
        view = nullptr;
        erased = true;
      }
  }
  producer->erase();

  // Users of the producer that sat between it and the consumer now precede
  // their definition; no cycle was created, so a local sort fixes the order.
  Block::iterator begin = beforeProducer
                              ? std::next(beforeProducer->getIterator())
                              : block->begin();
  sortTopologically(block,
                    llvm::make_range(begin, std::next(merged->getIterator())));
  return merged;
}

//===----------------------------------------------------------------------===//
// KernelFuser
//===----------------------------------------------------------------------===//

void KernelFuser::outline() {
  for (Operation &op : llvm::make_early_inc_range(block))
    if (isComputeOp(&op))
      wrapInKernel(&op, options);
  // Splat constants now live inside the kernels that use them. Reshapes
  // nothing reads go too (last first: one may read another): a merge
  // erases the kernel they would read.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
    if (isa<ConstantOp, ReshapeOp>(op) && op.use_empty())
      op.erase();
}

/// The consumer's block argument bound to `value`, a result of a kernel it
/// reads.
static BlockArgument getArgumentFor(KernelOp consumer, Value value) {
  for (auto [arg, input] :
       llvm::zip(consumer.getBodyBlock().getArguments(), consumer.getInputs()))
    if (input == value)
      return arg;
  return {};
}

/// Whether `value` is read by `consumer` from memory other than
/// `producer`'s results.
static bool isInputOtherThan(KernelOp consumer, KernelOp producer,
                             Value value) {
  auto arg = dyn_cast<BlockArgument>(value);
  return arg && arg.getOwner() == &consumer.getBodyBlock() &&
         consumer.getInputs()[arg.getArgNumber()].getDefiningOp() !=
             producer.getOperation();
}

/// The matmul kernels of `block`, in order (a list: merges replace them).
static SmallVector<KernelOp> matmulKernels(Block &block) {
  SmallVector<KernelOp> matmuls;
  for (Operation &op : block)
    if (auto kernel = dyn_cast<KernelOp>(op);
        kernel && kernel.getKind() == KernelKind::matmul)
      matmuls.push_back(kernel);
  return matmuls;
}

void KernelFuser::fuseLibraryEpilogues() {
  for (KernelOp kernel : matmulKernels(block)) {
    FailureOr<LibraryMatmul> match = matchLibraryMatmul(kernel);
    if (failed(match))
      continue;
    LibraryEpilogue epilogue = match->epilogue;
    // Along the chain while each value has one user, a one-op elementwise
    // kernel whose op the library computes.
    while (kernel->getNumResults() == 1 && kernel->getResult(0).hasOneUse()) {
      auto consumer = dyn_cast<KernelOp>(*kernel->getResult(0).user_begin());
      if (!consumer || consumer->getBlock() != &block ||
          consumer.getKind() != KernelKind::elementwise ||
          countOps(consumer) != 1)
        break;
      Operation *op = &*computeOps(consumer).begin();
      BlockArgument current = getArgumentFor(consumer, kernel.getResult(0));
      if (!current || !llvm::is_contained(op->getOperands(), current) ||
          !epilogue
               .extend(op, current,
                       [&](Value v) {
                         return isInputOtherThan(consumer, kernel, v);
                       })
               .empty())
        break;
      kernel = mergeKernels(kernel, consumer, KernelKind::matmul);
    }
  }
}

void KernelFuser::fuseLibraryOperandLayouts() {
  // The kernel transposing `arg`'s matrix if the matmul kernel may take it:
  // one op, a matrix transpose of a value read from memory, whose result
  // only this operand reads.
  auto layoutProducer = [&](KernelOp kernel, Value operand) -> KernelOp {
    auto arg = dyn_cast<BlockArgument>(operand);
    if (!arg || arg.getOwner() != &kernel.getBodyBlock() || !arg.hasOneUse())
      return {};
    Value input = kernel.getInputs()[arg.getArgNumber()];
    auto producer = input.getDefiningOp<KernelOp>();
    if (!producer || producer->getBlock() != &block ||
        producer.getKind() != KernelKind::elementwise ||
        countOps(producer) != 1 || producer->getNumResults() != 1 ||
        !input.hasOneUse())
      return {};
    auto transpose = dyn_cast<TransposeOp>(&*computeOps(producer).begin());
    if (!transpose || !isMatrixTranspose(transpose.getPermutation()) ||
        !isa<BlockArgument>(transpose.getX()))
      return {};
    return producer;
  };
  for (KernelOp kernel : matmulKernels(block)) {
    if (failed(matchLibraryMatmul(kernel)))
      continue;
    for (int operand = 0; operand < 2; ++operand) {
      auto matmul = *kernel.getBodyBlock().getOps<MatmulOp>().begin();
      if (KernelOp producer = layoutProducer(
              kernel, operand == 0 ? matmul.getA() : matmul.getB()))
        kernel = mergeKernels(producer, kernel, KernelKind::matmul);
    }
  }
}

/// The matmul of a kernel that computes a product and nothing else.
static MatmulOp getBareProduct(KernelOp kernel) {
  auto ops = computeOps(kernel);
  if (llvm::range_size(ops) != 1 || kernel->getNumResults() != 1)
    return {};
  auto matmul = dyn_cast<MatmulOp>(*ops.begin());
  if (!matmul || kernel.getYield().getValues()[0] != matmul.getResult())
    return {};
  return matmul;
}

/// Whether `consumer` reads the product of `producer` (a bare matmul kernel
/// read by nobody else) only through the two column slices of a pair, every
/// output of their shape: merged, the tiles compute both halves side by
/// side (TiledProducts).
static bool isReadAsSlicedPair(KernelOp producer, KernelOp consumer) {
  if (!getBareProduct(producer) ||
      !llvm::all_of(producer->getUsers(), [&](Operation *user) {
        return user == consumer.getOperation();
      }))
    return false;
  std::optional<std::pair<SliceOp, SliceOp>> slices =
      getPairSlices(getArgumentFor(consumer, producer.getResult(0)));
  if (!slices)
    return false;
  ArrayRef<int64_t> half = shapeOf(slices->first.getResult());
  return llvm::all_of(consumer.getResultTypes(),
                      [&](Type type) {
                        return cast<RankedTensorType>(type).getShape() == half;
                      }) &&
         isReadPointwise(slices->first.getResult(), half) &&
         isReadPointwise(slices->second.getResult(), half);
}

/// Why two matmul kernels, the consumer combining its product with the
/// producer's, cannot be one kernel computing both products side by side
/// (TiledProducts); empty when they can.
static std::string explainProductPairEdge(KernelOp producer,
                                          KernelOp consumer) {
  FailureOr<TiledProducts> first = getTiledProducts(producer);
  FailureOr<TiledProducts> second = getTiledProducts(consumer);
  if (failed(first) || failed(second) || first->isPair() || second->isPair())
    return "[matmul-pair] only two single products, every output of their "
           "shape, are computed as a pair";
  MatmulOp a = first->products[0].matmul, b = second->products[0].matmul;
  auto outerLeft = [](KernelOp kernel, MatmulOp matmul) -> Value {
    auto arg = dyn_cast<BlockArgument>(matmul.getA());
    return arg ? kernel.getInputs()[arg.getArgNumber()] : Value();
  };
  Value left = outerLeft(producer, a);
  if (!left || left != outerLeft(consumer, b))
    return "[matmul-pair] the products do not share their left operand";
  if (!canPairProducts(a, b))
    return "[matmul-pair] a pair is two 2-D products of one type";
  for (Value result : resultsUsedBy(producer, consumer))
    if (!isReadPointwise(getArgumentFor(consumer, result), second->shape))
      return "[epilogue] the consumer reads the product at other elements "
             "(a slice, transpose or reduction of it)";
  return "";
}

/// Whether `value` of a matmul kernel's body is read only on the way to
/// its products' operands: by the matmuls, or by elementwise math whose
/// results are (a prologue already in the kernel).
static bool isReadOnlyByProducts(Value value) {
  return llvm::all_of(value.getUsers(), [](Operation *user) {
    if (isa<MatmulOp>(user))
      return true;
    return isElementwiseMath(user) && isReadOnlyByProducts(user->getResult(0));
  });
}

/// Whether `kernel` reads, directly or through elementwise kernels, the
/// result of a kernel of another kind (a product or a reduction).
static bool readsOtherKinds(KernelOp kernel) {
  SmallVector<KernelOp> work = {kernel};
  llvm::SmallPtrSet<Operation *, 8> visited;
  while (!work.empty()) {
    for (Value input : work.pop_back_val().getInputs()) {
      auto producer = input.getDefiningOp<KernelOp>();
      if (!producer)
        continue;
      if (producer.getKind() != KernelKind::elementwise)
        return true;
      if (visited.insert(producer).second)
        work.push_back(producer);
    }
  }
  return false;
}

/// Why the elementwise kernel `producer` cannot join the matmul kernel
/// `consumer` as a prologue (math on an operand's elements, evaluated as
/// the operand's tiles are loaded, its result never written); empty when
/// it can.
static std::string explainPrologueEdge(KernelOp producer, KernelOp consumer) {
  if (!llvm::all_of(producer->getUsers(), [&](Operation *user) {
        return user == consumer.getOperation();
      }))
    return "[prologue] the value is also read elsewhere; a prologue's "
           "result is never written";
  for (Value result : resultsUsedBy(producer, consumer))
    if (!isReadOnlyByProducts(getArgumentFor(consumer, result)))
      return "[prologue] the matmul kernel reads the value outside its "
             "products' operands";
  // Math on a product or a reduction belongs with it (the epilogue of the
  // product before, the normalizing step of a norm), which computes it
  // once rather than once per tile that reads it.
  if (readsOtherKinds(producer))
    return "[prologue] the value is computed from a product or a reduction, "
           "whose kernel it joins instead";
  for (Operation &op : producer.getBodyBlock().without_terminator())
    if (!isElementwiseMath(&op) && !isa<ConstantOp>(op))
      return "[prologue] a prologue is elementwise math on the operand's "
             "elements (no slice, transpose or other layout change)";
  return "";
}

std::string KernelFuser::explainLibraryEpilogueEdge(KernelOp producer,
                                                    KernelOp consumer) {
  std::string reason;
  FailureOr<LibraryMatmul> match = matchLibraryMatmul(producer, &reason);
  if (failed(match))
    return reason;
  BlockArgument current = getArgumentFor(consumer, producer.getResult(0));
  if (!current || producer->getNumResults() != 1 ||
      !producer->getResult(0).hasOneUse() || !current.hasOneUse())
    return "[library-epilogue] the product has several users; the library "
           "writes it once for all of them";
  LibraryEpilogue epilogue = match->epilogue;
  reason = epilogue.extend(*current.user_begin(), current, [&](Value v) {
    return isInputOtherThan(consumer, producer, v);
  });
  if (!reason.empty())
    return reason;
  return "[library-epilogue] the consumer holds other ops the library does "
         "not compute";
}

FailureOr<KernelKind> KernelFuser::classify(KernelOp producer,
                                            KernelOp consumer,
                                            FusionRules rules,
                                            std::string &reason) {
  KernelKind p = producer.getKind(), c = consumer.getKind();
  if (p == KernelKind::attention || c == KernelKind::attention) {
    reason = "[attention] an attention kernel is a fusion boundary";
    return failure();
  }
  // A reshape in a kernel is evaluated by index, which only the
  // elementwise strategies do; elsewhere it stays a view between kernels.
  if ((p != KernelKind::elementwise || c != KernelKind::elementwise) &&
      (readsThroughReshape(producer, consumer) || holdsReshape(producer) ||
       holdsReshape(consumer))) {
    reason = "[reshape] only elementwise kernels fuse across a reshape "
             "(here " +
             stringifyKernelKind(p).str() + " -> " +
             stringifyKernelKind(c).str() + ")";
    return failure();
  }
  if (p != KernelKind::matmul && c == KernelKind::matmul) {
    reason = "[matmul-boundary] matmul is a fusion boundary";
    if (p != KernelKind::elementwise)
      return failure();
    if (options.matmulEpilogue != MatmulEpilogue::any) {
      reason += " (elementwise prologues join it with matmul-epilogue=any)";
      return failure();
    }
    reason = explainPrologueEdge(producer, consumer);
    if (!reason.empty())
      return failure();
    return KernelKind::matmul;
  }
  if (p == KernelKind::matmul || c == KernelKind::matmul) {
    bool pair = p == KernelKind::matmul && c == KernelKind::matmul;
    if (c != KernelKind::elementwise && !pair) {
      reason = "[matmul-boundary] matmul is a fusion boundary";
      return failure();
    }
    switch (options.matmulEpilogue) {
    case MatmulEpilogue::none:
      reason = "[matmul-boundary] matmul is a fusion boundary "
               "(matmul-epilogue=none)";
      return failure();
    case MatmulEpilogue::library:
      // Library epilogues were taken before any other merge.
      reason = explainLibraryEpilogueEdge(producer, consumer);
      return failure();
    case MatmulEpilogue::any:
      break;
    }
    if (pair) {
      reason = explainProductPairEdge(producer, consumer);
      if (!reason.empty())
        return failure();
      return KernelKind::matmul;
    }
    if (isReadAsSlicedPair(producer, consumer))
      return KernelKind::matmul;
    ArrayRef<int64_t> tile = shapeOf(producer.getResult(0));
    for (Type type : consumer.getResultTypes())
      if (!sameShape(cast<RankedTensorType>(type).getShape(), tile)) {
        reason = "[shape] an epilogue must produce the matmul's shape " +
                 shapeStr(tile) +
                 " (or be a pair: two column slices of the product)";
        return failure();
      }
    for (Value result : resultsUsedBy(producer, consumer))
      if (!isReadPointwise(getArgumentFor(consumer, result), tile)) {
        reason = "[epilogue] the consumer reads the product at other elements "
                 "(a slice, transpose or reduction of it)";
        return failure();
      }
    return KernelKind::matmul;
  }
  if (p == KernelKind::elementwise && c == KernelKind::elementwise)
    return KernelKind::elementwise;
  if (rules == FusionRules::ProducerConsumer) {
    reason = "[reduction] reductions are fused by fusion-fuse-reductions";
    return failure();
  }
  if (isRowKind(p) || isRowKind(c)) {
    SmallVector<int64_t> row =
        getKernelRowShape(isRowKind(p) ? producer : consumer);
    // Kernels written by hand may claim a kind their body does not have.
    if (row.empty() ||
        (isRowKind(p) && isRowKind(c) && getKernelRowShape(consumer).empty())) {
      reason = "[kind] a row kernel without a reduction over its innermost "
               "axis";
      return failure();
    }
    if (isRowKind(p) && isRowKind(c) &&
        !sameShape(getKernelRowShape(consumer), row)) {
      reason = "[shape] reductions over different rows " + shapeStr(row) +
               " and " + shapeStr(getKernelRowShape(consumer));
      return failure();
    }
    for (KernelOp side : {producer, consumer}) {
      if (isRowKind(side.getKind()))
        continue;
      if (side.getKind() != KernelKind::elementwise) {
        reason = "[kind] a " + stringifyKernelKind(side.getKind()).str() +
                 " kernel does not join a row reduction";
        return failure();
      }
      if (std::optional<Value> outside = findValueOutsideRow(side, row)) {
        reason = "[shape] a value of shape " + shapeStr(shapeOf(*outside)) +
                 " does not live in the rows " + shapeStr(row);
        return failure();
      }
    }
    return (p == KernelKind::wide_row || c == KernelKind::wide_row)
               ? KernelKind::wide_row
               : KernelKind::row_reduction;
  }
  if (p == KernelKind::elementwise &&
      (c == KernelKind::column_reduction || c == KernelKind::reduction))
    return c;
  reason = "[kind] a " + stringifyKernelKind(p).str() +
           " kernel does not fuse into a " + stringifyKernelKind(c).str() +
           " kernel";
  return failure();
}

bool KernelFuser::reachesThroughOthers(KernelOp producer, KernelOp consumer) {
  SmallVector<Operation *> worklist;
  llvm::SmallPtrSet<Operation *, 16> visited;
  auto pushUsers = [&](Operation *op) {
    for (Operation *user : op->getUsers())
      if (Operation *inBlock = block.findAncestorOpInBlock(*user))
        worklist.push_back(inBlock);
  };
  // Reshapes on the way to the consumer are part of the edge.
  SmallVector<Operation *> readers;
  for (Value result : producer.getResults())
    collectReaders(result, readers);
  for (Operation *reader : readers)
    if (Operation *inBlock = block.findAncestorOpInBlock(*reader))
      if (inBlock != consumer.getOperation())
        worklist.push_back(inBlock);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (op == consumer.getOperation())
      return true;
    // In a sorted block nothing after the consumer reaches it.
    if (!visited.insert(op).second || !op->isBeforeInBlock(consumer))
      continue;
    pushUsers(op);
  }
  return false;
}

std::string KernelFuser::checkMerge(KernelOp producer, KernelOp consumer,
                                    FusionRules rules, KernelKind &kind,
                                    bool privateCopy) {
  std::string reason;
  FailureOr<KernelKind> merged = classify(producer, consumer, rules, reason);
  if (failed(merged))
    return reason;
  // A private copy of the producer has no other users: no cycle, nothing
  // escapes.
  if (!privateCopy && reachesThroughOthers(producer, consumer))
    return "[cycle] another user of this value leads to the consumer";

  SmallVector<Value> escaping;
  if (!privateCopy)
    escaping = resultsEscaping(producer, consumer);
  int64_t ops = countOps(producer) + countOps(consumer);
  if (ops > options.maxOps)
    return "[budget] " + std::to_string(ops) + " ops > max-ops " +
           std::to_string(options.maxOps);
  llvm::SmallDenseSet<Value> inputs(producer.getInputs().begin(),
                                    producer.getInputs().end());
  for (Value input : consumer.getInputs())
    if (!isResultOf(input, producer))
      inputs.insert(input);
  int64_t params = inputs.size() + consumer->getNumResults() + escaping.size();
  if (params > options.maxParams)
    return "[budget] " + std::to_string(params) + " parameters > max-params " +
           std::to_string(options.maxParams);
  int64_t live =
      std::max(estimateLiveValues(producer),
               estimateLiveValues(consumer) + int64_t(escaping.size()));
  if (live > options.maxLiveValues)
    return "[budget] about " + std::to_string(live) +
           " live values > max-live-values " +
           std::to_string(options.maxLiveValues);

  // One flat index space writes outputs of one shape.
  if (*merged == KernelKind::elementwise && !escaping.empty() &&
      consumer->getNumResults() > 0) {
    ArrayRef<int64_t> shape = shapeOf(consumer->getResult(0));
    for (Value result : escaping)
      if (!sameShape(shapeOf(result), shape) &&
          !getEscapingView(result, consumer))
        return "[shape] the value is also needed elsewhere, and an "
               "elementwise kernel writes outputs of one shape (" +
               shapeStr(shapeOf(result)) + " vs " + shapeStr(shape) + ")";
  }
  // The plan: the row strategies write full rows and values per row
  // (KernelPlan.h); any other output would leave the kernel per_element.
  if (isRowKind(*merged)) {
    SmallVector<int64_t> row = getKernelRowShape(consumer);
    if (row.empty())
      row = getKernelRowShape(producer);
    SmallVector<Value> outputs(consumer->getResults());
    llvm::append_range(outputs, escaping);
    for (Value output : outputs)
      if (!isRowOutput(shapeOf(output), row))
        return "[plan] the merged row kernel would write " +
               shapeStr(shapeOf(output)) +
               ", neither a row nor a value per row of " + shapeStr(row) +
               ": no row strategy writes it";
  }
  kind = *merged;
  return "";
}

bool KernelFuser::fuseProducer(KernelOp producer, FusionRules rules) {
  // Readers through reshapes included; the copies that recomputing makes
  // are read directly, so a producer read through a reshape is not
  // recomputed.
  llvm::SetVector<Operation *> users;
  bool readThroughReshape = false;
  for (Value result : producer.getResults()) {
    SmallVector<Operation *> readers;
    collectReaders(result, readers);
    for (Operation *reader : readers)
      if (Operation *inBlock = block.findAncestorOpInBlock(*reader))
        users.insert(inBlock);
    readThroughReshape |= llvm::any_of(
        result.getUsers(), [](Operation *u) { return isa<ReshapeOp>(u); });
  }
  if (users.empty())
    return false;

  SmallVector<Value> producerInputs(producer.getInputs());
  int64_t inputBytes = bytesOf(producerInputs);
  SmallVector<Value> producerResults(producer.getResults());
  int64_t outputBytes = bytesOf(producerResults);

  // Merging into one consumer: it no longer reads the values it took from
  // the producer, inputs both read are read once, and results nobody else
  // uses are no longer written.
  int64_t bestDelta = 0;
  KernelOp bestConsumer;
  KernelKind bestKind = KernelKind::elementwise;
  bool allKernelsAccept = !readThroughReshape;
  SmallVector<std::pair<KernelOp, KernelKind>> consumers;
  for (Operation *user : users) {
    auto consumer = dyn_cast<KernelOp>(user);
    if (!consumer) {
      allKernelsAccept = false;
      continue;
    }
    KernelKind kind;
    if (checkMerge(producer, consumer, rules, kind, /*privateCopy=*/true)
            .empty())
      consumers.push_back({consumer, kind});
    else
      allKernelsAccept = false;
    if (!checkMerge(producer, consumer, rules, kind).empty())
      continue;
    SmallVector<Value> used = resultsUsedBy(producer, consumer);
    SmallVector<Value> shared;
    for (Value input : producer.getInputs())
      if (llvm::is_contained(consumer.getInputs(), input))
        shared.push_back(input);
    // Results read here only (through reshapes too) are no longer written.
    SmallVector<Value> escaping = resultsEscaping(producer, consumer);
    SmallVector<Value> onlyHere;
    for (Value result : used)
      if (!llvm::is_contained(escaping, result))
        onlyHere.push_back(result);
    int64_t delta = -bytesOf(used) - bytesOf(shared) - bytesOf(onlyHere);
    if (delta < bestDelta) {
      bestDelta = delta;
      bestConsumer = consumer;
      bestKind = kind;
    }
  }

  // Recomputing in every consumer: each reads the producer's inputs it does
  // not read yet, and the producer disappears.
  bool duplicate = false;
  // A product is never computed twice: its FLOPs cost more than the bytes
  // recomputing saves.
  bool hasMatmul = !producer.getBodyBlock().getOps<MatmulOp>().empty();
  if (allKernelsAccept && consumers.size() > 1 && !hasMatmul &&
      countOps(producer) <= options.maxRecomputeOps) {
    int64_t delta = -inputBytes - outputBytes;
    for (auto [consumer, kind] : consumers) {
      SmallVector<Value> missing;
      for (Value input : producer.getInputs())
        if (!llvm::is_contained(consumer.getInputs(), input))
          missing.push_back(input);
      SmallVector<Value> used = resultsUsedBy(producer, consumer);
      delta += bytesOf(missing) - bytesOf(used);
    }
    if (delta < bestDelta) {
      bestDelta = delta;
      duplicate = true;
    }
  }
  if (bestDelta >= 0)
    return false;

  if (!duplicate) {
    mergeKernels(producer, bestConsumer, bestKind);
    return true;
  }
  for (auto [index, entry] : llvm::enumerate(consumers)) {
    auto [consumer, kind] = entry;
    KernelOp copy = producer;
    if (index + 1 < consumers.size()) {
      OpBuilder builder(producer->getNextNode());
      copy = cast<KernelOp>(builder.clone(*producer));
      for (auto [from, to] :
           llvm::zip(producer.getResults(), copy.getResults()))
        from.replaceUsesWithIf(to, [&](OpOperand &use) {
          return use.getOwner() == consumer.getOperation();
        });
    }
    mergeKernels(copy, consumer, kind);
  }
  return true;
}

void KernelFuser::fuseVertically(FusionRules rules) {
  if (options.matmulEpilogue == MatmulEpilogue::library) {
    fuseLibraryEpilogues();
    fuseLibraryOperandLayouts();
  }
  // Each sweep visits consumers before their producers; a merge can open
  // new opportunities, so sweep until nothing changes.
  for (bool changed = true; changed;) {
    changed = false;
    SmallVector<KernelOp> kernels;
    for (Operation &op : llvm::reverse(block))
      if (auto kernel = dyn_cast<KernelOp>(op))
        kernels.push_back(kernel);
    llvm::DenseSet<Operation *> alive;
    for (KernelOp kernel : kernels)
      alive.insert(kernel);
    for (KernelOp kernel : kernels) {
      // Merges erase kernels; only those still alive are visited.
      if (!alive.contains(kernel))
        continue;
      SmallVector<Operation *> neighbours;
      for (Value result : kernel->getResults())
        collectReaders(result, neighbours);
      if (!fuseProducer(kernel, rules))
        continue;
      changed = true;
      alive.erase(kernel);
      for (Operation *op : neighbours)
        alive.erase(op);
    }
  }
}

/// The shape of `value`, each dynamic size named by its class: two
/// independent `?x64` values are one index space only if their sizes are
/// provably equal.
static std::string spaceStr(Value value, SizeClasses &classes) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleave(
      llvm::enumerate(shapeOf(value)),
      [&](auto dim) {
        if (ShapedType::isDynamic(dim.value()))
          os << "?" << classes.getClass({value, int64_t(dim.index())});
        else
          os << dim.value();
      },
      [&] { os << "x"; });
  os << "]";
  return s;
}

/// What must agree for two independent kernels to share a launch.
static std::optional<std::string> getIterationSpace(KernelOp kernel,
                                                    SizeClasses &classes) {
  KernelKind kind = kernel.getKind();
  if (kernel->getNumResults() == 0)
    return std::nullopt;
  if (isRowKind(kind)) {
    for (Operation &op : computeOps(kernel))
      if (getRowShape(&op))
        return stringifyKernelKind(kind).str() +
               spaceStr(op.getOperand(0), classes);
    return std::nullopt;
  }
  if (kind == KernelKind::elementwise)
    return stringifyKernelKind(kind).str() +
           spaceStr(kernel->getResult(0), classes);
  return std::nullopt;
}

void KernelFuser::fuseHorizontally(bool siblingReductionsOnly) {
  // Kernels with the same iteration space, in block order; each kernel
  // joins the latest earlier one it is independent of, preferring one that
  // reads a common input.
  llvm::StringMap<SmallVector<KernelOp>> bySpace;
  constexpr size_t kSearchWindow = 16;
  // Sizes of the block as it is before any merge: each kernel's space is
  // taken before it joins another.
  SizeClasses classes(block.getParentOp());
  for (Operation &op : llvm::make_early_inc_range(block)) {
    auto kernel = dyn_cast<KernelOp>(op);
    if (!kernel)
      continue;
    std::optional<std::string> space = getIterationSpace(kernel, classes);
    if (!space || (siblingReductionsOnly && !isRowKind(kernel.getKind())))
      continue;
    SmallVector<KernelOp> &candidates = bySpace[*space];
    KernelOp partner;
    int partnerIndex = -1;
    for (int i = candidates.size() - 1, seen = 0;
         i >= 0 && seen < int(kSearchWindow); --i, ++seen) {
      KernelOp earlier = candidates[i];
      bool sharesInput = llvm::any_of(earlier.getInputs(), [&](Value v) {
        return llvm::is_contained(kernel.getInputs(), v);
      });
      if (siblingReductionsOnly && !sharesInput)
        continue;
      int64_t ops = countOps(earlier) + countOps(kernel);
      llvm::SmallDenseSet<Value> inputs(earlier.getInputs().begin(),
                                        earlier.getInputs().end());
      inputs.insert(kernel.getInputs().begin(), kernel.getInputs().end());
      int64_t params =
          inputs.size() + earlier->getNumResults() + kernel->getNumResults();
      int64_t live =
          std::max(estimateLiveValues(earlier), estimateLiveValues(kernel)) + 1;
      if (ops > options.maxOps || params > options.maxParams ||
          live > options.maxLiveValues)
        continue;
      if (reachesThroughOthers(earlier, kernel) ||
          !resultsUsedBy(earlier, kernel).empty())
        continue;
      if (!partner || sharesInput) {
        partner = earlier;
        partnerIndex = i;
        if (sharesInput)
          break;
      }
    }
    if (!partner) {
      candidates.push_back(kernel);
      continue;
    }
    candidates.erase(candidates.begin() + partnerIndex);
    candidates.push_back(mergeKernels(partner, kernel, kernel.getKind()));
  }
}

void KernelFuser::nameKernels(StringRef prefix) {
  unsigned index = 0;
  for (Operation &op : block)
    if (auto kernel = dyn_cast<KernelOp>(op))
      kernel.setName((prefix + "_k" + Twine(index++)).str());
}

void KernelFuser::emitRemarks(FusionRules rules) {
  for (Operation &op : block) {
    auto consumer = dyn_cast<KernelOp>(op);
    if (!consumer)
      continue;
    for (auto [arg, input] : llvm::zip(consumer.getBodyBlock().getArguments(),
                                       consumer.getInputs())) {
      Value source = getViewedValue(input);
      auto producer = source.getDefiningOp<KernelOp>();
      if (!producer)
        continue;
      std::string reason = explainEdge(producer, consumer, rules);
      Value yielded = producer.getYield().getOperand(
          cast<OpResult>(source).getResultNumber());
      Operation *producing = yielded.getDefiningOp();
      if (!producing)
        producing = producer;
      Operation *consuming =
          arg.use_empty() ? consumer.getOperation() : *arg.user_begin();
      producing->emitRemark()
          << "not fused with '" << consuming->getName() << "' at "
          << consuming->getLoc() << ": " << reason;
    }
  }
}

std::string KernelFuser::explainEdge(KernelOp producer, KernelOp consumer,
                                     FusionRules rules) {
  KernelKind kind;
  std::string reason = checkMerge(producer, consumer, rules, kind);
  if (reason.empty())
    reason = "[cost] the value has several consumers; writing it once "
             "moves fewer bytes than fusing it here";
  return reason;
}

void fusion::fuseFunctions(Operation *root, const FusionOptions &options,
                           function_ref<void(KernelFuser &)> fuse) {
  root->walk([&](FunctionOpInterface function) {
    for (Block &block : function.getFunctionBody()) {
      KernelFuser fuser(block, options);
      fuser.outline();
      fuse(fuser);
      fuser.nameKernels(function.getName());
    }
  });
}

static constexpr StringLiteral kBudgetsAttr = "fusion.budgets";

void fusion::recordFusionOptions(Operation *root,
                                 const FusionOptions &options) {
  Builder b(root->getContext());
  DictionaryAttr budgets = b.getDictionaryAttr({
      b.getNamedAttr("max_ops", b.getI64IntegerAttr(options.maxOps)),
      b.getNamedAttr("max_params", b.getI64IntegerAttr(options.maxParams)),
      b.getNamedAttr("max_live_values",
                     b.getI64IntegerAttr(options.maxLiveValues)),
      b.getNamedAttr("max_row_elements",
                     b.getI64IntegerAttr(options.maxRowElements)),
      b.getNamedAttr("max_recompute_ops",
                     b.getI64IntegerAttr(options.maxRecomputeOps)),
      b.getNamedAttr(
          "matmul_epilogue",
          b.getI64IntegerAttr(static_cast<int64_t>(options.matmulEpilogue))),
  });
  root->walk([&](FunctionOpInterface function) {
    function->setAttr(kBudgetsAttr, budgets);
  });
}

void fusion::eraseFusionOptions(Operation *root) {
  root->walk(
      [](FunctionOpInterface function) { function->removeAttr(kBudgetsAttr); });
}

FusionOptions fusion::readFusionOptions(Operation *function,
                                        const FusionOptions &defaults) {
  FusionOptions options = defaults;
  auto budgets = function->getAttrOfType<DictionaryAttr>(kBudgetsAttr);
  if (!budgets)
    return options;
  auto read = [&](StringRef key, int64_t &field) {
    if (auto value = budgets.getAs<IntegerAttr>(key))
      field = value.getInt();
  };
  read("max_ops", options.maxOps);
  read("max_params", options.maxParams);
  read("max_live_values", options.maxLiveValues);
  read("max_row_elements", options.maxRowElements);
  read("max_recompute_ops", options.maxRecomputeOps);
  int64_t epilogue = static_cast<int64_t>(options.matmulEpilogue);
  read("matmul_epilogue", epilogue);
  if (epilogue >= 0 && epilogue <= static_cast<int64_t>(MatmulEpilogue::any))
    options.matmulEpilogue = static_cast<MatmulEpilogue>(epilogue);
  return options;
}
