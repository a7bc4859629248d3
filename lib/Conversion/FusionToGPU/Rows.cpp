//===- Rows.cpp - The rows and cluster_rows strategies --------------------===//
//
// Row kernels: a block per row (grid-stride over rows), or with
// `cluster_rows` a cluster of blocks per row, each owning a part of it
// (ClusterRows.cpp combines their partial reductions). Each reduction is a
// pass over the row: per-thread partials, then a block-wide gpu.all_reduce
// (warp shuffles and shared memory); its result is a per-row scalar for what
// follows. A last pass writes the full-row outputs, thread 0 the per-row
// ones. A row held in registers is loaded once for all passes; a streamed
// row (too long, or of dynamic length) is read again by every pass; a
// staged row is copied into shared memory once (one bulk copy per input
// and block, on an mbarrier) and every pass reads it from there.
//
//===----------------------------------------------------------------------===//

#include "Hopper.h"
#include "PointEvaluator.h"
#include "ReductionSweep.h"
#include "Strategies.h"

#include "fusion/Conversion/ScalarOps.h"
#include "fusion/Dialect/Fusion/Analysis/KernelPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::codegen;

// A streamed pass takes this many vectors a step, their loads issued
// together, then the rest of its vectors one by one. (With 4, ptxas kept
// 8 bytes on the stack in some kernels of the random graphs, no-spills.py.)
static constexpr int64_t kStreamedVectors = 8;
// A staged pass reads shared memory, whose latency needs no batch of
// loads: fewer vectors a step keep the registers, and with them more blocks
// (each with its copy under way) on a multiprocessor.
static constexpr int64_t kStagedVectors = 2;
// A staged part is copied in this many chunks, each on its own barrier, so
// that the first pass starts on the first chunk while the others arrive
// (where every part is whole and each chunk a whole number of the block's
// steps: getStagedChunks).
static constexpr int64_t kStagedChunks = 4;

/// The chunks a staged part of `part` columns is copied in: kStagedChunks
/// where every block's part of a row of `h` is whole and splits into
/// chunks of whole strides of `threads` vectors of `width`, else 1.
static int64_t getStagedChunks(int64_t h, int64_t part, int64_t threads,
                               int64_t width) {
  bool whole = !ShapedType::isDynamic(h) && h % part == 0;
  return whole && part % (kStagedChunks * threads * width) == 0 ? kStagedChunks
                                                                : 1;
}

/// `m` where it is finite, else 0: the shift of an online sum, so that a
/// row of -inf sums exp(-inf) = 0 and one with +inf overflows as the
/// unshifted sum does.
static Value finiteOrZero(OpBuilder &b, Location loc, Value m) {
  Value finite = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OLT, math::AbsFOp::create(b, loc, m),
      f32Constant(b, loc, std::numeric_limits<double>::infinity(),
                  m.getType()));
  return arith::SelectOp::create(b, loc, finite, m,
                                 f32Constant(b, loc, 0.0, m.getType()));
}

/// A sum of exp(y - from) rescaled to exp(y - to), the shifts
/// (finiteOrZero) of a max and of a later max. The factor is capped at 1:
/// above 1 only where the first max is -inf (the sum is 0, and an uncapped
/// factor could make it 0 * inf) or the later one +inf (where the sum
/// becomes +inf anyway).
static Value rescaleOnlineSum(OpBuilder &b, Location loc, Value sum, Value from,
                              Value to) {
  Value exponent =
      arith::MinimumFOp::create(b, loc, arith::SubFOp::create(b, loc, from, to),
                                f32Constant(b, loc, 0.0, sum.getType()));
  return arith::MulFOp::create(b, loc, sum,
                               math::ExpOp::create(b, loc, exponent));
}

/// Element `index` of `buffer` (unit stride along its last dimension) as a
/// pointer to global memory, for bulk copies.
static Value globalAddress(OpBuilder &b, Location loc, Value buffer,
                           ArrayRef<Value> index) {
  return LLVM::IntToPtrOp::create(
      b, loc,
      LLVM::LLVMPointerType::get(
          b.getContext(), static_cast<unsigned>(NVVM::NVVMMemorySpace::Global)),
      arith::IndexCastUIOp::create(b, loc, b.getI64Type(),
                                   elementAddress(b, loc, buffer, index))
          .getResult());
}

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
  // `planWidth`-element vectors (a row of dynamic length: where its length
  // is a multiple, else elements); with `unrolled` vectors a thread held in
  // registers, else every pass streams the row.
  const int64_t threads = plan.getThreads(), planWidth = plan.getVector(),
                splits = plan.getCluster();
  int64_t h = rowShape.back();
  int64_t part = getRowPart(plan, h);
  int64_t unrolled = getHeldVectorsPerThread(plan, part);
  // Rows no vector divides are held in shifted vectors
  // (hasShiftedRowVectors): whole vectors from the row's first vector
  // boundary, `lag` columns in, up to the last that leaves `margin` more
  // columns in the row (an input broadcast along the rows reads the
  // aligned vector after each: PointEvaluator::loadAcrossRows); the
  // columns around them are edge elements, one a thread.
  bool shifted = hasShiftedRowVectors(plan, h);
  if (shifted && threads < kMinShiftedRowVectors * planWidth)
    return kernel.emitOpError("rows of ")
           << h << " in shifted vectors need at least "
           << kMinShiftedRowVectors * planWidth << " threads";
  int64_t margin = 0;
  if (shifted && llvm::any_of(kernel.getInputs().getTypes(), [&](Type type) {
        ArrayRef<int64_t> s = cast<RankedTensorType>(type).getShape();
        return !s.empty() && s.back() == h && s != rowShape;
      }))
    margin = planWidth;
  // Held vectors from the k-th on may fall past the end of the shortest
  // (last) part, or with shifted vectors of the fewest whole vectors a
  // row has: those are masked.
  int64_t firstMasked = unrolled;
  if (unrolled) {
    int64_t whole =
        shifted ? (h - (planWidth - 1) - margin) / planWidth * planWidth : h;
    int64_t shortest = std::max<int64_t>(0, whole - (splits - 1) * part);
    firstMasked = shortest / (threads * planWidth);
  }

  // Staged rows: the block's part of every input of the row shape, at
  // `stagedOffsets` past the aligned base of dynamic shared memory, then the
  // cluster's slots.
  const bool staged = plan.getRow() == RowStorage::staged;
  SmallVector<unsigned> stagedInputs;
  SmallVector<int64_t> stagedOffsets;
  int64_t stagedBytes = 0;
  if (staged) {
    stagedInputs = getStagedRowInputs(kernel, *shape);
    stagedBytes = getStagedRowBytes(kernel, *shape, plan, &stagedOffsets);
    for (unsigned input : stagedInputs)
      if (!cast<MemRefType>(buffers.inputs[input].getType())
               .isLastDimUnitStride())
        return kernel.emitOpError("staged rows need input ")
               << input << " contiguous along its rows";
  }

  const int64_t stepVectors = staged ? kStagedVectors : kStreamedVectors;

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
  Value hostRowLength = outerSizes->pop_back_val();
  Value rows = product(b, loc, *outerSizes);
  Value blocks = rows;
  if (splits > 1)
    // Whole clusters: the launch's cap on blocks must not cut one.
    blocks = arith::MulIOp::create(
        b, loc,
        arith::MinUIOp::create(b, loc, rows, indexConst(b, loc, 1 << 27)),
        indexConst(b, loc, splits));
  // A split's blocks publish their partials in shared slots, one per
  // reduction and row parity (clusterSlots), in dynamic shared memory
  // (gpu.launch does not take workgroup attributions together with
  // clusters).
  int64_t numSlots = 2 * reductions.size();
  // The launch, in vectors of `width`.
  auto launch = [&](int64_t width, StringRef nameSuffix) -> LogicalResult {
    return emitLaunch(
        b, loc, kernel, blocks, threads,
        [&](OpBuilder &b, const LaunchIds &ids) -> LogicalResult {
          Value bid = ids.block, tid = ids.thread, grid = ids.grid;
          // With a split, a cluster owns a row and block `partIndex` of the
          // cluster the columns [partIndex * part, (partIndex + 1) * part).
          Value partIndex = indexConst(b, loc, 0);
          Value slots;
          // Staged: the parts' shared buffers and the barrier their copies
          // complete on. They lie past the first kSwizzleAlignment boundary
          // past the dynamic memory's symbol, which is laid out among the
          // static objects (the reductions' scratch and the barrier, less
          // than that many bytes: whyNotStagedRows), so past all of them.
          Value stagedMemory, stagedBase, full;
          SmallVector<Value> stagedParts;
          const int64_t chunks =
              staged ? getStagedChunks(h, part, threads, width) : 1;
          if (staged) {
            DynamicShared shared = alignedDynamicShared(b, loc);
            stagedMemory = shared.memory;
            stagedBase = shared.base;
            for (auto [input, offset] : llvm::zip(stagedInputs, stagedOffsets))
              stagedParts.push_back(memref::ViewOp::create(
                  b, loc,
                  sharedTile({part},
                             cast<MemRefType>(buffers.inputs[input].getType())
                                 .getElementType()),
                  stagedMemory,
                  arith::AddIOp::create(b, loc, stagedBase,
                                        indexConst(b, loc, offset)),
                  ValueRange{}));
            MLIRContext *context = b.getContext();
            full = nvgpu::MBarrierCreateOp::create(
                b, loc,
                nvgpu::MBarrierGroupType::get(context, workgroupSpace(context),
                                              chunks));
            emitIf(b, loc, isThreadZero(b, loc, tid), [&] {
              for (int64_t chunk = 0; chunk < chunks; ++chunk)
                nvgpu::MBarrierInitOp::create(
                    b, loc, full, indexConst(b, loc, 1),
                    indexConst(b, loc, chunk), /*predicate=*/Value());
            });
            gpu::BarrierOp::create(b, loc);
          }
          if (splits > 1) {
            slots = staged ? memref::ViewOp::create(
                                 b, loc, sharedTile({numSlots}, b.getF32Type()),
                                 stagedMemory,
                                 arith::AddIOp::create(
                                     b, loc, stagedBase,
                                     indexConst(b, loc, stagedBytes)),
                                 ValueRange{})
                                 .getResult()
                           : clusterSlots(b, loc, numSlots);
            Value clusterSize = indexConst(b, loc, splits);
            partIndex =
                gpu::ClusterBlockIdOp::create(b, loc, gpu::Dimension::x);
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
          // The block's rows alternate 0 and 1 (cluster slots, the staged
          // copies' barrier phases).
          Value rowParity = arith::AndIOp::create(
              b, loc,
              arith::DivUIOp::create(
                  b, loc,
                  arith::SubIOp::create(b, loc, rowLoop.getInductionVar(), bid),
                  grid),
              indexConst(b, loc, 1));
          PointEvaluator evaluator(b, loc, kernel, buffers.inputs, width);
          // Streamed rows read once go past the L2 (evict first); rows held
          // in registers lost 1-3% so (H100, 2026-12-06, results.md).
          if (plan.getRow() == RowStorage::streamed)
            evaluator.evictFirst =
                getInputsReadOnce(plan, buffers.inputs, rowShape);

          // Shifted vectors: the row starts `shift` past a vector boundary
          // of the flat buffer (buffers are row-major and aligned), its
          // whole vectors `lag` columns in, up to `wholeEnd`.
          Value lag, wholeEnd;
          if (shifted) {
            Value widthValue = indexConst(b, loc, width);
            Value shift = arith::RemUIOp::create(
                b, loc,
                arith::MulIOp::create(b, loc, rowLoop.getInductionVar(),
                                      indexConst(b, loc, h % width)),
                widthValue);
            lag = arith::RemUIOp::create(
                b, loc, arith::SubIOp::create(b, loc, widthValue, shift),
                widthValue);
            Value wholeVectors = arith::DivUIOp::create(
                b, loc,
                arith::SubIOp::create(
                    b, loc, rowLength,
                    arith::AddIOp::create(b, loc, lag,
                                          indexConst(b, loc, margin))),
                widthValue);
            wholeEnd = arith::AddIOp::create(
                b, loc, lag,
                arith::MulIOp::create(b, loc, wholeVectors, widthValue));
            evaluator.shiftedRows = PointEvaluator::ShiftedRows{
                SmallVector<int64_t>(rowShape), lag};
          }
          // A pass of the block over its part of the row: thread `tid`
          // visits the vectors at first, first + threads * width, ... below
          // end; the part's vectors start at partFirst.
          Value partFirst = partStart;
          if (shifted)
            partFirst = arith::AddIOp::create(b, loc, partFirst, lag);
          Value first = arith::AddIOp::create(
              b, loc, partFirst,
              arith::MulIOp::create(b, loc, tid, indexConst(b, loc, width)));
          Value end = shifted ? wholeEnd : rowLength;
          if (splits > 1) {
            Value partEnd = arith::AddIOp::create(b, loc, partFirst,
                                                  indexConst(b, loc, part));
            end = arith::MinUIOp::create(b, loc, partEnd, end);
          }
          // Staged: this row's parts copied by thread 0 (in `chunks`
          // chunks, each on its barrier), then waited for by every thread:
          // all of it here, or chunk by chunk in the first pass. Rows
          // alternate the barriers' phases. (The barrier at the end of the
          // previous row ordered its reads of the buffers before these
          // copies.) Shifted rows copy the part's whole vectors, which start
          // and end on 16-byte boundaries (whyNotStagedRows), in one chunk;
          // their edge elements are read from global memory.
          Value stagedParity;
          if (staged) {
            Value length =
                shifted
                    ? arith::SubIOp::create(
                          b, loc,
                          arith::MaxUIOp::create(b, loc, end, partFirst),
                          partFirst)
                          .getResult()
                    : arith::MinUIOp::create(
                          b, loc, indexConst(b, loc, part / chunks),
                          arith::SubIOp::create(b, loc, rowLength, partStart))
                          .getResult();
            // The last blocks of a cluster may have no whole vectors of a
            // shifted row (nothing to copy; the barrier's phase completes
            // on the arrival alone).
            Value copies =
                shifted && splits > 1
                    ? arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                            length, indexConst(b, loc, 0))
                          .getResult()
                    : Value();
            emitIf(b, loc, isThreadZero(b, loc, tid), [&] {
              // A chunk's bytes of each input, and of all of them.
              Value total = indexConst(b, loc, 0);
              SmallVector<Value> sizes;
              SmallVector<int64_t> elementBytes;
              for (unsigned input : stagedInputs) {
                auto type = cast<MemRefType>(buffers.inputs[input].getType());
                elementBytes.push_back(type.getElementTypeBitWidth() / 8);
                sizes.push_back(arith::MulIOp::create(
                    b, loc, length, indexConst(b, loc, elementBytes.back())));
                total = arith::AddIOp::create(b, loc, total, sizes.back());
              }
              for (int64_t chunk = 0; chunk < chunks; ++chunk) {
                Value id = indexConst(b, loc, chunk);
                nvgpu::MBarrierArriveExpectTxOp::create(b, loc, full, total, id,
                                                        /*predicate=*/Value());
                Value barrier = barrierPointer(b, loc, full, id);
                int64_t chunkStart = chunk * (part / chunks);
                for (auto [input, sharedPart, size, bytes] : llvm::zip(
                         stagedInputs, stagedParts, sizes, elementBytes)) {
                  SmallVector<Value> from(rowIndex);
                  from.push_back(arith::AddIOp::create(
                      b, loc, partFirst, indexConst(b, loc, chunkStart)));
                  // (The copy's destination is this block's memory as the
                  // cluster addresses it: the shared::cta form needs a newer
                  // PTX than the backend emits for sm_90.)
                  auto copy = [&] {
                    NVVM::CpAsyncBulkGlobalToSharedClusterOp::create(
                        b, loc,
                        NVVM::MapaOp::create(
                            b, loc,
                            LLVM::LLVMPointerType::get(
                                b.getContext(),
                                static_cast<unsigned>(
                                    NVVM::NVVMMemorySpace::SharedCluster)),
                            sharedAddress(b, loc, sharedPart,
                                          chunkStart * bytes),
                            arith::IndexCastUIOp::create(b, loc, b.getI32Type(),
                                                         partIndex)),
                        globalAddress(b, loc, buffers.inputs[input], from),
                        barrier,
                        arith::IndexCastUIOp::create(b, loc, b.getI32Type(),
                                                     size),
                        /*multicastMask=*/Value(), /*l2CacheHint=*/Value());
                  };
                  if (copies)
                    emitIf(b, loc, copies, copy);
                  else
                    copy();
                }
              }
            });
            stagedParity =
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                      rowParity, indexConst(b, loc, 0));
            if (chunks == 1)
              waitForPhase(b, loc, full, indexConst(b, loc, 0), stagedParity);
            PointEvaluator::StagedRows rows{{}, partFirst};
            for (auto [input, sharedPart] :
                 llvm::zip(stagedInputs, stagedParts))
              rows.parts[input] = sharedPart;
            evaluator.stagedRows = std::move(rows);
          }
          auto columnsOf = [&](Value column) {
            SmallVector<Value> index(rowIndex);
            index.push_back(column);
            return index;
          };
          // A streamed or staged pass over the thread's vectors. The first
          // pass of a row staged in chunks waits for each chunk before its
          // vectors, the accumulators carried from chunk to chunk.
          bool chunksAwaited = chunks == 1;
          auto emitPassLoop = [&](ValueRange init,
                                  function_ref<FailureOr<SmallVector<Value>>(
                                      OpBuilder &, ArrayRef<Value>, ValueRange)>
                                      body) -> FailureOr<SmallVector<Value>> {
            if (chunksAwaited)
              return emitUnrolledLoop(b, loc, first, end, threads * width,
                                      stepVectors, init, body);
            chunksAwaited = true;
            Value chunkColumns = indexConst(b, loc, part / chunks);
            auto loop = scf::ForOp::create(b, loc, indexConst(b, loc, 0),
                                           indexConst(b, loc, chunks),
                                           indexConst(b, loc, 1), init);
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(loop.getBody());
            waitForPhase(b, loc, full, loop.getInductionVar(), stagedParity);
            Value offset = arith::MulIOp::create(b, loc, loop.getInductionVar(),
                                                 chunkColumns);
            Value chunkEnd = arith::AddIOp::create(
                b, loc, partStart,
                arith::AddIOp::create(b, loc, offset, chunkColumns));
            FailureOr<SmallVector<Value>> accs = emitUnrolledLoop(
                b, loc, arith::AddIOp::create(b, loc, first, offset), chunkEnd,
                threads * width, stepVectors, loop.getRegionIterArgs(), body);
            if (failed(accs))
              return failure();
            scf::YieldOp::create(b, loc, *accs);
            return SmallVector<Value>(loop.getResults());
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
          // Shifted rows: the edge element of thread `tid` of the first
          // block, the tid-th of the columns before `lag` and from
          // `wholeEnd` on (at most 3 * width - 2); past them, or in another
          // block, clamped into the row and left out.
          Value edgeColumn, edgeValid;
          if (shifted) {
            Value head = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::ult, tid, lag);
            Value column = arith::SelectOp::create(
                b, loc, head, tid,
                arith::AddIOp::create(b, loc, wholeEnd,
                                      arith::SubIOp::create(b, loc, tid, lag)));
            edgeValid = arith::AndIOp::create(
                b, loc,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, column,
                                      rowLength),
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      partIndex, indexConst(b, loc, 0)));
            edgeColumn = arith::MinUIOp::create(
                b, loc, column,
                arith::SubIOp::create(b, loc, rowLength,
                                      indexConst(b, loc, 1)));
          }
          // `value` at this thread's edge element, whose column no staged
          // copy holds: read from global memory.
          auto evalEdge = [&](Value value) -> FailureOr<Value> {
            std::optional<PointEvaluator::StagedRows> stagedParts;
            std::swap(stagedParts, evaluator.stagedRows);
            FailureOr<Value> v =
                evaluator.eval(value, columnsOf(edgeColumn), /*lanes=*/false);
            std::swap(stagedParts, evaluator.stagedRows);
            return v;
          };

          auto blockReduce = [&](Operation *reduction, Value partial) {
            return gpu::AllReduceOp::create(
                       b, loc, partial,
                       gpu::AllReduceOperationAttr::get(
                           b.getContext(), allReduceKind(reduction)),
                       /*uniform=*/true)
                .getResult();
          };
          // This row's slot of `reduction` in the cluster's slots.
          auto slotOf = [&](Operation *reduction) -> Value {
            int64_t ordinal =
                llvm::find(reductions, reduction) - reductions.begin();
            return arith::AddIOp::create(
                b, loc, indexConst(b, loc, ordinal),
                arith::MulIOp::create(
                    b, loc, rowParity,
                    indexConst(b, loc, int64_t(reductions.size()))));
          };
          auto allReduce = [&](Operation *reduction, Value partial) -> Value {
            Value total = blockReduce(reduction, partial);
            if (splits > 1)
              total = combineOverCluster(b, loc, reduction, total, slots,
                                         slotOf(reduction), tid, splits);
            return total;
          };
          for (Operation *reduction : reductions) {
            // A streamed row computes an online sum in its max's pass.
            const OnlineSum *online =
                unrolled ? nullptr : shape->findOnlineSum(reduction);
            if (online && online->sum == reduction)
              continue;
            // The online sum's terms, exp(y - running max): only their
            // error relative to the sum counts (MathPrecision::sumTerm).
            const MathPrecision termPrecision = MathPrecision::sumTerm;
            Value identity =
                buildReductionIdentity(b, loc, reduction, b.getF32Type());
            auto partialOf = [&](Value x, Value acc) -> Value {
              if (width > 1)
                x = vector::ReductionOp::create(
                    b, loc, vectorCombiningKind(reduction), x);
              return buildReductionCombine(b, loc, reduction, acc, x);
            };
            // The thread's partial, and with an online sum the thread's sum
            // of exp(y - its max).
            Value partial = identity, onlinePartial;
            if (unrolled) {
              // Registers: values loaded or computed in earlier passes are
              // reused (the evaluator keeps them).
              for (auto [column, valid] : llvm::zip(heldColumns, heldValid)) {
                FailureOr<Value> x = evaluator.eval(
                    reduction->getOperand(0), columnsOf(column), width > 1);
                if (failed(x))
                  return failure();
                Value next = partialOf(*x, partial);
                partial = valid ? arith::SelectOp::create(b, loc, valid, next,
                                                          partial)
                                      .getResult()
                                : next;
              }
            } else {
              SmallVector<Value> init{identity};
              if (online)
                init.push_back(f32Constant(b, loc, 0.0, b.getF32Type()));
              FailureOr<SmallVector<Value>> partials = emitPassLoop(
                  init,
                  [&](OpBuilder &b, ArrayRef<Value> columns,
                      ValueRange accs) -> FailureOr<SmallVector<Value>> {
                    PointEvaluator::CacheScope scope(evaluator);
                    SmallVector<Value> xs;
                    for (Value column : columns) {
                      FailureOr<Value> x =
                          evaluator.eval(reduction->getOperand(0),
                                         columnsOf(column), width > 1);
                      if (failed(x))
                        return failure();
                      xs.push_back(*x);
                    }
                    Value acc = accs[0];
                    for (Value x : xs)
                      acc = partialOf(x, acc);
                    if (!online)
                      return SmallVector<Value>{acc};
                    // The running sum follows the running max, then takes
                    // the step's terms.
                    Value shift = finiteOrZero(b, loc, acc);
                    Value sum = rescaleOnlineSum(
                        b, loc, accs[1], finiteOrZero(b, loc, accs[0]), shift);
                    for (Value x : xs) {
                      Value terms = buildExp(
                          b, loc,
                          arith::SubFOp::create(
                              b, loc, x,
                              width > 1 ? vector::BroadcastOp::create(
                                              b, loc, x.getType(), shift)
                                              .getResult()
                                        : shift),
                          termPrecision);
                      if (width > 1)
                        terms = vector::ReductionOp::create(
                            b, loc, vector::CombiningKind::ADD, terms);
                      sum = arith::AddFOp::create(b, loc, sum, terms);
                    }
                    return SmallVector<Value>{acc, sum};
                  });
              if (failed(partials))
                return failure();
              partial = (*partials)[0];
              if (online)
                onlinePartial = (*partials)[1];
            }
            // A shifted row's edge element, as a step of the loop: an
            // online sum (streamed) follows the new max, then takes the
            // edge's term.
            if (edgeColumn) {
              FailureOr<Value> x = evalEdge(reduction->getOperand(0));
              if (failed(x))
                return failure();
              Value next =
                  buildReductionCombine(b, loc, reduction, partial, *x);
              if (online) {
                Value shift = finiteOrZero(b, loc, next);
                Value sum = arith::AddFOp::create(
                    b, loc,
                    rescaleOnlineSum(b, loc, onlinePartial,
                                     finiteOrZero(b, loc, partial), shift),
                    buildExp(b, loc, arith::SubFOp::create(b, loc, *x, shift),
                             termPrecision));
                onlinePartial = arith::SelectOp::create(b, loc, edgeValid, sum,
                                                        onlinePartial);
              }
              partial =
                  arith::SelectOp::create(b, loc, edgeValid, next, partial);
            }
            // An online sum over a cluster: each block's max and its sum
            // relative to it go to the slots together, behind one cluster
            // barrier; the row's sum rescales the blocks' sums to the row's
            // max below.
            Value total;
            SmallVector<std::pair<Value, Value>> blockStates;
            if (online && splits > 1) {
              Value blockMax = blockReduce(reduction, partial);
              Value blockSum =
                  blockReduce(online->sum,
                              rescaleOnlineSum(b, loc, onlinePartial,
                                               finiteOrZero(b, loc, partial),
                                               finiteOrZero(b, loc, blockMax)));
              Value maxSlot = slotOf(reduction), sumSlot = slotOf(online->sum);
              emitIf(b, loc, isThreadZero(b, loc, tid), [&] {
                memref::StoreOp::create(b, loc, blockMax, slots, maxSlot);
                memref::StoreOp::create(b, loc, blockSum, slots, sumSlot);
              });
              clusterBarrier(b, loc);
              total = buildReductionIdentity(b, loc, reduction, b.getF32Type());
              auto wordOf = [&](Value slot) {
                return sharedAddress(
                    b, loc, slots,
                    arith::MulIOp::create(
                        b, loc, slot,
                        indexConst(b, loc, int64_t(sizeof(float)))));
              };
              Value maxWord = wordOf(maxSlot), sumWord = wordOf(sumSlot);
              for (int64_t block = 0; block < splits; ++block) {
                auto read = [&](Value word) -> Value {
                  return LLVM::LoadOp::create(
                      b, loc, b.getF32Type(),
                      inClusterBlock(b, loc, word, block));
                };
                blockStates.emplace_back(read(maxWord), read(sumWord));
                total = buildReductionCombine(b, loc, reduction, total,
                                              blockStates.back().first);
              }
            } else {
              total = allReduce(reduction, partial);
            }
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
            if (!online)
              continue;
            // The sum of exp(y - max) over the row, then of exp(y - c): c is
            // a value per row, known once the max is.
            Value rowShift = finiteOrZero(b, loc, total);
            Value rowSum;
            if (!blockStates.empty()) {
              rowSum = f32Constant(b, loc, 0.0, b.getF32Type());
              for (auto [blockMax, blockSum] : blockStates)
                rowSum = arith::AddFOp::create(
                    b, loc, rowSum,
                    rescaleOnlineSum(b, loc, blockSum,
                                     finiteOrZero(b, loc, blockMax), rowShift));
            } else {
              rowSum = allReduce(online->sum,
                                 rescaleOnlineSum(b, loc, onlinePartial,
                                                  finiteOrZero(b, loc, partial),
                                                  rowShift));
            }
            // (c's last dimension is 1.)
            SmallVector<Value> shiftIndex;
            for (auto [d, size] : llvm::enumerate(shapeOf(online->shift)))
              shiftIndex.push_back(size == 1 ? indexConst(b, loc, 0)
                                             : rowIndex[d]);
            FailureOr<Value> c =
                evaluator.eval(online->shift, shiftIndex, /*lanes=*/false);
            if (failed(c))
              return failure();
            evaluator.known[online->sum->getResult(0)] = arith::MulFOp::create(
                b, loc, rowSum,
                math::ExpOp::create(
                    b, loc, arith::SubFOp::create(b, loc, rowShift, *c)));
          }

          // Chunks no pass has waited for (a kernel without a streamed
          // reduction pass), before the outputs read them.
          if (!chunksAwaited)
            for (int64_t chunk = 0; chunk < chunks; ++chunk)
              waitForPhase(b, loc, full, indexConst(b, loc, chunk),
                           stagedParity);

          // The outputs: full rows in a last pass (from registers when the row
          // is held), per-row values by thread 0.
          auto outputs =
              llvm::zip(kernel.getYield().getValues(), buffers.outputs);
          auto isFullRow = [&](Value value) {
            return shapeOf(value) == rowShape;
          };
          // Every full-row output at `columns`; with `valid`, a store only
          // where it holds. Streamed, all values are computed before the
          // first store, so that the step's loads are issued together (a
          // store may alias an input).
          auto writeFullRows = [&](ArrayRef<Value> columns,
                                   ArrayRef<Value> valid) -> LogicalResult {
            PointEvaluator::CacheScope scope(evaluator);
            SmallVector<std::tuple<Value, Value, SmallVector<Value>, Value>>
                stores;
            auto storeAll = [&] {
              for (auto &[v, buffer, index, isValid] : stores) {
                if (!isValid) {
                  store(b, loc, v, buffer, index);
                  continue;
                }
                auto inBounds = scf::IfOp::create(b, loc, isValid);
                OpBuilder::InsertionGuard storeGuard(b);
                b.setInsertionPoint(inBounds.thenBlock()->getTerminator());
                store(b, loc, v, buffer, index);
              }
              stores.clear();
            };
            for (auto [value, buffer] : outputs) {
              if (!isFullRow(value))
                continue;
              for (auto [column, isValid] : llvm::zip(columns, valid)) {
                SmallVector<Value> index = columnsOf(column);
                FailureOr<Value> v = evaluator.eval(value, index, width > 1);
                if (failed(v))
                  return failure();
                stores.emplace_back(*v, buffer, index, isValid);
                if (unrolled)
                  storeAll();
              }
            }
            storeAll();
            return success();
          };
          // A shifted row's edge element of this thread, where it has one.
          auto writeEdge = [&]() -> LogicalResult {
            for (auto [value, buffer] : outputs) {
              if (!edgeColumn || !isFullRow(value))
                continue;
              SmallVector<Value> index = columnsOf(edgeColumn);
              FailureOr<Value> v = evalEdge(value);
              if (failed(v))
                return failure();
              emitIf(b, loc, edgeValid,
                     [&] { store(b, loc, *v, buffer, index); });
            }
            return success();
          };
          if (unrolled) {
            if (failed(writeFullRows(heldColumns, heldValid)) ||
                failed(writeEdge()))
              return failure();
          } else if (llvm::any_of(kernel.getYield().getValues(), isFullRow)) {
            FailureOr<SmallVector<Value>> written = emitUnrolledLoop(
                b, loc, first, end, threads * width, stepVectors, {},
                [&](OpBuilder &, ArrayRef<Value> columns,
                    ValueRange) -> FailureOr<SmallVector<Value>> {
                  if (failed(writeFullRows(columns,
                                           SmallVector<Value>(columns.size()))))
                    return failure();
                  return SmallVector<Value>{};
                });
            if (failed(written) || failed(writeEdge()))
              return failure();
          }
          Value isFirst = arith::AndIOp::create(
              b, loc,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                    indexConst(b, loc, 0)),
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, partIndex,
                                    indexConst(b, loc, 0)));
          auto perRow = scf::IfOp::create(b, loc, isFirst);
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
          // The next row's reductions reuse the shared memory (and its
          // copies the staged buffers); the cluster's slots alternate. A
          // block's shared memory must outlive its cluster's reads.
          gpu::BarrierOp::create(b, loc);
          if (splits > 1) {
            b.setInsertionPointAfter(rowLoop);
            clusterBarrier(b, loc);
          }
          return success();
        },
        /*shared=*/{}, splits > 1 ? splits : 0,
        staged ? kSwizzleAlignment + stagedBytes +
                     (splits > 1 ? numSlots * int64_t(sizeof(float)) : 0)
        : splits > 1 ? numSlots * int64_t(sizeof(float))
                     : 0,
        nameSuffix);
  };
  if (!ShapedType::isDynamic(h) || planWidth == 1)
    return launch(planWidth, "");
  // The length is known at run time: a launch in vectors where it is a
  // multiple of their width (then every row starts on one), else one element
  // by element. (One kernel with both under a branch had ptxas keep
  // convergence state on the stack.)
  Value whole = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::RemUIOp::create(b, loc, hostRowLength,
                             indexConst(b, loc, planWidth)),
      indexConst(b, loc, 0));
  auto byWidth = scf::IfOp::create(b, loc, whole, /*withElse=*/true);
  for (auto [block, width, suffix] :
       {std::make_tuple(byWidth.thenBlock(), planWidth, StringRef()),
        std::make_tuple(byWidth.elseBlock(), int64_t(1),
                        StringRef("_elements"))}) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(block->getTerminator());
    if (failed(launch(width, suffix)))
      return failure();
  }
  return success();
}
