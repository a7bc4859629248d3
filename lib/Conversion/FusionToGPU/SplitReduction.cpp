//===- SplitReduction.cpp - The split_reduction strategy ------------------===//
//
// Reductions over the innermost axis whose outputs are few for the chip: a
// sum of a whole tensor, a reduction over several axes with the innermost
// among them, a handful of rows too long for one block. The elements of an
// output are cut into ranges (ReductionSweep), one block per output and
// range; its threads take the range's vectors along the innermost axis in
// turn, then a block-wide gpu.all_reduce gives the range's total. With more
// than one range the totals go through the workspace and the output's last
// block folds them (ReductionSweep). Every input element is read once.
//
//===----------------------------------------------------------------------===//

#include "ReductionSweep.h"
#include "Strategies.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::codegen;

namespace {

/// Vectors a thread loads per step: independent loads in flight (as for
/// columns).
constexpr int64_t kUnrolledVectors = 4;

class SplitSweep : public ReductionSweep {
public:
  SplitSweep(Location loc, KernelOp kernel, KernelPlanAttr plan,
             const KernelBuffers &buffers, const ReductionKernelShape &shape)
      : ReductionSweep(loc, kernel, plan, buffers, shape, /*partialWidth=*/1,
                       /*groupLanes=*/1,
                       /*rangeUnit=*/plan.getThreads() * plan.getVector()),
        width(plan.getVector()), threads(plan.getThreads()) {}

private:
  LogicalResult emitPartials(OpBuilder &b,
                             const SweepWorkspace *workspace) override;
  Value groupsOf(OpBuilder &b, const SweepSpace &s) override {
    return s.outputs;
  }
  /// A thread's accumulators: one lane per element of its vectors.
  Type loadType(OpBuilder &b) {
    return width > 1 ? Type(VectorType::get({width}, b.getF32Type()))
                     : Type(b.getF32Type());
  }

  int64_t width, threads;
};

} // namespace

LogicalResult SplitSweep::emitPartials(OpBuilder &b,
                                       const SweepWorkspace *workspace) {
  FailureOr<SweepSpace> host = space(b);
  if (failed(host))
    return failure();
  Value blocks = arith::MulIOp::create(b, loc, host->outputs, host->ranges);
  return emitLaunch(
      b, loc, kernel, blocks, threads,
      [&](OpBuilder &b, const LaunchIds &ids) -> LogicalResult {
        FailureOr<SweepSpace> s = space(b);
        if (failed(s))
          return failure();
        Value zero = indexConst(b, loc, 0);
        Value vectors =
            arith::DivUIOp::create(b, loc, s->elements, indexConst(b, loc, width));
        Value rangeVectors =
            arith::CeilDivUIOp::create(b, loc, vectors, s->ranges);
        // (output, range) pairs, ranges fastest.
        Value pairs = arith::MulIOp::create(b, loc, s->outputs, s->ranges);
        auto blockLoop = pairLoop(b, ids, pairs, workspace);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(blockLoop.getBody());
        Value range = arith::RemUIOp::create(b, loc, blockLoop.getInductionVar(),
                                             s->ranges);
        Value output = arith::DivUIOp::create(
            b, loc, blockLoop.getInductionVar(), s->ranges);
        Value begin = arith::MulIOp::create(b, loc, range, rangeVectors);
        Value end = arith::MinUIOp::create(
            b, loc, vectors, arith::AddIOp::create(b, loc, begin, rangeVectors));
        // A block without a pair (no outputs) reads nothing.
        Value exists = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::ult, blockLoop.getInductionVar(),
            pairs);
        end = arith::SelectOp::create(b, loc, exists, end, begin);

        // Thread `tid` takes vectors begin + tid, begin + tid + threads, ...
        FailureOr<SmallVector<Value>> partials = accumulate(
            b, arith::AddIOp::create(b, loc, begin, ids.thread), end, threads,
            kUnrolledVectors, identities(b, loadType(b)), width > 1,
            [&](OpBuilder &b, Value vector) {
              Value element = arith::MulIOp::create(b, loc, vector,
                                                    indexConst(b, loc, width));
              return pointAt(b, *s, output, element);
            });
        if (failed(partials))
          return failure();
        SmallVector<Value> totals;
        for (auto [reduction, partial] :
             llvm::zip(shape.reductions, *partials)) {
          Value scalar =
              width > 1 ? vector::ReductionOp::create(
                              b, loc, vectorCombiningKind(reduction), partial)
                              .getResult()
                        : partial;
          totals.push_back(gpu::AllReduceOp::create(
              b, loc, scalar,
              gpu::AllReduceOperationAttr::get(b.getContext(),
                                               allReduceKind(reduction)),
              /*uniform=*/true));
        }
        Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              ids.thread, zero);
        finishGroup(b, *s, workspace, SmallVector<Value>(ids.shared), output,
                    range, output, zero, ids.thread, threads,
                    arith::AndIOp::create(b, loc, isFirst, exists), ids.thread,
                    exists, totals);
        // The next pair's block reductions reuse the shared memory.
        gpu::BarrierOp::create(b, loc);
        return success();
      },
      workspace ? sharedTypes(b, threads, /*split=*/true)
                : SmallVector<Type>{});
}

LogicalResult codegen::emitSplitReduction(OpBuilder &b, Location loc,
                                          KernelOp kernel, KernelPlanAttr plan,
                                          const KernelBuffers &buffers) {
  std::string misfit;
  FailureOr<ReductionKernelShape> shape =
      getReductionKernelShape(kernel, misfit);
  if (succeeded(shape) && !shape->reducesInnermost())
    misfit = "the innermost axis is kept";
  if (failed(shape) || !shape->reducesInnermost())
    return kernel.emitOpError("cannot run as split_reduction: ") << misfit;
  return SplitSweep(loc, kernel, plan, buffers, *shape).emit(b);
}
