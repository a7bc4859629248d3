//===- ReductionSweep.h - What the reduction sweeps share -------*- C++ -*-===//
//
// The `columns` and `split_reduction` strategies reduce a kernel's
// reductions in one sweep over their operand (ReductionKernelShape): each
// output element (a flat index over the kept dimensions) reduces the
// elements of the reduced ones (a flat index over those). The elements of
// an output are cut into `ranges` (the plan's split, fewer when they are
// few); with one range the partials launch writes the outputs, with more it
// writes a partial per range into a device workspace and a second launch
// folds the ranges in order and writes the outputs. What differs is how a
// block's threads cover the space, the partials launch of each strategy.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_LIB_CONVERSION_FUSIONTOGPU_REDUCTIONSWEEP_H
#define FUSION_LIB_CONVERSION_FUSIONTOGPU_REDUCTIONSWEEP_H

#include "Launch.h"

#include "fusion/Dialect/Fusion/Analysis/KernelPlan.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::fusion::codegen {

/// The vector (vector.reduction) and block-wide (gpu.all_reduce) forms of
/// a reduction op's combiner.
vector::CombiningKind vectorCombiningKind(Operation *reduction);
gpu::AllReduceOperation allReduceKind(Operation *reduction);

/// The sweep's space as index values: the kept and reduced sizes, their
/// products, and the number of ranges at run time.
struct SweepSpace {
  SmallVector<Value> kept, reduced;
  Value outputs, elements, ranges;
};

class ReductionSweep {
public:
  /// `partialWidth`: outputs per partial (a vector of column totals, or 1);
  /// `rangeUnit`: elements one step of a block covers, so that no range is
  /// shorter than a step.
  ReductionSweep(Location loc, KernelOp kernel, KernelPlanAttr plan,
                 const KernelBuffers &buffers,
                 const ReductionKernelShape &shape, int64_t partialWidth,
                 int64_t rangeUnit)
      : loc(loc), kernel(kernel), plan(plan), buffers(buffers), shape(shape),
        partialWidth(partialWidth), rangeUnit(rangeUnit) {}
  virtual ~ReductionSweep() = default;

  /// The launches, with the workspace around them when the plan splits.
  LogicalResult emit(OpBuilder &b);

protected:
  /// The launch that reduces each range; with a `workspace` it stores the
  /// partials there (storeTotals), else it writes the outputs.
  virtual LogicalResult emitPartials(OpBuilder &b, Value workspace) = 0;

  FailureOr<SweepSpace> space(OpBuilder &b);
  /// The operand index of output `output` and element `element`.
  SmallVector<Value> pointAt(OpBuilder &b, const SweepSpace &s, Value output,
                             Value element);
  /// f32, or a vector of `partialWidth` f32.
  Type partialType(OpBuilder &b);
  /// Each reduction's identity, shaped like `type`.
  SmallVector<Value> identities(OpBuilder &b, Type type);
  /// Accumulates, from `init`, the elements `from`, `from + stride`, ...
  /// below `to`: `unrolled` of them per step (independent loads in flight),
  /// then the rest one by one. `pointOf` gives an element's operand index;
  /// `lanes` evaluates vectors of the plan's width.
  FailureOr<SmallVector<Value>>
  accumulate(OpBuilder &b, Value from, Value to, int64_t stride,
             int64_t unrolled, ValueRange init, bool lanes,
             function_ref<SmallVector<Value>(OpBuilder &, Value)> pointOf);
  /// The totals of output `output` (one per reduction) for range `range`:
  /// into the workspace when there is one, else finished (a mean divided
  /// by the element count) into the outputs.
  void storeTotals(OpBuilder &b, const SweepSpace &s, Value output,
                   Value range, ArrayRef<Value> totals, Value workspace);
  /// The totals of each lane's partials over a block of `lanes` x
  /// `rowThreads` threads (`lane` fastest): every thread stores its
  /// `partials` (partialType) in `shared` (a 1-D f32 workgroup buffer of
  /// partials.size() x lanes x rowThreads partials), a tree halves them in
  /// a fixed order, and every thread reads its lane's totals.
  SmallVector<Value> foldOverRows(OpBuilder &b, Value shared,
                                  ArrayRef<Value> partials, Value lane,
                                  Value rowThread, int64_t lanes,
                                  int64_t rowThreads);
  /// The workgroup buffer foldOverRows needs for `threads` threads.
  MemRefType foldBufferType(OpBuilder &b, int64_t threads);
  /// A partial (partialType) at flat `offset` of a 1-D f32 buffer.
  Value loadPartial(OpBuilder &b, Value buffer, Value offset);
  void storePartial(OpBuilder &b, Value value, Value buffer, Value offset);

  Location loc;
  KernelOp kernel;
  KernelPlanAttr plan;
  const KernelBuffers &buffers;
  const ReductionKernelShape &shape;
  int64_t partialWidth, rangeUnit;

private:
  LogicalResult emitCombine(OpBuilder &b, Value workspace);
  void writeOutputs(OpBuilder &b, const SweepSpace &s, Value output,
                    ArrayRef<Value> totals);
};

} // namespace mlir::fusion::codegen

#endif // FUSION_LIB_CONVERSION_FUSIONTOGPU_REDUCTIONSWEEP_H
