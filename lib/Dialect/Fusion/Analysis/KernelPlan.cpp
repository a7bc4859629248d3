//===- KernelPlan.cpp - How each fusion.kernel runs on a GPU --------------===//

#include "fusion/Dialect/Fusion/Analysis/KernelPlan.h"

#include "fusion/Dialect/Fusion/Analysis/LibraryMatmul.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::fusion;

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

// Row plans. A block's threads are sized for about kVectorsPerThread
// vectors each (a smaller block per row: more rows in flight per SM and
// cheaper block-wide reductions), from a warp up to kMaxRowThreads. A row
// is held in registers when each thread holds at most kMaxHeldVectors.
// (H200, 2026-11-29: 4 vectors a thread instead of 1 took softmax over rows
// of 8192 bf16 from about 2515 to 3286 GB/s.)
static constexpr int64_t kMaxRowThreads = 512;
static constexpr int64_t kVectorsPerThread = 4;
static constexpr int64_t kMaxHeldVectors = 8;
// Threads of a block that streams a row of dynamic length.
static constexpr int64_t kDynamicRowThreads = 256;
// Threads of elementwise and per-element blocks.
static constexpr int64_t kFlatThreads = 256;

FailureOr<RowKernelShape> fusion::getRowKernelShape(KernelOp kernel,
                                                    std::string &reason) {
  RowKernelShape row;
  for (Operation &op : kernel.getBodyBlock()) {
    if (isa<MatmulOp>(op)) {
      reason = "a row kernel cannot hold a matmul";
      return failure();
    }
    if (isRealReduction(&op))
      row.reductions.push_back(&op);
  }
  if (row.reductions.empty()) {
    reason = "a row kernel needs a reduction";
    return failure();
  }
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
  return row;
}

bool fusion::isRowOutput(ArrayRef<int64_t> shape, ArrayRef<int64_t> rowShape) {
  if (shape == rowShape)
    return true;
  ArrayRef<int64_t> outer = rowShape.drop_back();
  return shape == outer ||
         (shape.size() == rowShape.size() && shape.drop_back() == outer &&
          shape.back() == 1);
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

int64_t fusion::getInnermostVectorWidth(KernelOp kernel,
                                        const GpuTarget &target,
                                        int64_t innermost) {
  int64_t width = getVectorLanes(kernel, target);
  if (ShapedType::isDynamic(innermost) || innermost % width != 0)
    return 1;
  // Every input read along the innermost dimension must allow vector loads:
  // an innermost size that keeps its rows aligned (a size of 1 broadcasts).
  for (Type type : kernel.getInputs().getTypes()) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(type).getShape();
    if (!shape.empty() && !ShapedType::isDynamic(shape.back()) &&
        shape.back() != 1 && shape.back() % width != 0)
      return 1;
  }
  return width;
}

int64_t fusion::getHeldVectorsPerThread(KernelPlanAttr plan,
                                        int64_t rowPart) {
  if (plan.getRow() != RowStorage::registers ||
      ShapedType::isDynamic(rowPart))
    return 0;
  return rowPart / plan.getVector() / plan.getThreads();
}

/// The kernel inputs that evaluating `roots` reads, not looking past the
/// values in `known` (computed by an earlier pass).
static llvm::SmallDenseSet<unsigned>
inputsReadBy(ArrayRef<Value> roots, const DenseSet<Value> &known) {
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

/// Whether the matmul_tiles strategy takes `kernel`: one matmul, no real
/// reduction, and every output of the product's shape.
static bool fitsMatmulTiles(KernelOp kernel) {
  auto matmuls = kernel.getBodyBlock().getOps<MatmulOp>();
  if (std::distance(matmuls.begin(), matmuls.end()) != 1 ||
      llvm::any_of(kernel.getBodyBlock(),
                   [](Operation &op) { return isRealReduction(&op); }))
    return false;
  ArrayRef<int64_t> product = shapeOf((*matmuls.begin()).getResult());
  return llvm::all_of(kernel.getYield().getValues(),
                      [&](Value v) { return shapeOf(v) == product; });
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
/// is streamed, once per pass that reaches the input (a pass per reduction,
/// then one that writes the full-row outputs).
static SmallVector<int64_t> rowPasses(KernelOp kernel,
                                      const RowKernelShape &row,
                                      bool streamed) {
  unsigned numInputs = kernel.getInputs().size();
  SmallVector<int64_t> passes(numInputs, 0);
  if (streamed) {
    DenseSet<Value> known;
    auto count = [&](ArrayRef<Value> roots) {
      for (unsigned input : inputsReadBy(roots, known))
        ++passes[input];
    };
    for (Operation *reduction : row.reductions) {
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

/// The rows plan of a row kernel, or failure with the reason.
static FailureOr<KernelPlanAttr> planRows(KernelOp kernel,
                                          const PlanOptions &options,
                                          std::string &reason) {
  FailureOr<RowKernelShape> row = getRowKernelShape(kernel, reason);
  if (failed(row))
    return failure();
  MLIRContext *context = kernel.getContext();
  int64_t h = row->rowShape.back();
  if (ShapedType::isDynamic(h))
    return KernelPlanAttr::get(context, KernelStrategy::rows,
                               kDynamicRowThreads, /*vector=*/1,
                               RowStorage::streamed, /*cluster=*/1,
                               rowPasses(kernel, *row, /*streamed=*/true));
  int64_t width = getInnermostVectorWidth(kernel, options.target, h);
  // A row longer than maxRowElements is split over a cluster in parts of
  // at most half of it (H200, 2026-11-29: rows of 131072 bf16 in parts of
  // 16384 ran at 2017 GB/s against 1797 in parts of 32768), where the
  // parts are whole vectors; rows up to maxRowElements stay in one block
  // (rows of 32768 in 2 parts were slower: 1783 against 2214 GB/s).
  int64_t cluster = 1;
  if (h > options.maxRowElements) {
    int64_t parts =
        llvm::divideCeil(h, std::max<int64_t>(1, options.maxRowElements / 2));
    if (parts <= options.target.maxClusterBlocks && h % (parts * width) == 0)
      cluster = parts;
  }
  int64_t vectors = h / cluster / width;
  int64_t threads = 32;
  while (threads < kMaxRowThreads &&
         threads * 2 * kVectorsPerThread <= vectors)
    threads *= 2;
  bool held = vectors % threads == 0 && vectors / threads <= kMaxHeldVectors;
  RowStorage storage = held ? RowStorage::registers : RowStorage::streamed;
  return KernelPlanAttr::get(
      context, cluster > 1 ? KernelStrategy::cluster_rows : KernelStrategy::rows,
      threads, width, storage, cluster, rowPasses(kernel, *row, !held));
}

KernelPlanAttr fusion::planKernel(KernelOp kernel, const PlanOptions &options,
                                  std::string *fallbackReason) {
  MLIRContext *context = kernel.getContext();
  SmallVector<int64_t> once(kernel.getInputs().size(), 1);
  auto plan = [&](KernelStrategy strategy, int64_t threads, int64_t vector) {
    return KernelPlanAttr::get(context, strategy, threads, vector,
                               RowStorage::none, /*cluster=*/1, once);
  };
  std::string reason;
  switch (kernel.getKind()) {
  case KernelKind::matmul: {
    if (options.matmulBackend != MatmulBackend::generated &&
        succeeded(matchLibraryMatmul(kernel, &reason)))
      return plan(KernelStrategy::library_matmul, 1, 1);
    if (fitsMatmulTiles(kernel))
      return plan(KernelStrategy::matmul_tiles, 256, 1);
    reason = "tiles need one matmul whose shape every output has";
    break;
  }
  case KernelKind::elementwise: {
    if (!fitsElementwise(kernel)) {
      reason = "a vector loop needs outputs of one shape and no reduction "
               "or matmul";
      break;
    }
    ArrayRef<int64_t> shape = shapeOf(kernel.getYield().getValues().front());
    int64_t vector = 1;
    if (isFlatElementwise(kernel))
      vector = getVectorLanes(kernel, options.target);
    else if (!shape.empty())
      vector = getInnermostVectorWidth(kernel, options.target, shape.back());
    return plan(KernelStrategy::elementwise, kFlatThreads, vector);
  }
  case KernelKind::row_reduction:
  case KernelKind::wide_row: {
    FailureOr<KernelPlanAttr> rows = planRows(kernel, options, reason);
    if (succeeded(rows))
      return *rows;
    break;
  }
  case KernelKind::column_reduction:
  case KernelKind::reduction:
    reason = "no specialised strategy for this kind yet";
    break;
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
  int64_t lanes = getVectorLanes(kernel, target);
  if (plan.getVector() > lanes) {
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
    ArrayRef<int64_t> shape = shapeOf(results.front());
    int64_t vector = plan.getVector();
    if (vector > 1 && !isFlatElementwise(kernel) &&
        (shape.empty() ||
         getInnermostVectorWidth(kernel, target, shape.back()) % vector != 0))
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
      if (vector > 1 || cluster > 1 ||
          plan.getRow() != RowStorage::streamed)
        return "a row of dynamic length is streamed by one block with "
               "scalar accesses (vector = 1, cluster = 1, row = streamed)";
      return message;
    }
    if (getInnermostVectorWidth(kernel, target, h) % vector != 0 ||
        h % (cluster * vector) != 0) {
      os << "rows of " << h << " are not " << cluster << " parts of whole "
         << vector << "-element vectors read from every input";
      return message;
    }
    int64_t vectors = h / cluster / vector;
    if (plan.getRow() == RowStorage::registers &&
        (vectors % plan.getThreads() != 0 ||
         vectors / plan.getThreads() > 2 * kMaxHeldVectors))
      os << "a part of " << vectors << " vectors is not held by "
         << plan.getThreads() << " threads (a whole number each, at most "
         << 2 * kMaxHeldVectors << ")";
    return message;
  }
  case KernelStrategy::library_matmul: {
    if (failed(matchLibraryMatmul(kernel, &message)))
      return message;
    return "";
  }
  case KernelStrategy::matmul_tiles: {
    if (!fitsMatmulTiles(kernel))
      return "tiles need one matmul whose shape every output has, and no "
             "reduction";
    if (plan.getThreads() != 256 || plan.getVector() != 1)
      return "tiles run 16 x 16 threads with scalar accesses (threads = "
             "256, vector = 1)";
    return "";
  }
  case KernelStrategy::per_element:
    if (plan.getVector() != 1)
      return "a per-element plan has scalar accesses (vector = 1)";
    return "";
  }
  return message;
}
