//===- ReductionSweep.h - What the reduction sweeps share -------*- C++ -*-===//
//
// The `columns` and `split_reduction` strategies reduce a kernel's
// reductions in one sweep over their operand (ReductionKernelShape): each
// output element (a flat index over the kept dimensions) reduces the
// elements of the reduced ones (a flat index over those). The elements of
// an output are cut into `ranges` (the plan's split, fewer when they are
// few), one block per group of outputs and range. With one range the block
// writes its outputs; with more, it stores its partials in a device
// workspace and counts its arrival, and the block of the group that
// arrives last folds the group's ranges in order and writes the outputs:
// one launch either way. What differs is how a block's threads cover the
// space, the partials launch of each strategy.
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

/// Where the blocks of a split sweep leave their partials: `partials` (f32;
/// each group's partials of one reduction and range on whole 128-byte
/// lines, so that no line is shared between groups and the last block never
/// reads a line an earlier read left stale in its L1), and `arrivals` (an
/// i32 count per group, zero between launches: acquireArrivalCounters).
struct SweepWorkspace {
  Value partials, arrivals;
};

class ReductionSweep {
public:
  /// `partialWidth`: outputs per partial (a vector of column totals, or 1);
  /// `groupLanes`: partials per group (the lanes of a columns tile, or 1);
  /// `rangeUnit`: elements one step of a block covers, so that no range is
  /// shorter than a step.
  ReductionSweep(Location loc, KernelOp kernel, KernelPlanAttr plan,
                 const KernelBuffers &buffers,
                 const ReductionKernelShape &shape, int64_t partialWidth,
                 int64_t groupLanes, int64_t rangeUnit)
      : loc(loc), kernel(kernel), plan(plan), buffers(buffers), shape(shape),
        partialWidth(partialWidth), groupLanes(groupLanes),
        rangeUnit(rangeUnit) {}
  virtual ~ReductionSweep() = default;

  /// The launch, with the workspace around it when the plan splits.
  LogicalResult emit(OpBuilder &b);

protected:
  /// The launch; each block ends with finishGroup. `workspace` is null
  /// without a split.
  virtual LogicalResult emitPartials(OpBuilder &b,
                                     const SweepWorkspace *workspace) = 0;
  /// The groups of outputs whose blocks share arrivals (columns: tiles;
  /// split_reduction: outputs).
  virtual Value groupsOf(OpBuilder &b, const SweepSpace &s) = 0;

  /// The space the blocks sweep (columns over segments of rows override
  /// it); ranges from rangesOf.
  virtual FailureOr<SweepSpace> space(OpBuilder &b);
  /// The ranges `elements` are cut into at run time: the plan's split, no
  /// more than there are steps of `rangeUnit`, at least one.
  Value rangesOf(OpBuilder &b, Value elements);
  /// Writes the totals of output `output` (finishGroup's last step):
  /// writeOutputs, unless a strategy folds them further.
  virtual void writeTotals(OpBuilder &b, const SweepSpace &s, Value output,
                           ArrayRef<Value> totals) {
    writeOutputs(b, s, output, totals);
  }
  /// Each reduction's total of output `output` (scalars, or vectors of
  /// consecutive outputs) into the kernel's outputs, a mean divided by the
  /// element count of `s`.
  void writeOutputs(OpBuilder &b, const SweepSpace &s, Value output,
                    ArrayRef<Value> totals);
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
  /// The totals of each lane's partials over a block of `lanes` x
  /// `rowThreads` threads (`lane` fastest): every thread stores its
  /// `partials` (partialType) in `shared` (sharedTypes' first), a tree halves
  /// them in a fixed order, and every thread reads its lane's totals.
  SmallVector<Value> foldOverRows(OpBuilder &b, Value shared,
                                  ArrayRef<Value> partials, Value lane,
                                  Value rowThread, int64_t lanes,
                                  int64_t rowThreads);
  /// The workgroup buffers a block of `threads` threads needs: the fold's,
  /// and with a split the arrival it reads.
  SmallVector<Type> sharedTypes(OpBuilder &b, int64_t threads,
                                bool split);
  /// The loop of a launch over its `pairs` (group, range) pairs:
  /// grid-stride without a workspace; with one, a single iteration for the
  /// block's own pair (the launch has a block per pair), so that the
  /// barriers of finishGroup are in no loop ptxas cannot prove uniform (it
  /// spilled convergence state to local memory). Work under the loop must
  /// be masked where the block's pair does not exist (pairs == 0).
  scf::ForOp pairLoop(OpBuilder &b, const LaunchIds &ids, Value pairs,
                      const SweepWorkspace *workspace);
  /// Ends a block of group `group` and range `range` whose threads are
  /// `groupLanes` x `rowThreads` (`lane` fastest), where the threads
  /// `holders` hold the `totals` of output `output` (their lane's first).
  /// Without a workspace they write the outputs; with one they store the
  /// partials, the block counts its arrival, and the last block of the
  /// group folds the ranges and writes the outputs. Every thread of the
  /// block calls it (it has barriers); `exists` says whether the block's
  /// pair exists.
  void finishGroup(OpBuilder &b, const SweepSpace &s,
                   const SweepWorkspace *workspace, ArrayRef<Value> shared,
                   Value group, Value range, Value output, Value lane,
                   Value rowThread, int64_t rowThreads, Value holders,
                   Value thread, Value exists, ArrayRef<Value> totals);
  /// A partial (partialType) at flat `offset` of a 1-D f32 buffer.
  Value loadPartial(OpBuilder &b, Value buffer, Value offset);
  void storePartial(OpBuilder &b, Value value, Value buffer, Value offset);

  Location loc;
  KernelOp kernel;
  KernelPlanAttr plan;
  const KernelBuffers &buffers;
  const ReductionKernelShape &shape;
  int64_t partialWidth, groupLanes, rangeUnit;
  /// Where accumulate reads points as flat offsets: the inputs with those of
  /// the operand's shape collapsed to 1-D (columns over segments of rows).
  /// Empty: points are multi-indices into buffers.inputs.
  SmallVector<Value> flatInputs;

private:
  /// f32 elements between the partials of one group, reduction and range.
  int64_t groupStride() const;
  Value partialOffset(OpBuilder &b, const SweepSpace &s, Value group,
                      int64_t ordinal, Value range, Value lane);
};

} // namespace mlir::fusion::codegen

#endif // FUSION_LIB_CONVERSION_FUSIONTOGPU_REDUCTIONSWEEP_H
