//===- Columns.cpp - The columns strategy ---------------------------------===//
//
// Reductions that keep the innermost axis (a bias gradient's sum over the
// batch, a mean over the sequence): the kept dimensions are the columns,
// the reduced ones the rows each column reduces. A block owns a tile of
// `lanes` column vectors (vector loads along the innermost axis, coalesced
// across the warp) and its other threads go down the rows of its range,
// each accumulating its own rows; the block then combines them through
// shared memory in a fixed order. Ranges and their combination (the last
// block of a tile folds them) are ReductionSweep's. Every input element is
// read once.
//
// Columns of a size K no vector divides (getColumnSegmentRows) are read
// over segments of g rows: rows of g * K columns, in aligned vectors of the
// flat operand, each lane's columns the same in every segment. The sweep
// leaves each segment column's totals in a scratch buffer, and a second
// launch folds the g totals of each column, in order, into the outputs.
//
//===----------------------------------------------------------------------===//

#include "ReductionSweep.h"
#include "Strategies.h"

#include "fusion/Conversion/ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::codegen;

namespace {

/// Rows a thread loads per step: independent loads in flight (H200,
/// 2026-11-30: one row a step held a 16384 x 4096 bf16 column sum at 2509
/// GB/s, 59% of copy).
constexpr int64_t kUnrolledRows = 4;

class ColumnsSweep : public ReductionSweep {
public:
  ColumnsSweep(Location loc, KernelOp kernel, KernelPlanAttr plan,
               const KernelBuffers &buffers, const ReductionKernelShape &shape)
      : ColumnsSweep(loc, kernel, plan, buffers, shape,
                     getColumnLanes(plan, shape)) {}

  /// The sweep, and over segments the fold of their totals around it.
  LogicalResult run(OpBuilder &b);

private:
  ColumnsSweep(Location loc, KernelOp kernel, KernelPlanAttr plan,
               const KernelBuffers &buffers, const ReductionKernelShape &shape,
               int64_t lanes)
      : ReductionSweep(loc, kernel, plan, buffers, shape, plan.getVector(),
                       /*groupLanes=*/lanes,
                       /*rangeUnit=*/plan.getThreads() / lanes),
        width(plan.getVector()), threads(plan.getThreads()), lanes(lanes),
        rowThreads(threads / lanes),
        segmentRows(getColumnSegmentRows(plan, shape)) {}

  LogicalResult emitPartials(OpBuilder &b,
                             const SweepWorkspace *workspace) override;
  /// Over segments: a segment's rows are one row of segmentRows * K columns.
  FailureOr<SweepSpace> space(OpBuilder &b) override;
  /// Over segments: the totals of a segment's columns go to `segmentTotals`.
  void writeTotals(OpBuilder &b, const SweepSpace &s, Value output,
                   ArrayRef<Value> totals) override;
  /// The second launch over segments: each column's segmentRows totals,
  /// folded in order, into the outputs.
  LogicalResult emitSegmentFold(OpBuilder &b);
  Value groupsOf(OpBuilder &b, const SweepSpace &s) override {
    return tilesOf(b, s);
  }
  /// Tiles of `lanes` column vectors.
  Value tilesOf(OpBuilder &b, const SweepSpace &s) {
    return arith::CeilDivUIOp::create(
        b, loc,
        arith::DivUIOp::create(b, loc, s.outputs, indexConst(b, loc, width)),
        indexConst(b, loc, lanes));
  }

  int64_t width, threads, lanes, rowThreads;
  /// Rows read as one (1: columns in whole vectors).
  int64_t segmentRows;
  /// Over segments: each reduction's totals of the segment columns, f32.
  Value segmentTotals;
};

} // namespace

LogicalResult ColumnsSweep::run(OpBuilder &b) {
  if (segmentRows == 1)
    return emit(b);
  FailureOr<SweepSpace> s = space(b);
  if (failed(s))
    return failure();
  for (Value input : buffers.inputs)
    flatInputs.push_back(cast<MemRefType>(input.getType()).getShape() ==
                                 shape.shape
                             ? collapseToFlat(b, loc, input)
                             : input);
  segmentTotals = allocateScratch(
      b, loc, b.getF32Type(),
      arith::MulIOp::create(b, loc, s->outputs,
                            indexConst(b, loc, shape.reductions.size())));
  if (failed(emit(b)) || failed(emitSegmentFold(b)))
    return failure();
  releaseScratch(b, loc, segmentTotals);
  return success();
}

FailureOr<SweepSpace> ColumnsSweep::space(OpBuilder &b) {
  FailureOr<SweepSpace> s = ReductionSweep::space(b);
  if (failed(s) || segmentRows == 1)
    return s;
  Value rows = indexConst(b, loc, segmentRows);
  s->outputs = arith::MulIOp::create(b, loc, s->outputs, rows);
  s->elements = arith::DivUIOp::create(b, loc, s->elements, rows);
  s->kept = {s->outputs};
  s->reduced = {s->elements};
  s->ranges = rangesOf(b, s->elements);
  return s;
}

void ColumnsSweep::writeTotals(OpBuilder &b, const SweepSpace &s, Value output,
                               ArrayRef<Value> totals) {
  if (segmentRows == 1) {
    ReductionSweep::writeTotals(b, s, output, totals);
    return;
  }
  for (auto [ordinal, total] : llvm::enumerate(totals))
    storePartial(b, total, segmentTotals,
                 arith::AddIOp::create(
                     b, loc,
                     arith::MulIOp::create(b, loc, indexConst(b, loc, ordinal),
                                           s.outputs),
                     output));
}

LogicalResult ColumnsSweep::emitSegmentFold(OpBuilder &b) {
  FailureOr<SweepSpace> host = ReductionSweep::space(b);
  if (failed(host))
    return failure();
  Value blocks = arith::CeilDivUIOp::create(b, loc, host->outputs,
                                            indexConst(b, loc, threads));
  return emitLaunch(
      b, loc, kernel, blocks, threads,
      [&](OpBuilder &b, const LaunchIds &ids) -> LogicalResult {
        FailureOr<SweepSpace> s = ReductionSweep::space(b);
        if (failed(s))
          return failure();
        Value column = arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(b, loc, ids.block,
                                  indexConst(b, loc, threads)),
            ids.thread);
        Value segmentColumns = arith::MulIOp::create(
            b, loc, s->outputs, indexConst(b, loc, segmentRows));
        emitIf(b, loc,
               arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, column,
                                     s->outputs),
               [&] {
                 SmallVector<Value> totals = identities(b, b.getF32Type());
                 for (auto [ordinal, reduction] :
                      llvm::enumerate(shape.reductions)) {
                   Value first = arith::AddIOp::create(
                       b, loc,
                       arith::MulIOp::create(
                           b, loc, indexConst(b, loc, ordinal), segmentColumns),
                       column);
                   for (int64_t row = 0; row < segmentRows; ++row) {
                     Value at = arith::AddIOp::create(
                         b, loc, first,
                         arith::MulIOp::create(b, loc, s->outputs,
                                               indexConst(b, loc, row)));
                     totals[ordinal] = buildReductionCombine(
                         b, loc, reduction, totals[ordinal],
                         memref::LoadOp::create(b, loc, segmentTotals, at));
                   }
                 }
                 writeOutputs(b, *s, column, totals);
               });
        return success();
      },
      /*shared=*/{}, /*clusterBlocks=*/0, /*dynamicShared=*/0,
      /*nameSuffix=*/"_segments");
}

LogicalResult ColumnsSweep::emitPartials(OpBuilder &b,
                                         const SweepWorkspace *workspace) {
  FailureOr<SweepSpace> host = space(b);
  if (failed(host))
    return failure();
  Value blocks = arith::MulIOp::create(b, loc, tilesOf(b, *host), host->ranges);
  return emitLaunch(
      b, loc, kernel, blocks, threads,
      [&](OpBuilder &b, const LaunchIds &ids) -> LogicalResult {
        FailureOr<SweepSpace> s = space(b);
        if (failed(s))
          return failure();
        Value zero = indexConst(b, loc, 0);
        Value vectors =
            arith::DivUIOp::create(b, loc, s->outputs, indexConst(b, loc, width));
        // (At least 1: the indices below divide by it.)
        Value tiles = arith::MaxUIOp::create(b, loc, tilesOf(b, *s),
                                             indexConst(b, loc, 1));
        Value lane = arith::RemUIOp::create(b, loc, ids.thread,
                                            indexConst(b, loc, lanes));
        Value rowThread = arith::DivUIOp::create(b, loc, ids.thread,
                                                 indexConst(b, loc, lanes));
        Value rangeRows =
            arith::CeilDivUIOp::create(b, loc, s->elements, s->ranges);
        // (range, tile) pairs, tiles fastest.
        Value pairs = arith::MulIOp::create(b, loc, tilesOf(b, *s), s->ranges);
        auto blockLoop = pairLoop(b, ids, pairs, workspace);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(blockLoop.getBody());
        Value tile =
            arith::RemUIOp::create(b, loc, blockLoop.getInductionVar(), tiles);
        Value range =
            arith::DivUIOp::create(b, loc, blockLoop.getInductionVar(), tiles);
        Value vector = arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(b, loc, tile, indexConst(b, loc, lanes)),
            lane);
        Value column =
            arith::MulIOp::create(b, loc, vector, indexConst(b, loc, width));
        Value active = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                             vector, vectors);
        Value rowBegin = arith::MulIOp::create(b, loc, range, rangeRows);
        Value rowEnd = arith::MinUIOp::create(
            b, loc, s->elements,
            arith::AddIOp::create(b, loc, rowBegin, rangeRows));

        // This thread's rows of its column vector: rowBegin + rowThread,
        // then every rowThreads-th (none when the lane has no column).
        SmallVector<Value> init = identities(b, partialType(b));
        Value firstRow = arith::SelectOp::create(
            b, loc, active, arith::AddIOp::create(b, loc, rowBegin, rowThread),
            rowEnd);
        FailureOr<SmallVector<Value>> partials = accumulate(
            b, firstRow, rowEnd, rowThreads, kUnrolledRows, init, width > 1,
            [&](OpBuilder &b, Value row) -> SmallVector<Value> {
              if (segmentRows == 1)
                return pointAt(b, *s, column, row);
              // The flat offset: segment `row`, segment column `column`.
              return {arith::AddIOp::create(
                  b, loc, arith::MulIOp::create(b, loc, row, s->outputs),
                  column)};
            });
        if (failed(partials))
          return failure();

        // The block's combine over its row threads, then the first row of
        // threads has the tile's totals for this range.
        SmallVector<Value> totals = foldOverRows(
            b, ids.shared[0], *partials, lane, rowThread, lanes, rowThreads);
        Value holders = arith::AndIOp::create(
            b, loc, active,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rowThread,
                                  zero));
        finishGroup(b, *s, workspace, SmallVector<Value>(ids.shared), tile, range, column, lane,
                    rowThread, rowThreads, holders, ids.thread,
                    arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          blockLoop.getInductionVar(), pairs),
                    totals);
        // The next tile's threads reuse the shared slots.
        gpu::BarrierOp::create(b, loc);
        return success();
      },
      sharedTypes(b, threads, workspace != nullptr));
}

LogicalResult codegen::emitColumns(OpBuilder &b, Location loc, KernelOp kernel,
                                   KernelPlanAttr plan,
                                   const KernelBuffers &buffers) {
  std::string misfit;
  FailureOr<ReductionKernelShape> shape =
      getReductionKernelShape(kernel, misfit);
  if (succeeded(shape) && shape->reducesInnermost())
    misfit = "the innermost axis is reduced";
  if (failed(shape) || shape->reducesInnermost())
    return kernel.emitOpError("cannot run as columns: ") << misfit;
  return ColumnsSweep(loc, kernel, plan, buffers, *shape).run(b);
}
