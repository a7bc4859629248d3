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
  Value steps = arith::CeilDivUIOp::create(b, loc, s.elements,
                                           indexConst(b, loc, rangeUnit));
  s.ranges = arith::MaxUIOp::create(
      b, loc, indexConst(b, loc, 1),
      arith::MinUIOp::create(b, loc, steps,
                             indexConst(b, loc, plan.getSplit())));
  return s;
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
  auto sweep = [&](Value first, Value last, int64_t count,
                   ValueRange accs) -> FailureOr<scf::ForOp> {
    auto loop = scf::ForOp::create(b, loc, first, last,
                                   indexConst(b, loc, stride * count), accs);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    PointEvaluator evaluator(b, loc, kernel, buffers.inputs, plan.getVector());
    // Every load of the step first, then the combines in element order.
    SmallVector<SmallVector<Value>> values(shape.reductions.size());
    for (int64_t k = 0; k < count; ++k) {
      Value element = arith::AddIOp::create(b, loc, loop.getInductionVar(),
                                            indexConst(b, loc, k * stride));
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
         llvm::zip(shape.reductions, loop.getRegionIterArgs(), values)) {
      Value total = acc;
      for (Value x : xs)
        total = buildReductionCombine(b, loc, reduction, total, x);
      next.push_back(total);
    }
    scf::YieldOp::create(b, loc, next);
    return loop;
  };
  // The unrolled loop runs while its last element, e + reach, is below `to`;
  // the rest starts where it stopped.
  Value reach = indexConst(b, loc, stride * (unrolled - 1));
  Value unrolledEnd = arith::SelectOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, to, reach),
      arith::SubIOp::create(b, loc, to, reach), indexConst(b, loc, 0));
  FailureOr<scf::ForOp> main = sweep(from, unrolledEnd, unrolled, init);
  if (failed(main))
    return failure();
  Value step = indexConst(b, loc, stride * unrolled);
  Value steps = arith::CeilDivUIOp::create(
      b, loc,
      arith::SubIOp::create(
          b, loc, arith::MaxUIOp::create(b, loc, unrolledEnd, from), from),
      step);
  Value restStart = arith::AddIOp::create(
      b, loc, from, arith::MulIOp::create(b, loc, steps, step));
  FailureOr<scf::ForOp> rest = sweep(restStart, to, 1, main->getResults());
  if (failed(rest))
    return failure();
  return SmallVector<Value>(rest->getResults());
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

MemRefType ReductionSweep::foldBufferType(OpBuilder &b, int64_t threads) {
  auto workgroup = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  return MemRefType::get(
      {static_cast<int64_t>(shape.reductions.size()) * threads * partialWidth},
      b.getF32Type(), MemRefLayoutAttrInterface{}, workgroup);
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
      if (partialWidth > 1)
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

void ReductionSweep::storeTotals(OpBuilder &b, const SweepSpace &s,
                                 Value output, Value range,
                                 ArrayRef<Value> totals, Value workspace) {
  if (!workspace) {
    writeOutputs(b, s, output, totals);
    return;
  }
  // Reduction `ordinal`'s partial of range `range` for output `output`:
  // ((ordinal * ranges + range) * outputs + output).
  for (auto [ordinal, total] : llvm::enumerate(totals)) {
    Value base = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, indexConst(b, loc, ordinal), s.ranges),
        range);
    Value offset = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, base, s.outputs), output);
    storePartial(b, total, workspace, offset);
  }
}

/// Ranges a thread of the combine loads per step.
static constexpr int64_t kUnrolledRanges = 4;

LogicalResult ReductionSweep::emitCombine(OpBuilder &b, Value workspace) {
  // The workspace is a column reduction of its own: ranges x partials.
  // Blocks of up to a warp of partial columns, the other threads going down
  // the ranges, folded over the block as the partials were.
  constexpr int64_t kCombineThreads = 256;
  FailureOr<SweepSpace> host = space(b);
  if (failed(host))
    return failure();
  int64_t lanes = 32;
  std::optional<int64_t> staticOutputs = 1;
  for (int64_t d : shape.keptDims)
    staticOutputs = ShapedType::isDynamic(shape.shape[d]) || !staticOutputs
                        ? std::nullopt
                        : std::optional<int64_t>(*staticOutputs *
                                                 shape.shape[d]);
  if (staticOutputs)
    lanes = std::min<int64_t>(
        lanes, llvm::PowerOf2Ceil(
                   std::max<int64_t>(1, *staticOutputs / partialWidth)));
  int64_t rowThreads = kCombineThreads / lanes;
  auto tilesOf = [&](OpBuilder &b, const SweepSpace &s) {
    return arith::CeilDivUIOp::create(
        b, loc,
        arith::DivUIOp::create(b, loc, s.outputs,
                               indexConst(b, loc, partialWidth)),
        indexConst(b, loc, lanes));
  };
  return emitLaunch(
      b, loc, kernel, tilesOf(b, *host), kCombineThreads,
      [&](OpBuilder &b, const LaunchIds &ids) -> LogicalResult {
        FailureOr<SweepSpace> s = space(b);
        if (failed(s))
          return failure();
        Value partials = arith::DivUIOp::create(
            b, loc, s->outputs, indexConst(b, loc, partialWidth));
        Value lane = arith::RemUIOp::create(b, loc, ids.thread,
                                            indexConst(b, loc, lanes));
        Value rowThread = arith::DivUIOp::create(b, loc, ids.thread,
                                                 indexConst(b, loc, lanes));
        auto tileLoop =
            scf::ForOp::create(b, loc, ids.block, tilesOf(b, *s), ids.grid);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(tileLoop.getBody());
        Value column = arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(b, loc, tileLoop.getInductionVar(),
                                  indexConst(b, loc, lanes)),
            lane);
        Value active = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                             column, partials);
        Value output = arith::MulIOp::create(b, loc, column,
                                             indexConst(b, loc, partialWidth));
        // This thread's ranges: rowThread, rowThread + rowThreads, ...,
        // kUnrolledRanges a step (independent loads in flight); a range
        // past the end reads the last one and counts as the identity.
        Value first = arith::SelectOp::create(b, loc, active, rowThread,
                                              s->ranges);
        SmallVector<Value> init = identities(b, partialType(b));
        auto loop = scf::ForOp::create(
            b, loc, first, s->ranges,
            indexConst(b, loc, rowThreads * kUnrolledRanges), init);
        {
          OpBuilder::InsertionGuard body(b);
          b.setInsertionPointToStart(loop.getBody());
          Value last = arith::SubIOp::create(b, loc, s->ranges,
                                             indexConst(b, loc, 1));
          SmallVector<Value> next(loop.getRegionIterArgs());
          for (int64_t k = 0; k < kUnrolledRanges; ++k) {
            Value range = arith::AddIOp::create(
                b, loc, loop.getInductionVar(),
                indexConst(b, loc, k * rowThreads));
            Value inRange = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::ult, range, s->ranges);
            range = arith::MinUIOp::create(b, loc, range, last);
            for (auto [ordinal, reduction] : llvm::enumerate(shape.reductions)) {
              Value base = arith::AddIOp::create(
                  b, loc,
                  arith::MulIOp::create(b, loc, indexConst(b, loc, ordinal),
                                        s->ranges),
                  range);
              Value offset = arith::AddIOp::create(
                  b, loc, arith::MulIOp::create(b, loc, base, s->outputs),
                  output);
              Value partial = arith::SelectOp::create(
                  b, loc, inRange, loadPartial(b, workspace, offset),
                  init[ordinal]);
              next[ordinal] = buildReductionCombine(b, loc, reduction,
                                                    next[ordinal], partial);
            }
          }
          scf::YieldOp::create(b, loc, next);
        }
        SmallVector<Value> totals = foldOverRows(
            b, ids.shared[0], SmallVector<Value>(loop.getResults()), lane,
            rowThread, lanes, rowThreads);
        auto writes = scf::IfOp::create(
            b, loc,
            arith::AndIOp::create(
                b, loc, active,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      rowThread, indexConst(b, loc, 0))));
        {
          OpBuilder::InsertionGuard inner(b);
          b.setInsertionPoint(writes.thenBlock()->getTerminator());
          writeOutputs(b, *s, output, totals);
        }
        // The next tile reuses the shared partials.
        gpu::BarrierOp::create(b, loc);
        return success();
      },
      TypeRange{foldBufferType(b, kCombineThreads)}, /*clusterBlocks=*/0,
      /*dynamicShared=*/0, "_combine");
}

LogicalResult ReductionSweep::emit(OpBuilder &b) {
  if (plan.getSplit() == 1)
    return emitPartials(b, Value());
  // The workspace: a partial per reduction, range and output, in f32.
  FailureOr<SweepSpace> s = space(b);
  if (failed(s))
    return failure();
  Value size = arith::MulIOp::create(
      b, loc,
      arith::MulIOp::create(
          b, loc, indexConst(b, loc, shape.reductions.size()), s->ranges),
      s->outputs);
  Type tokenType = gpu::AsyncTokenType::get(b.getContext());
  auto wait = [&](Value token) {
    gpu::WaitOp::create(b, loc, Type(), ValueRange{token});
  };
  auto start = [&] {
    return gpu::WaitOp::create(b, loc, tokenType, ValueRange{})
        .getAsyncToken();
  };
  auto alloc = gpu::AllocOp::create(
      b, loc, MemRefType::get({ShapedType::kDynamic}, b.getF32Type()),
      tokenType, ValueRange{start()}, ValueRange{size}, ValueRange{});
  wait(alloc.getAsyncToken());
  Value workspace = alloc.getMemref();
  if (failed(emitPartials(b, workspace)) || failed(emitCombine(b, workspace)))
    return failure();
  wait(gpu::DeallocOp::create(b, loc, tokenType, ValueRange{start()},
                              workspace)
           .getAsyncToken());
  return success();
}
