//===- PerElement.cpp - The per-element strategy --------------------------===//
//
// Any kernel: a thread per output element (grid-stride), output after
// output; reductions and matmuls inside are loops per element. The
// fallback of every plan (kernels no other strategy takes, such as a
// column reduction reading another's result).
//
//===----------------------------------------------------------------------===//

#include "PointEvaluator.h"
#include "Strategies.h"

#include "fusion/Conversion/ScalarOps.h"
#include "fusion/Dialect/Fusion/Analysis/KernelPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::codegen;

LogicalResult codegen::emitPerElement(OpBuilder &b, Location loc,
                                      KernelOp kernel, KernelPlanAttr plan,
                                      const KernelBuffers &buffers) {
  const int64_t kThreads = plan.getThreads();
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
