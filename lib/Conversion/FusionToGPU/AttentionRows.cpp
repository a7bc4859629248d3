//===- AttentionRows.cpp - The attention_rows strategy --------------------===//
//
// Attention with few query rows (decoding), split over the keys: a block per
// query row and range of keys. A key's rows of K and V are shared by a
// group of D / 16 lanes, 16 elements each; a step of the block's loop gives
// each group a few adjacent keys (getAttentionRowsStepKeys), whose rows are
// loaded together: from global memory, or, in a staged plan, from shared
// memory, where the block's first thread has TMA copy the step's rows of K
// and V into a ring of stages (one mbarrier each) several steps ahead; a
// staged block may take several query rows that read the same K and V,
// each with the plan's threads, all reading its stages. A
// key's score is the group's dot product (butterfly shuffles inside the
// group), rounded as the product's type; its math (scale, mask, soft-cap)
// is the kernel body's at that point (PointEvaluator); then the softmax runs
// online: a running maximum m, sum l and output o, rescaled once a step to
// the maximum over the step's keys. The groups of a warp fold their
// (m, l, o) by shuffles, the warps' meet in shared memory. A row's ranges
// are the blocks of a cluster (`cluster`), whose first block folds every
// block's warps' states through distributed shared memory, or (`split`)
// blocks that write their (m, l, o) to a workspace, the last block of the
// row folding them; both fold in range order (deterministic) and write the
// row.
// The probabilities are not rounded to the kernel's type before the product
// with V (the op-by-op program rounds them): the difference is within the
// type's tolerance. K and V are read once per block (of its query rows).
//
//===----------------------------------------------------------------------===//

#include "Hopper.h"
#include "PointEvaluator.h"
#include "Strategies.h"

#include "fusion/Conversion/ScalarOps.h"
#include "fusion/Dialect/Fusion/Analysis/KernelPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::codegen;

namespace {

/// Most keys a TMA box of a staged plan holds (a box dimension's limit).
constexpr int64_t kMostBoxKeys = 256;
/// Fewest keys a range has (fewer ranges where the keys are few), so that
/// a block's fold of its warps' states is paid for by many keys.
constexpr int64_t kMinRangeKeys = 256;

/// The running state of an online softmax: maximum, sum, and the output
/// (a lane's share of it).
struct Online {
  Value max, sum, out;
};

class AttentionRows {
public:
  AttentionRows(Location loc, KernelOp kernel, KernelPlanAttr plan,
                const KernelBuffers &buffers, const AttentionKernelShape &shape,
                StringRef nameSuffix = "")
      : loc(loc), kernel(kernel), plan(plan), buffers(buffers), shape(shape),
        nameSuffix(nameSuffix),
        headDim(codegen::shapeOf(shape.queries).back()),
        groupLanes(headDim / kAttentionRowsLaneElements),
        warps(plan.getThreads() / 32), groups(warps * (32 / groupLanes)),
        stepKeys(getAttentionRowsStepKeys(plan.getThreads(), headDim)),
        groupKeys(stepKeys / groups), boxKeys(std::min(stepKeys, kMostBoxKeys)),
        stages(plan.getRow() == RowStorage::staged
                   ? getAttentionRowsStages(kernel, plan)
                   : 0),
        clusterBlocks(plan.getCluster()),
        blockRows(getAttentionRowsBlockRows(kernel, plan)) {}

  LogicalResult emit(OpBuilder &b);

private:
  /// Ranges a row's keys are cut into at run time: the blocks of the
  /// plan's cluster, or its split, fewer where the keys are few (at least
  /// one).
  Value rangesOf(OpBuilder &b, Value keys) {
    if (clusterBlocks > 1)
      return indexConst(b, loc, clusterBlocks);
    Value wanted = arith::CeilDivUIOp::create(
        b, loc, keys, indexConst(b, loc, kMinRangeKeys));
    return arith::MaxUIOp::create(
        b, loc, indexConst(b, loc, 1),
        arith::MinUIOp::create(b, loc, wanted,
                               indexConst(b, loc, plan.getSplit())));
  }
  Value keysOf(OpBuilder &b) {
    int64_t rank = codegen::shapeOf(inputV).size();
    return memref::DimOp::create(b, loc, buffers.inputs[inputV.getArgNumber()],
                                 rank - 2);
  }
  /// The index into input `arg` (a matmul operand of rank >= 2) of its row
  /// `row` and column `column`, for the output's batch index `batch`
  /// (broadcast axes read at 0).
  SmallVector<Value> operandIndex(OpBuilder &b, BlockArgument arg,
                                  ArrayRef<Value> batch, Value row,
                                  Value column);
  /// The first column of a lane group's part `part` of a row: its
  /// kAttentionRowsLaneElements elements are side by side (a lane's two
  /// 16-byte loads of a row fill whole sectors between them).
  Value columnOf(OpBuilder &b, Value part) {
    return arith::MulIOp::create(
        b, loc, part, indexConst(b, loc, kAttentionRowsLaneElements));
  }
  /// Part `part` (of a lane group) of row `row` of input `arg`, as f32.
  Value loadRow(OpBuilder &b, BlockArgument arg, ArrayRef<Value> batch,
                Value row, Value part);
  /// Bytes of a row of input `arg` (K or V).
  int64_t rowBytes(BlockArgument arg) {
    return codegen::shapeOf(arg).back() *
           getElementTypeOrSelf(arg.getType()).getIntOrFloatBitWidth() / 8;
  }
  /// Bytes of a stage of a staged plan: a step's rows of K, then of V.
  int64_t stageBytes() {
    return stepKeys * (rowBytes(inputK) + rowBytes(inputV));
  }
  /// A staged plan's shared memory, inside the launch: the stages and their
  /// barriers (`full`: a stage's copies have landed), then the warps' state
  /// slots and the arrival word (what the launch's workgroup buffers are
  /// otherwise). All of it is dynamic shared memory: its symbol is laid out
  /// among the static objects (alignedDynamicShared says how), so that the
  /// stages, past the symbol, must not have static buffers beside them.
  struct Stages {
    Value memory, base, full, slots, word;
  };
  Stages createStages(OpBuilder &b, Value thread, int64_t slotWords);
  /// Dynamic shared memory bytes of a staged plan with `slotWords` words
  /// of state slots.
  int64_t stagedBytes(int64_t slotWords) {
    return stages * stageBytes() + slotWords * 4 + 4 + kSwizzleAlignment;
  }
  /// A view of shape `viewShape` of input `arg`'s (K's or V's) rows in
  /// stage `stage` from the step's key `firstKey` on.
  Value stagedView(OpBuilder &b, const Stages &ring, BlockArgument arg,
                   Value stage, int64_t firstKey, ArrayRef<int64_t> viewShape);
  /// By one thread: TMA copies of the rows of K and V of the step whose
  /// first key is `key0` (of batch `batchK`, `batchV`) into stage `stage`,
  /// completing on its barrier (zeros past the batch's keys).
  void copyStep(OpBuilder &b, const Stages &ring, Value stage, Value key0,
                Value batchK, Value batchV);
  /// `exp(from - to)`, 0 where `from` is -inf (nothing seen yet, or every
  /// key masked: no NaN from -inf - -inf).
  Value rescale(OpBuilder &b, Value from, Value to);
  /// The online state after also seeing `other` (both over disjoint keys).
  Online combine(OpBuilder &b, const Online &a, const Online &other);
  /// The state at word `base` of another block's state slots (`slots`, a
  /// pointer to distributed shared memory), this lane's part of its output
  /// at word `base + outAt`.
  Online readClusterState(OpBuilder &b, Value slots, Value base, Value outAt,
                          llvm::Align alignment);
  /// The state of the lane `offset` lanes away (butterfly), element by
  /// element.
  Online shuffleXor(OpBuilder &b, const Online &state, int32_t offset);
  /// The row's output from its final state (part `part` of it), rounded
  /// into the output at `rowIndex` (batch axes, then the query).
  void storeRow(OpBuilder &b, const Online &total, ArrayRef<Value> rowIndex,
                Value part, Value keys);

  Location loc;
  KernelOp kernel;
  KernelPlanAttr plan;
  const KernelBuffers &buffers;
  AttentionKernelShape shape;
  /// Q, K and V: kernel inputs (whyNotAttentionRows refuses views).
  BlockArgument inputQ = cast<BlockArgument>(shape.queries),
                inputK = cast<BlockArgument>(shape.keys),
                inputV = cast<BlockArgument>(shape.values);
  /// Added to the kernel's name where a kernel has two launches.
  StringRef nameSuffix;
  /// D (= Dv); the lanes sharing a key's rows; the warps and the lane
  /// groups of a query row; the keys of a step, of a group in a step, of a
  /// TMA box; and the stages of a staged plan (0: not staged).
  int64_t headDim, groupLanes, warps, groups, stepKeys, groupKeys, boxKeys,
      stages;
  /// Blocks of a cluster, the ranges of a row (1: no cluster).
  int64_t clusterBlocks;
  /// Query rows a block takes (the plan's threads each), all reading the
  /// same K and V: more than one only in staged plans, whose stages they
  /// share.
  int64_t blockRows;
  /// Staged plans, on the host: the tensor maps of K and V (3-D, batches
  /// collapsed), in boxes of boxKeys rows.
  Value mapK, mapV;
};

} // namespace

SmallVector<Value> AttentionRows::operandIndex(OpBuilder &b, BlockArgument arg,
                                               ArrayRef<Value> batch, Value row,
                                               Value column) {
  ArrayRef<int64_t> out = codegen::shapeOf(kernel.getResult(0));
  SmallVector<Value> index;
  for (std::optional<int64_t> source : getBroadcastSources(
           codegen::shapeOf(arg).drop_back(2), out.drop_back(2)))
    index.push_back(source ? batch[*source] : indexConst(b, loc, 0));
  index.push_back(row);
  index.push_back(column);
  return index;
}

Value AttentionRows::loadRow(OpBuilder &b, BlockArgument arg,
                             ArrayRef<Value> batch, Value row, Value part) {
  int64_t lanes = kAttentionRowsLaneElements;
  Value buffer = buffers.inputs[arg.getArgNumber()];
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  Value v = vector::LoadOp::create(
      b, loc, VectorType::get({lanes}, element), buffer,
      operandIndex(b, arg, batch, row, columnOf(b, part)),
      /*nontemporal=*/false, vectorAlignment(element, lanes));
  return extendToF32(b, loc, v);
}

AttentionRows::Stages AttentionRows::createStages(OpBuilder &b, Value thread,
                                                  int64_t slotWords) {
  MLIRContext *context = b.getContext();
  // TMA writes to aligned shared memory, past the static objects.
  DynamicShared shared = alignedDynamicShared(b, loc);
  Value memory = shared.memory, base = shared.base;
  Value full = nvgpu::MBarrierCreateOp::create(
      b, loc,
      nvgpu::MBarrierGroupType::get(context, workgroupSpace(context), stages));
  emitIf(b, loc, isThreadZero(b, loc, thread), [&] {
    for (int64_t i = 0; i < stages; ++i)
      nvgpu::MBarrierInitOp::create(b, loc, full, indexConst(b, loc, 1),
                                    indexConst(b, loc, i),
                                    /*predicate=*/Value());
  });
  gpu::BarrierOp::create(b, loc);
  auto after = [&](int64_t bytes) {
    return arith::AddIOp::create(b, loc, base, indexConst(b, loc, bytes));
  };
  int64_t ring = stages * stageBytes();
  Value slots =
      memref::ViewOp::create(b, loc, sharedTile({slotWords}, b.getF32Type()),
                             memory, after(ring), ValueRange{});
  Value word =
      memref::ViewOp::create(b, loc, sharedTile({1}, b.getI32Type()), memory,
                             after(ring + slotWords * 4), ValueRange{});
  return {memory, base, full, slots, word};
}

Value AttentionRows::stagedView(OpBuilder &b, const Stages &ring,
                                BlockArgument arg, Value stage,
                                int64_t firstKey, ArrayRef<int64_t> viewShape) {
  int64_t offset = (arg == inputK ? 0 : stepKeys * rowBytes(inputK)) +
                   firstKey * rowBytes(arg);
  Value at = arith::AddIOp::create(
      b, loc, ring.base,
      arith::AddIOp::create(
          b, loc, indexConst(b, loc, offset),
          arith::MulIOp::create(b, loc, stage,
                                indexConst(b, loc, stageBytes()))));
  return memref::ViewOp::create(
      b, loc, sharedTile(viewShape, getElementTypeOrSelf(arg.getType())),
      ring.memory, at, ValueRange{});
}

void AttentionRows::copyStep(OpBuilder &b, const Stages &ring, Value stage,
                             Value key0, Value batchK, Value batchV) {
  nvgpu::MBarrierArriveExpectTxOp::create(
      b, loc, ring.full, indexConst(b, loc, stageBytes()), stage,
      /*predicate=*/Value());
  for (auto [arg, map, batch] :
       {std::tuple(inputK, mapK, batchK), std::tuple(inputV, mapV, batchV)}) {
    int64_t columns = codegen::shapeOf(arg).back();
    for (int64_t first = 0; first < stepKeys; first += boxKeys)
      // Coordinates are innermost first.
      nvgpu::TmaAsyncLoadOp::create(
          b, loc, stagedView(b, ring, arg, stage, first, {1, boxKeys, columns}),
          ring.full, map,
          ValueRange{
              indexConst(b, loc, 0),
              arith::AddIOp::create(b, loc, key0, indexConst(b, loc, first)),
              batch},
          stage, /*multicastMask=*/Value(), /*predicate=*/Value());
  }
}

Value AttentionRows::rescale(OpBuilder &b, Value from, Value to) {
  Value minusInf = f32Constant(b, loc, -std::numeric_limits<double>::infinity(),
                               b.getF32Type());
  Value none =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, from, minusInf);
  Value e =
      math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, from, to));
  return arith::SelectOp::create(b, loc, none,
                                 f32Constant(b, loc, 0.0, b.getF32Type()), e);
}

Online AttentionRows::combine(OpBuilder &b, const Online &a,
                              const Online &other) {
  Value max = arith::MaximumFOp::create(b, loc, a.max, other.max);
  Value ca = rescale(b, a.max, max), co = rescale(b, other.max, max);
  Value sum =
      arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, a.sum, ca),
                            arith::MulFOp::create(b, loc, other.sum, co));
  auto vector = cast<VectorType>(a.out.getType());
  Value out = arith::AddFOp::create(
      b, loc,
      arith::MulFOp::create(b, loc, a.out,
                            vector::BroadcastOp::create(b, loc, vector, ca)),
      arith::MulFOp::create(b, loc, other.out,
                            vector::BroadcastOp::create(b, loc, vector, co)));
  return {max, sum, out};
}

Online AttentionRows::readClusterState(OpBuilder &b, Value slots, Value base,
                                      Value outAt, llvm::Align alignment) {
  Type f32 = b.getF32Type();
  auto at = [&](Value word) -> Value {
    Value index = arith::IndexCastOp::create(
        b, loc, b.getI64Type(), arith::AddIOp::create(b, loc, base, word));
    return LLVM::GEPOp::create(b, loc, slots.getType(), f32, slots,
                               ArrayRef<LLVM::GEPArg>{index});
  };
  auto load = [&](Type type, Value word, unsigned align) -> Value {
    return LLVM::LoadOp::create(b, loc, type, at(word), align);
  };
  return {load(f32, indexConst(b, loc, headDim), 4),
          load(f32, indexConst(b, loc, headDim + 1), 4),
          load(VectorType::get({kAttentionRowsLaneElements}, f32), outAt,
               alignment.value())};
}

Online AttentionRows::shuffleXor(OpBuilder &b, const Online &state,
                                 int32_t offset) {
  auto shuffle = [&](Value v) {
    return gpu::ShuffleOp::create(b, loc, v, offset, 32, gpu::ShuffleMode::XOR)
        .getShuffleResult();
  };
  Value out = state.out;
  for (int64_t i = 0; i < kAttentionRowsLaneElements; ++i)
    out = vector::InsertOp::create(
        b, loc, shuffle(vector::ExtractOp::create(b, loc, state.out, i)), out,
        i);
  return {shuffle(state.max), shuffle(state.sum), out};
}

void AttentionRows::storeRow(OpBuilder &b, const Online &total,
                             ArrayRef<Value> rowIndex, Value part, Value keys) {
  auto vector = cast<VectorType>(total.out.getType());
  // No keys: the product of empty matrices, zeros. (Every key masked gives
  // 0 / 0, NaN, as the op-by-op softmax does.)
  Value empty = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, keys,
                                      indexConst(b, loc, 0));
  Value row = arith::DivFOp::create(
      b, loc, total.out,
      vector::BroadcastOp::create(b, loc, vector, total.sum));
  Value zeros = arith::ConstantOp::create(
      b, loc, vector, DenseElementsAttr::get(vector, b.getF32FloatAttr(0.0)));
  row = arith::SelectOp::create(b, loc, empty, zeros, row);
  SmallVector<Value> index(rowIndex);
  index.push_back(columnOf(b, part));
  store(b, loc, row, buffers.outputs[0], index);
}

LogicalResult AttentionRows::emit(OpBuilder &b) {
  MLIRContext *context = b.getContext();
  Value output = buffers.outputs[0];
  SmallVector<Value> outSizes = sizesOf(b, loc, output);
  Value rows = product(b, loc, ArrayRef<Value>(outSizes).drop_back());
  Value keys = keysOf(b);
  Value ranges = rangesOf(b, keys);
  int64_t valueDim = headDim;
  // A group's or a range's state: its output, then maximum and sum, padded
  // so that every state starts on 32 bytes.
  int64_t partialWords = valueDim + 8;
  bool split = plan.getSplit() > 1;
  // Blocks of blockRows rows (which divides the rows: they are the rows'
  // innermost static axes) and a range of their keys.
  Value rowBlocks =
      blockRows > 1
          ? arith::DivUIOp::create(b, loc, rows, indexConst(b, loc, blockRows))
          : rows;
  Value blocks = arith::MulIOp::create(b, loc, rowBlocks, ranges);
  Value partials, arrivals;
  if (split) {
    // A state per row and range; an arrival count per block of rows.
    partials =
        allocateScratch(b, loc, b.getF32Type(),
                        arith::MulIOp::create(
                            b, loc, arith::MulIOp::create(b, loc, rows, ranges),
                            indexConst(b, loc, partialWords)));
    FailureOr<Value> counters = acquireArrivalCounters(b, loc, rowBlocks);
    if (failed(counters))
      return failure();
    arrivals = *counters;
  }
  int64_t dynamicShared = 0;
  if (stages) {
    // No swizzle: a lane reads its 16 elements of a row as they lie.
    for (auto [arg, map] : {std::pair(inputK, &mapK), std::pair(inputV, &mapV)})
      *map = createTensorMap(
          b, loc, collapseBatches(b, loc, buffers.inputs[arg.getArgNumber()]),
          {1, boxKeys, codegen::shapeOf(arg).back()},
          nvgpu::TensorMapSwizzleKind::SWIZZLE_NONE);
    dynamicShared = stagedBytes(blockRows * warps * partialWords);
  } else if (clusterBlocks > 1) {
    // A launch in clusters has no workgroup buffers: the warps' state slots
    // are dynamic shared memory.
    dynamicShared = warps * partialWords * 4;
  }
  auto workgroup = gpu::AddressSpaceAttr::get(
      context, gpu::GPUDialect::getWorkgroupAddressSpace());
  SmallVector<Type> sharedTypes{
      MemRefType::get({warps * partialWords}, b.getF32Type(),
                      MemRefLayoutAttrInterface{}, workgroup),
      MemRefType::get({1}, b.getI32Type(), MemRefLayoutAttrInterface{},
                      workgroup)};
  // At least one block, or cluster (no rows: it has nothing to do).
  Value grid = arith::MaxUIOp::create(b, loc, blocks,
                                      indexConst(b, loc, clusterBlocks));

  LogicalResult emitted = emitLaunch(
      b, loc, kernel, grid, blockRows * plan.getThreads(),
      [&](OpBuilder &b, const LaunchIds &ids) -> LogicalResult {
        Type f32 = b.getF32Type();
        Value zero = indexConst(b, loc, 0);
        SmallVector<Value> sizes = sizesOf(b, loc, output);
        Value rows = product(b, loc, ArrayRef<Value>(sizes).drop_back());
        Value keys = keysOf(b);
        Value ranges = rangesOf(b, keys);
        Value rowBlocks = blockRows > 1
                              ? arith::DivUIOp::create(
                                    b, loc, rows, indexConst(b, loc, blockRows))
                              : rows;
        Value inGrid = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::ult, ids.block,
            arith::MulIOp::create(b, loc, rowBlocks, ranges));
        LogicalResult body = success();
        emitIf(b, loc, inGrid, [&] {
          Value rowBlock = arith::DivUIOp::create(b, loc, ids.block, ranges);
          Value range = arith::RemUIOp::create(b, loc, ids.block, ranges);
          // The thread's row of the block and its place among that row's
          // threads.
          Value rowThreads = indexConst(b, loc, plan.getThreads());
          Value blockRow = blockRows > 1 ? Value(arith::DivUIOp::create(
                                               b, loc, ids.thread, rowThreads))
                                         : zero;
          Value thread = blockRows > 1 ? Value(arith::RemUIOp::create(
                                             b, loc, ids.thread, rowThreads))
                                       : ids.thread;
          Value row =
              blockRows > 1
                  ? Value(arith::AddIOp::create(
                        b, loc,
                        arith::MulIOp::create(b, loc, rowBlock,
                                              indexConst(b, loc, blockRows)),
                        blockRow))
                  : rowBlock;
          // The row's index in the output: batch axes, then the query.
          SmallVector<Value> rowIndex =
              delinearize(b, loc, row, ArrayRef<Value>(sizes).drop_back());
          ArrayRef<Value> batch = ArrayRef<Value>(rowIndex).drop_back();
          Value query = rowIndex.back();
          // Lane `part` of group `group`: groups in warp order.
          Value group = arith::DivUIOp::create(b, loc, thread,
                                               indexConst(b, loc, groupLanes));
          Value part = arith::RemUIOp::create(b, loc, thread,
                                              indexConst(b, loc, groupLanes));
          // A step of the loop covers the block's next stepKeys keys,
          // groupKeys adjacent ones a group, so that every lane runs the
          // same steps (the shuffles need the whole warp): a key past the
          // range is read at the range's last (staged: where its stage
          // holds it, zeros past the batch's keys) and masked.
          Value rangeKeys = arith::CeilDivUIOp::create(b, loc, keys, ranges);
          Value first = arith::MulIOp::create(b, loc, range, rangeKeys);
          // A cluster's last ranges may start past the keys (few keys):
          // they are empty.
          if (clusterBlocks > 1)
            first = arith::MinUIOp::create(b, loc, first, keys);
          Value end = arith::MinUIOp::create(
              b, loc, keys, arith::AddIOp::create(b, loc, first, rangeKeys));
          Value groupFirst = arith::MulIOp::create(
              b, loc, group, indexConst(b, loc, groupKeys));

          Value q = loadRow(b, inputQ, batch, query, part);
          Type scoreType =
              getElementTypeOrSelf(shape.scores.getResult().getType());
          auto outVector = VectorType::get({kAttentionRowsLaneElements}, f32);
          Value minusInf = f32Constant(
              b, loc, -std::numeric_limits<double>::infinity(), f32);
          Online init{
              minusInf, f32Constant(b, loc, 0.0, f32),
              arith::ConstantOp::create(
                  b, loc, outVector,
                  DenseElementsAttr::get(outVector, b.getF32FloatAttr(0.0)))};
          PointEvaluator evaluator(b, loc, kernel, buffers.inputs, 1);
          // Staged: the ring, and its first stages' copies under way. The
          // loop then goes over steps (the stage and the barrier's phase
          // follow from the step) rather than over keys.
          Stages ring;
          Value steps, batchK, batchV;
          if (stages) {
            ring =
                createStages(b, ids.thread, blockRows * warps * partialWords);
            steps = arith::CeilDivUIOp::create(
                b, loc, arith::SubIOp::create(b, loc, end, first),
                indexConst(b, loc, stepKeys));
            SmallVector<int64_t> out(
                codegen::shapeOf(kernel.getResult(0)).drop_back(2));
            auto batchOf = [&](BlockArgument arg) {
              return collapsedBatch(b, loc, buffers.inputs[arg.getArgNumber()],
                                    codegen::shapeOf(arg).drop_back(2), out,
                                    batch);
            };
            batchK = batchOf(inputK);
            batchV = batchOf(inputV);
            for (int64_t stage = 0; stage < stages; ++stage) {
              Value present =
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        indexConst(b, loc, stage), steps);
              emitIf(b, loc,
                     arith::AndIOp::create(
                         b, loc, isThreadZero(b, loc, ids.thread), present),
                     [&] {
                       copyStep(b, ring, indexConst(b, loc, stage),
                                arith::AddIOp::create(
                                    b, loc, first,
                                    indexConst(b, loc, stage * stepKeys)),
                                batchK, batchV);
                     });
            }
          }
          auto loop =
              stages
                  ? scf::ForOp::create(b, loc, zero, steps,
                                       indexConst(b, loc, 1),
                                       ValueRange{init.max, init.sum, init.out})
                  : scf::ForOp::create(
                        b, loc, first, end, indexConst(b, loc, stepKeys),
                        ValueRange{init.max, init.sum, init.out});
          {
            OpBuilder::InsertionGuard inner(b);
            b.setInsertionPointToStart(loop.getBody());
            PointEvaluator::CacheScope scope(evaluator);
            Value step = loop.getInductionVar();
            Value stepKey =
                stages ? arith::AddIOp::create(
                             b, loc, first,
                             arith::MulIOp::create(
                                 b, loc, step, indexConst(b, loc, stepKeys)))
                       : step;
            Value stepFirst =
                arith::AddIOp::create(b, loc, stepKey, groupFirst);
            Value lastKey =
                arith::SubIOp::create(b, loc, end, indexConst(b, loc, 1));
            // The group's keys, whether each is in the range, and their
            // rows, every load issued before the first is used.
            SmallVector<Value> js, inRange, ks, vs;
            for (int64_t u = 0; u < groupKeys; ++u) {
              Value j = arith::AddIOp::create(b, loc, stepFirst,
                                              indexConst(b, loc, u));
              inRange.push_back(arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::ult, j, end));
              js.push_back(arith::MinUIOp::create(b, loc, j, lastKey));
            }
            Value stage;
            if (stages) {
              // The step's stage, once its copies have landed (its barrier
              // completes for the (step / stages)-th time).
              stage = arith::RemUIOp::create(b, loc, step,
                                             indexConst(b, loc, stages));
              Value round = arith::DivUIOp::create(b, loc, step,
                                                   indexConst(b, loc, stages));
              waitForPhase(
                  b, loc, ring.full, stage,
                  arith::TruncIOp::create(b, loc, b.getI1Type(),
                                          arith::IndexCastUIOp::create(
                                              b, loc, b.getI64Type(), round)));
              for (int64_t u = 0; u < groupKeys; ++u) {
                Value key = arith::AddIOp::create(b, loc, groupFirst,
                                                  indexConst(b, loc, u));
                for (auto [arg, rows] :
                     {std::pair(inputK, &ks), std::pair(inputV, &vs)}) {
                  Value tile =
                      stagedView(b, ring, arg, stage, 0,
                                 {stepKeys, codegen::shapeOf(arg).back()});
                  Type element = getElementTypeOrSelf(arg.getType());
                  rows->push_back(extendToF32(
                      b, loc,
                      vector::LoadOp::create(
                          b, loc,
                          VectorType::get({kAttentionRowsLaneElements},
                                          element),
                          tile, ValueRange{key, columnOf(b, part)},
                          /*nontemporal=*/false,
                          vectorAlignment(element,
                                          kAttentionRowsLaneElements))));
                }
              }
            } else {
              for (Value j : js) {
                ks.push_back(loadRow(b, inputK, batch, j, part));
                vs.push_back(loadRow(b, inputV, batch, j, part));
              }
            }
            // The step's scores: the group's dot products, rounded as the
            // product's type, then the kernel body's math at (row, key).
            SmallVector<Value> scores;
            for (auto [j, valid, k] : llvm::zip(js, inRange, ks)) {
              Value dot = vector::ReductionOp::create(
                  b, loc, vector::CombiningKind::ADD,
                  arith::MulFOp::create(b, loc, q, k));
              for (int32_t offset = groupLanes / 2; offset > 0; offset /= 2)
                dot = arith::AddFOp::create(
                    b, loc, dot,
                    gpu::ShuffleOp::create(b, loc, dot, offset, 32,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult());
              evaluator.known[shape.scores.getResult()] =
                  extendToF32(b, loc, roundTo(b, loc, dot, scoreType));
              SmallVector<Value> scoreIndex(batch);
              scoreIndex.push_back(query);
              scoreIndex.push_back(j);
              FailureOr<Value> score = evaluator.eval(
                  shape.softmax.getX(), scoreIndex, /*lanes=*/false);
              if (failed(score)) {
                body = failure();
                scf::YieldOp::create(b, loc, loop.getRegionIterArgs());
                return;
              }
              scores.push_back(
                  arith::SelectOp::create(b, loc, valid, *score, minusInf));
            }
            // The state rescaled once a step: to the maximum over it and
            // the step's keys, each key's weight exp(s - max) (0 where
            // masked).
            Online seen{loop.getRegionIterArgs()[0],
                        loop.getRegionIterArgs()[1],
                        loop.getRegionIterArgs()[2]};
            Value max = seen.max;
            for (Value s : scores)
              max = arith::MaximumFOp::create(b, loc, max, s);
            Value keep = rescale(b, seen.max, max);
            Value sum = arith::MulFOp::create(b, loc, seen.sum, keep);
            Value out = arith::MulFOp::create(
                b, loc, seen.out,
                vector::BroadcastOp::create(b, loc, outVector, keep));
            for (auto [s, v] : llvm::zip(scores, vs)) {
              Value weight = rescale(b, s, max);
              sum = arith::AddFOp::create(b, loc, sum, weight);
              out = vector::FMAOp::create(
                  b, loc,
                  vector::BroadcastOp::create(b, loc, outVector, weight), v,
                  out);
            }
            if (stages) {
              // Every lane is done with the stage: the first thread has it
              // filled with the step `stages` ahead, if any.
              gpu::BarrierOp::create(b, loc);
              Value next = arith::AddIOp::create(b, loc, step,
                                                 indexConst(b, loc, stages));
              emitIf(b, loc,
                     arith::AndIOp::create(
                         b, loc, isThreadZero(b, loc, ids.thread),
                         arith::CmpIOp::create(
                             b, loc, arith::CmpIPredicate::ult, next, steps)),
                     [&] {
                       copyStep(
                           b, ring, stage,
                           arith::AddIOp::create(
                               b, loc, first,
                               arith::MulIOp::create(
                                   b, loc, next, indexConst(b, loc, stepKeys))),
                           batchK, batchV);
                     });
            }
            scf::YieldOp::create(b, loc, ValueRange{max, sum, out});
          }
          if (failed(body))
            return;
          Online mine{loop.getResult(0), loop.getResult(1), loop.getResult(2)};

          // The groups of a warp fold their states through butterfly
          // shuffles (lanes of one part hold the same columns), then the
          // warps' states meet in shared memory, on 32-byte boundaries.
          for (int64_t offset = groupLanes; offset < 32; offset *= 2)
            mine = combine(b, mine, shuffleXor(b, mine, offset));
          Value warp =
              arith::DivUIOp::create(b, loc, thread, indexConst(b, loc, 32));
          Value slots = stages              ? ring.slots
                        : clusterBlocks > 1 ? clusterSlots(b, loc, warps *
                                                                     partialWords)
                                            : Value(ids.shared[0]);
          // Warp `w` of the row's slot: the block's rows one after another.
          auto slot = [&](Value w, int64_t word) {
            if (blockRows > 1)
              w = arith::AddIOp::create(
                  b, loc, w,
                  arith::MulIOp::create(b, loc, blockRow,
                                        indexConst(b, loc, warps)));
            return arith::AddIOp::create(
                b, loc,
                arith::MulIOp::create(b, loc, w,
                                      indexConst(b, loc, partialWords)),
                indexConst(b, loc, word));
          };
          Value outAt = columnOf(b, part);
          llvm::MaybeAlign stateAlignment =
              vectorAlignment(f32, kAttentionRowsLaneElements);
          Value firstPart = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::eq, part, zero);
          Value firstInWarp = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ult,
              arith::RemUIOp::create(b, loc, ids.thread,
                                     indexConst(b, loc, 32)),
              indexConst(b, loc, groupLanes));
          emitIf(b, loc, firstInWarp, [&] {
            vector::StoreOp::create(
                b, loc, mine.out, slots,
                ValueRange{arith::AddIOp::create(b, loc, slot(warp, 0), outAt)},
                /*nontemporal=*/false, stateAlignment);
            emitIf(b, loc, firstPart, [&] {
              memref::StoreOp::create(b, loc, mine.max, slots,
                                      ValueRange{slot(warp, valueDim)});
              memref::StoreOp::create(b, loc, mine.sum, slots,
                                      ValueRange{slot(warp, valueDim + 1)});
            });
          });
          gpu::BarrierOp::create(b, loc);
          auto readState = [&](Value memory, Value base) {
            auto at = [&](Value offset) {
              return arith::AddIOp::create(b, loc, base, offset);
            };
            return Online{memref::LoadOp::create(
                              b, loc, memory,
                              ValueRange{at(indexConst(b, loc, valueDim))}),
                          memref::LoadOp::create(
                              b, loc, memory,
                              ValueRange{at(indexConst(b, loc, valueDim + 1))}),
                          vector::LoadOp::create(
                              b, loc, outVector, memory, ValueRange{at(outAt)},
                              /*nontemporal=*/false, stateAlignment)};
          };
          auto isFirstGroup = [&] {
            return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         group, zero);
          };
          if (clusterBlocks > 1) {
            // Every block's warps' states are in place once the whole
            // cluster has arrived; the first block's first group folds them
            // in range (rank) and warp order and writes the row. No block
            // leaves while the first may still read its shared memory.
            clusterBarrier(b, loc);
            emitIf(b, loc,
                   arith::AndIOp::create(
                       b, loc,
                       arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             range, zero),
                       isFirstGroup()),
                   [&] {
                     Value local = sharedAddress(b, loc, slots, 0);
                     std::optional<Online> total;
                     for (int64_t rank = 0; rank < clusterBlocks; ++rank) {
                       Value remote = inClusterBlock(b, loc, local, rank);
                       for (int64_t w = 0; w < warps; ++w) {
                         Online state = readClusterState(
                             b, remote, slot(indexConst(b, loc, w), 0), outAt,
                             *stateAlignment);
                         total = total ? combine(b, *total, state) : state;
                       }
                     }
                     storeRow(b, *total, rowIndex, part, keys);
                   });
            clusterBarrier(b, loc);
            return;
          }
          Online block = readState(slots, slot(zero, 0));
          for (int64_t w = 1; w < warps; ++w)
            block = combine(b, block,
                            readState(slots, slot(indexConst(b, loc, w), 0)));
          // The first group holds the block's state (the others computed
          // it too, and drop it).
          Value firstGroup = isFirstGroup();
          Value single = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                               ranges, indexConst(b, loc, 1));
          emitIf(b, loc, arith::AndIOp::create(b, loc, single, firstGroup),
                 [&] { storeRow(b, block, rowIndex, part, keys); });
          if (!split)
            return;
          auto splitIf = scf::IfOp::create(
              b, loc,
              arith::XOrIOp::create(
                  b, loc, single, arith::ConstantIntOp::create(b, loc, 1, 1)));
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(splitIf.thenBlock()->getTerminator());
          // This range's state to the workspace; the row's last block folds
          // the ranges in order.
          Value state =
              blockRows > 1
                  ? Value(arith::AddIOp::create(
                        b, loc, arith::MulIOp::create(b, loc, row, ranges),
                        range))
                  : ids.block;
          Value base = arith::MulIOp::create(b, loc, state,
                                             indexConst(b, loc, partialWords));
          emitIf(b, loc, firstGroup, [&] {
            vector::StoreOp::create(
                b, loc, block.out, partials,
                ValueRange{arith::AddIOp::create(b, loc, base, outAt)},
                /*nontemporal=*/false, stateAlignment);
            emitIf(b, loc, firstPart, [&] {
              memref::StoreOp::create(
                  b, loc, block.max, partials,
                  ValueRange{arith::AddIOp::create(
                      b, loc, base, indexConst(b, loc, valueDim))});
              memref::StoreOp::create(
                  b, loc, block.sum, partials,
                  ValueRange{arith::AddIOp::create(
                      b, loc, base, indexConst(b, loc, valueDim + 1))});
            });
          });
          Value last = arith::IndexCastOp::create(
              b, loc, b.getI32Type(),
              arith::SubIOp::create(b, loc, ranges, indexConst(b, loc, 1)));
          Value isLast = countArrival(
              b, loc, arrivals, rowBlock,
              stages ? ring.word : Value(ids.shared[1]),
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                    ids.thread, zero),
              last);
          emitIf(
              b, loc, arith::AndIOp::create(b, loc, isLast, firstGroup), [&] {
                Value firstBlock = arith::MulIOp::create(b, loc, row, ranges);
                auto fold = scf::ForOp::create(
                    b, loc, zero, ranges, indexConst(b, loc, 1),
                    ValueRange{init.max, init.sum, init.out});
                {
                  OpBuilder::InsertionGuard inner(b);
                  b.setInsertionPointToStart(fold.getBody());
                  Value at = arith::MulIOp::create(
                      b, loc,
                      arith::AddIOp::create(b, loc, firstBlock,
                                            fold.getInductionVar()),
                      indexConst(b, loc, partialWords));
                  Online sofar{fold.getRegionIterArgs()[0],
                               fold.getRegionIterArgs()[1],
                               fold.getRegionIterArgs()[2]};
                  Online next = combine(b, sofar, readState(partials, at));
                  scf::YieldOp::create(
                      b, loc, ValueRange{next.max, next.sum, next.out});
                }
                storeRow(b,
                         Online{fold.getResult(0), fold.getResult(1),
                                fold.getResult(2)},
                         rowIndex, part, keys);
              });
        });
        return body;
      },
      stages || clusterBlocks > 1 ? SmallVector<Type>{} : sharedTypes,
      /*clusterBlocks=*/clusterBlocks > 1 ? clusterBlocks : 0, dynamicShared,
      nameSuffix);
  if (succeeded(emitted) && split) {
    releaseScratch(b, loc, partials);
    return releaseArrivalCounters(b, loc, arrivals);
  }
  return emitted;
}

LogicalResult codegen::emitAttentionRows(OpBuilder &b, Location loc,
                                         KernelOp kernel, KernelPlanAttr plan,
                                         const KernelBuffers &buffers) {
  std::string why = whyNotAttentionRows(kernel);
  FailureOr<AttentionKernelShape> shape = getAttentionKernelShape(kernel, why);
  if (!why.empty() || failed(shape))
    return kernel.emitOpError("cannot run as attention_rows: ") << why;
  if (plan.getCluster() == 1 || plan.getSplit() == 1)
    return AttentionRows(loc, kernel, plan, buffers, *shape).emit(b);
  // Both: a launch in clusters for rows of at most kAttentionRowsClusterKeys
  // keys, else one whose ranges fold through the workspace (chosen on the
  // host, by the call's keys).
  auto withRanges = [&](int64_t cluster, int64_t split) {
    return KernelPlanAttr::get(b.getContext(), plan.getStrategy(),
                               plan.getThreads(), plan.getVector(),
                               plan.getRow(), cluster, plan.getPasses(), split);
  };
  auto values = cast<BlockArgument>(shape->values);
  Value keys = memref::DimOp::create(
      b, loc, buffers.inputs[values.getArgNumber()],
      codegen::shapeOf(values).size() - 2);
  auto ifOp = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, keys,
                            indexConst(b, loc, kAttentionRowsClusterKeys)),
      /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  if (failed(AttentionRows(loc, kernel, withRanges(plan.getCluster(), 1),
                           buffers, *shape)
                 .emit(b)))
    return failure();
  b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
  return AttentionRows(loc, kernel, withRanges(1, plan.getSplit()), buffers,
                       *shape, "_split")
      .emit(b);
}
