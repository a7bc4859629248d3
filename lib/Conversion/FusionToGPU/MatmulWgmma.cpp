//===- MatmulWgmma.cpp - The Hopper tensor-core matmul strategy -----------===//
//
// Matmul kernels on sm_90 tensor cores, built from upstream nvgpu ops: a
// block of warpgroups per output tile (WgmmaTiles), a warpgroup for each
// 64 or 128 of its rows. Thread 0 issues TMA loads of A's and B's tiles,
// 64 along K, into 128-byte-swizzled shared memory, 4 stages deep, each
// stage completing an mbarrier by its byte count; the warpgroups wait on a
// stage's barrier, multiply their rows of it into f32 accumulators with
// warpgroup MMA (B read N-major: `transposeB`) and, once the previous
// stage's MMA is done, refill that stage. TMA fills zeros past M, N and K, so
// ragged sizes need no masks on the way in. The accumulators go through shared
// memory to the epilogue, which evaluates the kernel's outputs on them as
// vectors along N, masked at the edges of M and N, and stores each output once.
//
// Many rows run 256 x 128 tiles of two warpgroups. At most 256 rows
// (decode, small batches) the weights' bytes weigh more than the FLOPs:
// 64 x 256 tiles of one warpgroup, K cut
// into the plan's `split` ranges, a block each, so that enough blocks stream
// B at once. Each block stores its partial tile in a workspace and counts
// its arrival; the tile's last block sums the partials in range order (the
// same result whichever block is last) and runs the epilogue. With M
// dynamic the host picks the kernel from M.
//
// A pair of products sharing A (TiledProducts: the gated MLP's two halves)
// loads half of B's tile from each, so each accumulator holds both
// products of half as many output columns and the epilogue combines them.
//
// The tensor maps are created on the host (mgpuTensorMapEncodeTiledMemref
// in the runtime) before the launch.
//
//===----------------------------------------------------------------------===//

#include "PointEvaluator.h"
#include "Strategies.h"

#include "fusion/Conversion/ScalarOps.h"
#include "fusion/Dialect/Fusion/Analysis/KernelPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::codegen;

namespace {

/// A TMA box with 128-byte swizzling is at most 128 bytes wide: B's tile
/// is loaded as boxes of 64 columns, side by side. A pair of products
/// (TiledProducts) takes half of them from each.
constexpr int64_t kBoxColumns = 64;
constexpr int64_t kMaxBoxesB = 4;
static_assert(kWgmmaTiles.n % (2 * kBoxColumns) == 0 &&
              kWgmmaFewRowTiles.n % (2 * kBoxColumns) == 0 &&
              kWgmmaTiles.n <= kMaxBoxesB * kBoxColumns &&
              kWgmmaFewRowTiles.n <= kMaxBoxesB * kBoxColumns);
/// 128-byte swizzling repeats every 1024 bytes; stages start on that
/// boundary, which the dynamic shared memory's base need not be on.
constexpr int64_t kSwizzleAlignment = 1024;
/// Shared bytes past the stages: the split's arrival count.
constexpr int64_t kArrivalBytes = 16;
/// Tile rows of a group of tiles (see the launch body).
constexpr int64_t kRasterRows = 8;
/// Elements of a partial tile's vectors in the workspace.
constexpr int64_t kPartialWidth = 4;

/// The byte sizes of a kernel's tiles (2-byte elements).
struct TileBytes {
  WgmmaTiles tiles;

  /// Rows of the tile each warpgroup multiplies; a TMA box is at most 256
  /// rows, and A is loaded a warpgroup's rows a box.
  constexpr int64_t groupRows() const { return tiles.m / tiles.warpgroups; }
  constexpr int64_t groupA() const { return groupRows() * tiles.k * 2; }
  constexpr int64_t a() const { return tiles.m * tiles.k * 2; }
  constexpr int64_t b() const { return tiles.k * tiles.n * 2; }
  /// A stage holds a tile of A and a tile of B.
  constexpr int64_t stage() const { return a() + b(); }
  constexpr int64_t stages() const { return tiles.stages * stage(); }
  /// The f32 accumulator tile staged for the epilogue takes the stages'
  /// place.
  constexpr bool stagesHoldAccumulators() const {
    return tiles.m * tiles.n * 4 <= stages();
  }
};
static_assert(TileBytes{kWgmmaTiles}.stagesHoldAccumulators() &&
              TileBytes{kWgmmaFewRowTiles}.stagesHoldAccumulators());

Attribute workgroupSpace(MLIRContext *context) {
  return gpu::AddressSpaceAttr::get(
      context, gpu::GPUDialect::getWorkgroupAddressSpace());
}

MemRefType sharedTile(ArrayRef<int64_t> shape, Type element) {
  return MemRefType::get(shape, element, MemRefLayoutAttrInterface{},
                         workgroupSpace(element.getContext()));
}

/// A tensor map of boxes of `box` elements, 128-byte swizzled, zeros past
/// the tensor's edges.
nvgpu::TensorMapDescriptorType tensorMapType(ArrayRef<int64_t> box,
                                             Type element) {
  return nvgpu::TensorMapDescriptorType::get(
      element.getContext(), sharedTile(box, element),
      nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
      nvgpu::TensorMapL2PromoKind::L2PROMO_NONE,
      nvgpu::TensorMapOOBKind::OOB_ZERO,
      nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
}

/// The tensor map of `buffer` (a matrix in global memory) in boxes of `box`.
Value createTensorMap(OpBuilder &b, Location loc, Value buffer,
                      ArrayRef<int64_t> box) {
  auto type = cast<MemRefType>(buffer.getType());
  Value unranked = memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(type.getElementType(), Attribute{}),
      buffer);
  SmallVector<Value> boxSizes;
  for (int64_t size : box)
    boxSizes.push_back(indexConst(b, loc, size));
  return nvgpu::TmaCreateDescriptorOp::create(
      b, loc, tensorMapType(box, type.getElementType()), unranked, boxSizes);
}

/// What the launch body works on: the shared stages, their barriers and
/// the tensor maps.
struct Pipeline {
  TileBytes bytes;
  Value shared;   // the dynamic shared memory, as bytes
  Value base;     // offset of the first stage (swizzle-aligned)
  Value barriers; // one mbarrier per stage
  Value mapA;
  /// The tensor map each box of B's tile is loaded from.
  SmallVector<Value, kMaxBoxesB> mapsB;
  Type element;

  const WgmmaTiles &tiles() const { return bytes.tiles; }
  Value view(OpBuilder &b, Location loc, Value offset, ArrayRef<int64_t> shape,
             Type type) const {
    return memref::ViewOp::create(b, loc, sharedTile(shape, type), shared,
                                  arith::AddIOp::create(b, loc, base, offset),
                                  ValueRange{});
  }
  Value stageOffset(OpBuilder &b, Location loc, Value stage) const {
    return arith::MulIOp::create(b, loc, stage,
                                 indexConst(b, loc, bytes.stage()));
  }
  /// The rows of A's tile that warpgroup `group` multiplies.
  Value tileA(OpBuilder &b, Location loc, Value stage, Value group) const {
    Value offset = arith::AddIOp::create(
        b, loc, stageOffset(b, loc, stage),
        arith::MulIOp::create(b, loc, group,
                              indexConst(b, loc, bytes.groupA())));
    return view(b, loc, offset, {bytes.groupRows(), tiles().k}, element);
  }
  Value tileB(OpBuilder &b, Location loc, Value stage, int64_t columns,
              int64_t column = 0) const {
    Value offset = arith::AddIOp::create(
        b, loc, stageOffset(b, loc, stage),
        indexConst(b, loc, bytes.a() + column * tiles().k * 2));
    return view(b, loc, offset, {tiles().k, columns}, element);
  }
  /// The word past the stages where a split's block keeps its arrival.
  Value arrivalSlot(OpBuilder &b, Location loc) const {
    return view(b, loc, indexConst(b, loc, bytes.stages()), {1},
                b.getI32Type());
  }

  /// Thread 0's loads of step `step` along K into `stage`: A's rows from
  /// `row`, box j of B's tile from column `boxCols[j]`, completing the
  /// stage's barrier.
  void load(OpBuilder &b, Location loc, Value stage, Value step, Value row,
            ArrayRef<Value> boxCols) const {
    nvgpu::MBarrierArriveExpectTxOp::create(
        b, loc, barriers, indexConst(b, loc, bytes.stage()), stage,
        /*predicate=*/Value());
    Value k =
        arith::MulIOp::create(b, loc, step, indexConst(b, loc, tiles().k));
    // Coordinates are innermost first.
    for (int64_t group = 0; group < tiles().warpgroups; ++group) {
      Value boxRow = arith::AddIOp::create(
          b, loc, row, indexConst(b, loc, group * bytes.groupRows()));
      nvgpu::TmaAsyncLoadOp::create(
          b, loc, tileA(b, loc, stage, indexConst(b, loc, group)), barriers,
          mapA, ValueRange{k, boxRow}, stage, /*multicastMask=*/Value(),
          /*predicate=*/Value());
    }
    for (auto [box, mapB] : llvm::enumerate(mapsB))
      nvgpu::TmaAsyncLoadOp::create(
          b, loc, tileB(b, loc, stage, kBoxColumns, box * kBoxColumns),
          barriers, mapB, ValueRange{boxCols[box], k}, stage,
          /*multicastMask=*/Value(), /*predicate=*/Value());
  }
};

Value isThreadZero(OpBuilder &b, Location loc, Value thread) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread,
                               indexConst(b, loc, 0));
}

/// Emits `body` under `condition`.
void emitIf(OpBuilder &b, Location loc, Value condition,
            function_ref<void()> body) {
  auto ifOp = scf::IfOp::create(b, loc, condition);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  body();
}

/// The workspace of a split: a partial tile per tile and K range (f32,
/// `tiles.m` x `tiles.n`), and an arrival count per tile, zeroed.
struct SplitWorkspace {
  Value partials, arrivals;
};

/// One launch of the strategy: tiles of `tiles`, K cut into `split`
/// ranges (through `workspace` when more than one).
class TileLaunch {
public:
  TileLaunch(Location loc, KernelOp kernel, KernelPlanAttr plan,
             const KernelBuffers &buffers, const TiledProducts &tiled,
             const WgmmaTiles &tiles, int64_t split)
      : loc(loc), kernel(kernel), plan(plan), buffers(buffers), tiled(tiled),
        tiles(tiles), bytes{tiles}, split(split) {
    MatmulOp matmul = tiled.products.front().matmul;
    bufferA = bufferOf(matmul.getA());
    element = cast<MemRefType>(bufferA.getType()).getElementType();
    kSteps = llvm::divideCeil(shapeOf(matmul.getA())[1], tiles.k);
    nSize = tiled.shape[1];
    tileColumns = getWgmmaTileColumns(tiled, tiles);
    nTiles = llvm::divideCeil(nSize, tileColumns);
  }

  /// Rows of the output and tiles of them.
  std::pair<Value, Value> rowTiles(OpBuilder &b) const {
    Value m = memref::DimOp::create(b, loc, buffers.outputs[0], 0);
    return {m,
            arith::CeilDivUIOp::create(b, loc, m, indexConst(b, loc, tiles.m))};
  }
  /// Output tiles of the launch.
  Value tileCount(OpBuilder &b) const {
    return arith::MulIOp::create(b, loc, rowTiles(b).second,
                                 indexConst(b, loc, nTiles));
  }
  /// The f32 elements of a split's partial tiles.
  Value partialElements(OpBuilder &b) const {
    return arith::MulIOp::create(b, loc, tileCount(b),
                                 indexConst(b, loc, split * tiles.m * tiles.n));
  }

  LogicalResult emit(OpBuilder &b, const SplitWorkspace *workspace,
                     StringRef nameSuffix);

private:
  Value bufferOf(Value operand) const {
    return buffers.inputs[cast<BlockArgument>(operand).getArgNumber()];
  }
  LogicalResult emitBody(OpBuilder &b, const LaunchIds &ids,
                         const SplitWorkspace *workspace);
  /// The offset in the workspace of element (r, c) of `range`'s partial
  /// of `tile`.
  Value partialOffset(OpBuilder &b, Value tile, Value range, Value r,
                      Value c) const {
    Value slot = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, tile, indexConst(b, loc, split)),
        range);
    Value row = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, slot, indexConst(b, loc, tiles.m)), r);
    return arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, row, indexConst(b, loc, tiles.n)),
        c);
  }

  Location loc;
  KernelOp kernel;
  KernelPlanAttr plan;
  const KernelBuffers &buffers;
  const TiledProducts &tiled;
  WgmmaTiles tiles;
  TileBytes bytes;
  int64_t split;
  Value bufferA;
  Type element;
  int64_t kSteps, nSize, tileColumns, nTiles;
  // Made on the host, used in the launch.
  Value mapA;
  SmallVector<Value, kMaxBoxesB> mapsB;
  /// Box j of B's tile starts `boxOffsets[j]` columns past the tile's
  /// first output column (in its product's B).
  SmallVector<int64_t, kMaxBoxesB> boxOffsets;
  llvm::SmallMapVector<Value, Value, kMaxBoxesB> mapOfBuffer;
};

} // namespace

LogicalResult TileLaunch::emit(OpBuilder &b, const SplitWorkspace *workspace,
                               StringRef nameSuffix) {
  // On the host: the tensor maps and the grid, a block per output tile
  // and K range.
  mapA = createTensorMap(b, loc, bufferA, {bytes.groupRows(), tiles.k});
  // Each product's boxes in turn (a pair's first product fills the first
  // half of the tile).
  int64_t productBoxes = tileColumns / kBoxColumns;
  for (int64_t box = 0; box < tiles.n / kBoxColumns; ++box) {
    TiledProducts::Product product = tiled.products[box / productBoxes];
    Value buffer = bufferOf(product.matmul.getB());
    auto [it, inserted] = mapOfBuffer.try_emplace(buffer);
    if (inserted)
      it->second = createTensorMap(b, loc, buffer, {tiles.k, kBoxColumns});
    mapsB.push_back(it->second);
    boxOffsets.push_back(product.column + box % productBoxes * kBoxColumns);
  }
  Value blocks =
      arith::MulIOp::create(b, loc, tileCount(b), indexConst(b, loc, split));
  int64_t sharedBytes = bytes.stages() + kArrivalBytes + kSwizzleAlignment;
  return emitLaunch(
      b, loc, kernel, blocks, tiles.threads(),
      [&](OpBuilder &b, const LaunchIds &ids) {
        return emitBody(b, ids, workspace);
      },
      /*shared=*/{}, /*clusterBlocks=*/0, sharedBytes, nameSuffix);
}

LogicalResult TileLaunch::emitBody(OpBuilder &b, const LaunchIds &ids,
                                   const SplitWorkspace *workspace) {
  MLIRContext *context = b.getContext();
  int64_t width = plan.getVector();
  auto [m, rowTileCount] = rowTiles(b);
  Value zero = indexConst(b, loc, 0);
  Value one = indexConst(b, loc, 1);
  Value tile =
      arith::DivUIOp::create(b, loc, ids.block, indexConst(b, loc, split));
  Value range =
      arith::RemUIOp::create(b, loc, ids.block, indexConst(b, loc, split));
  // A grid of at least one block: past the tiles, nothing to do.
  auto inRange = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tile,
                            arith::MulIOp::create(b, loc, rowTileCount,
                                                  indexConst(b, loc, nTiles))));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(inRange.thenBlock()->getTerminator());
  // Tiles in groups of kRasterRows tile rows, column by column within
  // a group: the blocks running at once share few rows of A and
  // columns of B, which stay in L2.
  Value groupTiles = indexConst(b, loc, kRasterRows * nTiles);
  Value firstRow = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, tile, groupTiles),
      indexConst(b, loc, kRasterRows));
  Value rowsInGroup = arith::MinUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, rowTileCount, firstRow),
      indexConst(b, loc, kRasterRows));
  Value inGroup = arith::RemUIOp::create(b, loc, tile, groupTiles);
  Value row0 = arith::MulIOp::create(
      b, loc,
      arith::AddIOp::create(
          b, loc, firstRow,
          arith::RemUIOp::create(b, loc, inGroup, rowsInGroup)),
      indexConst(b, loc, tiles.m));
  Value col0 = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, inGroup, rowsInGroup),
      indexConst(b, loc, tileColumns));
  SmallVector<Value, kMaxBoxesB> boxCols;
  for (int64_t offset : boxOffsets)
    boxCols.push_back(
        arith::AddIOp::create(b, loc, col0, indexConst(b, loc, offset)));
  // The range's steps along K: [firstStep, firstStep + steps), ranges of
  // kSteps / split steps or one more.
  auto rangeStart = [&](Value range) {
    return arith::DivUIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, range, indexConst(b, loc, kSteps)),
        indexConst(b, loc, split));
  };
  Value firstStep = zero, steps = indexConst(b, loc, kSteps);
  if (split > 1) {
    firstStep = rangeStart(range);
    steps = arith::SubIOp::create(
        b, loc, rangeStart(arith::AddIOp::create(b, loc, range, one)),
        firstStep);
  }

  Pipeline pipe{bytes};
  pipe.element = element;
  pipe.mapA = mapA;
  pipe.mapsB = mapsB;
  pipe.shared = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface{}, workgroupSpace(context)));
  Value address =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, pipe.shared);
  Value alignment = indexConst(b, loc, kSwizzleAlignment);
  pipe.base = arith::RemUIOp::create(
      b, loc,
      arith::SubIOp::create(b, loc, alignment,
                            arith::RemUIOp::create(b, loc, address, alignment)),
      alignment);
  pipe.barriers = nvgpu::MBarrierCreateOp::create(
      b, loc,
      nvgpu::MBarrierGroupType::get(context, workgroupSpace(context),
                                    tiles.stages));
  Value first = isThreadZero(b, loc, ids.thread);
  Value warpgroup =
      arith::DivUIOp::create(b, loc, ids.thread, indexConst(b, loc, 128));
  emitIf(b, loc, first, [&] {
    for (int64_t s = 0; s < tiles.stages; ++s)
      nvgpu::MBarrierInitOp::create(b, loc, pipe.barriers, one,
                                    indexConst(b, loc, s),
                                    /*predicate=*/Value());
    // With K = 0 the operands are empty and have no tensor maps.
    if (kSteps > 0) {
      nvgpu::TmaPrefetchOp::create(b, loc, mapA, /*predicate=*/Value());
      for (auto [buffer, map] : mapOfBuffer)
        nvgpu::TmaPrefetchOp::create(b, loc, map, /*predicate=*/Value());
    }
    for (int64_t s = 0; s < std::min(tiles.stages, kSteps); ++s) {
      auto fill = [&, s] {
        pipe.load(
            b, loc, indexConst(b, loc, s),
            arith::AddIOp::create(b, loc, firstStep, indexConst(b, loc, s)),
            row0, boxCols);
      };
      // Every step is in the one range of an unsplit kernel.
      if (split == 1)
        fill();
      else
        emitIf(b, loc,
               arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                     indexConst(b, loc, s), steps),
               fill);
    }
  });
  // The barriers' initialization is seen by every thread.
  gpu::BarrierOp::create(b, loc);

  auto accumulatorType = nvgpu::WarpgroupAccumulatorType::get(
      context, VectorType::get({bytes.groupRows(), tiles.n}, b.getF32Type()));
  Value accumulator =
      nvgpu::WarpgroupMmaInitAccumulatorOp::create(b, loc, accumulatorType);
  Value stages = indexConst(b, loc, tiles.stages);
  auto kLoop =
      scf::ForOp::create(b, loc, zero, steps, one, ValueRange{accumulator});
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value step = kLoop.getInductionVar();
    Value stage = arith::RemUIOp::create(b, loc, step, stages);
    // The stage's barrier completes once per round of the stages.
    Value round = arith::DivUIOp::create(b, loc, step, stages);
    Value parity = arith::IndexCastOp::create(
        b, loc, b.getI1Type(),
        arith::RemUIOp::create(b, loc, round, indexConst(b, loc, 2)));
    nvgpu::MBarrierTryWaitParityOp::create(b, loc, pipe.barriers, parity,
                                           indexConst(b, loc, 10000000), stage);
    Value tileA = pipe.tileA(b, loc, stage, warpgroup);
    Value tileB = pipe.tileB(b, loc, stage, tiles.n);
    Value descA = nvgpu::WarpgroupGenerateDescriptorOp::create(
        b, loc,
        nvgpu::WarpgroupMatrixDescriptorType::get(
            context, sharedTile({bytes.groupRows(), tiles.k}, element)),
        tileA, mapA);
    Value descB = nvgpu::WarpgroupGenerateDescriptorOp::create(
        b, loc,
        nvgpu::WarpgroupMatrixDescriptorType::get(
            context, sharedTile({tiles.k, tiles.n}, element)),
        tileB, mapsB.front());
    // Waits for all but this step's MMA (waitGroup = 1).
    Value next = nvgpu::WarpgroupMmaOp::create(
        b, loc, accumulatorType, descA, descB,
        /*waitGroup=*/b.getI64IntegerAttr(1), /*transposeA=*/nullptr,
        /*transposeB=*/b.getUnitAttr(), kLoop.getRegionIterArgs()[0]);
    // The previous step's MMA is done in every warp: refill its stage
    // with the step `stages` after it.
    gpu::BarrierOp::create(b, loc);
    Value refillStep = arith::AddIOp::create(
        b, loc, step, indexConst(b, loc, tiles.stages - 1));
    Value refill = arith::AndIOp::create(
        b, loc,
        arith::AndIOp::create(b, loc, first,
                              arith::CmpIOp::create(b, loc,
                                                    arith::CmpIPredicate::uge,
                                                    step, one)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, refillStep,
                              steps));
    emitIf(b, loc, refill, [&] {
      Value previous = arith::RemUIOp::create(
          b, loc, arith::SubIOp::create(b, loc, step, one), stages);
      pipe.load(b, loc, previous,
                arith::AddIOp::create(b, loc, firstStep, refillStep), row0,
                boxCols);
    });
    scf::YieldOp::create(b, loc, next);
  }
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  // Every stage is read: the accumulators take their place.
  gpu::BarrierOp::create(b, loc);
  Value staged = pipe.view(b, loc, zero, {tiles.m, tiles.n}, b.getF32Type());
  // Upstream's lowering of the store places a thread's rows by its warp in
  // the block (thread id / 32), not in its warpgroup: the rows of
  // warpgroup w land 64 * w rows further than its own, so its view starts
  // that much earlier (at row 64 * w instead of groupRows * w; still
  // inside the staged tile).
  Value groupRows =
      pipe.view(b, loc,
                arith::MulIOp::create(
                    b, loc, warpgroup,
                    indexConst(b, loc, (bytes.groupRows() - 64) * tiles.n * 4)),
                {bytes.groupRows(), tiles.n}, b.getF32Type());
  nvgpu::WarpgroupMmaStoreOp::create(b, loc, kLoop.getResult(0), groupRows);
  gpu::BarrierOp::create(b, loc);

  // The tile's rows inside M.
  Value tileRows =
      arith::MinUIOp::create(b, loc, arith::SubIOp::create(b, loc, m, row0),
                             indexConst(b, loc, tiles.m));
  int64_t rowVectors = tileColumns / width;
  Value epilogueVectors =
      arith::MulIOp::create(b, loc, tileRows, indexConst(b, loc, rowVectors));
  Type partialType = VectorType::get({kPartialWidth}, b.getF32Type());
  llvm::MaybeAlign partialAlignment =
      vectorAlignment(b.getF32Type(), kPartialWidth);
  if (workspace) {
    // The range's partial tile (its rows inside M) to the workspace.
    int64_t partialVectors = tiles.n / kPartialWidth;
    auto copy = scf::ForOp::create(
        b, loc, ids.thread,
        arith::MulIOp::create(b, loc, tileRows,
                              indexConst(b, loc, partialVectors)),
        indexConst(b, loc, tiles.threads()));
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(copy.getBody());
      Value i = copy.getInductionVar();
      Value r =
          arith::DivUIOp::create(b, loc, i, indexConst(b, loc, partialVectors));
      Value c = arith::MulIOp::create(
          b, loc,
          arith::RemUIOp::create(b, loc, i, indexConst(b, loc, partialVectors)),
          indexConst(b, loc, kPartialWidth));
      Value partial =
          vector::LoadOp::create(b, loc, partialType, staged, ValueRange{r, c});
      vector::StoreOp::create(b, loc, partial, workspace->partials,
                              ValueRange{partialOffset(b, tile, range, r, c)},
                              /*nontemporal=*/false, partialAlignment);
    }
    Value isLast = countArrival(
        b, loc, workspace->arrivals, tile, pipe.arrivalSlot(b, loc), first,
        arith::ConstantIntOp::create(b, loc, split - 1, 32));
    // Only the last block runs the epilogue; the others loop over nothing.
    epilogueVectors =
        arith::SelectOp::create(b, loc, isLast, epilogueVectors, zero);
  }

  // The epilogue: vectors of `width` along N, a thread every `threads` of
  // them.
  auto vectors = scf::ForOp::create(b, loc, ids.thread, epilogueVectors,
                                    indexConst(b, loc, tiles.threads()));
  b.setInsertionPointToStart(vectors.getBody());
  Value i = vectors.getInductionVar();
  Value r = arith::DivUIOp::create(b, loc, i, indexConst(b, loc, rowVectors));
  Value c = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, i, indexConst(b, loc, rowVectors)),
      indexConst(b, loc, width));
  Value row = arith::AddIOp::create(b, loc, row0, r);
  Value col = arith::AddIOp::create(b, loc, col0, c);
  // N is a multiple of the width: a vector is all in or all out.
  auto write =
      scf::IfOp::create(b, loc,
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                              col, indexConst(b, loc, nSize)));
  b.setInsertionPoint(write.thenBlock()->getTerminator());
  auto vectorType = VectorType::get({width}, b.getF32Type());
  PointEvaluator evaluator(b, loc, kernel, buffers.inputs, width);
  // A pair's second product is the tile's second half.
  for (auto [i, tiledProduct] : llvm::enumerate(tiled.products)) {
    Value column =
        arith::AddIOp::create(b, loc, c, indexConst(b, loc, i * tileColumns));
    Value product;
    if (!workspace) {
      product = vector::LoadOp::create(b, loc, vectorType, staged,
                                       ValueRange{r, column});
    } else {
      // The ranges' partials, summed in range order.
      for (int64_t q = 0; q < split; ++q) {
        Value partial = vector::LoadOp::create(
            b, loc, vectorType, workspace->partials,
            ValueRange{
                partialOffset(b, tile, indexConst(b, loc, q), r, column)},
            /*nontemporal=*/false, vectorAlignment(b.getF32Type(), width));
        product =
            product ? arith::AddFOp::create(b, loc, product, partial) : partial;
      }
    }
    if (width == 1)
      product = vector::ExtractOp::create(b, loc, product, 0);
    // The product is rounded to its type, as the op defines it.
    product = extendToF32(b, loc, roundTo(b, loc, product, element));
    evaluator.known[tiledProduct.value] = product;
  }
  SmallVector<Value> index = {row, col};
  return evaluator.storeOutputs(buffers.outputs, index, width > 1);
}

LogicalResult codegen::emitMatmulWgmma(OpBuilder &b, Location loc,
                                       KernelOp kernel, KernelPlanAttr plan,
                                       const KernelBuffers &buffers) {
  FailureOr<TiledProducts> tiled = getTiledProducts(kernel);
  if (failed(tiled))
    return kernel.emitOpError("matmul_wgmma needs the products of "
                              "TiledProducts (checked by the plan)");
  auto manyRows = [&](OpBuilder &b) {
    return TileLaunch(loc, kernel, plan, buffers, *tiled, kWgmmaTiles,
                      /*split=*/1)
        .emit(b, /*workspace=*/nullptr, "");
  };
  auto fewRows = [&](OpBuilder &b) {
    int64_t split = plan.getSplit();
    TileLaunch launch(loc, kernel, plan, buffers, *tiled, kWgmmaFewRowTiles,
                      split);
    if (split == 1)
      return launch.emit(b, /*workspace=*/nullptr, "_few_rows");
    SplitWorkspace workspace{
        allocateScratch(b, loc, b.getF32Type(), launch.partialElements(b),
                        /*zeroed=*/false),
        allocateScratch(b, loc, b.getI32Type(), launch.tileCount(b),
                        /*zeroed=*/true)};
    if (failed(launch.emit(b, &workspace, "_few_rows")))
      return failure();
    for (Value buffer : {workspace.partials, workspace.arrivals})
      releaseScratch(b, loc, buffer);
    return success();
  };
  // No rows go to the many-row kernel, whose grid of one block does
  // nothing.
  int64_t m = tiled->shape[0];
  if (!ShapedType::isDynamic(m))
    return m > 0 && m <= kWgmmaFewRows ? fewRows(b) : manyRows(b);
  Value rows = memref::DimOp::create(b, loc, buffers.outputs[0], 0);
  Value few = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, rows,
                            indexConst(b, loc, 0)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, rows,
                            indexConst(b, loc, kWgmmaFewRows)));
  auto choice = scf::IfOp::create(b, loc, few, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(choice.thenBlock()->getTerminator());
  if (failed(fewRows(b)))
    return failure();
  b.setInsertionPoint(choice.elseBlock()->getTerminator());
  return manyRows(b);
}
