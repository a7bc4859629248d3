//===- KernelPlan.cpp - How each fusion.kernel runs on a GPU --------------===//

#include "fusion/Dialect/Fusion/Analysis/KernelPlan.h"

#include "fusion/Dialect/Fusion/Analysis/LibraryMatmul.h"
#include "fusion/Dialect/Fusion/Analysis/Traffic.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::fusion;

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

// Row plans of static width come from the measured table (RowPlans.def,
// lookUpMeasuredRowPlan) where it covers the kernel; the rule below plans
// the rest (few or dynamic rows, widths outside the table's samples, other
// chips, plans the checks or max-row-elements refuse). The rule (H200,
// 2026-11-30: plan_sweep.py over hand-written plans of the benchmark's row
// kernels and of odd and vocabulary widths; numbers in docs/results.md): a
// block's threads are sized for about kVectorsPerThread vectors
// (kScalarsPerThread elements where no vector divides the row) each, from
// a warp up to kRowThreads: smaller blocks
// holding more (more rows in flight per SM, cheaper block-wide
// reductions). A thread holds up to kMaxHeldVectors vectors (as many
// registers as kMaxHeldScalars elements), half of that in blocks of more
// than 256 threads (128 registers a thread at most). A row one block of
// kRowThreads cannot hold is split over a cluster; a part the cluster
// cannot split further gets up to kMaxRowThreads. The blocks of a full
// cluster (8) hold no more than those of kMaxRowThreads (softmax over rows
// of 131072 bf16 in 8 parts: 2249 GB/s at 256 threads x 8 vectors, 2040
// at 128 x 16, 2118 at 512 x 4). Measured: logsumexp over
// rows of 32768 bf16 at 2496 GB/s in 2 parts of 128 threads x 16 vectors
// (2217 in one block of 512 x 8), softmax over rows of 8192 at 3742 with
// 128 x 8 (3704 with 256 x 4), rows of 50257 (scalars) at 2397 in 4 parts
// of 128 x 99 (1653 with 512 x 25). (And 2026-11-29: 4 vectors a thread
// instead of 1 took softmax over rows of 8192 from 2515 to 3286 GB/s.)
static constexpr int64_t kRowThreads = 128;
static constexpr int64_t kMaxRowThreads = 512;
static constexpr int64_t kVectorsPerThread = 4;
static constexpr int64_t kScalarsPerThread = 8;
static constexpr int64_t kMaxHeldVectors = 16;
static constexpr int64_t kMaxHeldScalars = 128;
// Threads of a block that streams a row of dynamic length. (H200,
// 2026-11-30, plan_sweep over rows of 16384 bf16 in vectors: softmax 2996
// GB/s with 128, 2647 with 256; logsumexp 2547 and 2102. But with 128,
// ptxas kept 8-16 bytes on the stack in random graphs' kernels.)
static constexpr int64_t kDynamicRowThreads = 256;
// Threads of elementwise and per-element blocks.
static constexpr int64_t kFlatThreads = 256;
// Reduction sweeps (columns, split_reduction): blocks of up to
// kColumnThreads; enough of them for kColumnBlocksPerSM blocks on every
// multiprocessor, found by splitting each output's elements, while each
// thread still reduces at least kMinColumnRows rows (vectors). (H200,
// 2026-11-30: 4 blocks per multiprocessor instead of 8 ran five column and
// global sums 0.3-5.6% faster: fewer partials to combine.)
static constexpr int64_t kColumnThreads = 256;
static constexpr int64_t kColumnBlocksPerSM = 4;
static constexpr int64_t kMinColumnRows = 8;
static constexpr int64_t kMaxColumnSplit = 1024;
/// matmul_wgmma's few-row kernel runs one wave: K is split as far as the
/// blocks still fit on the multiprocessors at one each (each holds one),
/// no further. A block streams B at about 50 GB/s, so a wave of 64 or more
/// reads at close to copy bandwidth, while a second, partial wave runs at
/// the speed of its few blocks, and each range more is a partial tile to
/// write and sum (H200, 2026-12-01, decode's down projection, 16 tiles of
/// 256 columns: 4 ranges 27.1 us, 8 27.7, 9 35.0 (two waves), 16 32.8; the
/// up projection's pair, 86 tiles: 1 range 46.6-47.4 us, 2 52.6-54.2, 3
/// 51.6-53.0). A range is at least kMinFewRowSteps steps of K.
static constexpr int64_t kMinFewRowSteps = 4;

/// The real reductions of `kernel` in order: at least one, and no matmul
/// (`what` names the kernel in the reason).
static FailureOr<SmallVector<Operation *>>
getReductions(KernelOp kernel, StringRef what, std::string &reason) {
  SmallVector<Operation *> reductions;
  for (Operation &op : kernel.getBodyBlock()) {
    if (isa<MatmulOp>(op)) {
      reason = ("a " + what + " kernel cannot hold a matmul").str();
      return failure();
    }
    if (isRealReduction(&op))
      reductions.push_back(&op);
  }
  if (reductions.empty()) {
    reason = ("a " + what + " kernel needs a reduction").str();
    return failure();
  }
  return reductions;
}

/// The reductions among `reductions` that `value` reads.
static SmallVector<Operation *>
reductionsReadBy(Value value, ArrayRef<Operation *> reductions) {
  SmallVector<Operation *> read;
  DenseSet<Value> visited;
  SmallVector<Value> work{value};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!visited.insert(v).second)
      continue;
    Operation *def = v.getDefiningOp();
    if (!def)
      continue;
    if (llvm::is_contained(reductions, def)) {
      read.push_back(def);
      continue;
    }
    llvm::append_range(work, def->getOperands());
  }
  return read;
}

/// The sums of exp(y - c) of a row kernel that pair with a max of y
/// (OnlineSum).
static SmallVector<OnlineSum> findOnlineSums(const RowKernelShape &row) {
  auto isF32 = [](Value v) { return getElementTypeOrSelf(v).isF32(); };
  SmallVector<OnlineSum> found;
  for (auto [position, sum] : llvm::enumerate(row.reductions)) {
    if (!isa<ReduceSumOp>(sum))
      continue;
    auto exp = sum->getOperand(0).getDefiningOp<ExpOp>();
    auto sub = exp ? exp.getX().getDefiningOp<SubOp>() : SubOp();
    if (!sub || !isF32(sum->getResult(0)) || !isF32(exp.getResult()) ||
        !isF32(sub.getResult()))
      continue;
    // c broadcasts along the row: [R..., 1], or 1 in some of R too.
    Value y = sub.getLhs(), c = sub.getRhs();
    ArrayRef<int64_t> cShape = shapeOf(c);
    auto perRow = [&] {
      if (cShape.size() != row.rowShape.size() || cShape.back() != 1)
        return false;
      for (auto [size, rowSize] : llvm::zip(cShape, row.rowShape))
        if (size != 1 && size != rowSize)
          return false;
      return true;
    };
    if (shapeOf(y) != row.rowShape || !perRow())
      continue;
    ArrayRef<Operation *> before =
        ArrayRef(row.reductions).take_front(position);
    auto max = llvm::find_if(before, [&](Operation *r) {
      return isa<ReduceMaxOp>(r) && r->getOperand(0) == y;
    });
    if (max == before.end())
      continue;
    // c is evaluated once the max's pass is done.
    ArrayRef<Operation *> upToMax(before.begin(), max + 1);
    if (!llvm::all_of(reductionsReadBy(c, row.reductions), [&](Operation *r) {
          return llvm::is_contained(upToMax, r);
        }))
      continue;
    // A max pairs with one sum.
    if (llvm::any_of(found, [&](const OnlineSum &o) { return o.max == *max; }))
      continue;
    found.push_back({*max, sum, y, c});
  }
  return found;
}

FailureOr<RowKernelShape> fusion::getRowKernelShape(KernelOp kernel,
                                                    std::string &reason) {
  FailureOr<SmallVector<Operation *>> reductions =
      getReductions(kernel, "row", reason);
  if (failed(reductions))
    return failure();
  RowKernelShape row;
  row.reductions = std::move(*reductions);
  row.rowInput = row.reductions.front()->getOperand(0);
  row.rowShape = shapeOf(row.rowInput);
  int64_t rank = row.rowShape.size();
  for (Operation *reduction : row.reductions) {
    if (shapeOf(reduction->getOperand(0)) != row.rowShape) {
      reason = "its reductions reduce rows of different shapes";
      return failure();
    }
    if (getReduceAxes(reduction) != ArrayRef<int64_t>{rank - 1}) {
      reason = "a reduction is not over the innermost axis alone";
      return failure();
    }
  }
  for (Value value : kernel.getYield().getValues()) {
    if (!isRowOutput(shapeOf(value), row.rowShape)) {
      reason = "an output is neither a row nor a value per row";
      return failure();
    }
  }
  row.onlineSums = findOnlineSums(row);
  return row;
}

const OnlineSum *RowKernelShape::findOnlineSum(Operation *reduction) const {
  for (const OnlineSum &online : onlineSums)
    if (online.max == reduction || online.sum == reduction)
      return &online;
  return nullptr;
}

FailureOr<ReductionKernelShape>
fusion::getReductionKernelShape(KernelOp kernel, std::string &reason) {
  FailureOr<SmallVector<Operation *>> reductions =
      getReductions(kernel, "reduction", reason);
  if (failed(reductions))
    return failure();
  ReductionKernelShape sweep;
  sweep.reductions = std::move(*reductions);
  sweep.input = sweep.reductions.front()->getOperand(0);
  sweep.shape = shapeOf(sweep.input);
  ArrayRef<int64_t> axes = getReduceAxes(sweep.reductions.front());
  int64_t rank = sweep.shape.size();
  DenseSet<Value> results;
  for (Operation *reduction : sweep.reductions) {
    if (shapeOf(reduction->getOperand(0)) != sweep.shape ||
        getReduceAxes(reduction) != axes) {
      reason = "its reductions reduce different shapes or axes";
      return failure();
    }
    results.insert(reduction->getResult(0));
  }
  // Every reduction is computed in one sweep over the rows: none may read
  // another's result.
  for (Operation *reduction : sweep.reductions) {
    if (!reductionsReadBy(reduction->getOperand(0), sweep.reductions).empty()) {
      reason = "a reduction reads another reduction's result";
      return failure();
    }
  }
  for (Value value : kernel.getYield().getValues()) {
    if (!results.contains(value)) {
      reason = "an output is not a reduction's result";
      return failure();
    }
  }
  for (int64_t d = 0; d < rank; ++d)
    (llvm::is_contained(axes, d) ? sweep.reducedDims : sweep.keptDims)
        .push_back(d);
  return sweep;
}

/// The product of `shape`'s sizes at `dims`; dynamic if one is.
static int64_t productOf(ArrayRef<int64_t> shape, ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims) {
    if (ShapedType::isDynamic(shape[d]))
      return ShapedType::kDynamic;
    p *= shape[d];
  }
  return p;
}

int64_t fusion::getColumnLanes(KernelPlanAttr plan,
                               const ReductionKernelShape &shape) {
  int64_t lanes = std::min<int64_t>(
      32, llvm::bit_floor(static_cast<uint64_t>(plan.getThreads())));
  int64_t kept = productOf(shape.shape, shape.keptDims);
  if (!ShapedType::isDynamic(kept)) {
    int64_t columns = kept * getColumnSegmentRows(plan, shape);
    lanes = std::min<int64_t>(lanes, llvm::PowerOf2Ceil(std::max<int64_t>(
                                         1, columns / plan.getVector())));
  }
  return lanes;
}

int64_t fusion::getColumnSegmentRows(KernelPlanAttr plan,
                                     const ReductionKernelShape &shape) {
  int64_t kept = productOf(shape.shape, shape.keptDims);
  int64_t vector = plan.getVector();
  if (ShapedType::isDynamic(kept) || kept == 0 || kept % vector == 0)
    return 1;
  return vector / std::gcd(kept, vector);
}

std::string fusion::whyNotColumnSegments(KernelOp kernel,
                                         const ReductionKernelShape &shape,
                                         int64_t vector) {
  int64_t rank = shape.shape.size();
  int64_t keptCount = shape.keptDims.size();
  for (auto [i, d] : llvm::enumerate(shape.keptDims))
    if (d != rank - keptCount + static_cast<int64_t>(i))
      return "its kept axes are not the innermost ones";
  int64_t kept = productOf(shape.shape, shape.keptDims);
  int64_t rows = productOf(shape.shape, shape.reducedDims);
  if (ShapedType::isDynamic(kept) || ShapedType::isDynamic(rows))
    return "its sizes are dynamic";
  if (kept == 0 || !llvm::isPowerOf2_64(vector))
    return "it has no columns";
  int64_t segment = vector / std::gcd(kept, vector);
  if (rows % segment != 0)
    return "its " + std::to_string(rows) + " rows are not whole segments of " +
           std::to_string(segment);
  auto readable = [&](Value v) {
    ArrayRef<int64_t> s = shapeOf(v);
    return s == shape.shape ||
           llvm::all_of(s, [](int64_t d) { return d == 1; });
  };
  for (Value arg : kernel.getBodyBlock().getArguments())
    if (!arg.use_empty() && !readable(arg))
      return "an input is broadcast along the rows";
  for (Operation &op : kernel.getBodyBlock().without_terminator()) {
    if (llvm::is_contained(shape.reductions, &op))
      continue;
    if (!isa<ConstantOp>(op) && !isElementwiseMath(&op))
      return "'" + op.getName().getStringRef().str() + "' is not elementwise";
    if (!llvm::all_of(op.getOperands(), readable) ||
        !llvm::all_of(op.getResults(), readable))
      return "'" + op.getName().getStringRef().str() +
             "' broadcasts along the rows";
  }
  return "";
}

bool fusion::isRowOutput(ArrayRef<int64_t> shape, ArrayRef<int64_t> rowShape) {
  if (shape == rowShape)
    return true;
  ArrayRef<int64_t> outer = rowShape.drop_back();
  return shape == outer || (shape.size() == rowShape.size() &&
                            shape.drop_back() == outer && shape.back() == 1);
}

bool fusion::isFlatElementwise(KernelOp kernel) {
  ValueRange results = kernel.getYield().getValues();
  if (results.empty())
    return false;
  ArrayRef<int64_t> shape = shapeOf(results.front());
  if (shape.empty())
    return false;
  auto fits = [&](Value v) {
    ArrayRef<int64_t> s = shapeOf(v);
    return s == shape || llvm::all_of(s, [](int64_t d) { return d == 1; });
  };
  if (!llvm::all_of(kernel.getBodyBlock().getArguments(), fits))
    return false;
  for (Operation &op : kernel.getBodyBlock().without_terminator())
    if (!(isa<ConstantOp>(op) || isElementwiseMath(&op)) ||
        !fits(op.getResult(0)))
      return false;
  return llvm::all_of(results, [&](Value v) { return shapeOf(v) == shape; });
}

int64_t fusion::getVectorLanes(KernelOp kernel, const GpuTarget &target) {
  int64_t smallest = target.vectorBytes;
  auto visit = [&](Type type) {
    Type element = getElementTypeOrSelf(type);
    smallest = std::min<int64_t>(
        smallest, std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8));
  };
  for (Type type : kernel.getInputs().getTypes())
    visit(type);
  for (Type type : kernel.getResultTypes())
    visit(type);
  return target.vectorBytes / smallest;
}

/// Whether every input read along the innermost dimension allows vector
/// loads of `width`: a static innermost size that keeps its rows aligned (a
/// size of 1 broadcasts); a dynamic one is left to the caller.
static bool inputsAllowVectors(KernelOp kernel, int64_t width) {
  for (Type type : kernel.getInputs().getTypes()) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(type).getShape();
    if (!shape.empty() && !ShapedType::isDynamic(shape.back()) &&
        shape.back() != 1 && shape.back() % width != 0)
      return false;
  }
  return true;
}

int64_t fusion::getInnermostVectorWidth(KernelOp kernel,
                                        const GpuTarget &target,
                                        int64_t innermost) {
  int64_t width = getVectorLanes(kernel, target);
  if (ShapedType::isDynamic(innermost) || innermost % width != 0 ||
      !inputsAllowVectors(kernel, width))
    return 1;
  return width;
}

/// The vector width of an elementwise plan whose outputs have `shape`: the
/// flat kernel's lanes, else getInnermostVectorWidth, but 1 where a trivial
/// reduction drops its operand's innermost axis ([R, 1] -> [R]): lanes of
/// its result are not lanes of its operand.
static int64_t elementwiseVectorWidth(KernelOp kernel, const GpuTarget &target,
                                      ArrayRef<int64_t> shape) {
  if (isFlatElementwise(kernel))
    return getVectorLanes(kernel, target);
  if (shape.empty())
    return 1;
  for (Operation &op : kernel.getBodyBlock()) {
    if (!isTrivialReduction(&op))
      continue;
    int64_t rank = shapeOf(op.getOperand(0)).size();
    if (shapeOf(op.getResult(0)).size() < static_cast<size_t>(rank) &&
        llvm::is_contained(getReduceAxes(&op), rank - 1))
      return 1;
  }
  return getInnermostVectorWidth(kernel, target, shape.back());
}

int64_t fusion::getDynamicRowVectorWidth(KernelOp kernel,
                                         const GpuTarget &target) {
  int64_t width = getVectorLanes(kernel, target);
  return inputsAllowVectors(kernel, width) ? width : 1;
}

/// The most vectors (of `width` elements) a row plan has a thread of a
/// block of `threads` hold.
static int64_t maxHeldPerThread(int64_t width, int64_t threads) {
  int64_t held = width > 1 ? kMaxHeldVectors : kMaxHeldScalars;
  return threads > 256 ? held / 2 : held;
}

bool fusion::hasShiftedRowVectors(KernelPlanAttr plan, int64_t rowLength) {
  return !ShapedType::isDynamic(rowLength) && rowLength % plan.getVector() != 0;
}

std::string fusion::whyNotShiftedRows(KernelOp kernel,
                                      const RowKernelShape &row) {
  for (Operation &op : kernel.getBodyBlock().without_terminator()) {
    if (isa<ConstantOp>(op) || isElementwiseMath(&op) ||
        llvm::is_contained(row.reductions, &op))
      continue;
    // A trivial reduction of values per row ([R..., 1] -> [R...]) is not
    // read in lanes.
    if (isTrivialReduction(&op) && !shapeOf(op.getOperand(0)).empty() &&
        shapeOf(op.getOperand(0)).back() == 1)
      continue;
    return "'" + op.getName().getStringRef().str() +
           "' does not read its operand at the columns of its result";
  }
  return "";
}

/// The columns a row plan's parts cover: the row's whole vectors (all of
/// it, but where shifted vectors leave edge elements).
static int64_t getRowSpan(int64_t rowLength, int64_t vector) {
  return rowLength / vector * vector;
}

int64_t fusion::getRowPart(KernelPlanAttr plan, int64_t rowLength) {
  if (ShapedType::isDynamic(rowLength))
    return rowLength;
  int64_t vector = plan.getVector();
  return llvm::divideCeil(getRowSpan(rowLength, vector),
                          plan.getCluster() * vector) *
         vector;
}

int64_t fusion::getHeldVectorsPerThread(KernelPlanAttr plan, int64_t rowPart) {
  if (plan.getRow() != RowStorage::registers || ShapedType::isDynamic(rowPart))
    return 0;
  return llvm::divideCeil(rowPart, plan.getVector() * plan.getThreads());
}

SmallVector<unsigned> fusion::getStagedRowInputs(KernelOp kernel,
                                                 const RowKernelShape &row) {
  SmallVector<unsigned> staged;
  for (BlockArgument arg : kernel.getBodyBlock().getArguments())
    if (shapeOf(arg) == row.rowShape)
      staged.push_back(arg.getArgNumber());
  return staged;
}

/// Bytes of `elements` elements of `value`'s element type.
static int64_t bytesOf(Value value, int64_t elements) {
  return elements *
         getElementTypeOrSelf(value.getType()).getIntOrFloatBitWidth() / 8;
}

int64_t fusion::getStagedRowBytes(KernelOp kernel, const RowKernelShape &row,
                                  KernelPlanAttr plan,
                                  SmallVectorImpl<int64_t> *offsets) {
  int64_t part = getRowPart(plan, row.rowShape.back()), bytes = 0;
  for (unsigned input : getStagedRowInputs(kernel, row)) {
    if (offsets)
      offsets->push_back(bytes);
    bytes += llvm::alignTo(
        bytesOf(kernel.getBodyBlock().getArgument(input), part), 16);
  }
  return bytes;
}

/// Why a row kernel cannot stage its rows under `plan` on `target` (empty
/// when it can): bulk copies need sm_90, 16-byte aligned sources and sizes
/// that are multiples of 16 bytes (so vectors of a static width: whole, and
/// then parts of whole 16-byte chunks, or shifted, whose copies start and
/// end on vector boundaries of 16-byte multiples), and the parts must fit
/// kMaxStagedRowBytes.
static std::string whyNotStagedRows(KernelOp kernel, const RowKernelShape &row,
                                    KernelPlanAttr plan,
                                    const GpuTarget &target) {
  if (!target.tensorCopies)
    return "staged rows need bulk copies, sm_90 or later (" + target.chip +
           " has none)";
  int64_t h = row.rowShape.back();
  if (ShapedType::isDynamic(h) || plan.getVector() == 1)
    return "staged rows are whole or shifted vectors of a static width";
  bool shifted = hasShiftedRowVectors(plan, h);
  int64_t part = getRowPart(plan, h);
  for (unsigned input : getStagedRowInputs(kernel, row)) {
    BlockArgument arg = kernel.getBodyBlock().getArgument(input);
    if (shifted && bytesOf(arg, plan.getVector()) % 16 != 0)
      return "staged rows in shifted vectors copy whole 16-byte chunks (a "
             "vector of " +
             std::to_string(plan.getVector()) + " elements of input " +
             std::to_string(input) + " is not)";
    if (!shifted && (bytesOf(arg, h) % 16 != 0 || bytesOf(arg, part) % 16 != 0))
      return "staged rows copy rows and parts of whole 16-byte chunks (a "
             "part of " +
             std::to_string(part) + " elements of input " +
             std::to_string(input) + " is not)";
  }
  // The staged buffers start past the first 1024 bytes of shared memory,
  // the launch's static objects (a warp's f32 partials per reduction and
  // the barrier) below them (Rows.cpp).
  if (row.reductions.size() > 6)
    return "staged rows have at most 6 reductions (" +
           std::to_string(row.reductions.size()) + " here)";
  int64_t bytes = getStagedRowBytes(kernel, row, plan);
  if (bytes > kMaxStagedRowBytes)
    return "a block's parts of the staged rows take " + std::to_string(bytes) +
           " bytes of shared memory, more than " +
           std::to_string(kMaxStagedRowBytes);
  return "";
}

llvm::SmallDenseSet<unsigned>
fusion::getInputsReadBy(ArrayRef<Value> roots, const DenseSet<Value> &known) {
  llvm::SmallDenseSet<unsigned> inputs;
  DenseSet<Value> visited;
  SmallVector<Value> work(roots);
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (known.contains(v) || !visited.insert(v).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      inputs.insert(arg.getArgNumber());
      continue;
    }
    llvm::append_range(work, v.getDefiningOp()->getOperands());
  }
  return inputs;
}

std::optional<std::pair<SliceOp, SliceOp>>
fusion::getPairSlices(Value product) {
  ArrayRef<int64_t> shape = shapeOf(product);
  if (shape.size() != 2)
    return std::nullopt;
  SmallVector<SliceOp, 2> slices;
  for (Operation *user : product.getUsers()) {
    auto slice = dyn_cast<SliceOp>(user);
    if (!slice || slice.getX() != product)
      return std::nullopt;
    if (!llvm::is_contained(slices, slice))
      slices.push_back(slice);
  }
  if (slices.size() != 2)
    return std::nullopt;
  for (SliceOp slice : slices) {
    ArrayRef<int64_t> offsets = slice.getOffsets(), sizes = slice.getSizes(),
                      strides = slice.getStrides();
    bool wholeRows = offsets[0] == 0 && strides[0] == 1 &&
                     (sizes[0] == -1 || sizes[0] == shape[0]);
    if (!wholeRows || strides[1] != 1)
      return std::nullopt;
  }
  auto [first, second] = std::make_pair(slices[0], slices[1]);
  if (shapeOf(first.getResult()) != shapeOf(second.getResult()) ||
      first.getOffsets()[1] == second.getOffsets()[1])
    return std::nullopt;
  return std::make_pair(first, second);
}

bool fusion::canPairProducts(MatmulOp first, MatmulOp second) {
  return first != second && first.getType() == second.getType() &&
         shapeOf(first.getResult()).size() == 2 &&
         first.getA().getType() == second.getA().getType();
}

bool fusion::isReadPointwise(Value value, ArrayRef<int64_t> shape) {
  SmallVector<Value> work = {value};
  llvm::SmallPtrSet<Operation *, 8> visited;
  while (!work.empty()) {
    for (Operation *user : work.pop_back_val().getUsers()) {
      if (isa<YieldOp>(user) || !visited.insert(user).second)
        continue;
      if (isa<SliceOp, ConcatOp, TransposeOp, MatmulOp>(user) ||
          isRealReduction(user) ||
          llvm::any_of(user->getResults(),
                       [&](Value r) { return shapeOf(r) != shape; }))
        return false;
      llvm::append_range(work, user->getResults());
    }
  }
  return true;
}

FailureOr<TiledProducts> fusion::getTiledProducts(KernelOp kernel,
                                                  std::string *why) {
  auto fail = [&](const char *reason) -> FailureOr<TiledProducts> {
    if (why)
      *why = reason;
    return failure();
  };
  Block &body = kernel.getBodyBlock();
  if (llvm::any_of(body, [](Operation &op) { return isRealReduction(&op); }))
    return fail("the tiles compute no reduction");
  SmallVector<MatmulOp> matmuls = llvm::to_vector(body.getOps<MatmulOp>());
  TiledProducts tiled;
  if (matmuls.size() == 1) {
    MatmulOp matmul = matmuls.front();
    if (auto slices = getPairSlices(matmul.getResult())) {
      for (SliceOp slice : {slices->first, slices->second})
        tiled.products.push_back(
            {matmul, slice.getResult(), slice.getOffsets()[1]});
    } else {
      tiled.products.push_back({matmul, matmul.getResult(), 0});
    }
  } else if (matmuls.size() == 2 && matmuls[0].getA() == matmuls[1].getA() &&
             canPairProducts(matmuls[0], matmuls[1])) {
    for (MatmulOp matmul : matmuls)
      tiled.products.push_back({matmul, matmul.getResult(), 0});
  } else {
    return fail("the tiles compute one matmul, or a pair sharing A");
  }
  tiled.shape = llvm::to_vector(shapeOf(tiled.products.front().value));
  if (!llvm::all_of(kernel.getYield().getValues(), [&](Value v) {
        return shapeOf(v) == ArrayRef<int64_t>(tiled.shape);
      }))
    return fail("every output of the tiles has the product's shape");
  // The strategies know the products at the tile's point only.
  for (const TiledProducts::Product &product : tiled.products)
    if (!isReadPointwise(product.value, tiled.shape))
      return fail("the epilogue reads the product at other elements (a "
                  "slice, transpose or reduction of it)");
  return tiled;
}

bool fusion::isWgmmaOperand(Value operand) {
  SmallVector<Value> work = {operand};
  llvm::SmallPtrSet<Operation *, 8> visited;
  while (!work.empty()) {
    Value value = work.pop_back_val();
    if (isa<BlockArgument>(value))
      continue;
    Operation *op = value.getDefiningOp();
    if (!visited.insert(op).second)
      continue;
    if (!isElementwiseMath(op) && !isa<ConstantOp>(op))
      return false;
    llvm::append_range(work, op->getOperands());
  }
  return true;
}

namespace {
/// A position along one axis of the scores plus a constant.
struct Position {
  int64_t axis, plus;
};
} // namespace

/// The integer held by splat constant `value`, if it holds one.
static std::optional<int64_t> splatInteger(Value value) {
  std::optional<double> v = getSplatFloat(value);
  if (!v || *v != std::floor(*v) || std::abs(*v) > double(1 << 24))
    return std::nullopt;
  return static_cast<int64_t>(*v);
}

/// `value` as an axis of the scores (of rank `rank`) plus a constant: an
/// iota along a dimension broadcast to that axis, or its sum with (or
/// difference from) an integer, every value exact in its type (a dynamic
/// extent is an f32 iota's, exact up to 2^24 positions: IotaOp).
static std::optional<Position> asPosition(Value value, int64_t rank) {
  auto type = cast<RankedTensorType>(value.getType());
  auto element = dyn_cast<FloatType>(type.getElementType());
  if (!element || (!type.hasStaticShape() && !element.isF32()))
    return std::nullopt;
  int64_t exact = int64_t(1) << element.getFPMantissaWidth();
  std::optional<Position> position;
  if (auto iota = value.getDefiningOp<IotaOp>()) {
    int64_t dim = iota.getDimension();
    // A size-1 dimension broadcasts one position, 0.
    if (type.getDimSize(dim) == 1)
      return std::nullopt;
    position = Position{rank - type.getRank() + dim, 0};
  } else if (Operation *op = value.getDefiningOp();
             op && isa<AddOp, SubOp>(op)) {
    Value lhs = op->getOperand(0), rhs = op->getOperand(1);
    std::optional<int64_t> c = splatInteger(rhs);
    std::optional<Position> p = asPosition(lhs, rank);
    if (!c && isa<AddOp>(op)) {
      c = splatInteger(lhs);
      p = asPosition(rhs, rank);
    }
    if (!c || !p)
      return std::nullopt;
    position = Position{p->axis, p->plus + (isa<AddOp>(op) ? *c : -*c)};
  }
  // Every value exact: positions below the largest extent, plus the
  // constant.
  if (!position || position->axis < 0 ||
      llvm::max_element(type.getShape()) == type.getShape().end() ||
      *llvm::max_element(type.getShape()) + std::abs(position->plus) > exact)
    return std::nullopt;
  return position;
}

/// `predicate` with its operands swapped (a < b is b > a).
static CmpPredicate mirrored(CmpPredicate predicate) {
  switch (predicate) {
  case CmpPredicate::lt:
    return CmpPredicate::gt;
  case CmpPredicate::le:
    return CmpPredicate::ge;
  case CmpPredicate::gt:
    return CmpPredicate::lt;
  case CmpPredicate::ge:
    return CmpPredicate::le;
  default:
    return predicate;
  }
}

/// The key limit of the scores the softmax reads (`x`), if it is a select
/// between them and -inf on a comparison of positions (see KeyLimit).
static std::optional<AttentionKernelShape::KeyLimit> getKeyLimit(Value x) {
  auto select = x.getDefiningOp<SelectOp>();
  if (!select)
    return std::nullopt;
  auto cmp = select.getCond().getDefiningOp<CmpOp>();
  if (!cmp)
    return std::nullopt;
  int64_t rank = shapeOf(x).size();
  std::optional<Position> lhs = asPosition(cmp.getLhs(), rank);
  std::optional<Position> rhs = asPosition(cmp.getRhs(), rank);
  if (!lhs || !rhs || lhs->axis == rhs->axis)
    return std::nullopt;
  // As `key <pred> row + d`.
  CmpPredicate predicate = cmp.getPredicate();
  int64_t d = rhs->plus - lhs->plus;
  if (lhs->axis != rank - 1) {
    std::swap(lhs, rhs);
    d = -d;
    predicate = mirrored(predicate);
  }
  if (lhs->axis != rank - 1 || rhs->axis != rank - 2)
    return std::nullopt;
  // `key <= row + offset` is the predicate (le, lt) or its negation (gt,
  // ge); the strict ones move the bound by one.
  bool allowedWhenTrue =
      predicate == CmpPredicate::le || predicate == CmpPredicate::lt;
  if (!allowedWhenTrue && predicate != CmpPredicate::gt &&
      predicate != CmpPredicate::ge)
    return std::nullopt;
  int64_t offset =
      predicate == CmpPredicate::lt || predicate == CmpPredicate::ge ? d - 1
                                                                     : d;
  Value kept = allowedWhenTrue ? select.getA() : select.getB();
  Value masked = allowedWhenTrue ? select.getB() : select.getA();
  std::optional<double> fill = getSplatFloat(masked);
  if (!fill || !std::isinf(*fill) || *fill > 0 || shapeOf(kept) != shapeOf(x))
    return std::nullopt;
  return AttentionKernelShape::KeyLimit{kept, offset};
}

bool fusion::isInPlaceView(Operation *op) {
  if (!op)
    return false;
  int64_t last = shapeOf(op->getResult(0)).size() - 1;
  if (auto transpose = dyn_cast<TransposeOp>(op))
    return transpose.getPermutation().back() == last;
  auto slice = dyn_cast<SliceOp>(op);
  return slice &&
         llvm::all_of(slice.getStrides(), [](int64_t s) { return s == 1; }) &&
         shapeOf(slice.getResult()).back() == shapeOf(slice.getX()).back();
}

BlockArgument fusion::getViewedInput(Value operand) {
  while (!isa<BlockArgument>(operand)) {
    Operation *op = operand.getDefiningOp();
    if (!isInPlaceView(op))
      return BlockArgument();
    operand = op->getOperand(0);
  }
  return cast<BlockArgument>(operand);
}

/// The inputs read per score of attention `shape`
/// (AttentionKernelShape::scoreInputs).
static SmallVector<BlockArgument> scoreInputsOf(AttentionKernelShape shape) {
  SetVector<BlockArgument> found;
  SmallVector<Value> work{shape.softmax.getX()};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value value = work.pop_back_val();
    if (value == shape.scores.getResult() || !seen.insert(value).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      ArrayRef<int64_t> sizes = shapeOf(arg);
      if (arg != getViewedInput(shape.queries) &&
          arg != getViewedInput(shape.keys) &&
          arg != getViewedInput(shape.values) && sizes.size() >= 2 &&
          sizes.back() != 1 && sizes.end()[-2] != 1)
        found.insert(arg);
      continue;
    }
    // An iota reads its source's size, never its elements.
    if (!value.getDefiningOp<IotaOp>())
      llvm::append_range(work, value.getDefiningOp()->getOperands());
  }
  return found.takeVector();
}

FailureOr<AttentionKernelShape>
fusion::getAttentionKernelShape(KernelOp kernel, std::string &why) {
  if (kernel.getKind() != KernelKind::attention) {
    why = "not an attention kernel";
    return failure();
  }
  AttentionKernelShape shape;
  ValueRange results = kernel.getYield().getValues();
  Value first = results.front();
  if (auto view = first.getDefiningOp<TransposeOp>();
      view && results.size() == 1 &&
      view.getPermutation().back() ==
          static_cast<int64_t>(view.getPermutation().size()) - 1) {
    shape.outputView = view;
    first = view.getX();
  }
  shape.output = first.getDefiningOp<MatmulOp>();
  if (results.size() > 2 || !shape.output) {
    why = "the kernel's first result is not a product (or its transpose "
          "keeping the last axis last, as the only result), or it has more "
          "than two";
    return failure();
  }
  // The probabilities, or their convert to V's type (a softmax over f32
  // scores, rounded once for the product, as FlashAttention does).
  Value probabilities = shape.output.getA();
  if (auto convert = probabilities.getDefiningOp<ConvertOp>())
    probabilities = convert.getX();
  shape.softmax = probabilities.getDefiningOp<SoftmaxOp>();
  shape.values = shape.output.getB();
  if (!shape.softmax || !getViewedInput(shape.values)) {
    why = "the output is not the softmax's product (or its convert's) with "
          "an input (V) or a view of one";
    return failure();
  }
  if (results.size() == 2) {
    shape.logSumExp = results[1].getDefiningOp<LogSumExpOp>();
    int64_t last = shapeOf(shape.softmax.getX()).size() - 1;
    if (!shape.logSumExp || shape.logSumExp.getX() != shape.softmax.getX() ||
        static_cast<int64_t>(shape.logSumExp.getAxis()) != last) {
      why = "the second result is not the log-sum-exp over the keys of what "
            "the softmax reads";
      return failure();
    }
  }
  // The scores' product: the one matmul that is not the output.
  auto products = llvm::to_vector(kernel.getBodyBlock().getOps<MatmulOp>());
  if (products.size() != 2) {
    why = "not two products";
    return failure();
  }
  shape.scores = products.front() == shape.output ? products.back()
                                                  : products.front();
  shape.queries = shape.scores.getA();
  auto [keys, transposed] = storedOperand(shape.scores.getB());
  shape.keys = keys;
  shape.keysTransposed = transposed;
  if (!getViewedInput(shape.queries) || !getViewedInput(shape.keys)) {
    why = "Q and K are not kernel inputs or views of them";
    return failure();
  }
  shape.keyLimit = getKeyLimit(shape.softmax.getX());
  shape.scoreInputs = scoreInputsOf(shape);
  return shape;
}

/// Whether three multiplying warpgroups' registers (kAttentionTilesWide-
/// Threads) hold attention `kernel`'s: its accumulators (head sizes up to
/// kAttentionTilesWideMaxHead), and no values read per score beside them
/// (measured spilling 160-340 bytes with a bf16 bias at D = 64).
static bool fitsWideAttentionTiles(KernelOp kernel) {
  std::string why;
  FailureOr<AttentionKernelShape> shape = getAttentionKernelShape(kernel, why);
  return succeeded(shape) &&
         shapeOf(kernel.getResult(0)).back() <= kAttentionTilesWideMaxHead &&
         shape->scoreInputs.empty();
}

/// What both attention strategies need: the attention structure, K stored
/// by rows (`[..., Sk, D]`, read as the keys' rows), and the output's batch
/// axes those of the scores (V only broadcasts). Empty when `kernel` has
/// them, `shape` then filled.
static std::string whyNotKeyRowsAttention(KernelOp kernel,
                                          AttentionKernelShape &shape) {
  std::string why;
  FailureOr<AttentionKernelShape> found = getAttentionKernelShape(kernel, why);
  if (failed(found))
    return why;
  shape = *found;
  if (!shape.keysTransposed)
    return "K^T is stored as it is (the GPU strategies read rows of K)";
  if (shapeOf(shape.scores.getResult()).drop_back(2) !=
      shapeOf(shape.output.getResult()).drop_back(2))
    return "V has batch axes the scores broadcast over";
  return "";
}

std::string fusion::whyNotAttentionRows(KernelOp kernel) {
  AttentionKernelShape shape;
  if (std::string why = whyNotKeyRowsAttention(kernel, shape); !why.empty())
    return why;
  if (shape.logSumExp)
    return "the log-sum-exp of the scores as a second result (the rows "
           "strategy writes the output only)";
  for (Value operand : {shape.queries, shape.keys, shape.values})
    if (!isa<BlockArgument>(operand))
      return "Q, K or V is a view of an input (the rows strategy reads them "
             "whole)";
  if (shape.outputView)
    return "the output is stored transposed (the rows strategy writes it "
           "whole)";
  ArrayRef<int64_t> q = shapeOf(shape.queries);
  int64_t queries = q[q.size() - 2];
  if (ShapedType::isDynamic(queries) || queries > kAttentionRowsMaxQueries)
    return "more than " + std::to_string(kAttentionRowsMaxQueries) +
           " query rows, or a dynamic number (the rows strategy reads K and "
           "V once per query row)";
  int64_t head = shapeOf(shape.queries).back();
  if (!llvm::is_contained({32, 64, 128, 256}, head) ||
      shapeOf(shape.values).back() != head)
    return "head sizes other than one D = Dv of 32, 64, 128 or 256 (D / 16 "
           "lanes hold a row in vectors of 16)";
  return "";
}

/// Adjacent keys a lane group of attention_rows takes a step.
static constexpr int64_t kAttentionRowsGroupKeys = 4;

int64_t fusion::getAttentionRowsStepKeys(int64_t threads, int64_t head) {
  return threads / (head / kAttentionRowsLaneElements) *
         kAttentionRowsGroupKeys;
}

int64_t fusion::getAttentionRowsStages(KernelOp kernel, KernelPlanAttr plan) {
  std::string why;
  FailureOr<AttentionKernelShape> shape = getAttentionKernelShape(kernel, why);
  if (failed(shape))
    return 0;
  int64_t head = shapeOf(shape->queries).back();
  int64_t bytes = 0;
  for (Value rows : {Value(shape->keys), Value(shape->values)})
    bytes += shapeOf(rows).back() *
             getElementTypeOrSelf(rows.getType()).getIntOrFloatBitWidth() / 8;
  int64_t stepBytes = std::max<int64_t>(
      1, getAttentionRowsStepKeys(plan.getThreads(), head) * bytes);
  int64_t steps = kAttentionRowsStagedBytes / stepBytes;
  if (steps < 2)
    steps = kAttentionRowsStagedBytesAlone / stepBytes;
  return std::min(kAttentionRowsMaxStages, steps);
}

int64_t fusion::getAttentionSharedRows(KernelOp kernel) {
  std::string why;
  FailureOr<AttentionKernelShape> shape = getAttentionKernelShape(kernel, why);
  if (failed(shape))
    return 1;
  ArrayRef<int64_t> out = shapeOf(kernel.getResult(0));
  int64_t rows = out[out.size() - 2];
  if (ShapedType::isDynamic(rows))
    return 1;
  ArrayRef<int64_t> batch = out.drop_back(2);
  // An output batch axis K or V reads at index 0 (broadcast), innermost
  // first, while every axis inside it is one too.
  auto broadcast = [&](Value arg) {
    SmallVector<bool> read(batch.size(), false);
    for (std::optional<int64_t> source :
         getBroadcastSources(shapeOf(arg).drop_back(2), batch))
      if (source)
        read[*source] = true;
    return read;
  };
  SmallVector<bool> readK = broadcast(shape->keys),
                    readV = broadcast(shape->values);
  for (int64_t d = batch.size() - 1; d >= 0; --d) {
    if (batch[d] == 1)
      continue;
    if (readK[d] || readV[d] || ShapedType::isDynamic(batch[d]))
      break;
    rows *= batch[d];
  }
  return rows;
}

int64_t fusion::getAttentionRowsBlockRows(KernelOp kernel,
                                          KernelPlanAttr plan) {
  if (plan.getRow() != RowStorage::staged)
    return 1;
  int64_t shared = getAttentionSharedRows(kernel);
  int64_t rows = std::max<int64_t>(1, 1024 / plan.getThreads());
  while (shared % rows != 0)
    --rows;
  return rows;
}

/// Why an attention_rows kernel cannot stage its rows of K and V through
/// shared memory under `plan` on `target` (empty when it can).
static std::string whyNotStagedAttentionRows(KernelOp kernel,
                                             KernelPlanAttr plan,
                                             const GpuTarget &target) {
  if (!target.tensorCopies)
    return "staged rows need TMA, sm_90 or later (" + target.chip +
           " has none)";
  std::string why;
  FailureOr<AttentionKernelShape> shape = getAttentionKernelShape(kernel, why);
  if (failed(shape))
    return why;
  for (Value rows : {Value(shape->keys), Value(shape->values)}) {
    Type element = getElementTypeOrSelf(rows.getType());
    if (!element.isBF16() && !element.isF16() && !element.isF32())
      return "staged rows of K and V are bf16, f16 or f32";
  }
  if (getAttentionRowsStages(kernel, plan) < 2)
    return "fewer than two steps of K's and V's rows fit " +
           std::to_string(kAttentionRowsStagedBytesAlone) +
           " bytes of shared memory (fewer threads take fewer keys a step)";
  return "";
}

std::string fusion::whyNotAttentionTiles(KernelOp kernel,
                                         const GpuTarget &target) {
  if (!target.warpgroupMma)
    return "warpgroup MMA needs sm_90 (" + target.chip + " has none)";
  AttentionKernelShape shape;
  if (std::string why = whyNotKeyRowsAttention(kernel, shape); !why.empty())
    return why;
  Type element = getElementTypeOrSelf(shape.queries.getType());
  if (!element.isBF16() && !element.isF16())
    return "Q, K and V are not bf16 or f16";
  for (Value operand :
       {Value(shape.keys), Value(shape.values), kernel.getResult(0)})
    if (getElementTypeOrSelf(operand.getType()) != element)
      return "Q, K, V and the output are not of one type";
  int64_t head = shapeOf(shape.queries).back();
  if ((head != 64 && head != 128) || shapeOf(shape.values).back() != head)
    return "head sizes other than one D = Dv of 64 or 128";
  // A view's tensor map has its rank (a plain input's is 3-D: its batch
  // axes collapse); a view's rows are whole rows of D elements of its
  // input, so its start and strides are multiples of 16 bytes.
  for (Value operand : {shape.queries, shape.keys, shape.values})
    if (!isa<BlockArgument>(operand) && shapeOf(operand).size() > 5)
      return "Q, K or V is a view of more than 5 dimensions (a tensor map "
             "has at most 5)";
  return "";
}

/// Why neither attention strategy runs a kernel, from their reasons (both
/// non-empty): each one's, or the one they share.
static std::string combineAttentionReasons(const std::string &rows,
                                           const std::string &tiles) {
  if (tiles == rows)
    return rows;
  return "attention_rows: " + rows + "; attention_tiles: " + tiles;
}

std::string fusion::whyNoGpuAttention(KernelOp kernel,
                                      const GpuTarget &target) {
  std::string rows = whyNotAttentionRows(kernel);
  if (rows.empty())
    return "";
  std::string tiles = whyNotAttentionTiles(kernel, target);
  if (tiles.empty())
    return "";
  return combineAttentionReasons(rows, tiles);
}

std::string fusion::whyNotWgmma(KernelOp kernel, const GpuTarget &target) {
  if (!target.warpgroupMma)
    return "warpgroup MMA needs sm_90 (" + target.chip + " has none)";
  std::string why;
  FailureOr<TiledProducts> tiled = getTiledProducts(kernel, &why);
  if (failed(tiled))
    return why;
  for (const TiledProducts::Product &product : tiled->products) {
    MatmulOp matmul = product.matmul;
    for (Value operand : {matmul.getA(), matmul.getB()})
      if (!isWgmmaOperand(operand))
        return "an operand is a kernel input or elementwise math on kernel "
               "inputs (a prologue)";
    ArrayRef<int64_t> a = shapeOf(matmul.getA()), b = shapeOf(matmul.getB());
    if (a.size() != 2 || b.size() != 2)
      return "the operands must be matrices (no batch dimensions yet)";
    Type element = getElementTypeOrSelf(matmul.getA().getType());
    if (!element.isBF16() && !element.isF16())
      return "the operands must be bf16 or f16";
    // A TMA tensor's rows start on 16-byte boundaries.
    if (ShapedType::isDynamic(a[1]) || a[1] % 8 != 0)
      return "K must be a static multiple of 8";
    if (ShapedType::isDynamic(b[1]) || b[1] % 8 != 0)
      return "N must be a static multiple of 8";
  }
  return "";
}

int64_t fusion::getWgmmaTileColumns(const TiledProducts &tiled,
                                    const WgmmaTiles &tiles) {
  return tiles.n / static_cast<int64_t>(tiled.products.size());
}

WgmmaTiles fusion::getWgmmaFewRowTiles(const TiledProducts &tiled) {
  bool inputs = llvm::all_of(tiled.products, [](TiledProducts::Product p) {
    return isa<BlockArgument>(p.matmul.getA()) &&
           isa<BlockArgument>(p.matmul.getB());
  });
  return inputs && !tiled.isPair() ? kWgmmaFewRowNarrowTiles
                                   : kWgmmaFewRowTiles;
}

/// Steps of `kWgmmaTiles.k` along K of a kernel matmul_wgmma runs.
static int64_t getWgmmaKSteps(KernelOp kernel) {
  MatmulOp matmul = *kernel.getBodyBlock().getOps<MatmulOp>().begin();
  return llvm::divideCeil(shapeOf(matmul.getA())[1], kWgmmaTiles.k);
}

/// The few-row kernel's K ranges: as many as keep its tiles' blocks to one
/// a multiprocessor, each range at least kMinFewRowSteps steps long. 1
/// where M is known to be more than kWgmmaFewRows (no few-row kernel).
static int64_t planWgmmaSplit(KernelOp kernel, const GpuTarget &target) {
  FailureOr<TiledProducts> tiled = getTiledProducts(kernel);
  int64_t m = tiled->shape[0];
  if (!ShapedType::isDynamic(m) && m > kWgmmaFewRows)
    return 1;
  // A dynamic M is taken to be one tile of rows (decode).
  WgmmaTiles fewRowTiles = getWgmmaFewRowTiles(*tiled);
  int64_t rowTiles =
      ShapedType::isDynamic(m)
          ? 1
          : std::max<int64_t>(1, llvm::divideCeil(m, fewRowTiles.m));
  int64_t tiles =
      rowTiles * llvm::divideCeil(tiled->shape[1],
                                  getWgmmaTileColumns(*tiled, fewRowTiles));
  int64_t split = target.multiprocessors / std::max<int64_t>(1, tiles);
  int64_t maxSplit =
      std::min(getWgmmaKSteps(kernel) / kMinFewRowSteps, kMaxWgmmaSplit);
  return std::clamp<int64_t>(split, 1, std::max<int64_t>(1, maxSplit));
}

/// Whether the elementwise strategy takes `kernel`: outputs of one type
/// (one index space) and no reduction or matmul.
static bool fitsElementwise(KernelOp kernel) {
  ValueRange results = kernel.getYield().getValues();
  if (results.empty())
    return false;
  for (Operation &op : kernel.getBodyBlock())
    if (isRealReduction(&op) || isa<MatmulOp>(op))
      return false;
  return llvm::all_of(results, [&](Value v) {
    return v.getType() == results.front().getType();
  });
}

/// Reads of each input by a row kernel: once when the row is held; when it
/// is streamed, once per pass that reaches the input (a pass per reduction
/// but online sums, then one that writes the full-row outputs).
static SmallVector<int64_t>
rowPasses(KernelOp kernel, const RowKernelShape &row, bool streamed) {
  unsigned numInputs = kernel.getInputs().size();
  SmallVector<int64_t> passes(numInputs, 0);
  if (streamed) {
    DenseSet<Value> known;
    auto count = [&](ArrayRef<Value> roots) {
      for (unsigned input : getInputsReadBy(roots, known))
        ++passes[input];
    };
    for (Operation *reduction : row.reductions) {
      // An online sum is computed in its max's pass.
      const OnlineSum *online = row.findOnlineSum(reduction);
      if (!online || online->max == reduction)
        count({reduction->getOperand(0)});
      known.insert(reduction->getResult(0));
    }
    SmallVector<Value> fullRows;
    for (Value value : kernel.getYield().getValues())
      if (shapeOf(value) == row.rowShape)
        fullRows.push_back(value);
    count(fullRows);
  }
  for (int64_t &p : passes)
    p = std::max<int64_t>(p, 1);
  return passes;
}

namespace {
/// The classes of row kernels in the measured table (RowPlans.def), by the
/// passes over a row a streamed plan makes: OnePass where only reductions
/// read the rows (online sums in their max's pass: a logsumexp, sums);
/// TwoPass where a pass of reductions precedes the pass that writes (a
/// softmax with its online sum, an rmsnorm); ThreePass for more (a
/// layernorm's mean, then its variance).
enum class RowClass { OnePass, TwoPass, ThreePass };
/// How a row's columns may be read: Whole vectors of the kernel's lanes;
/// Shiftable, a width no vector divides, in shifted vectors or elements;
/// Elements only; Dynamic, a length known at run time (streamed, in the
/// vectors getDynamicRowVectorWidth allows; the table's width is 0).
enum class RowColumns { Whole, Shiftable, Elements, Dynamic };
/// A plan of the table, for rows of its class, columns and element size
/// from the previous entry's width (exclusive) up to `maxWidth`.
struct MeasuredRowPlan {
  RowClass rowClass;
  RowColumns columns;
  int64_t elementBytes;
  int64_t maxWidth;
  int64_t threads;
  int64_t cluster;
  RowStorage row;
  /// Vectors of the kernel's lanes (whole or shifted), else elements.
  bool vectors;
};
} // namespace

#define ROW_PLANS_CHIP(CHIP)                                                   \
  static constexpr llvm::StringLiteral kMeasuredRowPlansChip = CHIP;
#include "RowPlans.def"

static constexpr MeasuredRowPlan kMeasuredRowPlans[] = {
#define ROW_PLAN(CLASS, COLUMNS, BYTES, MAX_WIDTH, THREADS, CLUSTER, ROW,      \
                 VECTORS, GBS)                                                 \
  {RowClass::CLASS, RowColumns::COLUMNS, BYTES,  MAX_WIDTH, THREADS,           \
   CLUSTER,         RowStorage::ROW,     VECTORS},
#include "RowPlans.def"
};

/// Whether the entries of each class, columns and element size come in
/// ascending widths, as the look-up's first-wide-enough rule needs.
static constexpr bool hasAscendingWidths(const MeasuredRowPlan *plans,
                                         size_t size) {
  for (size_t i = 0; i < size; ++i)
    for (size_t j = i + 1; j < size; ++j)
      if (plans[i].rowClass == plans[j].rowClass &&
          plans[i].columns == plans[j].columns &&
          plans[i].elementBytes == plans[j].elementBytes &&
          plans[i].maxWidth >= plans[j].maxWidth)
        return false;
  return true;
}
static_assert(hasAscendingWidths(kMeasuredRowPlans,
                                 std::size(kMeasuredRowPlans)),
              "RowPlans.def: widths must ascend within a class, columns and "
              "element size");

/// The measured plan of a row kernel of static row count, where the table
/// was measured on the target's chip, covers the kernel's class, columns,
/// element size and width (from its first sample of them to its last; any
/// dynamic length), and the plan suits the kernel (the checks; a part held
/// within max-row-elements); otherwise none, and the rule decides.
static std::optional<KernelPlanAttr>
lookUpMeasuredRowPlan(KernelOp kernel, const RowKernelShape &row,
                      const PlanOptions &options) {
  // (sm_90a is sm_90's hardware.)
  StringRef chip = options.target.chip;
  chip.consume_back("a");
  if (!options.measuredRowPlans || chip != kMeasuredRowPlansChip)
    return std::nullopt;
  // The table's samples have thousands of rows; fewer than the chip has
  // multiprocessors (decoding), or a count known only at run time, may
  // leave each row more of the chip than they measured (H200, 2026-12-01:
  // add_rmsnorm over a few rows of 4096 in 64 threads, the table's, 8.4 us
  // a call; in 128 threads, the rule's, 6.9).
  ArrayRef<int64_t> rows = ArrayRef<int64_t>(row.rowShape).drop_back();
  if (llvm::any_of(rows, ShapedType::isDynamic) ||
      ShapedType::getNumElements(rows) < options.target.multiprocessors)
    return std::nullopt;
  int64_t h = row.rowShape.back();
  int64_t lanes = getVectorLanes(kernel, options.target);
  int64_t width = getInnermostVectorWidth(kernel, options.target, h);
  RowColumns columns;
  if (ShapedType::isDynamic(h))
    columns = RowColumns::Dynamic;
  else if (width == lanes)
    columns = RowColumns::Whole;
  else if (width > 1)
    return std::nullopt;
  else if (lanes > 1 && h % lanes != 0 &&
           whyNotShiftedRows(kernel, row).empty())
    columns = RowColumns::Shiftable;
  else
    columns = RowColumns::Elements;
  SmallVector<int64_t> passes = rowPasses(kernel, row, /*streamed=*/true);
  int64_t mostPasses = *llvm::max_element(passes);
  RowClass rowClass = mostPasses == 1   ? RowClass::OnePass
                      : mostPasses == 2 ? RowClass::TwoPass
                                        : RowClass::ThreePass;
  int64_t elementBytes = options.target.vectorBytes / lanes;
  bool first = true;
  for (const MeasuredRowPlan &measured : kMeasuredRowPlans) {
    if (measured.rowClass != rowClass || measured.columns != columns ||
        measured.elementBytes != elementBytes)
      continue;
    if (columns != RowColumns::Dynamic) {
      if (measured.maxWidth < h) {
        first = false;
        continue;
      }
      if (first && measured.maxWidth != h)
        return std::nullopt;
    }
    bool streamed = measured.row == RowStorage::streamed;
    int64_t vector = columns == RowColumns::Dynamic
                         ? getDynamicRowVectorWidth(kernel, options.target)
                     : measured.vectors ? lanes
                                        : 1;
    KernelPlanAttr plan = KernelPlanAttr::get(
        kernel.getContext(),
        measured.cluster > 1 ? KernelStrategy::cluster_rows
                             : KernelStrategy::rows,
        measured.threads, vector, measured.row, measured.cluster,
        streamed ? passes : rowPasses(kernel, row, /*streamed=*/false),
        /*split=*/1);
    if (!checkPlan(kernel, plan, options.target).empty() ||
        (measured.row == RowStorage::registers &&
         getRowPart(plan, h) > options.maxRowElements))
      return std::nullopt;
    return plan;
  }
  return std::nullopt;
}

/// The rows plan of a row kernel, or failure with the reason: the measured
/// plan where the table has one, else the rule below.
static FailureOr<KernelPlanAttr>
planRows(KernelOp kernel, const PlanOptions &options, std::string &reason) {
  FailureOr<RowKernelShape> row = getRowKernelShape(kernel, reason);
  if (failed(row))
    return failure();
  MLIRContext *context = kernel.getContext();
  int64_t h = row->rowShape.back();
  if (std::optional<KernelPlanAttr> measured =
          lookUpMeasuredRowPlan(kernel, *row, options))
    return *measured;
  if (ShapedType::isDynamic(h))
    return KernelPlanAttr::get(
        context, KernelStrategy::rows, kDynamicRowThreads,
        getDynamicRowVectorWidth(kernel, options.target), RowStorage::streamed,
        /*cluster=*/1, rowPasses(kernel, *row, /*streamed=*/true),
        /*split=*/1);
  // The plan in vectors of `width` over rows spanning `span` elements.
  auto planWith = [&](int64_t width, int64_t span) -> KernelPlanAttr {
    int64_t perThread = width > 1 ? kVectorsPerThread : kScalarsPerThread;
    // The threads of a block for `part` elements, and whether it holds
    // them; a block of a full cluster holds no more than a block of
    // kMaxRowThreads would.
    auto blockFor = [&](int64_t part, bool fullCluster) {
      int64_t vectors = llvm::divideCeil(part, width);
      auto fits = [&](int64_t threads) {
        int64_t limit =
            maxHeldPerThread(width, fullCluster ? kMaxRowThreads : threads);
        return static_cast<int64_t>(llvm::divideCeil(vectors, threads)) <=
               limit;
      };
      int64_t threads = 32;
      while (threads < kRowThreads && threads * 2 * perThread <= vectors)
        threads *= 2;
      // Past kRowThreads only where that is what holds the part.
      while (threads < kMaxRowThreads && !fits(threads))
        threads *= 2;
      return std::make_pair(threads, fits(threads));
    };
    // A row one block of kRowThreads cannot hold, or longer than
    // maxRowElements, is split over a cluster: parts of at most what such
    // a block holds (and half of maxRowElements), as many as the cluster
    // allows, if its blocks then hold their parts. Parts are whole
    // vectors; the last one may be shorter.
    int64_t capacity =
        kRowThreads * maxHeldPerThread(width, kRowThreads) * width;
    bool needsCluster = span > capacity || span > options.maxRowElements;
    // A kernel that streamed reads every input once (reductions only, an
    // online sum in its max's pass) gains nothing from holding a row it
    // would split over a cluster: a block of kRowThreads streams it.
    // (H200, 2026-11-30, plan_sweep: logsumexp over rows of 32768 bf16 at
    // 3731 GB/s streamed by 128 threads, 2492 held in 2 parts; rows of
    // 131072 at 3517, 2136 held in 8 parts; rows of 4096, which one block
    // holds, 3056 streamed and 3166 held.)
    SmallVector<int64_t> streamedPasses =
        rowPasses(kernel, *row, /*streamed=*/true);
    if (needsCluster &&
        llvm::all_of(streamedPasses, [](int64_t p) { return p == 1; }))
      return KernelPlanAttr::get(context, KernelStrategy::rows, kRowThreads,
                                 width, RowStorage::streamed, /*cluster=*/1,
                                 streamedPasses, /*split=*/1);
    int64_t cluster = 1;
    if (needsCluster) {
      int64_t parts = llvm::divideCeil(span, capacity);
      if (span > options.maxRowElements)
        parts = std::max<int64_t>(
            parts, llvm::divideCeil(
                       span, std::max<int64_t>(1, options.maxRowElements / 2)));
      parts = std::min<int64_t>(options.target.maxClusterBlocks, parts);
      int64_t part = llvm::divideCeil(span, parts * width) * width;
      if (blockFor(part, parts == options.target.maxClusterBlocks).second)
        cluster = llvm::divideCeil(span, part);
    }
    int64_t part = llvm::divideCeil(span, cluster * width) * width;
    auto [threads, held] = blockFor(
        part, cluster > 1 && cluster == options.target.maxClusterBlocks);
    RowStorage storage = held ? RowStorage::registers : RowStorage::streamed;
    return KernelPlanAttr::get(
        context,
        cluster > 1 ? KernelStrategy::cluster_rows : KernelStrategy::rows,
        threads, width, storage, cluster, rowPasses(kernel, *row, !held),
        /*split=*/1);
  };
  // A row no vector divides is held in shifted vectors where one block
  // holds it (see hasShiftedRowVectors), else in elements: in a cluster
  // they measured slower at the rule's block shapes (the table may choose
  // other shapes, and streamed shifted vectors).
  // (H200, 2026-12-01, plan_sweep: layernorm over rows of 4095 bf16 at
  // 3383 GB/s in 64 threads x 8 shifted vectors, 3184 in 128 x 4, 2691 in
  // 128 x 32 elements; softmax over rows of 50257 at 2070 in 4 parts of
  // 128 x 13 shifted vectors, 2385 in 128 x 99 elements.)
  int64_t width = getInnermostVectorWidth(kernel, options.target, h);
  int64_t lanes = getVectorLanes(kernel, options.target);
  if (width == 1 && lanes > 1 && h % lanes != 0 &&
      h >= kMinShiftedRowVectors * lanes &&
      whyNotShiftedRows(kernel, *row).empty()) {
    KernelPlanAttr shifted = planWith(lanes, getRowSpan(h, lanes));
    if (shifted.getRow() == RowStorage::registers &&
        shifted.getCluster() == 1 &&
        shifted.getThreads() >= kMinShiftedRowVectors * lanes)
      return shifted;
  }
  return planWith(width, h);
}

/// The columns plan of a column reduction kernel, or failure with the
/// reason. Columns are read in vectors along the innermost axis; blocks of
/// a warp of column vectors (fewer for narrow kernels) and the rest of the
/// threads down the rows; rows split over enough blocks to fill the chip.
static FailureOr<KernelPlanAttr>
planColumns(KernelOp kernel, const PlanOptions &options, std::string &reason) {
  FailureOr<ReductionKernelShape> columns =
      getReductionKernelShape(kernel, reason);
  if (failed(columns))
    return failure();
  if (columns->reducesInnermost()) {
    reason = "the innermost axis is reduced";
    return failure();
  }
  MLIRContext *context = kernel.getContext();
  int64_t width =
      getInnermostVectorWidth(kernel, options.target, columns->shape.back());
  // Columns of a size no vector divides: whole vectors over segments of
  // rows where the kernel allows (H200, 2026-12-05: scalar loads held a
  // 16384 x 4095 bf16 column sum at 51% of copy).
  int64_t lanesOfInputs = getVectorLanes(kernel, options.target);
  if (width == 1 && lanesOfInputs > 1 &&
      whyNotColumnSegments(kernel, *columns, lanesOfInputs).empty())
    width = lanesOfInputs;
  int64_t kept = productOf(columns->shape, columns->keptDims);
  int64_t rows = productOf(columns->shape, columns->reducedDims);
  SmallVector<int64_t> once(kernel.getInputs().size(), 1);
  auto plan = [&](int64_t split) {
    return KernelPlanAttr::get(context, KernelStrategy::columns, kColumnThreads,
                               width, RowStorage::none,
                               /*cluster=*/1, once, split);
  };
  // Segments of g rows are rows of g * K columns.
  int64_t segment = getColumnSegmentRows(plan(1), *columns);
  int64_t vectors = ShapedType::isDynamic(kept) ? ShapedType::kDynamic
                                                : kept * segment / width;
  if (!ShapedType::isDynamic(rows))
    rows /= segment;
  int64_t lanes = getColumnLanes(plan(1), *columns);
  int64_t rowThreads = kColumnThreads / lanes;
  // Column tiles of a block; a dynamic count is taken to fill the chip.
  int64_t tiles = ShapedType::isDynamic(vectors)
                      ? options.target.multiprocessors * kColumnBlocksPerSM
                      : std::max<int64_t>(1, llvm::divideCeil(vectors, lanes));
  int64_t split = llvm::divideCeil(
      options.target.multiprocessors * kColumnBlocksPerSM, tiles);
  int64_t maxSplit = ShapedType::isDynamic(rows)
                         ? kMaxColumnSplit
                         : llvm::divideCeil(rows, rowThreads * kMinColumnRows);
  // (Empty kernels, no columns or no rows, get 1.)
  split = std::clamp<int64_t>(
      split, 1, std::max<int64_t>(1, std::min(maxSplit, kMaxColumnSplit)));
  return plan(split);
}

/// The split_reduction plan of a kernel whose reductions reduce the
/// innermost axis, or failure with the reason: vectors along the innermost
/// axis, blocks of about 4 vectors a thread (a warp to 256 threads), and
/// each output's elements split over enough blocks to fill the chip while
/// each thread still reduces at least kMinColumnRows vectors.
static FailureOr<KernelPlanAttr> planSplitReduction(KernelOp kernel,
                                                    const PlanOptions &options,
                                                    std::string &reason) {
  FailureOr<ReductionKernelShape> sweep =
      getReductionKernelShape(kernel, reason);
  if (failed(sweep))
    return failure();
  if (!sweep->reducesInnermost()) {
    reason = "the innermost axis is kept";
    return failure();
  }
  int64_t width =
      getInnermostVectorWidth(kernel, options.target, sweep->shape.back());
  int64_t outputs = productOf(sweep->shape, sweep->keptDims);
  int64_t elements = productOf(sweep->shape, sweep->reducedDims);
  int64_t vectors =
      ShapedType::isDynamic(elements) ? ShapedType::kDynamic : elements / width;
  int64_t threads = 32;
  while (threads < kColumnThreads &&
         (ShapedType::isDynamic(vectors) ||
          threads * 2 * kVectorsPerThread <= vectors))
    threads *= 2;
  int64_t blocks = options.target.multiprocessors * kColumnBlocksPerSM;
  int64_t split = ShapedType::isDynamic(outputs)
                      ? 1
                      : llvm::divideCeil(blocks, std::max<int64_t>(1, outputs));
  int64_t maxSplit = ShapedType::isDynamic(vectors)
                         ? kMaxColumnSplit
                         : llvm::divideCeil(vectors, threads * kMinColumnRows);
  split = std::clamp<int64_t>(
      split, 1, std::max<int64_t>(1, std::min(maxSplit, kMaxColumnSplit)));
  SmallVector<int64_t> once(kernel.getInputs().size(), 1);
  return KernelPlanAttr::get(kernel.getContext(),
                             KernelStrategy::split_reduction, threads, width,
                             RowStorage::none, /*cluster=*/1, once, split);
}

KernelPlanAttr fusion::planKernel(KernelOp kernel, const PlanOptions &options,
                                  std::string *fallbackReason) {
  MLIRContext *context = kernel.getContext();
  SmallVector<int64_t> once(kernel.getInputs().size(), 1);
  auto plan = [&](KernelStrategy strategy, int64_t threads, int64_t vector) {
    return KernelPlanAttr::get(context, strategy, threads, vector,
                               RowStorage::none, /*cluster=*/1, once,
                               /*split=*/1);
  };
  std::string reason;
  switch (kernel.getKind()) {
  case KernelKind::matmul: {
    if (options.matmulBackend != MatmulBackend::generated &&
        succeeded(matchLibraryMatmul(kernel, &reason)))
      return plan(KernelStrategy::library_matmul, 1, 1);
    std::string noWgmma = whyNotWgmma(kernel, options.target);
    if (noWgmma.empty()) {
      // The epilogue reads and writes vectors along N.
      int64_t n = shapeOf(kernel.getYield().getValues().front()).back();
      return KernelPlanAttr::get(
          context, KernelStrategy::matmul_wgmma, kWgmmaTiles.threads(),
          std::min<int64_t>(8,
                            getInnermostVectorWidth(kernel, options.target, n)),
          RowStorage::none, /*cluster=*/1, once,
          planWgmmaSplit(kernel, options.target));
    }
    if (succeeded(getTiledProducts(kernel, &reason))) {
      if (fallbackReason)
        *fallbackReason = noWgmma;
      return plan(KernelStrategy::matmul_tiles, 256, 1);
    }
    break;
  }
  case KernelKind::elementwise: {
    if (!fitsElementwise(kernel)) {
      reason = "a vector loop needs outputs of one shape and no reduction "
               "or matmul";
      break;
    }
    return plan(
        KernelStrategy::elementwise, kFlatThreads,
        elementwiseVectorWidth(kernel, options.target,
                               shapeOf(kernel.getYield().getValues().front())));
  }
  case KernelKind::row_reduction:
  case KernelKind::wide_row: {
    FailureOr<KernelPlanAttr> rows = planRows(kernel, options, reason);
    if (failed(rows))
      break;
    // A row of static length that one block would stream (too long to
    // hold, or read once anyway), of a kernel whose reductions read no
    // other's result and are its outputs: split over blocks, which also
    // fills the chip when the rows are few. (Rows of dynamic length keep the
    // streamed plan.)
    std::string unused;
    FailureOr<RowKernelShape> row = getRowKernelShape(kernel, unused);
    if (kernel.getKind() == KernelKind::wide_row &&
        rows->getStrategy() == KernelStrategy::rows &&
        rows->getRow() == RowStorage::streamed && succeeded(row) &&
        !ShapedType::isDynamic(row->rowShape.back())) {
      FailureOr<KernelPlanAttr> split =
          planSplitReduction(kernel, options, unused);
      if (succeeded(split))
        return *split;
    }
    return *rows;
  }
  case KernelKind::column_reduction: {
    FailureOr<KernelPlanAttr> columns = planColumns(kernel, options, reason);
    if (succeeded(columns))
      return *columns;
    break;
  }
  case KernelKind::reduction: {
    FailureOr<KernelPlanAttr> split =
        planSplitReduction(kernel, options, reason);
    if (succeeded(split))
      return *split;
    break;
  }
  case KernelKind::attention: {
    if (std::string rows = whyNotAttentionRows(kernel); !rows.empty()) {
      // Many query rows: tensor-core tiles of them, each reading K and V
      // once.
      std::string tiles = whyNotAttentionTiles(kernel, options.target);
      if (!tiles.empty()) {
        reason = combineAttentionReasons(rows, tiles);
        break;
      }
      // Three multiplying warpgroups where their registers hold the
      // accumulators (more warps to cover each one's waits) and nothing
      // read per score besides (its values in flight spill them).
      int64_t threads = fitsWideAttentionTiles(kernel)
                            ? kAttentionTilesWideThreads
                            : kAttentionTilesThreads;
      return KernelPlanAttr::get(context, KernelStrategy::attention_tiles,
                                 threads, /*vector=*/2,
                                 RowStorage::none, /*cluster=*/1, once,
                                 /*split=*/1);
    }
    // A block per query row and range of keys: rows cut into ranges only
    // where there are fewer than one wave of blocks (as many as are
    // resident at once), so that the multiprocessors are busy; otherwise
    // no fold of ranges (rows counted where static). The ranges fold
    // through a workspace; where they fit a cluster, those of rows of up to
    // kAttentionRowsClusterKeys keys fold through distributed shared memory
    // instead (the cluster's blocks; both in the plan).
    ArrayRef<int64_t> out = shapeOf(kernel.getResult(0));
    int64_t rows = 1;
    for (int64_t size : out.drop_back())
      rows *= ShapedType::isDynamic(size) ? 1 : std::max<int64_t>(1, size);
    int64_t ranges =
        std::clamp<int64_t>(kAttentionRowsBlocksPerMultiprocessor *
                                options.target.multiprocessors / rows,
                            1, kAttentionRowsMaxRanges);
    int64_t cluster =
        ranges > 1 && ranges <= options.target.maxClusterBlocks ? ranges : 1;
    // Staged through shared memory where the chip has TMA and no rows
    // share K and V. (Rows that do, grouped query heads, read them through
    // L2 from adjacent blocks of the register plan: staged blocks of the
    // rows sharing them measured no faster, their softmax and soft-cap
    // math the bound; H200, 2026-12-02, results.md.)
    auto staged = KernelPlanAttr::get(
        context, KernelStrategy::attention_rows, kAttentionRowsStagedThreads,
        kAttentionRowsLaneElements, RowStorage::staged, cluster, once,
        ranges);
    if (getAttentionSharedRows(kernel) == 1 &&
        whyNotStagedAttentionRows(kernel, staged, options.target).empty())
      return staged;
    return KernelPlanAttr::get(context, KernelStrategy::attention_rows,
                               kAttentionRowsThreads,
                               kAttentionRowsLaneElements, RowStorage::none,
                               cluster, once, ranges);
  }
  }
  if (fallbackReason)
    *fallbackReason = reason;
  return plan(KernelStrategy::per_element, kFlatThreads, 1);
}

std::string fusion::checkPlan(KernelOp kernel, KernelPlanAttr plan,
                              const GpuTarget &target) {
  std::string message;
  llvm::raw_string_ostream os(message);
  if (plan.getThreads() > target.maxThreadsPerBlock) {
    os << "asks for " << plan.getThreads() << " threads a block, "
       << target.chip << " runs at most " << target.maxThreadsPerBlock;
    return message;
  }
  if (plan.getCluster() > target.maxClusterBlocks) {
    os << "asks for clusters of " << plan.getCluster() << " blocks, "
       << target.chip << " allows at most " << target.maxClusterBlocks;
    return message;
  }
  // (attention_rows' vector is a lane's share of a row, several accesses.)
  int64_t lanes = getVectorLanes(kernel, target);
  if (plan.getStrategy() != KernelStrategy::attention_rows &&
      plan.getVector() > lanes) {
    os << "vectors of " << plan.getVector() << " exceed " << target.vectorBytes
       << " bytes (" << lanes << " elements) for the kernel's types";
    return message;
  }
  ValueRange results = kernel.getYield().getValues();
  switch (plan.getStrategy()) {
  case KernelStrategy::elementwise: {
    // One index space: a hand-written plan on outputs of several shapes
    // would write all of them over the first one's.
    if (!fitsElementwise(kernel))
      return "an elementwise plan needs outputs of one shape and no "
             "reduction or matmul";
    int64_t vector = plan.getVector();
    if (elementwiseVectorWidth(kernel, target, shapeOf(results.front())) %
            vector !=
        0)
      os << "vectors of " << vector
         << " do not divide the innermost size of every input and output";
    return message;
  }
  case KernelStrategy::rows:
  case KernelStrategy::cluster_rows: {
    FailureOr<RowKernelShape> row = getRowKernelShape(kernel, message);
    if (failed(row))
      return message;
    int64_t h = row->rowShape.back();
    int64_t vector = plan.getVector(), cluster = plan.getCluster();
    if (ShapedType::isDynamic(h)) {
      if (cluster > 1 || plan.getRow() != RowStorage::streamed)
        return "a row of dynamic length is streamed by one block (cluster = "
               "1, row = streamed)";
      if (getDynamicRowVectorWidth(kernel, target) % vector != 0)
        os << "rows of dynamic length are not read in " << vector
           << "-element vectors from every input";
      return message;
    }
    bool shifted = hasShiftedRowVectors(plan, h);
    if (shifted) {
      std::string why = whyNotShiftedRows(kernel, *row);
      if (!why.empty())
        return "rows of " + std::to_string(h) + " are not whole " +
               std::to_string(vector) + "-element vectors, and " + why;
      // A row's edge elements, one a thread, are fewer than 3 vectors.
      if (h < kMinShiftedRowVectors * vector ||
          plan.getThreads() < kMinShiftedRowVectors * vector)
        return "rows of " + std::to_string(h) + " in shifted " +
               std::to_string(vector) + "-element vectors need at least " +
               std::to_string(kMinShiftedRowVectors) +
               " vectors' worth of columns and of threads";
    } else if (getInnermostVectorWidth(kernel, target, h) % vector != 0) {
      os << "rows of " << h << " are not whole " << vector
         << "-element vectors read from every input";
      return message;
    }
    int64_t part = getRowPart(plan, h);
    if (cluster > 1 && (cluster - 1) * part >= getRowSpan(h, vector)) {
      os << "rows of " << h << " leave blocks of a cluster of " << cluster
         << " without a part";
      return message;
    }
    if (plan.getRow() == RowStorage::staged)
      return whyNotStagedRows(kernel, *row, plan, target);
    int64_t held = getHeldVectorsPerThread(plan, part);
    // As much as the planner has any thread hold.
    int64_t limit = maxHeldPerThread(vector, /*threads=*/1);
    if (held > limit)
      os << "a part of " << part / vector << " vectors is held by "
         << plan.getThreads() << " threads in " << held
         << " vectors each, more than " << limit;
    return message;
  }
  case KernelStrategy::library_matmul: {
    if (failed(matchLibraryMatmul(kernel, &message)))
      return message;
    return "";
  }
  case KernelStrategy::matmul_wgmma: {
    message = whyNotWgmma(kernel, target);
    if (!message.empty())
      return message;
    int64_t n = shapeOf(kernel.getYield().getValues().front()).back();
    if (plan.getThreads() != kWgmmaTiles.threads())
      return "matmul_wgmma runs " + std::to_string(kWgmmaTiles.warpgroups) +
             " warpgroups (threads = " + std::to_string(kWgmmaTiles.threads()) +
             ")";
    int64_t kSteps = getWgmmaKSteps(kernel);
    if (plan.getSplit() > kMaxWgmmaSplit ||
        plan.getSplit() > std::max<int64_t>(1, kSteps))
      return "matmul_wgmma splits K in at most " +
             std::to_string(kMaxWgmmaSplit) + " ranges of at least one step (" +
             std::to_string(kSteps) + " steps of " +
             std::to_string(kWgmmaTiles.k) + " here)";
    if (plan.getVector() > 8 ||
        getInnermostVectorWidth(kernel, target, n) % plan.getVector() != 0)
      return "the epilogue's vectors must divide N and every input's "
             "innermost size, at most 8";
    return "";
  }
  case KernelStrategy::matmul_tiles: {
    if (failed(getTiledProducts(kernel, &message)))
      return message;
    if (plan.getThreads() != 256 || plan.getVector() != 1)
      return "tiles run 16 x 16 threads with scalar accesses (threads = "
             "256, vector = 1)";
    return "";
  }
  case KernelStrategy::columns: {
    FailureOr<ReductionKernelShape> columns =
        getReductionKernelShape(kernel, message);
    if (failed(columns))
      return message;
    if (columns->reducesInnermost())
      return "a columns plan keeps the innermost axis";
    int64_t vector = plan.getVector();
    if (getInnermostVectorWidth(kernel, target, columns->shape.back()) %
            vector !=
        0) {
      std::string why = whyNotColumnSegments(kernel, *columns, vector);
      if (!why.empty()) {
        os << "vectors of " << vector
           << " do not divide the innermost size of every input, and its "
              "rows cannot be read in segments: "
           << why;
        return message;
      }
    }
    int64_t lanes = getColumnLanes(plan, *columns);
    if (plan.getThreads() % lanes != 0)
      os << "a columns block of " << plan.getThreads()
         << " threads is not whole rows of " << lanes << " lanes";
    return message;
  }
  case KernelStrategy::split_reduction: {
    FailureOr<ReductionKernelShape> sweep =
        getReductionKernelShape(kernel, message);
    if (failed(sweep))
      return message;
    if (!sweep->reducesInnermost())
      return "a split_reduction plan reduces the innermost axis";
    int64_t vector = plan.getVector();
    if (getInnermostVectorWidth(kernel, target, sweep->shape.back()) % vector !=
        0)
      os << "vectors of " << vector
         << " do not divide the innermost size of every input";
    return message;
  }
  case KernelStrategy::attention_rows: {
    message = whyNotAttentionRows(kernel);
    if (!message.empty())
      return message;
    // Any whole number of warps: the strategy folds the warps' states.
    if (plan.getThreads() % 32 != 0 || plan.getThreads() > 1024 ||
        plan.getVector() != kAttentionRowsLaneElements) {
      os << "an attention_rows plan has whole warps of threads (at most "
            "1024) and vectors of "
         << kAttentionRowsLaneElements;
      return message;
    }
    if (plan.getRow() == RowStorage::staged)
      return whyNotStagedAttentionRows(kernel, plan, target);
    return message;
  }
  case KernelStrategy::attention_tiles: {
    message = whyNotAttentionTiles(kernel, target);
    if (!message.empty())
      return message;
    if (plan.getVector() != 2)
      return "an attention_tiles plan has vectors of 2";
    if (plan.getThreads() == kAttentionTilesWideThreads &&
        !fitsWideAttentionTiles(kernel))
      os << "an attention_tiles plan of " << kAttentionTilesWideThreads
         << " threads has head sizes up to " << kAttentionTilesWideMaxHead
         << " and no inputs read per score (other kernels' registers "
            "spill)";
    else if (plan.getThreads() != kAttentionTilesThreads &&
             plan.getThreads() != kAttentionTilesWideThreads)
      os << "an attention_tiles plan has " << kAttentionTilesThreads << " or "
         << kAttentionTilesWideThreads << " threads";
    return message;
  }
  case KernelStrategy::per_element:
    if (plan.getVector() != 1)
      return "a per-element plan has scalar accesses (vector = 1)";
    return "";
  }
  return message;
}
