//===- KernelsToGPU.cpp - One GPU launch per fused kernel -----------------===//
//
// Turns every public function of fusion kernels into a destination-passing
// function on device buffers, with one gpu.launch per fusion.kernel. The
// launch body evaluates the kernel's fusion ops per element ("points") as
// f32 scalar or vector math; how points are spread over the GPU depends on
// the kernel's kind:
//
//  - elementwise: a grid-stride loop over vectors of 16 bytes per thread;
//    same-shape kernels on 1-D views with a scalar tail, others along the
//    innermost dimension (scalars when its size does not allow vectors);
//  - row_reduction and wide_row: a block per row, the row in registers
//    when it fits; each reduction is a per-thread partial, then a
//    block-wide gpu.all_reduce (warp shuffles and shared memory). A wide
//    row with a split plan runs on a thread-block cluster whose blocks
//    combine their totals through distributed shared memory;
//  - matmul: a host call of cuBLASLt where the kernel is one library call
//    (LibraryMatmulCall.cpp), else 16x16 output tiles staged through
//    shared memory;
//  - anything else (column and other reductions): a thread per output
//    element, reductions as loops.
//
//===----------------------------------------------------------------------===//

#include "LibraryMatmulCall.h"

#include "fusion/Conversion/Passes.h"
#include "fusion/Conversion/ScalarOps.h"

#include "fusion/Dialect/Fusion/Analysis/DynamicDims.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <map>

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSIONKERNELSTOGPU
#include "fusion/Conversion/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

static Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

static bool getKeepDims(Operation *op) { return op->hasAttr("keep_dims"); }

static bool isRealReduction(Operation *op) {
  return !getReduceAxes(op).empty() && !isTrivialReduction(op);
}

/// Identity and combiner of a reduce op, on f32 scalars or vectors.
static double reductionIdentity(Operation *op) {
  if (isa<ReduceMaxOp>(op))
    return -INFINITY;
  if (isa<ReduceMinOp>(op))
    return INFINITY;
  return 0.0;
}

static Value combine(OpBuilder &b, Location loc, Operation *op, Value acc,
                     Value x) {
  if (isa<ReduceMaxOp>(op))
    return arith::MaximumFOp::create(b, loc, acc, x);
  if (isa<ReduceMinOp>(op))
    return arith::MinimumFOp::create(b, loc, acc, x);
  return arith::AddFOp::create(b, loc, acc, x);
}

static vector::CombiningKind vectorKind(Operation *op) {
  if (isa<ReduceMaxOp>(op))
    return vector::CombiningKind::MAXIMUMF;
  if (isa<ReduceMinOp>(op))
    return vector::CombiningKind::MINIMUMF;
  return vector::CombiningKind::ADD;
}

static gpu::AllReduceOperation blockKind(Operation *op) {
  if (isa<ReduceMaxOp>(op))
    return gpu::AllReduceOperation::MAXIMUMF;
  if (isa<ReduceMinOp>(op))
    return gpu::AllReduceOperation::MINIMUMF;
  return gpu::AllReduceOperation::ADD;
}

/// Evaluates the values of a kernel body at points: a multi-index into the
/// value's shape, with `width` lanes along the last dimension when the
/// evaluation is vectorized. Results are f32 (i1 for masks), rounded to the
/// op's element type at every op as the CPU path does, then widened again.
/// The alignment of a vector access of `width` elements that starts on a
/// multiple of `width` in a buffer whose rows are multiples of `width`
/// (what the emitters ensure): up to 16 bytes, so that loads and stores
/// become single 16-byte instructions.
static llvm::MaybeAlign vectorAlignment(Type element, int64_t width) {
  int64_t bytes = std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
  return llvm::Align(std::min<int64_t>(16, bytes * width));
}

class PointEvaluator {
public:
  PointEvaluator(OpBuilder &b, Location loc, KernelOp kernel,
                 ArrayRef<Value> buffers, int64_t width, bool flat = false)
      : b(b), loc(loc), kernel(kernel), buffers(buffers), width(width),
        flat(flat) {}

  /// Per-row scalars already computed (reduction results in row kernels).
  DenseMap<Value, Value> known;

  /// Element (`row`, `col`) of matmul operand `operand` for the output
  /// element at `index` (batch dimensions broadcast as the op does).
  FailureOr<Value> evalMatmulOperand(MatmulOp op, Value operand,
                                     ArrayRef<Value> index, Value row,
                                     Value col);

  /// The size of dimension `dim` of body value `value`: static, or read
  /// from the input buffer it comes from.
  FailureOr<Value> sizeOf(Value value, int64_t dim);

  /// Forgets the values computed at points (they live in one loop body).
  void clearCache() { cache.clear(); }

  /// The value of `value` at `index`; a vector of `width` lanes along the
  /// last dimension when `lanes`, a scalar otherwise.
  FailureOr<Value> eval(Value value, ArrayRef<Value> index, bool lanes);

private:
  Value load(BlockArgument arg, ArrayRef<Value> index, bool lanes);
  FailureOr<Value> evalOp(Operation *op, ArrayRef<Value> index, bool lanes);
  FailureOr<Value> evalLoopReduction(Operation *op, ArrayRef<Value> index);
  FailureOr<Value> evalMatmul(MatmulOp op, ArrayRef<Value> index);
  /// Evaluates lane by lane and assembles the vector.
  FailureOr<Value> gather(Value value, ArrayRef<Value> index);
  Value splatIfNeeded(Value v, bool lanes) {
    if (!lanes || isa<VectorType>(v.getType()))
      return v;
    return vector::BroadcastOp::create(
        b, loc, VectorType::get({width}, v.getType()), v);
  }

  OpBuilder &b;
  Location loc;
  KernelOp kernel;
  ArrayRef<Value> buffers;
  int64_t width;
  /// Points are flat offsets into values of the output's shape (buffers of
  /// that shape are collapsed to 1-D); other values hold one element.
  bool flat;
  std::map<std::tuple<void *, std::vector<void *>, bool>, Value> cache;
};

Value PointEvaluator::load(BlockArgument arg, ArrayRef<Value> index,
                           bool lanes) {
  Value buffer = buffers[arg.getArgNumber()];
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  Value v;
  if (lanes)
    v = vector::LoadOp::create(b, loc, VectorType::get({width}, element),
                               buffer, index, /*nontemporal=*/false,
                               vectorAlignment(element, width));
  else
    v = memref::LoadOp::create(b, loc, buffer, index);
  return extendToF32(b, loc, v);
}

FailureOr<Value> PointEvaluator::eval(Value value, ArrayRef<Value> index,
                                      bool lanes) {
  if (auto it = known.find(value); it != known.end())
    return splatIfNeeded(it->second, lanes);
  std::vector<void *> key;
  for (Value i : index)
    key.push_back(i.getAsOpaquePointer());
  auto cacheKey = std::make_tuple(value.getAsOpaquePointer(), key, lanes);
  if (auto it = cache.find(cacheKey); it != cache.end())
    return it->second;

  FailureOr<Value> result = failure();
  if (auto arg = dyn_cast<BlockArgument>(value))
    result = load(arg, index, lanes);
  else
    result = evalOp(value.getDefiningOp(), index, lanes);
  if (failed(result))
    return failure();
  // Round at every op to its element type, as the CPU path does.
  Type element = getElementTypeOrSelf(value.getType());
  if (isa<FloatType>(element) && !element.isF32())
    result = extendToF32(b, loc, roundTo(b, loc, *result, element));
  cache[cacheKey] = *result;
  return result;
}

FailureOr<Value> PointEvaluator::gather(Value value, ArrayRef<Value> index) {
  SmallVector<Value> elements;
  SmallVector<Value> laneIndex(index);
  for (int64_t lane = 0; lane < width; ++lane) {
    laneIndex.back() =
        arith::AddIOp::create(b, loc, index.back(), indexConst(b, loc, lane));
    FailureOr<Value> v = eval(value, laneIndex, /*lanes=*/false);
    if (failed(v))
      return failure();
    elements.push_back(*v);
  }
  return vector::FromElementsOp::create(
             b, loc, VectorType::get({width}, elements[0].getType()), elements)
      .getResult();
}

FailureOr<Value> PointEvaluator::evalOp(Operation *op, ArrayRef<Value> index,
                                        bool lanes) {
  Value result = op->getResult(0);
  ArrayRef<int64_t> shape = shapeOf(result);

  if (auto constant = dyn_cast<ConstantOp>(op)) {
    auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
    if (!splat)
      return op->emitOpError("only splat constants can be inside a GPU "
                             "kernel");
    if (splat.getElementType().isInteger(1))
      return splatIfNeeded(
          arith::ConstantIntOp::create(b, loc, splat.getSplatValue<bool>(), 1)
              .getResult(),
          lanes);
    return splatIfNeeded(
        f32Constant(b, loc, splat.getSplatValue<APFloat>().convertToDouble(),
                    b.getF32Type()),
        lanes);
  }

  if (isElementwiseMath(op)) {
    SmallVector<Value> args;
    for (Value operand : op->getOperands()) {
      ArrayRef<int64_t> s = shapeOf(operand);
      if (flat) {
        bool whole = s == shape;
        SmallVector<Value> operandIndex(whole ? index.size() : s.size(),
                                        indexConst(b, loc, 0));
        if (whole)
          operandIndex.assign(index.begin(), index.end());
        FailureOr<Value> v = eval(operand, operandIndex, lanes && whole);
        if (failed(v))
          return failure();
        args.push_back(splatIfNeeded(*v, lanes));
        continue;
      }
      int64_t offset = shape.size() - s.size();
      SmallVector<Value> operandIndex;
      for (auto [i, dim] : llvm::enumerate(s)) {
        int64_t j = i + offset;
        operandIndex.push_back(dim == 1 && shape[j] != 1 ? indexConst(b, loc, 0)
                                                         : index[j]);
      }
      // Broadcast along the last dimension: one value for all lanes.
      bool operandLanes =
          lanes && !s.empty() && !(s.back() == 1 && shape.back() != 1);
      FailureOr<Value> v = eval(operand, operandIndex, operandLanes);
      if (failed(v))
        return failure();
      args.push_back(splatIfNeeded(*v, lanes));
    }
    return buildElementwise(b, loc, op, args);
  }

  if (auto slice = dyn_cast<SliceOp>(op)) {
    // Vector loads stay aligned only if the slice starts on a vector.
    if (lanes && (slice.getStrides().back() != 1 ||
                  slice.getOffsets().back() % width != 0))
      return gather(result, index);
    SmallVector<Value> operandIndex;
    for (auto [i, offset, stride] :
         llvm::zip(index, slice.getOffsets(), slice.getStrides())) {
      Value scaled =
          stride == 1
              ? i
              : arith::MulIOp::create(b, loc, i, indexConst(b, loc, stride));
      operandIndex.push_back(
          offset == 0 ? scaled
                      : arith::AddIOp::create(b, loc, scaled,
                                              indexConst(b, loc, offset)));
    }
    return eval(slice.getX(), operandIndex, lanes);
  }

  if (auto transpose = dyn_cast<TransposeOp>(op)) {
    ArrayRef<int64_t> perm = transpose.getPermutation();
    if (lanes && perm.back() != static_cast<int64_t>(perm.size()) - 1)
      return gather(result, index);
    SmallVector<Value> operandIndex(perm.size());
    for (auto [j, p] : llvm::enumerate(perm))
      operandIndex[p] = index[j];
    return eval(transpose.getX(), operandIndex, lanes);
  }

  if (isTrivialReduction(op)) {
    ArrayRef<int64_t> axes = getReduceAxes(op);
    Value input = op->getOperand(0);
    SmallVector<Value> operandIndex;
    unsigned next = 0;
    for (int64_t d = 0; d < static_cast<int64_t>(shapeOf(input).size()); ++d) {
      if (llvm::is_contained(axes, d)) {
        operandIndex.push_back(indexConst(b, loc, 0));
        if (getKeepDims(op))
          ++next;
      } else {
        operandIndex.push_back(index[next++]);
      }
    }
    bool operandLanes =
        lanes && !llvm::is_contained(axes, int64_t(shapeOf(input).size()) - 1);
    FailureOr<Value> v = eval(input, operandIndex, operandLanes);
    if (failed(v))
      return failure();
    return splatIfNeeded(*v, lanes);
  }

  if (isRealReduction(op)) {
    if (lanes)
      return gather(result, index);
    return evalLoopReduction(op, index);
  }

  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    if (lanes)
      return gather(result, index);
    return evalMatmul(matmul, index);
  }

  return op->emitOpError("has no GPU lowering (decompose composite ops "
                         "first)");
}

FailureOr<Value> PointEvaluator::evalLoopReduction(Operation *op,
                                                   ArrayRef<Value> index) {
  Value input = op->getOperand(0);
  ArrayRef<int64_t> axes = getReduceAxes(op);
  int64_t rank = shapeOf(input).size();
  // The input index: result dims where kept, loop variables on the axes.
  SmallVector<Value> inputIndex(rank);
  unsigned next = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(axes, d)) {
      if (getKeepDims(op))
        ++next;
      continue;
    }
    inputIndex[d] = index[next++];
  }
  // Sizes of the reduced axes come from the input's source buffer.
  Value count = indexConst(b, loc, 1);
  Value acc = f32Constant(b, loc, reductionIdentity(op), b.getF32Type());
  std::function<FailureOr<Value>(unsigned, Value)> loop =
      [&](unsigned a, Value init) -> FailureOr<Value> {
    if (a == axes.size()) {
      // The loop body: a fresh scope for the values computed inside.
      auto saved = std::move(cache);
      cache.clear();
      FailureOr<Value> x = eval(input, inputIndex, /*lanes=*/false);
      cache = std::move(saved);
      if (failed(x))
        return failure();
      return combine(b, loc, op, init, *x);
    }
    int64_t axis = axes[a];
    FailureOr<Value> size = sizeOf(input, axis);
    if (failed(size))
      return op->emitOpError("cannot size the dynamic axis ") << axis;
    count = arith::MulIOp::create(b, loc, count, *size);
    auto forOp = scf::ForOp::create(b, loc, indexConst(b, loc, 0), *size,
                                    indexConst(b, loc, 1), ValueRange{init});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forOp.getBody());
    inputIndex[axis] = forOp.getInductionVar();
    FailureOr<Value> inner = loop(a + 1, forOp.getRegionIterArgs()[0]);
    if (failed(inner))
      return failure();
    scf::YieldOp::create(b, loc, *inner);
    return forOp.getResult(0);
  };
  FailureOr<Value> total = loop(0, acc);
  if (failed(total))
    return failure();
  if (!isa<ReduceMeanOp>(op))
    return total;
  Value n = arith::UIToFPOp::create(
      b, loc, b.getF32Type(),
      arith::IndexCastOp::create(b, loc, b.getI64Type(), count));
  return arith::DivFOp::create(b, loc, *total, n).getResult();
}

FailureOr<Value> PointEvaluator::sizeOf(Value value, int64_t dim) {
  int64_t size = shapeOf(value)[dim];
  if (!ShapedType::isDynamic(size))
    return indexConst(b, loc, size);
  std::optional<std::pair<Value, int64_t>> source = traceDynamicDim(value, dim);
  if (!source)
    return failure();
  // The trace ends at a kernel input; read that input's buffer.
  for (auto [input, buffer] : llvm::zip(kernel.getInputs(), buffers))
    if (input == source->first)
      return memref::DimOp::create(b, loc, buffer, source->second).getResult();
  return failure();
}

FailureOr<Value> PointEvaluator::evalMatmulOperand(MatmulOp op, Value operand,
                                                   ArrayRef<Value> index,
                                                   Value row, Value col) {
  ArrayRef<int64_t> shape = shapeOf(op.getResult());
  int64_t batch = shape.size() - 2;
  ArrayRef<int64_t> s = shapeOf(operand).drop_back(2);
  int64_t offset = batch - s.size();
  SmallVector<Value> operandIndex;
  for (auto [i, dim] : llvm::enumerate(s))
    operandIndex.push_back(dim == 1 && shape[i + offset] != 1
                               ? indexConst(b, loc, 0)
                               : index[i + offset]);
  operandIndex.push_back(row);
  operandIndex.push_back(col);
  return eval(operand, operandIndex, /*lanes=*/false);
}

FailureOr<Value> PointEvaluator::evalMatmul(MatmulOp op,
                                            ArrayRef<Value> index) {
  ArrayRef<int64_t> shape = shapeOf(op.getResult());
  int64_t batch = shape.size() - 2;
  Value m = index[batch], n = index[batch + 1];
  FailureOr<Value> size = sizeOf(op.getA(), shapeOf(op.getA()).size() - 1);
  if (failed(size))
    return op.emitOpError("cannot size the dynamic inner dimension");
  auto forOp = scf::ForOp::create(
      b, loc, indexConst(b, loc, 0), *size, indexConst(b, loc, 1),
      ValueRange{f32Constant(b, loc, 0.0, b.getF32Type())});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forOp.getBody());
    Value kk = forOp.getInductionVar();
    auto saved = std::move(cache);
    cache.clear();
    FailureOr<Value> a = evalMatmulOperand(op, op.getA(), index, m, kk);
    FailureOr<Value> bv = failure();
    if (succeeded(a))
      bv = evalMatmulOperand(op, op.getB(), index, kk, n);
    cache = std::move(saved);
    if (failed(bv))
      return failure();
    Value sum = arith::AddFOp::create(b, loc, forOp.getRegionIterArgs()[0],
                                      arith::MulFOp::create(b, loc, *a, *bv));
    scf::YieldOp::create(b, loc, sum);
  }
  return forOp.getResult(0);
}

//===----------------------------------------------------------------------===//
// Launch emission
//===----------------------------------------------------------------------===//

/// Device buffers for one kernel: inputs (indexed like the body's
/// arguments) and outputs.
struct KernelBuffers {
  SmallVector<Value> inputs, outputs;
};

/// Splits `flat` into a multi-index over `sizes` (row-major).
static SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value flat,
                                      ArrayRef<Value> sizes) {
  SmallVector<Value> index(sizes.size());
  for (int64_t d = sizes.size() - 1; d >= 0; --d) {
    index[d] = d == 0 ? flat : arith::RemUIOp::create(b, loc, flat, sizes[d]);
    if (d > 0)
      flat = arith::DivUIOp::create(b, loc, flat, sizes[d]);
  }
  return index;
}

/// The sizes of `buffer` as index values.
static SmallVector<Value> sizesOf(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    sizes.push_back(type.isDynamicDim(d)
                        ? memref::DimOp::create(b, loc, buffer, d).getResult()
                        : indexConst(b, loc, type.getDimSize(d)));
  return sizes;
}

static Value product(OpBuilder &b, Location loc, ArrayRef<Value> values) {
  Value p = indexConst(b, loc, 1);
  for (Value v : values)
    p = arith::MulIOp::create(b, loc, p, v);
  return p;
}

/// Where a launch body runs: block and thread ids along x, the grid size,
/// and the workgroup (shared) buffers asked for.
struct LaunchIds {
  Value block, thread, grid;
  ArrayRef<BlockArgument> shared;
};

/// A launch of `blocks` x `threads` (in clusters of `clusterBlocks` blocks,
/// with `dynamicShared` bytes of dynamic shared memory, when given), named
/// after the kernel; `body` fills it.
static LogicalResult
emitLaunch(OpBuilder &b, Location loc, KernelOp kernel, Value blocks,
           int64_t threads,
           function_ref<LogicalResult(OpBuilder &, const LaunchIds &)> body,
           TypeRange shared = {}, int64_t clusterBlocks = 0,
           int64_t dynamicShared = 0) {
  Value one = indexConst(b, loc, 1);
  // A grid is at most 2^31 - 1 blocks wide; grid-stride loops cover more.
  blocks = arith::MinUIOp::create(b, loc, blocks,
                                  indexConst(b, loc, (int64_t(1) << 31) - 1));
  blocks = arith::MaxUIOp::create(b, loc, blocks, one);
  Value clusterX, clusterY, clusterZ;
  if (clusterBlocks) {
    clusterX = indexConst(b, loc, clusterBlocks);
    clusterY = clusterZ = one;
  }
  std::string name = kernel.getName().value_or("fusion_kernel").str();
  auto launch = gpu::LaunchOp::create(
      b, loc, blocks, one, one, indexConst(b, loc, threads), one, one,
      dynamicShared ? arith::ConstantIntOp::create(b, loc, dynamicShared, 32)
                    : Value(),
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{}, shared, /*privateAttributions=*/{}, clusterX,
      clusterY, clusterZ,
      FlatSymbolRefAttr::get(b.getContext(), name + "_module"),
      FlatSymbolRefAttr::get(b.getContext(), name));
  OpBuilder::InsertionGuard guard(b);
  Block &entry = launch.getBody().front();
  // The builder leaves out the six cluster arguments (cluster ids and
  // sizes) that the verifier and the parser place after the first twelve.
  if (clusterBlocks)
    for (unsigned i = 0; i < 6; ++i)
      entry.insertArgument(gpu::LaunchOp::kNumConfigRegionAttributes + i,
                           b.getIndexType(), loc);
  b.setInsertionPointToStart(&entry);
  LaunchIds ids{launch.getBlockIds().x, launch.getThreadIds().x,
                launch.getGridSize().x, launch.getWorkgroupAttributions()};
  if (failed(body(b, ids)))
    return failure();
  gpu::TerminatorOp::create(b, loc);
  return success();
}

/// The lanes of a 16-byte access to the narrowest buffer of the kernel.
static int64_t vectorLanes(const KernelBuffers &buffers) {
  int64_t smallest = 4;
  for (Value buffer :
       llvm::concat<const Value>(buffers.inputs, buffers.outputs)) {
    auto type = cast<MemRefType>(buffer.getType());
    smallest = std::min<int64_t>(
        smallest, std::max<int64_t>(
                      1, type.getElementType().getIntOrFloatBitWidth() / 8));
  }
  return 16 / smallest;
}

/// The widest vector of 16 bytes that divides the innermost size of every
/// buffer the kernel touches; 1 when there is none.
static int64_t chooseWidth(KernelOp kernel, const KernelBuffers &buffers,
                           int64_t innermost) {
  int64_t width = vectorLanes(buffers);
  if (ShapedType::isDynamic(innermost) || innermost % width != 0)
    return 1;
  // Every input read along the innermost dimension must allow vector loads:
  // contiguous with an innermost size that keeps rows aligned.
  for (Value buffer : buffers.inputs) {
    auto type = cast<MemRefType>(buffer.getType());
    if (type.getRank() > 0 && !ShapedType::isDynamic(type.getShape().back()) &&
        type.getShape().back() != 1 && type.getShape().back() % width != 0)
      return 1;
  }
  return width;
}

/// Stores `value` (f32 or i1, scalar or vector) into `buffer` at `index`.
static void store(OpBuilder &b, Location loc, Value value, Value buffer,
                  ArrayRef<Value> index) {
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  value = roundTo(b, loc, value, element);
  if (auto vector = dyn_cast<VectorType>(value.getType()))
    vector::StoreOp::create(b, loc, value, buffer, index,
                            /*nontemporal=*/false,
                            vectorAlignment(element, vector.getNumElements()));
  else
    memref::StoreOp::create(b, loc, value, buffer, index);
}

/// The first global thread index and the stride of a grid-stride loop.
static std::pair<Value, Value> gridStride(OpBuilder &b, Location loc, Value bid,
                                          Value tid, Value grid,
                                          int64_t threads) {
  Value blockSize = indexConst(b, loc, threads);
  Value first = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, bid, blockSize), tid);
  Value stride = arith::MulIOp::create(b, loc, grid, blockSize);
  return {first, stride};
}

/// Whether every op of `kernel` is a constant or elementwise math and every
/// value has the output `shape` or holds one element: then a point is a
/// flat offset, whatever the innermost size.
static bool isFlatElementwise(KernelOp kernel, ArrayRef<int64_t> shape) {
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
  return llvm::all_of(kernel.getYield().getValues(),
                      [&](Value v) { return shapeOf(v) == shape; });
}

/// Flat elementwise kernels: buffers of the output's shape are seen as 1-D;
/// a grid-stride loop over whole 16-byte vectors, then a scalar loop over
/// the last `total % width` elements.
static LogicalResult emitFlatElementwise(OpBuilder &b, Location loc,
                                         KernelOp kernel,
                                         const KernelBuffers &buffers) {
  constexpr int64_t kThreads = 256;
  Value out0 = buffers.outputs[0];
  auto outType = cast<MemRefType>(out0.getType());
  int64_t width = vectorLanes(buffers);
  Value widthValue = indexConst(b, loc, width);
  Value total = product(b, loc, sizesOf(b, loc, out0));
  Value vectors = arith::CeilDivUIOp::create(b, loc, total, widthValue);
  Value blocks =
      arith::CeilDivUIOp::create(b, loc, vectors, indexConst(b, loc, kThreads));
  return emitLaunch(
      b, loc, kernel, blocks, kThreads,
      [&](OpBuilder &b, const LaunchIds &ids) -> LogicalResult {
        Value bid = ids.block, tid = ids.thread, grid = ids.grid;
        auto flatten = [&](Value buffer) -> Value {
          auto type = cast<MemRefType>(buffer.getType());
          if (type.getShape() != outType.getShape() || type.getRank() == 1)
            return buffer;
          ReassociationIndices all =
              llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
          return memref::CollapseShapeOp::create(
              b, loc, buffer, ArrayRef<ReassociationIndices>{all});
        };
        SmallVector<Value> inputs = llvm::map_to_vector(buffers.inputs, flatten);
        SmallVector<Value> outputs =
            llvm::map_to_vector(buffers.outputs, flatten);
        Value size = memref::DimOp::create(b, loc, outputs[0], 0);
        Value whole = arith::DivUIOp::create(b, loc, size, widthValue);
        auto [first, stride] = gridStride(b, loc, bid, tid, grid, kThreads);
        // `lanes` elements at flat offset `flat` of every output.
        auto emitPoint = [&](Value flat, int64_t lanes) -> LogicalResult {
          PointEvaluator evaluator(b, loc, kernel, inputs, lanes,
                                   /*flat=*/true);
          for (auto [value, buffer] :
               llvm::zip(kernel.getYield().getValues(), outputs)) {
            FailureOr<Value> v = evaluator.eval(value, flat, lanes > 1);
            if (failed(v))
              return failure();
            store(b, loc, *v, buffer, flat);
          }
          return success();
        };
        {
          auto body = scf::ForOp::create(b, loc, first, whole, stride);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(body.getBody());
          if (failed(emitPoint(arith::MulIOp::create(
                                   b, loc, body.getInductionVar(), widthValue),
                               width)))
            return failure();
        }
        Value tailStart = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, whole, widthValue), first);
        auto tail = scf::ForOp::create(b, loc, tailStart, size, stride);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(tail.getBody());
        return emitPoint(tail.getInductionVar(), 1);
      });
}

/// Elementwise kernels: a grid-stride loop over vectors of the flat index
/// space of the (single) output shape.
static LogicalResult emitElementwise(OpBuilder &b, Location loc,
                                     KernelOp kernel,
                                     const KernelBuffers &buffers) {
  constexpr int64_t kThreads = 256;
  Value out0 = buffers.outputs[0];
  auto outType = cast<MemRefType>(out0.getType());
  if (outType.getRank() > 0 && isFlatElementwise(kernel, outType.getShape()))
    return emitFlatElementwise(b, loc, kernel, buffers);
  int64_t width = outType.getRank() == 0
                      ? 1
                      : chooseWidth(kernel, buffers, outType.getShape().back());
  SmallVector<Value> sizes = sizesOf(b, loc, out0);
  Value total = product(b, loc, sizes);
  Value vectors =
      arith::DivUIOp::create(b, loc, total, indexConst(b, loc, width));
  Value blocks =
      arith::CeilDivUIOp::create(b, loc, vectors, indexConst(b, loc, kThreads));
  return emitLaunch(
      b, loc, kernel, blocks, kThreads,
      [&](OpBuilder &b, const LaunchIds &ids) -> LogicalResult {
        Value bid = ids.block, tid = ids.thread, grid = ids.grid;
        auto [first, stride] = gridStride(b, loc, bid, tid, grid, kThreads);
        SmallVector<Value> innerSizes = sizesOf(b, loc, out0);
        Value count = arith::DivUIOp::create(
            b, loc, product(b, loc, innerSizes), indexConst(b, loc, width));
        auto loop = scf::ForOp::create(b, loc, first, count, stride);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(loop.getBody());
        Value flat = arith::MulIOp::create(b, loc, loop.getInductionVar(),
                                           indexConst(b, loc, width));
        SmallVector<Value> index = delinearize(b, loc, flat, innerSizes);
        PointEvaluator evaluator(b, loc, kernel, buffers.inputs, width);
        for (auto [value, buffer] :
             llvm::zip(kernel.getYield().getValues(), buffers.outputs)) {
          FailureOr<Value> v = evaluator.eval(value, index, width > 1);
          if (failed(v))
            return failure();
          store(b, loc, *v, buffer, index);
        }
        return success();
      });
}

/// Waits for every thread of the cluster; writes to shared memory before it
/// are visible to the whole cluster after it (release/acquire).
static void clusterBarrier(OpBuilder &b, Location loc) {
  NVVM::ClusterArriveOp::create(b, loc, /*aligned=*/UnitAttr());
  NVVM::ClusterWaitOp::create(b, loc, /*aligned=*/UnitAttr());
}

/// The reduction of the block totals `total` of the `splits` blocks of a
/// cluster: thread 0 of each block publishes its total in slot `ordinal`
/// of its shared `slots`, and every thread combines the cluster's slots in
/// block order (the same result in every block).
static Value combineOverCluster(OpBuilder &b, Location loc,
                                Operation *reduction, Value total, Value slots,
                                int64_t ordinal, Value tid, int64_t splits) {
  Value slot = indexConst(b, loc, ordinal);
  Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                        indexConst(b, loc, 0));
  auto publish = scf::IfOp::create(b, loc, isFirst);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(publish.thenBlock()->getTerminator());
    memref::StoreOp::create(b, loc, total, slots, slot);
  }
  clusterBarrier(b, loc);
  // The slot's address in this block's shared memory, then in each block's.
  MLIRContext *context = b.getContext();
  auto sharedPtr = LLVM::LLVMPointerType::get(
      context, static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared));
  auto clusterPtr = LLVM::LLVMPointerType::get(
      context, static_cast<unsigned>(NVVM::NVVMMemorySpace::SharedCluster));
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, slots);
  Value address = arith::AddIOp::create(
      b, loc, base, indexConst(b, loc, ordinal * int64_t(sizeof(float))));
  Value local = LLVM::IntToPtrOp::create(
      b, loc, sharedPtr,
      arith::IndexCastUIOp::create(b, loc, b.getI64Type(), address)
          .getResult());
  Value acc = f32Constant(b, loc, reductionIdentity(reduction), b.getF32Type());
  for (int64_t block = 0; block < splits; ++block) {
    Value remote = NVVM::MapaOp::create(
        b, loc, clusterPtr, local,
        arith::ConstantIntOp::create(b, loc, block, 32).getResult());
    acc = combine(b, loc, reduction, acc,
                  LLVM::LoadOp::create(b, loc, b.getF32Type(), remote));
  }
  return acc;
}

/// Row kernels: a block per row (grid-stride over rows). Each reduction is
/// a pass over the row; its result is a per-row scalar for what follows.
static LogicalResult emitRows(OpBuilder &b, Location loc, KernelOp kernel,
                              const KernelBuffers &buffers) {
  // The row space: the input shape of the first innermost reduction.
  SmallVector<Operation *> reductions;
  for (Operation &op : kernel.getBodyBlock())
    if (isRealReduction(&op))
      reductions.push_back(&op);
  if (reductions.empty())
    return kernel.emitOpError("a row kernel needs a reduction");
  Value rowInput = reductions.front()->getOperand(0);
  ArrayRef<int64_t> rowShape = shapeOf(rowInput);
  int64_t rank = rowShape.size();
  int64_t h = rowShape.back();
  if (ShapedType::isDynamic(h))
    return kernel.emitOpError("GPU rows of dynamic length are not supported "
                              "yet");
  int64_t width = chooseWidth(kernel, buffers, h);
  // A wide row is split over the `row_splits` blocks of a cluster, each
  // holding its part of the row; the blocks combine their partial
  // reductions through distributed shared memory. Without a usable plan
  // (more than a portable cluster of 8, or parts not whole vectors) one
  // block streams the row.
  int64_t splits = 1;
  if (std::optional<uint64_t> plan = kernel.getRowSplits())
    if (*plan <= 8 && h % (int64_t(*plan) * width) == 0)
      splits = *plan;
  int64_t part = h / splits;
  int64_t vectorsPerRow = part / width;
  // Rows that fit: each thread keeps `unrolled` vectors of the row in
  // registers, loaded once for every pass. Otherwise the passes stream the
  // row from memory.
  // Threads: enough for about kVectorsPerThread vectors each (a smaller
  // block per row: more rows in flight per SM and cheaper block-wide
  // reductions), from a warp up to kMaxThreads.
  constexpr int64_t kMaxThreads = 512, kMaxVectorsPerThread = 8,
                    kVectorsPerThread = 4;
  int64_t threads = 32;
  while (threads < kMaxThreads &&
         threads * 2 * kVectorsPerThread <= vectorsPerRow)
    threads *= 2;
  int64_t unrolled = 0;
  if (vectorsPerRow % threads == 0 &&
      vectorsPerRow / threads <= kMaxVectorsPerThread)
    unrolled = vectorsPerRow / threads;

  // Row sizes come from a buffer with the full row shape.
  Value rowBuffer;
  for (Value buffer :
       llvm::concat<const Value>(buffers.inputs, buffers.outputs))
    if (cast<MemRefType>(buffer.getType()).getRank() == rank &&
        cast<MemRefType>(buffer.getType()).getShape().back() == h)
      rowBuffer = buffer;
  SmallVector<Value> rowSizes;
  if (rank > 1) {
    if (!rowBuffer)
      return kernel.emitOpError("no buffer of the row shape to size rows");
    rowSizes = sizesOf(b, loc, rowBuffer);
    rowSizes.pop_back();
  }
  Value rows = product(b, loc, rowSizes);
  Value blocks = rows;
  if (splits > 1)
    // Whole clusters: the launch's cap on blocks must not cut one.
    blocks = arith::MulIOp::create(
        b, loc,
        arith::MinUIOp::create(b, loc, rows, indexConst(b, loc, 1 << 27)),
        indexConst(b, loc, splits));
  // A split's blocks publish their partials in shared slots, one per
  // reduction, in dynamic shared memory (gpu.launch does not take workgroup
  // attributions together with clusters).
  int64_t numSlots = reductions.size();
  return emitLaunch(
      b, loc, kernel, blocks, threads,
      [&](OpBuilder &b, const LaunchIds &ids) -> LogicalResult {
        Value bid = ids.block, tid = ids.thread, grid = ids.grid;
        // With a split, a cluster owns a row and block `partIndex` of the
        // cluster the columns [partIndex * part, (partIndex + 1) * part).
        Value partIndex = indexConst(b, loc, 0);
        Value slots;
        if (splits > 1) {
          auto workgroup = gpu::AddressSpaceAttr::get(
              b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
          Value bytes = gpu::DynamicSharedMemoryOp::create(
              b, loc,
              MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                              MemRefLayoutAttrInterface{}, workgroup));
          slots = memref::ViewOp::create(
              b, loc,
              MemRefType::get({numSlots}, b.getF32Type(),
                              MemRefLayoutAttrInterface{}, workgroup),
              bytes, indexConst(b, loc, 0), ValueRange{});
          Value clusterSize = indexConst(b, loc, splits);
          partIndex = gpu::ClusterBlockIdOp::create(b, loc, gpu::Dimension::x);
          bid = arith::DivUIOp::create(b, loc, bid, clusterSize);
          grid = arith::DivUIOp::create(b, loc, grid, clusterSize);
        }
        Value partStart = arith::MulIOp::create(b, loc, partIndex,
                                                indexConst(b, loc, part));
        SmallVector<Value> innerRowSizes;
        if (rank > 1) {
          innerRowSizes = sizesOf(b, loc, rowBuffer);
          innerRowSizes.pop_back();
        }
        Value count = product(b, loc, innerRowSizes);
        auto rowLoop = scf::ForOp::create(b, loc, bid, count, grid);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(rowLoop.getBody());
        SmallVector<Value> rowIndex =
            delinearize(b, loc, rowLoop.getInductionVar(), innerRowSizes);
        PointEvaluator evaluator(b, loc, kernel, buffers.inputs, width);

        // A pass of the block over the row: `visit` gets each vector's
        // column; the loop carries `init`.
        Value first = arith::AddIOp::create(
            b, loc, partStart,
            arith::MulIOp::create(b, loc, tid, indexConst(b, loc, width)));
        Value step = indexConst(b, loc, threads * width);
        Value end =
            arith::AddIOp::create(b, loc, partStart, indexConst(b, loc, part));
        auto columnsOf = [&](Value column) {
          SmallVector<Value> index(rowIndex);
          index.push_back(column);
          return index;
        };

        // The columns this thread holds when the row is in registers.
        SmallVector<Value> heldColumns;
        for (int64_t k = 0; k < unrolled; ++k)
          heldColumns.push_back(arith::AddIOp::create(
              b, loc, first, indexConst(b, loc, k * threads * width)));

        for (auto [ordinal, reduction] : llvm::enumerate(reductions)) {
          // Reductions over other rows cannot share the kernel.
          if (shapeOf(reduction->getOperand(0)) != rowShape)
            return reduction->emitOpError("reduces other rows than its "
                                          "kernel");
          Value identity =
              f32Constant(b, loc, reductionIdentity(reduction), b.getF32Type());
          auto partialOf = [&](Value column, Value acc) -> FailureOr<Value> {
            FailureOr<Value> x = evaluator.eval(reduction->getOperand(0),
                                                columnsOf(column), width > 1);
            if (failed(x))
              return failure();
            Value partial = *x;
            if (width > 1)
              partial = vector::ReductionOp::create(
                  b, loc, vectorKind(reduction), partial);
            return combine(b, loc, reduction, acc, partial);
          };
          Value partial = identity;
          if (unrolled) {
            // Registers: values loaded or computed in earlier passes are
            // reused (the evaluator keeps them).
            for (Value column : heldColumns) {
              FailureOr<Value> next = partialOf(column, partial);
              if (failed(next))
                return failure();
              partial = *next;
            }
          } else {
            auto pass = scf::ForOp::create(b, loc, first, end, step,
                                           ValueRange{identity});
            OpBuilder::InsertionGuard inner(b);
            b.setInsertionPointToStart(pass.getBody());
            evaluator.clearCache();
            FailureOr<Value> next =
                partialOf(pass.getInductionVar(), pass.getRegionIterArgs()[0]);
            if (failed(next))
              return failure();
            scf::YieldOp::create(b, loc, *next);
            b.setInsertionPointAfter(pass);
            evaluator.clearCache();
            partial = pass.getResult(0);
          }
          Value total = gpu::AllReduceOp::create(
              b, loc, partial,
              gpu::AllReduceOperationAttr::get(b.getContext(),
                                               blockKind(reduction)),
              /*uniform=*/true);
          if (splits > 1)
            total = combineOverCluster(b, loc, reduction, total, slots,
                                       ordinal, tid, splits);
          if (isa<ReduceMeanOp>(reduction))
            total = arith::DivFOp::create(
                b, loc, total,
                f32Constant(b, loc, static_cast<double>(h), b.getF32Type()));
          Type element = getElementTypeOrSelf(reduction->getResult(0));
          if (!element.isF32())
            total = extendToF32(b, loc, roundTo(b, loc, total, element));
          evaluator.known[reduction->getResult(0)] = total;
        }

        // The outputs: full rows in a last pass (from registers when the row
        // is held), per-row values by thread 0.
        scf::ForOp write;
        if (!unrolled)
          write = scf::ForOp::create(b, loc, first, end, step);
        Value isFirst = arith::AndIOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                  indexConst(b, loc, 0)),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, partIndex,
                                  indexConst(b, loc, 0)));
        auto perRow = scf::IfOp::create(b, loc, isFirst);
        b.setInsertionPoint(perRow);
        for (auto [value, buffer] :
             llvm::zip(kernel.getYield().getValues(), buffers.outputs)) {
          ArrayRef<int64_t> shape = shapeOf(value);
          bool fullRow =
              static_cast<int64_t>(shape.size()) == rank && shape.back() == h;
          OpBuilder::InsertionGuard inner(b);
          if (fullRow && unrolled) {
            for (Value column : heldColumns) {
              SmallVector<Value> index = columnsOf(column);
              FailureOr<Value> v = evaluator.eval(value, index, width > 1);
              if (failed(v))
                return failure();
              store(b, loc, *v, buffer, index);
            }
          } else if (fullRow) {
            b.setInsertionPoint(write.getBody()->getTerminator());
            evaluator.clearCache();
            SmallVector<Value> index = columnsOf(write.getInductionVar());
            FailureOr<Value> v = evaluator.eval(value, index, width > 1);
            if (failed(v))
              return failure();
            store(b, loc, *v, buffer, index);
          } else {
            b.setInsertionPoint(perRow.thenBlock()->getTerminator());
            // Values computed outside this branch do not dominate it.
            evaluator.clearCache();
            SmallVector<Value> index(rowIndex);
            if (static_cast<int64_t>(shape.size()) == rank)
              index.push_back(indexConst(b, loc, 0)); // [R..., 1]
            if (index.size() != shape.size())
              return kernel.emitOpError("an output that is neither a row nor "
                                        "a value per row");
            FailureOr<Value> v = evaluator.eval(value, index, false);
            if (failed(v))
              return failure();
            store(b, loc, *v, buffer, index);
            // What was computed in the branch is not visible after it.
            evaluator.clearCache();
          }
        }
        b.setInsertionPointAfter(perRow);
        // The next row's reductions reuse the shared memory; with a split,
        // the other blocks' slots too (and a block's shared memory must
        // outlive the reads of its cluster).
        if (splits > 1)
          clusterBarrier(b, loc);
        else
          gpu::BarrierOp::create(b, loc);
        return success();
      },
      /*shared=*/{}, splits > 1 ? splits : 0,
      splits > 1 ? numSlots * int64_t(sizeof(float)) : 0);
}

/// Matmul kernels whose outputs all have the product's shape: a block of
/// kTile x kTile threads per output tile (grid-stride over tiles). Per step
/// of kTile along K, the block stages a tile of each operand in shared
/// memory (zeros past the edges), then each thread accumulates its element
/// in f32; the epilogue is evaluated on the accumulator.
static LogicalResult emitMatmulTiles(OpBuilder &b, Location loc,
                                     KernelOp kernel, MatmulOp matmul,
                                     const KernelBuffers &buffers) {
  constexpr int64_t kTile = 16;
  MLIRContext *context = b.getContext();
  Value out0 = buffers.outputs[0];
  int64_t rank = cast<MemRefType>(out0.getType()).getRank();
  auto tileSizes = [&](OpBuilder &b) {
    // [batch..., tiles along M, tiles along N] and the sizes M, N.
    SmallVector<Value> sizes = sizesOf(b, loc, out0);
    Value m = sizes[rank - 2], n = sizes[rank - 1];
    Value tile = indexConst(b, loc, kTile);
    sizes[rank - 2] = arith::CeilDivUIOp::create(b, loc, m, tile);
    sizes[rank - 1] = arith::CeilDivUIOp::create(b, loc, n, tile);
    return std::make_tuple(sizes, m, n);
  };
  SmallVector<Value> tiles = std::get<0>(tileSizes(b));
  auto workgroup = gpu::AddressSpaceAttr::get(
      context, gpu::GPUDialect::getWorkgroupAddressSpace());
  // One padding column keeps the column reads of B free of bank conflicts.
  auto tileType = MemRefType::get({kTile, kTile + 1}, b.getF32Type(),
                                  MemRefLayoutAttrInterface{}, workgroup);
  return emitLaunch(
      b, loc, kernel, product(b, loc, tiles), kTile * kTile,
      [&](OpBuilder &b, const LaunchIds &ids) -> LogicalResult {
        Value aTile = ids.shared[0], bTile = ids.shared[1];
        auto [tiles, m, n] = tileSizes(b);
        Value tile = indexConst(b, loc, kTile);
        Value zero = indexConst(b, loc, 0);
        Value tx = arith::RemUIOp::create(b, loc, ids.thread, tile);
        Value ty = arith::DivUIOp::create(b, loc, ids.thread, tile);
        PointEvaluator sizer(b, loc, kernel, buffers.inputs, 1);
        FailureOr<Value> kSize =
            sizer.sizeOf(matmul.getA(), shapeOf(matmul.getA()).size() - 1);
        if (failed(kSize))
          return matmul.emitOpError("cannot size the dynamic inner dimension");

        auto tileLoop = scf::ForOp::create(b, loc, ids.block,
                                           product(b, loc, tiles), ids.grid);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(tileLoop.getBody());
        SmallVector<Value> index =
            delinearize(b, loc, tileLoop.getInductionVar(), tiles);
        Value row = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, index[rank - 2], tile), ty);
        Value col = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, index[rank - 1], tile), tx);
        index[rank - 2] = row;
        index[rank - 1] = col;

        // Stages element (r, c) of an operand into `buffer`[ty][tx], zero
        // outside [0, rows) x [0, cols).
        auto stage = [&](Value operand, Value r, Value c, Value rows,
                         Value cols, Value buffer) -> LogicalResult {
          Value inside = arith::AndIOp::create(
              b, loc,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, r, rows),
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, c,
                                    cols));
          auto guarded = scf::IfOp::create(b, loc, b.getF32Type(), inside,
                                           /*withElseRegion=*/true);
          {
            OpBuilder::InsertionGuard inner(b);
            b.setInsertionPointToStart(guarded.thenBlock());
            PointEvaluator evaluator(b, loc, kernel, buffers.inputs, 1);
            FailureOr<Value> v =
                evaluator.evalMatmulOperand(matmul, operand, index, r, c);
            if (failed(v))
              return failure();
            scf::YieldOp::create(b, loc, *v);
            b.setInsertionPointToStart(guarded.elseBlock());
            scf::YieldOp::create(b, loc,
                                 f32Constant(b, loc, 0.0, b.getF32Type()));
          }
          memref::StoreOp::create(b, loc, guarded.getResult(0), buffer,
                                  ValueRange{ty, tx});
          return success();
        };

        auto kLoop = scf::ForOp::create(
            b, loc, zero, *kSize, tile,
            ValueRange{f32Constant(b, loc, 0.0, b.getF32Type())});
        {
          OpBuilder::InsertionGuard inner(b);
          b.setInsertionPointToStart(kLoop.getBody());
          Value k0 = kLoop.getInductionVar();
          if (failed(stage(matmul.getA(), row,
                           arith::AddIOp::create(b, loc, k0, tx), m, *kSize,
                           aTile)) ||
              failed(stage(matmul.getB(), arith::AddIOp::create(b, loc, k0, ty),
                           col, *kSize, n, bTile)))
            return failure();
          gpu::BarrierOp::create(b, loc);
          Value acc = kLoop.getRegionIterArgs()[0];
          for (int64_t k = 0; k < kTile; ++k) {
            Value kk = indexConst(b, loc, k);
            Value a = memref::LoadOp::create(b, loc, aTile, ValueRange{ty, kk});
            Value bv =
                memref::LoadOp::create(b, loc, bTile, ValueRange{kk, tx});
            acc = math::FmaOp::create(b, loc, a, bv, acc);
          }
          // The next step overwrites the tiles.
          gpu::BarrierOp::create(b, loc);
          scf::YieldOp::create(b, loc, acc);
        }

        // The epilogue, for the threads whose element exists.
        Value inside = arith::AndIOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, m),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, col, n));
        auto write = scf::IfOp::create(b, loc, inside);
        b.setInsertionPoint(write.thenBlock()->getTerminator());
        PointEvaluator evaluator(b, loc, kernel, buffers.inputs, 1);
        Value product = kLoop.getResult(0);
        Type element = getElementTypeOrSelf(matmul.getType());
        if (!element.isF32())
          product = extendToF32(b, loc, roundTo(b, loc, product, element));
        evaluator.known[matmul.getResult()] = product;
        for (auto [value, buffer] :
             llvm::zip(kernel.getYield().getValues(), buffers.outputs)) {
          FailureOr<Value> v = evaluator.eval(value, index, false);
          if (failed(v))
            return failure();
          store(b, loc, *v, buffer, index);
        }
        return success();
      },
      TypeRange{tileType, tileType});
}

/// Everything else: a thread per output element, output after output.
static LogicalResult emitPerElement(OpBuilder &b, Location loc, KernelOp kernel,
                                    const KernelBuffers &buffers) {
  constexpr int64_t kThreads = 256;
  Value largest = indexConst(b, loc, 1);
  for (Value buffer : buffers.outputs)
    largest = arith::MaxUIOp::create(b, loc, largest,
                                     product(b, loc, sizesOf(b, loc, buffer)));
  Value blocks =
      arith::CeilDivUIOp::create(b, loc, largest, indexConst(b, loc, kThreads));
  return emitLaunch(
      b, loc, kernel, blocks, kThreads,
      [&](OpBuilder &b, const LaunchIds &ids) -> LogicalResult {
        Value bid = ids.block, tid = ids.thread, grid = ids.grid;
        auto [first, stride] = gridStride(b, loc, bid, tid, grid, kThreads);
        for (auto [value, buffer] :
             llvm::zip(kernel.getYield().getValues(), buffers.outputs)) {
          SmallVector<Value> sizes = sizesOf(b, loc, buffer);
          auto loop =
              scf::ForOp::create(b, loc, first, product(b, loc, sizes), stride);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(loop.getBody());
          SmallVector<Value> index =
              delinearize(b, loc, loop.getInductionVar(), sizes);
          PointEvaluator evaluator(b, loc, kernel, buffers.inputs, 1);
          FailureOr<Value> v = evaluator.eval(value, index, false);
          if (failed(v))
            return failure();
          store(b, loc, *v, buffer, index);
        }
        return success();
      });
}

static LogicalResult emitKernel(OpBuilder &b, KernelOp kernel,
                                const KernelBuffers &buffers) {
  Location loc = kernel.getLoc();
  bool hasReduction = false, hasMatmul = false;
  for (Operation &op : kernel.getBodyBlock()) {
    hasReduction |= isRealReduction(&op);
    hasMatmul |= isa<MatmulOp>(op);
  }
  bool sameShapes = llvm::all_of(buffers.outputs, [&](Value buffer) {
    return buffer.getType() == buffers.outputs[0].getType();
  });
  switch (kernel.getKind()) {
  case KernelKind::matmul: {
    auto matmuls = kernel.getBodyBlock().getOps<MatmulOp>();
    if (!hasReduction && sameShapes &&
        std::distance(matmuls.begin(), matmuls.end()) == 1 &&
        shapeOf((*matmuls.begin()).getResult()) ==
            shapeOf(kernel.getYield().getValues()[0]))
      return emitMatmulTiles(b, loc, kernel, *matmuls.begin(), buffers);
    break;
  }
  case KernelKind::elementwise:
    if (!hasReduction && !hasMatmul && sameShapes)
      return emitElementwise(b, loc, kernel, buffers);
    break;
  case KernelKind::row_reduction:
  case KernelKind::wide_row:
    if (!hasMatmul)
      return emitRows(b, loc, kernel, buffers);
    break;
  default:
    break;
  }
  return emitPerElement(b, loc, kernel, buffers);
}

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

static MemRefType bufferType(Type tensorType) {
  auto t = cast<RankedTensorType>(tensorType);
  return MemRefType::get(t.getShape(), t.getElementType());
}

/// A fresh asynchronous token, and a host wait on one.
static Value startToken(OpBuilder &b, Location loc) {
  return gpu::WaitOp::create(b, loc, gpu::AsyncTokenType::get(b.getContext()),
                             ValueRange{})
      .getAsyncToken();
}
static void waitFor(OpBuilder &b, Location loc, Value token) {
  gpu::WaitOp::create(b, loc, Type(), ValueRange{token});
}

/// The matmul kernels that run as library calls.
using LibraryCalls = DenseMap<Operation *, LibraryMatmulCall>;

/// Rebuilds `function` on device buffers: inputs, then one output buffer
/// per result; every kernel becomes a launch, or a library call.
static LogicalResult convertFunction(func::FuncOp function,
                                     const LibraryCalls &libraryCalls,
                                     bool tf32) {
  Location loc = function.getLoc();
  MLIRContext *context = function.getContext();
  Type tokenType = gpu::AsyncTokenType::get(context);
  SmallVector<Type> argTypes;
  for (Type t : function.getArgumentTypes()) {
    if (!isa<RankedTensorType>(t))
      return function.emitOpError("GPU functions take tensors only");
    argTypes.push_back(bufferType(t));
  }
  for (Type t : function.getResultTypes())
    argTypes.push_back(bufferType(t));

  OpBuilder b(function);
  auto converted = func::FuncOp::create(
      b, loc, function.getName(), FunctionType::get(context, argTypes, {}));
  converted->setAttr("llvm.emit_c_interface", UnitAttr::get(context));
  Block *entry = converted.addEntryBlock();
  b.setInsertionPointToStart(entry);

  Block &body = function.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  unsigned numInputs = function.getNumArguments();
  DenseMap<Value, Value> buffers;
  for (auto [arg, buffer] :
       llvm::zip(body.getArguments(), entry->getArguments()))
    buffers[arg] = buffer;
  // A kernel result returned by the function is written straight into the
  // output buffer (its first return only).
  DenseMap<Value, Value> returnedInto;
  for (auto [i, value] : llvm::enumerate(ret.getOperands()))
    if (value.getDefiningOp<KernelOp>() && !returnedInto.count(value))
      returnedInto[value] = entry->getArgument(numInputs + i);

  SmallVector<Value> allocations;
  for (Operation &op : body.without_terminator()) {
    if (isa<ConstantOp>(op) && op.use_empty())
      continue;
    auto kernel = dyn_cast<KernelOp>(op);
    if (!kernel)
      return op.emitOpError("cannot run on the GPU outside a fusion.kernel "
                            "(run the fusion passes first)");
    KernelBuffers kb;
    for (Value input : kernel.getInputs()) {
      Value buffer = buffers.lookup(input);
      if (!buffer)
        return kernel.emitOpError("an input is not a device buffer (only "
                                  "function arguments and kernel results "
                                  "are)");
      kb.inputs.push_back(buffer);
    }
    for (auto [result, yielded] :
         llvm::zip(kernel.getResults(), kernel.getYield().getValues())) {
      Value buffer = returnedInto.lookup(result);
      if (!buffer) {
        auto type = bufferType(result.getType());
        SmallVector<Value> sizes;
        for (int64_t d = 0; d < type.getRank(); ++d) {
          if (!type.isDynamicDim(d))
            continue;
          std::optional<std::pair<Value, int64_t>> source =
              traceDynamicDim(yielded, d);
          if (!source || !buffers.count(source->first))
            return kernel.emitOpError("cannot size dynamic dimension ")
                   << d << " of result " << result.getResultNumber();
          sizes.push_back(memref::DimOp::create(b, loc, buffers[source->first],
                                                source->second));
        }
        // The host lowering handles the asynchronous forms: wait on each.
        auto alloc = gpu::AllocOp::create(b, loc, type, tokenType,
                                          ValueRange{startToken(b, loc)}, sizes,
                                          ValueRange{});
        waitFor(b, loc, alloc.getAsyncToken());
        buffer = alloc.getMemref();
        allocations.push_back(buffer);
      }
      buffers[result] = buffer;
      kb.outputs.push_back(buffer);
    }
    if (auto call = libraryCalls.find(kernel); call != libraryCalls.end())
      emitLibraryMatmulCall(b, kernel.getLoc(), call->second, kb.inputs,
                            kb.outputs[0], tf32);
    else if (failed(emitKernel(b, kernel, kb)))
      return failure();
  }
  // Results not written in place (function arguments, repeats) are copied.
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    Value out = entry->getArgument(numInputs + i);
    Value buffer = buffers.lookup(value);
    if (buffer != out)
      waitFor(b, loc,
              gpu::MemcpyOp::create(b, loc, tokenType,
                                    ValueRange{startToken(b, loc)}, out, buffer)
                  .getAsyncToken());
  }
  for (Value allocation : allocations)
    waitFor(b, loc,
            gpu::DeallocOp::create(b, loc, tokenType,
                                   ValueRange{startToken(b, loc)}, allocation)
                .getAsyncToken());
  func::ReturnOp::create(b, loc);
  function.erase();
  return success();
}

/// f32 divisions in launches become `div.full.f32` (full range, at most 2
/// ulp; Triton's default) instead of the IEEE `div.rn.f32` that arith.divf
/// lowers to, a long instruction sequence per element (sigmoid and silu
/// divide for every element). Vectors are divided lane by lane, as LLVM
/// would. The CPU path keeps IEEE division.
static void useFullRangeDivision(gpu::LaunchOp launch) {
  launch.getBody().walk([](arith::DivFOp div) {
    Type type = div.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return;
    OpBuilder b(div);
    Location loc = div.getLoc();
    StringAttr name = b.getStringAttr("llvm.nvvm.div.full");
    auto divide = [&](Value lhs, Value rhs) -> Value {
      return LLVM::CallIntrinsicOp::create(b, loc, b.getF32Type(), name,
                                           ValueRange{lhs, rhs})
          .getResult(0);
    };
    Value result;
    if (auto vector = dyn_cast<VectorType>(type)) {
      SmallVector<Value> lanes;
      for (int64_t lane = 0; lane < vector.getNumElements(); ++lane)
        lanes.push_back(
            divide(vector::ExtractOp::create(b, loc, div.getLhs(), lane),
                   vector::ExtractOp::create(b, loc, div.getRhs(), lane)));
      result = vector::FromElementsOp::create(b, loc, vector, lanes);
    } else {
      result = divide(div.getLhs(), div.getRhs());
    }
    div.replaceAllUsesWith(result);
    div.erase();
  });
}

struct KernelsToGPUPass
    : fusion::impl::FusionKernelsToGPUBase<KernelsToGPUPass> {
  using Base::Base;

  /// The matmul kernels to run as library calls, read before the bodies
  /// are decomposed (a library epilogue names gelu, not its expansion).
  FailureOr<LibraryCalls> selectLibraryCalls(ModuleOp module) {
    LibraryCalls calls;
    if (matmulBackend == MatmulBackend::generated)
      return calls;
    WalkResult result = module.walk([&](KernelOp kernel) {
      if (kernel.getKind() != KernelKind::matmul)
        return WalkResult::advance();
      std::string reason;
      FailureOr<LibraryMatmulCall> call = getLibraryMatmulCall(kernel, reason);
      if (succeeded(call)) {
        calls[kernel] = *call;
        return WalkResult::advance();
      }
      if (matmulBackend != MatmulBackend::library)
        return WalkResult::advance();
      kernel.emitOpError("is not one library call (matmul-backend=library): ")
          << reason << "; matmul-backend=auto runs it as a generated kernel";
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      return failure();
    return calls;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<LibraryCalls> libraryCalls = selectLibraryCalls(module);
    if (failed(libraryCalls))
      return signalPassFailure();
    // Kernels hold primitive ops only.
    RewritePatternSet patterns(&getContext());
    populateDecomposePatterns(patterns);
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return signalPassFailure();
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(&getContext()));
    for (auto function :
         llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      if (function.isExternal() || !function.isPublic())
        continue;
      if (failed(convertFunction(function, *libraryCalls, matmulTf32)))
        return signalPassFailure();
    }
    module.walk(useFullRangeDivision);
  }
};

} // namespace
