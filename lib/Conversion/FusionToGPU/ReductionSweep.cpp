//===- ReductionSweep.cpp - What the reduction sweeps share ---------------===//

#include "ReductionSweep.h"

#include "PointEvaluator.h"

#include "fusion/Conversion/ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::codegen;

vector::CombiningKind codegen::vectorCombiningKind(Operation *reduction) {
  switch (getReductionCombiner(reduction)) {
  case ReductionCombiner::maximum:
    return vector::CombiningKind::MAXIMUMF;
  case ReductionCombiner::minimum:
    return vector::CombiningKind::MINIMUMF;
  case ReductionCombiner::add:
    return vector::CombiningKind::ADD;
  }
  llvm_unreachable("unknown reduction combiner");
}

gpu::AllReduceOperation codegen::allReduceKind(Operation *reduction) {
  switch (getReductionCombiner(reduction)) {
  case ReductionCombiner::maximum:
    return gpu::AllReduceOperation::MAXIMUMF;
  case ReductionCombiner::minimum:
    return gpu::AllReduceOperation::MINIMUMF;
  case ReductionCombiner::add:
    return gpu::AllReduceOperation::ADD;
  }
  llvm_unreachable("unknown reduction combiner");
}

FailureOr<SweepSpace> ReductionSweep::space(OpBuilder &b) {
  PointEvaluator sizer(b, loc, kernel, buffers.inputs, 1);
  SweepSpace s;
  for (auto [dims, sizes] : {std::make_pair(&shape.keptDims, &s.kept),
                             std::make_pair(&shape.reducedDims, &s.reduced)}) {
    for (int64_t d : *dims) {
      FailureOr<Value> size = sizer.sizeOf(shape.input, d);
      if (failed(size))
        return kernel.emitOpError("cannot size dimension ")
               << d << " of its reductions";
      sizes->push_back(*size);
    }
  }
  s.outputs = product(b, loc, s.kept);
  s.elements = product(b, loc, s.reduced);
  s.ranges = rangesOf(b, s.elements);
  return s;
}

Value ReductionSweep::rangesOf(OpBuilder &b, Value elements) {
  Value steps = arith::CeilDivUIOp::create(b, loc, elements,
                                           indexConst(b, loc, rangeUnit));
  return arith::MaxUIOp::create(
      b, loc, indexConst(b, loc, 1),
      arith::MinUIOp::create(b, loc, steps,
                             indexConst(b, loc, plan.getSplit())));
}

SmallVector<Value> ReductionSweep::pointAt(OpBuilder &b, const SweepSpace &s,
                                           Value output, Value element) {
  SmallVector<Value> point(shape.shape.size());
  for (auto [d, i] :
       llvm::zip(shape.keptDims, delinearize(b, loc, output, s.kept)))
    point[d] = i;
  for (auto [d, i] :
       llvm::zip(shape.reducedDims, delinearize(b, loc, element, s.reduced)))
    point[d] = i;
  return point;
}

Type ReductionSweep::partialType(OpBuilder &b) {
  return partialWidth > 1
             ? Type(VectorType::get({partialWidth}, b.getF32Type()))
             : Type(b.getF32Type());
}

SmallVector<Value> ReductionSweep::identities(OpBuilder &b, Type type) {
  SmallVector<Value> values;
  for (Operation *reduction : shape.reductions)
    values.push_back(buildReductionIdentity(b, loc, reduction, type));
  return values;
}

FailureOr<SmallVector<Value>> ReductionSweep::accumulate(
    OpBuilder &b, Value from, Value to, int64_t stride, int64_t unrolled,
    ValueRange init, bool lanes,
    function_ref<SmallVector<Value>(OpBuilder &, Value)> pointOf) {
  return emitUnrolledLoop(
      b, loc, from, to, stride, unrolled, init,
      [&](OpBuilder &b, ArrayRef<Value> elements,
          ValueRange accs) -> FailureOr<SmallVector<Value>> {
        bool flat = !flatInputs.empty();
        PointEvaluator evaluator(b, loc, kernel,
                                 flat ? ArrayRef<Value>(flatInputs)
                                      : ArrayRef<Value>(buffers.inputs),
                                 plan.getVector(), flat);
        evaluator.evictFirst =
            getInputsReadOnce(plan, buffers.inputs, shape.shape);
        // Every load of the step first, then the combines in element order.
        SmallVector<SmallVector<Value>> values(shape.reductions.size());
        for (Value element : elements) {
          SmallVector<Value> point = pointOf(b, element);
          for (auto [ordinal, reduction] : llvm::enumerate(shape.reductions)) {
            FailureOr<Value> x =
                evaluator.eval(reduction->getOperand(0), point, lanes);
            if (failed(x))
              return failure();
            values[ordinal].push_back(*x);
          }
        }
        SmallVector<Value> next;
        for (auto [reduction, acc, xs] :
             llvm::zip(shape.reductions, accs, values)) {
          Value total = acc;
          for (Value x : xs)
            total = buildReductionCombine(b, loc, reduction, total, x);
          next.push_back(total);
        }
        return next;
      });
}

Value ReductionSweep::loadPartial(OpBuilder &b, Value buffer, Value offset) {
  if (partialWidth == 1)
    return memref::LoadOp::create(b, loc, buffer, offset);
  return vector::LoadOp::create(b, loc, cast<VectorType>(partialType(b)),
                                buffer, offset, /*nontemporal=*/false,
                                vectorAlignment(b.getF32Type(), partialWidth));
}

void ReductionSweep::storePartial(OpBuilder &b, Value value, Value buffer,
                                  Value offset) {
  if (partialWidth == 1)
    memref::StoreOp::create(b, loc, value, buffer, offset);
  else
    vector::StoreOp::create(b, loc, value, buffer, offset,
                            /*nontemporal=*/false,
                            vectorAlignment(b.getF32Type(), partialWidth));
}

SmallVector<Type> ReductionSweep::sharedTypes(OpBuilder &b, int64_t threads,
                                              bool split) {
  auto workgroup = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  SmallVector<Type> types{MemRefType::get(
      {static_cast<int64_t>(shape.reductions.size()) * threads * partialWidth},
      b.getF32Type(), MemRefLayoutAttrInterface{}, workgroup)};
  if (split)
    types.push_back(MemRefType::get({1}, b.getI32Type(),
                                    MemRefLayoutAttrInterface{}, workgroup));
  return types;
}

SmallVector<Value> ReductionSweep::foldOverRows(OpBuilder &b, Value shared,
                                                ArrayRef<Value> partials,
                                                Value lane, Value rowThread,
                                                int64_t lanes,
                                                int64_t rowThreads) {
  auto slot = [&](int64_t ordinal, Value row) {
    Value rowSlot = arith::AddIOp::create(
        b, loc, indexConst(b, loc, ordinal * rowThreads), row);
    Value laneSlot = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, rowSlot, indexConst(b, loc, lanes)),
        lane);
    return arith::MulIOp::create(b, loc, laneSlot,
                                 indexConst(b, loc, partialWidth))
        .getResult();
  };
  for (auto [ordinal, partial] : llvm::enumerate(partials))
    storePartial(b, partial, shared, slot(ordinal, rowThread));
  gpu::BarrierOp::create(b, loc);
  // Rows [0, n) hold partials; rows below n - half take in the row half
  // above them, until one is left.
  for (int64_t n = rowThreads; n > 1;) {
    int64_t half = llvm::divideCeil(n, 2);
    auto takes = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, rowThread,
                              indexConst(b, loc, n - half)));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(takes.thenBlock()->getTerminator());
      Value above =
          arith::AddIOp::create(b, loc, rowThread, indexConst(b, loc, half));
      for (auto [ordinal, reduction] : llvm::enumerate(shape.reductions)) {
        Value mine = slot(ordinal, rowThread);
        Value sum = buildReductionCombine(
            b, loc, reduction, loadPartial(b, shared, mine),
            loadPartial(b, shared, slot(ordinal, above)));
        storePartial(b, sum, shared, mine);
      }
    }
    gpu::BarrierOp::create(b, loc);
    n = half;
  }
  SmallVector<Value> totals;
  for (int64_t ordinal = 0, e = partials.size(); ordinal < e; ++ordinal)
    totals.push_back(
        loadPartial(b, shared, slot(ordinal, indexConst(b, loc, 0))));
  return totals;
}

void ReductionSweep::writeOutputs(OpBuilder &b, const SweepSpace &s,
                                  Value output, ArrayRef<Value> totals) {
  SmallVector<Value> kept = delinearize(b, loc, output, s.kept);
  for (auto [value, buffer] :
       llvm::zip(kernel.getYield().getValues(), buffers.outputs)) {
    auto it = llvm::find(shape.reductions, value.getDefiningOp());
    Operation *reduction = *it;
    Value total = totals[it - shape.reductions.begin()];
    if (isa<ReduceMeanOp>(reduction)) {
      Value count = arith::UIToFPOp::create(
          b, loc, b.getF32Type(),
          arith::IndexCastUIOp::create(b, loc, b.getI64Type(), s.elements));
      if (isa<VectorType>(total.getType()))
        count = vector::BroadcastOp::create(b, loc, total.getType(), count);
      total = arith::DivFOp::create(b, loc, total, count);
    }
    // The output's index: the kept indices, 0 on reduced axes it keeps.
    bool keepDims = reduction->hasAttr("keep_dims");
    SmallVector<Value> index;
    unsigned next = 0;
    for (int64_t d = 0; d < static_cast<int64_t>(shape.shape.size()); ++d) {
      if (!llvm::is_contained(shape.reducedDims, d))
        index.push_back(kept[next++]);
      else if (keepDims)
        index.push_back(indexConst(b, loc, 0));
    }
    store(b, loc, total, buffer, index);
  }
}

int64_t ReductionSweep::groupStride() const {
  constexpr int64_t kLineFloats = 128 / sizeof(float);
  return llvm::alignTo(groupLanes * partialWidth, kLineFloats);
}

Value ReductionSweep::partialOffset(OpBuilder &b, const SweepSpace &s,
                                    Value group, int64_t ordinal, Value range,
                                    Value lane) {
  // ((group * reductions + ordinal) * ranges + range) * stride + lane part.
  Value row = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, group,
                            indexConst(b, loc, shape.reductions.size())),
      indexConst(b, loc, ordinal));
  row = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, row, s.ranges),
                              range);
  return arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, row, indexConst(b, loc, groupStride())),
      arith::MulIOp::create(b, loc, lane, indexConst(b, loc, partialWidth)));
}

scf::ForOp ReductionSweep::pairLoop(OpBuilder &b, const LaunchIds &ids,
                                    Value pairs,
                                    const SweepWorkspace *workspace) {
  if (!workspace)
    return scf::ForOp::create(b, loc, ids.block, pairs, ids.grid);
  Value one = indexConst(b, loc, 1);
  return scf::ForOp::create(b, loc, ids.block,
                            arith::AddIOp::create(b, loc, ids.block, one), one);
}

/// Ranges a thread of the last block loads per step.
static constexpr int64_t kUnrolledRanges = 4;

void ReductionSweep::finishGroup(OpBuilder &b, const SweepSpace &s,
                                 const SweepWorkspace *workspace,
                                 ArrayRef<Value> shared, Value group,
                                 Value range, Value output, Value lane,
                                 Value rowThread, int64_t rowThreads,
                                 Value holders, Value thread, Value exists,
                                 ArrayRef<Value> totals) {
  if (!workspace) {
    emitIf(b, loc, holders, [&] { writeTotals(b, s, output, totals); });
    return;
  }
  emitIf(b, loc, holders, [&] {
    for (auto [ordinal, total] : llvm::enumerate(totals))
      storePartial(b, total, workspace->partials,
                   partialOffset(b, s, group, ordinal, range, lane));
  });
  Value zero = indexConst(b, loc, 0);
  Value lastRange = arith::IndexCastOp::create(
      b, loc, b.getI32Type(),
      arith::SubIOp::create(b, loc, s.ranges, indexConst(b, loc, 1)));
  Value isLast = arith::AndIOp::create(
      b, loc, exists,
      countArrival(b, loc, workspace->arrivals, group, shared[1],
                   arith::AndIOp::create(
                       b, loc, exists,
                       arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             thread, zero)),
                   lastRange));
  // Every block runs the fold, the others over no ranges: barriers inside
  // a branch ptxas cannot prove uniform made it spill (convergence state
  // to local memory).
  {
    // The last block's threads take ranges rowThread, rowThread +
    // rowThreads, ..., kUnrolledRanges a step (independent loads in
    // flight); a range past the end reads the last one and counts as the
    // identity.
    Value last = arith::SubIOp::create(b, loc, s.ranges, indexConst(b, loc, 1));
    SmallVector<Value> init = identities(b, partialType(b));
    auto loop = scf::ForOp::create(
        b, loc, arith::SelectOp::create(b, loc, isLast, rowThread, s.ranges),
        s.ranges,
        indexConst(b, loc, rowThreads * kUnrolledRanges), init);
    {
      OpBuilder::InsertionGuard body(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> next(loop.getRegionIterArgs());
      for (int64_t k = 0; k < kUnrolledRanges; ++k) {
        Value r = arith::AddIOp::create(b, loc, loop.getInductionVar(),
                                        indexConst(b, loc, k * rowThreads));
        Value inRange =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, r, s.ranges);
        r = arith::MinUIOp::create(b, loc, r, last);
        for (auto [ordinal, reduction] : llvm::enumerate(shape.reductions)) {
          Value partial = arith::SelectOp::create(
              b, loc, inRange,
              loadPartial(b, workspace->partials,
                          partialOffset(b, s, group, ordinal, r, lane)),
              init[ordinal]);
          next[ordinal] =
              buildReductionCombine(b, loc, reduction, next[ordinal], partial);
        }
      }
      scf::YieldOp::create(b, loc, next);
    }
    SmallVector<Value> folded =
        foldOverRows(b, shared[0], SmallVector<Value>(loop.getResults()), lane,
                     rowThread, groupLanes, rowThreads);
    Value writes = arith::AndIOp::create(
        b, loc, isLast,
        arith::AndIOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, output,
                                  s.outputs),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rowThread,
                                  zero)));
    emitIf(b, loc, writes, [&] { writeTotals(b, s, output, folded); });
  }
}

LogicalResult ReductionSweep::emit(OpBuilder &b) {
  if (plan.getSplit() == 1)
    return emitPartials(b, nullptr);
  // The workspace: line-aligned partials per group, reduction and range in
  // f32, and an arrival count per group (zero: each launch leaves them so).
  FailureOr<SweepSpace> s = space(b);
  if (failed(s))
    return failure();
  Value groups = groupsOf(b, *s);
  Value size = arith::MulIOp::create(
      b, loc,
      arith::MulIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, groups,
                                indexConst(b, loc, shape.reductions.size())),
          s->ranges),
      indexConst(b, loc, groupStride()));
  FailureOr<Value> arrivals = acquireArrivalCounters(b, loc, groups);
  if (failed(arrivals))
    return failure();
  SweepWorkspace workspace{allocateScratch(b, loc, b.getF32Type(), size),
                           *arrivals};
  if (failed(emitPartials(b, &workspace)))
    return failure();
  releaseScratch(b, loc, workspace.partials);
  return releaseArrivalCounters(b, loc, workspace.arrivals);
}
