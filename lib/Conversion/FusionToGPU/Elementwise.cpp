//===- Elementwise.cpp - The elementwise strategy -------------------------===//
//
// Kernels of elementwise math on outputs of one shape: a grid-stride loop
// of 16-byte vectors per thread. When every value has the output's shape
// (or holds one element) the buffers are seen as 1-D and a scalar loop
// takes the last elements; otherwise vectors run along the innermost
// dimension, whose size the plan's vector divides.
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

/// Flat elementwise kernels: buffers of the output's shape are seen as 1-D;
/// a grid-stride loop over whole 16-byte vectors, then a scalar loop over
/// the last `total % width` elements.
static LogicalResult emitFlatElementwise(OpBuilder &b, Location loc,
                                         KernelOp kernel, KernelPlanAttr plan,
                                         const KernelBuffers &buffers) {
  const int64_t kThreads = plan.getThreads();
  Value out0 = buffers.outputs[0];
  auto outType = cast<MemRefType>(out0.getType());
  int64_t width = plan.getVector();
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
          if (type.getShape() != outType.getShape())
            return buffer;
          return collapseToFlat(b, loc, buffer);
        };
        SmallVector<Value> inputs =
            llvm::map_to_vector(buffers.inputs, flatten);
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
        if (width > 1) {
          auto body = scf::ForOp::create(b, loc, first, whole, stride);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(body.getBody());
          if (failed(emitPoint(arith::MulIOp::create(
                                   b, loc, body.getInductionVar(), widthValue),
                               width)))
            return failure();
        }
        Value tailStart =
            width > 1
                ? arith::AddIOp::create(
                      b, loc, arith::MulIOp::create(b, loc, whole, widthValue),
                      first)
                : first;
        auto tail = scf::ForOp::create(b, loc, tailStart, size, stride);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(tail.getBody());
        return emitPoint(tail.getInductionVar(), 1);
      });
}

/// Other elementwise kernels: a grid-stride loop over vectors of the index
/// space of the (single) output shape, along its innermost dimension.
LogicalResult codegen::emitElementwise(OpBuilder &b, Location loc,
                                       KernelOp kernel, KernelPlanAttr plan,
                                       const KernelBuffers &buffers) {
  if (isFlatElementwise(kernel))
    return emitFlatElementwise(b, loc, kernel, plan, buffers);
  const int64_t kThreads = plan.getThreads();
  Value out0 = buffers.outputs[0];
  int64_t width = plan.getVector();
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
        return evaluator.storeOutputs(buffers.outputs, index, width > 1);
      });
}
