//===- Rows.cpp - The rows and cluster_rows strategies --------------------===//
//
// Row kernels: a block per row (grid-stride over rows), or with
// `cluster_rows` a cluster of blocks per row, each owning a part of it
// (ClusterRows.cpp combines their partial reductions). Each reduction is a
// pass over the row: per-thread partials, then a block-wide gpu.all_reduce
// (warp shuffles and shared memory); its result is a per-row scalar for what
// follows. A last pass writes the full-row outputs, thread 0 the per-row
// ones. A row held in registers is loaded once for all passes; a streamed
// row (too long, or of dynamic length) is read again by every pass.
//
//===----------------------------------------------------------------------===//

#include "PointEvaluator.h"
#include "ReductionSweep.h"
#include "Strategies.h"

#include "fusion/Conversion/ScalarOps.h"
#include "fusion/Dialect/Fusion/Analysis/KernelPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::codegen;

LogicalResult codegen::emitRows(OpBuilder &b, Location loc, KernelOp kernel,
                                KernelPlanAttr plan,
                                const KernelBuffers &buffers) {
  std::string misfit;
  FailureOr<RowKernelShape> shape = getRowKernelShape(kernel, misfit);
  if (failed(shape))
    return kernel.emitOpError("cannot run as rows: ") << misfit;
  ArrayRef<Operation *> reductions = shape->reductions;
  ArrayRef<int64_t> rowShape = shape->rowShape;
  int64_t rank = rowShape.size();
  // The plan: `splits` blocks (a cluster) per row, each owning `part`
  // columns (the last block fewer when they do not divide the row);
  // `width`-element vectors; with `unrolled` vectors a thread held in
  // registers, else every pass streams the row.
  const int64_t threads = plan.getThreads(), width = plan.getVector(),
                splits = plan.getCluster();
  int64_t h = rowShape.back();
  int64_t part = getRowPart(plan, h);
  int64_t unrolled = getHeldVectorsPerThread(plan, part);
  // Held vectors from the k-th on may fall past the end of the shortest
  // (last) part: those are masked.
  int64_t firstMasked = unrolled;
  if (unrolled) {
    int64_t shortest = h - (splits - 1) * part;
    firstMasked = shortest / (threads * width);
  }

  // Row sizes: static, or traced to the input they come from.
  auto rowSizesOf = [&](OpBuilder &b) -> FailureOr<SmallVector<Value>> {
    PointEvaluator sizer(b, loc, kernel, buffers.inputs, 1);
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < rank; ++d) {
      FailureOr<Value> size = sizer.sizeOf(shape->rowInput, d);
      if (failed(size))
        return kernel.emitOpError("cannot size dimension ")
               << d << " of its rows";
      sizes.push_back(*size);
    }
    return sizes;
  };
  FailureOr<SmallVector<Value>> outerSizes = rowSizesOf(b);
  if (failed(outerSizes))
    return failure();
  outerSizes->pop_back();
  Value rows = product(b, loc, *outerSizes);
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
          slots = clusterSlots(b, loc, numSlots);
          Value clusterSize = indexConst(b, loc, splits);
          partIndex = gpu::ClusterBlockIdOp::create(b, loc, gpu::Dimension::x);
          bid = arith::DivUIOp::create(b, loc, bid, clusterSize);
          grid = arith::DivUIOp::create(b, loc, grid, clusterSize);
        }
        Value partStart =
            splits > 1 ? arith::MulIOp::create(b, loc, partIndex,
                                               indexConst(b, loc, part))
                             .getResult()
                       : indexConst(b, loc, 0);
        FailureOr<SmallVector<Value>> sizes = rowSizesOf(b);
        if (failed(sizes))
          return failure();
        Value rowLength = sizes->back();
        SmallVector<Value> innerRowSizes(ArrayRef<Value>(*sizes).drop_back());
        Value count = product(b, loc, innerRowSizes);
        auto rowLoop = scf::ForOp::create(b, loc, bid, count, grid);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(rowLoop.getBody());
        SmallVector<Value> rowIndex =
            delinearize(b, loc, rowLoop.getInductionVar(), innerRowSizes);
        PointEvaluator evaluator(b, loc, kernel, buffers.inputs, width);

        // A pass of the block over its part of the row: thread `tid`
        // visits the vectors at first, first + step, ... up to end.
        Value first = arith::AddIOp::create(
            b, loc, partStart,
            arith::MulIOp::create(b, loc, tid, indexConst(b, loc, width)));
        Value step = indexConst(b, loc, threads * width);
        Value end = rowLength;
        if (splits > 1)
          end = arith::MinUIOp::create(
              b, loc,
              arith::AddIOp::create(b, loc, partStart,
                                    indexConst(b, loc, part)),
              rowLength);
        auto columnsOf = [&](Value column) {
          SmallVector<Value> index(rowIndex);
          index.push_back(column);
          return index;
        };

        // The columns this thread holds when the row is in registers. A
        // masked vector past the end reads the part's last vector instead
        // (in bounds, no branch) and is left out of reductions and stores.
        SmallVector<Value> heldColumns, heldValid;
        Value lastVector;
        if (firstMasked < unrolled)
          lastVector =
              arith::SubIOp::create(b, loc, end, indexConst(b, loc, width));
        for (int64_t k = 0; k < unrolled; ++k) {
          Value column = arith::AddIOp::create(
              b, loc, first, indexConst(b, loc, k * threads * width));
          Value valid;
          if (k >= firstMasked) {
            valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          column, end);
            column = arith::MinUIOp::create(b, loc, column, lastVector);
          }
          heldColumns.push_back(column);
          heldValid.push_back(valid);
        }

        for (auto [ordinal, reduction] : llvm::enumerate(reductions)) {
          Value identity =
              buildReductionIdentity(b, loc, reduction, b.getF32Type());
          auto partialOf = [&](Value column, Value acc) -> FailureOr<Value> {
            FailureOr<Value> x = evaluator.eval(reduction->getOperand(0),
                                                columnsOf(column), width > 1);
            if (failed(x))
              return failure();
            Value partial = *x;
            if (width > 1)
              partial = vector::ReductionOp::create(
                  b, loc, vectorCombiningKind(reduction), partial);
            return buildReductionCombine(b, loc, reduction, acc, partial);
          };
          Value partial = identity;
          if (unrolled) {
            // Registers: values loaded or computed in earlier passes are
            // reused (the evaluator keeps them).
            for (auto [column, valid] : llvm::zip(heldColumns, heldValid)) {
              FailureOr<Value> next = partialOf(column, partial);
              if (failed(next))
                return failure();
              partial = valid ? arith::SelectOp::create(b, loc, valid, *next,
                                                        partial)
                                    .getResult()
                              : *next;
            }
          } else {
            auto pass = scf::ForOp::create(b, loc, first, end, step,
                                           ValueRange{identity});
            {
              OpBuilder::InsertionGuard inner(b);
              b.setInsertionPointToStart(pass.getBody());
              PointEvaluator::CacheScope scope(evaluator);
              FailureOr<Value> next = partialOf(pass.getInductionVar(),
                                                pass.getRegionIterArgs()[0]);
              if (failed(next))
                return failure();
              scf::YieldOp::create(b, loc, *next);
            }
            partial = pass.getResult(0);
          }
          Value total = gpu::AllReduceOp::create(
              b, loc, partial,
              gpu::AllReduceOperationAttr::get(b.getContext(),
                                               allReduceKind(reduction)),
              /*uniform=*/true);
          if (splits > 1)
            total = combineOverCluster(b, loc, reduction, total, slots,
                                       ordinal, tid, splits);
          if (isa<ReduceMeanOp>(reduction))
            total = arith::DivFOp::create(
                b, loc, total,
                arith::UIToFPOp::create(
                    b, loc, b.getF32Type(),
                    arith::IndexCastUIOp::create(b, loc, b.getI64Type(),
                                                 rowLength)));
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
        auto outputs = llvm::zip(kernel.getYield().getValues(), buffers.outputs);
        auto isFullRow = [&](Value value) { return shapeOf(value) == rowShape; };
        {
          // Full rows: one pass, whose loads serve every output.
          OpBuilder::InsertionGuard inner(b);
          if (unrolled)
            b.setInsertionPoint(perRow);
          else
            b.setInsertionPoint(write.getBody()->getTerminator());
          PointEvaluator::CacheScope scope(evaluator);
          for (auto [value, buffer] : outputs) {
            if (!isFullRow(value))
              continue;
            SmallVector<Value> columns =
                unrolled ? heldColumns
                         : SmallVector<Value>{write.getInductionVar()};
            SmallVector<Value> valid =
                unrolled ? heldValid : SmallVector<Value>{Value()};
            for (auto [column, isValid] : llvm::zip(columns, valid)) {
              SmallVector<Value> index = columnsOf(column);
              FailureOr<Value> v = evaluator.eval(value, index, width > 1);
              if (failed(v))
                return failure();
              if (!isValid) {
                store(b, loc, *v, buffer, index);
                continue;
              }
              auto inBounds = scf::IfOp::create(b, loc, isValid);
              OpBuilder::InsertionGuard storeGuard(b);
              b.setInsertionPoint(inBounds.thenBlock()->getTerminator());
              store(b, loc, *v, buffer, index);
            }
          }
        }
        {
          // Values per row ([R...] or [R..., 1]).
          OpBuilder::InsertionGuard inner(b);
          b.setInsertionPoint(perRow.thenBlock()->getTerminator());
          PointEvaluator::CacheScope scope(evaluator);
          for (auto [value, buffer] : outputs) {
            if (isFullRow(value))
              continue;
            SmallVector<Value> index(rowIndex);
            if (static_cast<int64_t>(shapeOf(value).size()) == rank)
              index.push_back(indexConst(b, loc, 0));
            FailureOr<Value> v = evaluator.eval(value, index, false);
            if (failed(v))
              return failure();
            store(b, loc, *v, buffer, index);
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
