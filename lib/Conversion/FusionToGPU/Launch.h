//===- Launch.h - Launches and index arithmetic for GPU strategies -*- C++ -*-===//
//
// What every strategy of fusion-kernels-to-gpu builds on: the kernel's
// device buffers, a gpu.launch named after the kernel, index arithmetic,
// and vector-aware stores.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_LIB_CONVERSION_FUSIONTOGPU_LAUNCH_H
#define FUSION_LIB_CONVERSION_FUSIONTOGPU_LAUNCH_H

#include "fusion/Dialect/Fusion/IR/FusionOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Alignment.h"

namespace mlir::fusion::codegen {

inline ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

Value indexConst(OpBuilder &b, Location loc, int64_t v);

/// Device buffers for one kernel: inputs (indexed like the body's
/// arguments) and outputs.
struct KernelBuffers {
  SmallVector<Value> inputs, outputs;
  /// Where the kernels launch as programmatic dependents
  /// (fusion-launch-dependents), the inputs no grid may still be writing
  /// when the kernel starts: the function's own inputs, where the launch
  /// before this one is a kernel of the same function (which writes only
  /// the function's intermediates and outputs, and triggers its dependents
  /// only once the grids before it are done). A kernel may read these
  /// before `griddepcontrol.wait` (emitGridDependencyWait).
  SmallVector<bool> settled;

  bool isSettled(unsigned input) const {
    return input < settled.size() && settled[input];
  }
};

/// Splits `flat` into a multi-index over `sizes` (row-major).
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value flat,
                               ArrayRef<Value> sizes);

/// The sizes of `buffer` as index values.
SmallVector<Value> sizesOf(OpBuilder &b, Location loc, Value buffer);

Value product(OpBuilder &b, Location loc, ArrayRef<Value> values);

/// `buffer` (identity layout) collapsed to one dimension, read at flat
/// offsets.
Value collapseToFlat(OpBuilder &b, Location loc, Value buffer);

/// Where a launch body runs: block and thread ids along x, the grid size,
/// and the workgroup (shared) buffers asked for.
struct LaunchIds {
  Value block, thread, grid;
  ArrayRef<BlockArgument> shared;
};

/// A launch of `blocks` x `threads` (in clusters of `clusterBlocks` blocks,
/// with `dynamicShared` bytes of dynamic shared memory, when given), named
/// after the kernel (plus `nameSuffix` where a kernel has several); `body`
/// fills it.
LogicalResult
emitLaunch(OpBuilder &b, Location loc, KernelOp kernel, Value blocks,
           int64_t threads,
           function_ref<LogicalResult(OpBuilder &, const LaunchIds &)> body,
           TypeRange shared = {}, int64_t clusterBlocks = 0,
           int64_t dynamicShared = 0, StringRef nameSuffix = "");

/// On the host: the multiprocessors of the device the launches run on (a
/// persistent grid's size), asked of the runtime at each call.
FailureOr<Value> multiprocessorCount(OpBuilder &b, Location loc);

/// Emits `body` in the then-block of an `scf.if` on `condition` (no
/// results, no else).
void emitIf(OpBuilder &b, Location loc, Value condition,
            function_ref<void()> body);

/// A fresh asynchronous token for a host-side gpu op (the runtime orders
/// every gpu op on the function's stream), and a host wait on one.
Value startToken(OpBuilder &b, Location loc);
void waitFor(OpBuilder &b, Location loc, Value token);

/// A 1-D device buffer of `count` elements for the launches that follow on
/// the host (a workspace); stream-ordered, like the launches.
Value allocateScratch(OpBuilder &b, Location loc, Type element, Value count);
/// The same of `type`, its dynamic sizes `dynamicSizes`, not zeroed.
Value allocateScratch(OpBuilder &b, Location loc, MemRefType type,
                      ValueRange dynamicSizes);
/// Frees a buffer of allocateScratch after the launches that use it.
void releaseScratch(OpBuilder &b, Location loc, Value buffer);

/// On the host: `count` i32 arrival counters, all zero, that the runtime
/// keeps for the caller's stream (fusion_cuda_arrival_counters). Every
/// launch counting on them through countArrival leaves them zero again, so
/// no call zeroes them. Fails where the module declares the runtime's
/// functions with other types.
FailureOr<Value> acquireArrivalCounters(OpBuilder &b, Location loc,
                                        Value count);
/// Hands counters of acquireArrivalCounters back after the launches that
/// use them (the runtime frees the ones it allocated for a call under CUDA
/// graph capture).
LogicalResult releaseArrivalCounters(OpBuilder &b, Location loc,
                                     Value counters);

/// In a launch, once the block's stores to a workspace are done: counts
/// the block's arrival on `arrivals[index]` (an i32 counter in global
/// memory) from the threads where `counts` holds (one a block), through
/// the shared i32 word `slot`, and returns whether this block arrived last
/// (the count before it equals `last`, i32), the same in every thread. The
/// stores are visible device-wide before the count, and the last block's
/// later loads see every block's stores (PTX fence.acq_rel.gpu on both
/// sides of the count). The last block sets the counter back to zero, as
/// acquireArrivalCounters expects.
Value countArrival(OpBuilder &b, Location loc, Value arrivals, Value index,
                   Value slot, Value counts, Value last);

/// countArrival for a warp on its own (no block barrier, so other warps of
/// the block may be elsewhere): once each lane's stores to a workspace are
/// done, lane 0 (`lane` is the thread's lane) counts the warp's arrival on
/// `arrivals[index]`; returns whether the warp arrived last (the count
/// before it equals `last`, i32), the same in every lane, with the same
/// fences and reset as countArrival.
Value countWarpArrival(OpBuilder &b, Location loc, Value arrivals, Value index,
                       Value lane, Value last);

/// The alignment of a vector access of `width` elements that starts on a
/// multiple of `width` in a buffer whose rows are multiples of `width`
/// (what the strategies ensure): up to 16 bytes, so that loads and stores
/// become single 16-byte instructions.
llvm::MaybeAlign vectorAlignment(Type element, int64_t width);

/// The address (an index) of element `index` of `buffer`, from its
/// aligned pointer, offset and strides.
Value elementAddress(OpBuilder &b, Location loc, Value buffer,
                     ArrayRef<Value> index);

/// Inputs (by argument number) whose every element a launch of `plan`
/// reads once: read once by the plan (`passes` 1) and of the kernel's
/// whole iteration shape `shape` (not broadcast, so no other block reads
/// them again).
llvm::SmallDenseSet<unsigned> getInputsReadOnce(KernelPlanAttr plan,
                                                ValueRange inputs,
                                                ArrayRef<int64_t> shape);

/// A 16-byte load of `type` from `buffer` at `index` whose lines the L2
/// evicts first (they will not be read again): other lines, such as those
/// an earlier kernel left dirty, stay in the L2 instead of being written
/// back while the launch streams its input.
Value loadEvictFirst(OpBuilder &b, Location loc, VectorType type, Value buffer,
                     ArrayRef<Value> index);

/// Bytes a prefetch to L2 brings (a line).
constexpr int64_t kL2LineBytes = 128;

/// Asks L2 for the line holding element `index` of global `buffer` (PTX
/// prefetch.L2: a hint, no registers, no wait) where `valid` holds, so
/// that a load of it later finds it there.
void prefetchToL2(OpBuilder &b, Location loc, Value buffer,
                  ArrayRef<Value> index, Value valid);

/// Stores `value` (f32 or i1, scalar or vector) into `buffer` at `index`,
/// rounded to the buffer's element type.
void store(OpBuilder &b, Location loc, Value value, Value buffer,
           ArrayRef<Value> index);

/// A loop over `from`, `from + stride`, ... below `to`, `unrolled` of them
/// a step while they fit (so that their loads are issued together), then
/// the rest one by one: `body` gets a step's indices and the loop-carried
/// values and returns their next values; the result is the last of them.
/// The body's builder is inside a new loop body each time: values it
/// computes do not outlive the call (PointEvaluator::CacheScope).
FailureOr<SmallVector<Value>> emitUnrolledLoop(
    OpBuilder &b, Location loc, Value from, Value to, int64_t stride,
    int64_t unrolled, ValueRange init,
    function_ref<FailureOr<SmallVector<Value>>(OpBuilder &, ArrayRef<Value>,
                                               ValueRange)>
        body);

/// The first global thread index and the stride of a grid-stride loop.
std::pair<Value, Value> gridStride(OpBuilder &b, Location loc, Value bid,
                                   Value tid, Value grid, int64_t threads);

} // namespace mlir::fusion::codegen

#endif // FUSION_LIB_CONVERSION_FUSIONTOGPU_LAUNCH_H
