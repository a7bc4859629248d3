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
//===----------------------------------------------------------------------===//

#include "ReductionSweep.h"
#include "Strategies.h"

#include "fusion/Conversion/ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

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

private:
  ColumnsSweep(Location loc, KernelOp kernel, KernelPlanAttr plan,
               const KernelBuffers &buffers, const ReductionKernelShape &shape,
               int64_t lanes)
      : ReductionSweep(loc, kernel, plan, buffers, shape, plan.getVector(),
                       /*groupLanes=*/lanes,
                       /*rangeUnit=*/plan.getThreads() / lanes),
        width(plan.getVector()), threads(plan.getThreads()), lanes(lanes),
        rowThreads(threads / lanes) {}

  LogicalResult emitPartials(OpBuilder &b,
                             const SweepWorkspace *workspace) override;
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
};

} // namespace

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
            [&](OpBuilder &b, Value row) {
              return pointAt(b, *s, column, row);
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
  return ColumnsSweep(loc, kernel, plan, buffers, *shape).emit(b);
}
