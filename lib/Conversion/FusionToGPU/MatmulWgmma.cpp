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
// ragged sizes need no masks on the way in. The epilogue evaluates the
// kernel's outputs on the accumulators as vectors along N, masked at the
// edges of M and N, and stores each output once.
//
// Unsplit, the grid is persistent (a block per multiprocessor, looping over
// tiles) and warp-specialized: a warpgroup of its own loads each stage once
// the MMAs have released it (an "empty" mbarrier per stage), so the next
// tile's first stages load while the epilogue runs, each warp passing its
// rows of the accumulators through its own shared memory past the stages.
// (With prologues rewritten in place, thread 0 loads and a block barrier
// orders each step.) A split's blocks (and kernels whose threads evaluate
// prologues) take a tile and K range each.
//
// Many rows run 256 x 128 tiles of two warpgroups. At most 256 rows
// (decode, small batches) the weights' bytes weigh more than the FLOPs:
// 64 x 256 tiles of one warpgroup (64 x 128 for a single product of kernel
// inputs, getWgmmaFewRowTiles), K cut
// into the plan's `split` ranges, a block each, so that enough blocks stream
// B at once. Each range's partial tile goes to a workspace and its arrival
// is counted: warp by warp in a warp-specialized kernel (the position's
// last warp sums, emitWarpSplitEpilogue), else block by block through the
// accumulators staged where the stages were. The last sums the partials
// in range order (the same result whichever is last) and runs the
// epilogue. With M dynamic the host picks the kernel from M.
//
// An operand computed by elementwise math on kernel inputs (a prologue:
// convert, a scale per row or per column) is, in the few-row kernel, never
// written: with an input of its shape and type, TMA loads that input and
// the block's threads rewrite the tile in place, a step ahead, while the
// MMA of the step before runs; otherwise the threads evaluate the tile
// from the inputs, 8 elements along a row at a time, and store it where
// TMA would (swizzled), zeros past the edges, as they refill a stage. Both
// fence their stores for the tensor cores. The many-row kernel reads each
// operand tile many times, so it materializes the prologues first.
//
// A pair of products sharing A (TiledProducts: the gated MLP's two halves)
// loads half of B's tile from each, so each accumulator holds both
// products of half as many output columns and the epilogue combines them.
//
// The tensor maps are created on the host (mgpuTensorMapEncodeTiledMemref
// in the runtime) before the launch.
//
//===----------------------------------------------------------------------===//

#include "Hopper.h"
#include "PointEvaluator.h"
#include "Strategies.h"

#include "fusion/Conversion/ScalarOps.h"
#include "fusion/Dialect/Fusion/Analysis/KernelPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
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
              kWgmmaFewRowNarrowTiles.n % kBoxColumns == 0 &&
              kWgmmaTiles.n <= kMaxBoxesB * kBoxColumns &&
              kWgmmaFewRowTiles.n <= kMaxBoxesB * kBoxColumns);
/// Shared bytes past the stages: the split's arrival count.
constexpr int64_t kArrivalBytes = 16;
/// Tile rows of a group of tiles (see the launch body).
constexpr int64_t kRasterRows = 8;
/// Rows of a fragment of the accumulators a warp holds (of each 64).
constexpr int64_t kWarpRows = 16;
/// Vectors of a warp's rows the epilogue evaluates together before storing
/// them (a multiple of each vector count that warps hold).
constexpr int64_t kEpilogueBatch = 8;
/// The loading warpgroup of a warp-specialized kernel, and the registers
/// a thread keeps on each side (setmaxnreg): the loads need few (40
/// spilled), the accumulators many. setmaxnreg.inc waits until the block's
/// pool holds the registers, and the pool is what the block was launched
/// with (ptxas gives each of 384 threads 168): past that it waits forever
/// (H200, 2026-12-02, 48 and 232).
constexpr int64_t kProducerThreads = 128;
constexpr int32_t kProducerRegisters = 56;
constexpr int32_t kConsumerRegisters = 224;
/// Whether the roles' registers fit what a warp-specialized block of
/// `tiles` is launched with.
constexpr bool fitsLaunchRegisters(const WgmmaTiles &tiles) {
  int64_t threads = tiles.threads() + kProducerThreads;
  return kProducerThreads * kProducerRegisters +
             tiles.threads() * kConsumerRegisters <=
         65536 / threads / 8 * 8 * threads;
}
static_assert(fitsLaunchRegisters(kWgmmaTiles) &&
              fitsLaunchRegisters(kWgmmaFewRowTiles) &&
              fitsLaunchRegisters(kWgmmaFewRowNarrowTiles));
/// Elements of a partial tile's vectors in the workspace.
constexpr int64_t kPartialWidth = 4;
/// A swizzled row is 128 bytes: 8 units of 16 bytes (8 elements), unit u of
/// row r stored at unit u ^ (r % 8).
constexpr int64_t kSwizzleUnits = 8;
constexpr int64_t kUnitElements = 8;
/// Units a thread evaluates before it stores them when it fills a prologue:
/// their loads are in flight together, within a register budget next to the
/// accumulators.
constexpr int64_t kFillBatch = 4;

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
  /// A warp's rows of the tile in the persistent kernel's epilogue, past
  /// the stages and the split's arrival count.
  constexpr int64_t warpRowsBytes() const { return kWarpRows * tiles.n * 2; }
  constexpr int64_t warpStagingOffset() const {
    return stages() + kArrivalBytes;
  }
  constexpr int64_t warpStagingBytes() const {
    return tiles.threads() / 32 * warpRowsBytes();
  }
  /// The f32 accumulator tile staged for the epilogue takes the stages'
  /// place.
  constexpr bool stagesHoldAccumulators() const {
    return tiles.m * tiles.n * 4 <= stages();
  }
};
static_assert(TileBytes{kWgmmaTiles}.stagesHoldAccumulators() &&
              TileBytes{kWgmmaFewRowTiles}.stagesHoldAccumulators() &&
              TileBytes{kWgmmaFewRowNarrowTiles}.stagesHoldAccumulators());
/// A block's shared memory (at most 227 KiB, static objects included: the
/// mbarriers, inside the alignment's slack) holds the warps' rows too.
static_assert(TileBytes{kWgmmaTiles}.warpStagingOffset() +
                      TileBytes{kWgmmaTiles}.warpStagingBytes() +
                      kSwizzleAlignment <=
                  227 * 1024 &&
              TileBytes{kWgmmaFewRowTiles}.warpStagingOffset() +
                      TileBytes{kWgmmaFewRowTiles}.warpStagingBytes() +
                      kSwizzleAlignment <=
                  227 * 1024);

/// What the launch body works on: the shared stages, their barriers and
/// the tensor maps.
struct Pipeline {
  TileBytes bytes;
  Value shared;   // the dynamic shared memory, as bytes
  Value base;     // offset of the first stage (swizzle-aligned)
  Value barriers; // one mbarrier per stage
  /// A's tensor map; null when A is a prologue the threads fill.
  Value mapA;
  /// The tensor map each box of B's tile is loaded from; null for a box of
  /// a prologue.
  SmallVector<Value, kMaxBoxesB> mapsB;
  Type element;
  /// The block's rank in its cluster (null without one): the block of
  /// rank r loads the boxes g of A's tile with g % tiles().clusterBlocks ==
  /// r into every block of the cluster.
  Value rank;

  /// Bytes of a stage that TMA loads (into it, from any block).
  int64_t tmaBytes() const {
    int64_t loaded = mapA ? bytes.a() : 0;
    for (Value map : mapsB)
      if (map)
        loaded += tiles().k * kBoxColumns * 2;
    return loaded;
  }

  const WgmmaTiles &tiles() const { return bytes.tiles; }
  Value view(OpBuilder &b, Location loc, Value offset, ArrayRef<int64_t> shape,
             Type type) const {
    return memref::ViewOp::create(b, loc, sharedTile(shape, type), shared,
                                  arith::AddIOp::create(b, loc, base, offset),
                                  ValueRange{});
  }
  /// A block's steps along K are numbered across its work items: step g
  /// uses stage g % stages, whose barriers complete for the
  /// (g / stages)-th time, a phase of parity (g / stages) % 2.
  Value stageOf(OpBuilder &b, Location loc, Value g) const {
    return arith::RemUIOp::create(b, loc, g,
                                  indexConst(b, loc, tiles().stages));
  }
  Value parityOf(OpBuilder &b, Location loc, Value g) const {
    return arith::IndexCastOp::create(
        b, loc, b.getI1Type(),
        arith::RemUIOp::create(
            b, loc,
            arith::DivUIOp::create(b, loc, g,
                                   indexConst(b, loc, tiles().stages)),
            indexConst(b, loc, 2)));
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

  /// The loading thread's loads of step `step` along K into `stage`: A's
  /// rows from `row` (its part of them, into every block of a cluster), box
  /// j of B's tile from column `boxCols[j]`, completing the stage's barrier
  /// (in each block, which a cluster's multicast completes too).
  void load(OpBuilder &b, Location loc, Value stage, Value step, Value row,
            ArrayRef<Value> boxCols) const {
    expectStage(b, loc, stage);
    loadTiles(b, loc, stage, step, row, boxCols);
  }
  /// The stage's barrier expects all of its TMA bytes (once a fill, before
  /// any of its loads is issued).
  void expectStage(OpBuilder &b, Location loc, Value stage) const {
    nvgpu::MBarrierArriveExpectTxOp::create(
        b, loc, barriers, indexConst(b, loc, tmaBytes()), stage,
        /*predicate=*/Value());
  }
  /// Issues the loads of `step`'s tiles into `stage` from the tensor maps
  /// `selected` takes (every map without it).
  void loadTiles(OpBuilder &b, Location loc, Value stage, Value step, Value row,
                 ArrayRef<Value> boxCols,
                 function_ref<bool(Value)> selected = {}) const {
    auto takes = [&](Value map) { return map && (!selected || selected(map)); };
    Value k =
        arith::MulIOp::create(b, loc, step, indexConst(b, loc, tiles().k));
    int64_t clusterBlocks = tiles().clusterBlocks;
    Value multicast;
    if (rank)
      multicast = arith::ConstantIntOp::create(
          b, loc, (int64_t(1) << clusterBlocks) - 1, 16);
    // Coordinates are innermost first.
    for (int64_t group = 0; takes(mapA) && group < tiles().warpgroups;
         ++group) {
      Value boxRow = arith::AddIOp::create(
          b, loc, row, indexConst(b, loc, group * bytes.groupRows()));
      Value mine;
      if (rank)
        mine = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rank,
                                     indexConst(b, loc, group % clusterBlocks));
      nvgpu::TmaAsyncLoadOp::create(
          b, loc, tileA(b, loc, stage, indexConst(b, loc, group)), barriers,
          mapA, ValueRange{k, boxRow}, stage, multicast, mine);
    }
    for (auto [box, mapB] : llvm::enumerate(mapsB))
      if (takes(mapB))
        nvgpu::TmaAsyncLoadOp::create(
            b, loc, tileB(b, loc, stage, kBoxColumns, box * kBoxColumns),
            barriers, mapB, ValueRange{boxCols[box], k}, stage,
            /*multicastMask=*/Value(), /*predicate=*/Value());
  }
};

/// The row and first column of vector `i` of a row-major walk over rows
/// of `rowVectors` vectors of `width` elements.
std::pair<Value, Value> vectorPosition(OpBuilder &b, Location loc, Value i,
                                       int64_t rowVectors, int64_t width) {
  Value vectors = indexConst(b, loc, rowVectors);
  return {arith::DivUIOp::create(b, loc, i, vectors),
          arith::MulIOp::create(b, loc,
                                arith::RemUIOp::create(b, loc, i, vectors),
                                indexConst(b, loc, width))};
}

/// The kernel inputs that prologue `operand` (a kernel body value) reads,
/// in argument order.
SmallVector<BlockArgument> getPrologueInputs(Value operand) {
  SmallVector<unsigned> numbers =
      llvm::to_vector(getInputsReadBy(ArrayRef<Value>{operand}));
  llvm::sort(numbers);
  return llvm::map_to_vector(numbers, [&](unsigned n) {
    return operand.getParentBlock()->getArgument(n);
  });
}

/// The workspace of a split: a partial tile per tile and K range (f32,
/// `tiles.m` x `tiles.n`), and an arrival count per tile (zero between
/// launches: acquireArrivalCounters).
struct SplitWorkspace {
  Value partials, arrivals;
};

/// The buffer TMA loads each matmul operand (a body value) from; an
/// operand without one is a prologue the threads evaluate into the tiles.
using OperandBuffers = llvm::SmallDenseMap<Value, Value, 4>;

/// Where the tiles of a kernel's operands come from.
struct OperandSources {
  /// The buffer TMA loads an operand's tile from: a kernel input, the
  /// input a prologue transforms in place, or a materialized prologue.
  OperandBuffers loaded;
  /// Prologues transformed in place: TMA loads this input (of the
  /// operand's shape and type) into the tile, which the threads then
  /// rewrite with the prologue's value.
  llvm::SmallDenseMap<Value, BlockArgument, 4> inPlace;
};

/// One launch of the strategy: tiles of `tiles`, K cut into `split`
/// ranges (through `workspace` when more than one), operands from
/// `sources`.
class TileLaunch {
public:
  TileLaunch(Location loc, KernelOp kernel, KernelPlanAttr plan,
             const KernelBuffers &buffers, const TiledProducts &tiled,
             const WgmmaTiles &tiles, int64_t split,
             const OperandSources &sources)
      : loc(loc), kernel(kernel), plan(plan), buffers(buffers), tiled(tiled),
        tiles(tiles), bytes{tiles}, split(split), sources(sources) {
    MatmulOp matmul = tiled.products.front().matmul;
    element = getElementTypeOrSelf(matmul.getA().getType());
    kSize = shapeOf(matmul.getA())[1];
    kSteps = llvm::divideCeil(kSize, tiles.k);
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
  /// A row of tiles' cluster items: a cluster computes clusterBlocks()
  /// neighbouring tiles of the row (with an odd count of tiles and
  /// clusters of two, the last item's second tile is past N: it loads
  /// zeros and stores nothing).
  int64_t clusterColumns() const {
    return llvm::divideCeil(nTiles, clusterBlocks());
  }
  /// The launch's cluster items (a tile each without a cluster).
  Value clusterItems(OpBuilder &b) const {
    return arith::MulIOp::create(b, loc, rowTiles(b).second,
                                 indexConst(b, loc, clusterColumns()));
  }
  /// The i32 arrival counters of a split: one per tile, or per warp of
  /// each tile where the warps arrive on their own
  /// (emitWarpSplitEpilogue).
  Value arrivalCount(OpBuilder &b) const {
    return arith::MulIOp::create(
        b, loc, tileCount(b),
        indexConst(b, loc, isWarpSpecialized() ? tiles.threads() / 32 : 1));
  }
  /// The f32 elements of a split's partial tiles.
  Value partialElements(OpBuilder &b) const {
    return arith::MulIOp::create(b, loc, tileCount(b),
                                 indexConst(b, loc, split * tiles.m * tiles.n));
  }

  LogicalResult emit(OpBuilder &b, const SplitWorkspace *workspace,
                     StringRef nameSuffix);

private:
  /// A block's unit of work: an output tile's products over K range
  /// `range` (`tile` numbers the tile, or a cluster's tiles, for a split's
  /// partials), the tile's first row and column, the first output column of
  /// each of B's boxes, and the range's steps along K.
  struct WorkItem {
    Value tile, range, row0, col0;
    SmallVector<Value, kMaxBoxesB> boxCols;
    Value firstStep, steps;
  };
  /// Work item `item` (tile item / split, range item % split); in a
  /// cluster, the tile of rank `rank` of the cluster's item.
  WorkItem workItem(OpBuilder &b, Value item, Value rowTileCount,
                    Value rank = Value()) const;
  /// The buffer TMA loads `operand` from; null for a prologue the threads
  /// evaluate.
  Value bufferOf(Value operand) const { return sources.loaded.lookup(operand); }
  /// Whether TMA loads `operand` as it is from a settled kernel input.
  bool isSettled(Value operand) const {
    auto arg = dyn_cast<BlockArgument>(operand);
    return arg && bufferOf(operand) && !sources.inPlace.contains(operand) &&
           buffers.isSettled(arg.getArgNumber());
  }
  /// The dynamic shared memory's stages and their barriers (the stages'
  /// "full" barriers, completed by TMA's bytes).
  Pipeline createPipeline(OpBuilder &b) const;
  LogicalResult emitBody(OpBuilder &b, const LaunchIds &ids,
                         const SplitWorkspace *workspace);
  /// The loading thread's prefetch of the tensor maps (none with K = 0: the
  /// operands are empty and have none).
  void prefetchTensorMaps(OpBuilder &b) const {
    if (kSteps == 0)
      return;
    if (mapA)
      nvgpu::TmaPrefetchOp::create(b, loc, mapA, /*predicate=*/Value());
    for (auto [buffer, map] : mapOfBuffer)
      nvgpu::TmaPrefetchOp::create(b, loc, map, /*predicate=*/Value());
  }
  /// The body of a warp-specialized kernel (isWarpSpecialized): the last
  /// warpgroup's first thread loads every stage of the block's tiles once
  /// the multiplying warps have released it; they multiply and run each
  /// tile's epilogue (emitWarpEpilogue).
  LogicalResult emitWarpSpecializedBody(OpBuilder &b, const LaunchIds &ids,
                                        const SplitWorkspace *workspace);
  /// The loop over a work item's steps along K, carrying a warpgroup's
  /// accumulators (zeros at first), and their type.
  std::pair<nvgpu::WarpgroupAccumulatorType, scf::ForOp>
  createKLoop(OpBuilder &b, const WorkItem &work) const {
    auto type = nvgpu::WarpgroupAccumulatorType::get(
        b.getContext(),
        VectorType::get({bytes.groupRows(), tiles.n}, b.getF32Type()));
    Value zeros = nvgpu::WarpgroupMmaInitAccumulatorOp::create(b, loc, type);
    return {type, scf::ForOp::create(b, loc, indexConst(b, loc, 0), work.steps,
                                     indexConst(b, loc, 1), ValueRange{zeros})};
  }
  /// Warpgroup `warpgroup`'s MMA of the tiles in `stage` into
  /// `accumulator`, once all but this MMA are done.
  Value emitStepMma(OpBuilder &b, const Pipeline &pipe, Value stage,
                    Value warpgroup,
                    nvgpu::WarpgroupAccumulatorType accumulatorType,
                    Value accumulator) const;
  /// A warpgroup's accumulators as the LLVM struct upstream's lowering
  /// makes of them: a struct of 64 rows' fragments per 64 rows, each
  /// tiles.n / 2 floats (reconcile-unrealized-casts folds this cast with
  /// the lowering's).
  Value accumulatorRegisters(OpBuilder &b, Value accumulator) const {
    MLIRContext *context = b.getContext();
    auto fragmentType = LLVM::LLVMStructType::getLiteral(
        context, SmallVector<Type>(tiles.n / 2, b.getF32Type()));
    auto type = LLVM::LLVMStructType::getLiteral(
        context, SmallVector<Type>(bytes.groupRows() / 64, fragmentType));
    return UnrealizedConversionCastOp::create(b, loc, type, accumulator)
        .getResult(0);
  }
  /// A multiplying thread's lane, warp in the block, and the output row
  /// of its warp's first row in `work`'s tile (of the first 64 rows of
  /// its warpgroup's; lane l of warp w holds rows 16 w + l / 4 and 8 below
  /// of each 64).
  std::tuple<Value, Value, Value> warpPlace(OpBuilder &b, Value thread,
                                            const WorkItem &work) const {
    Value lane = arith::RemUIOp::create(b, loc, thread, indexConst(b, loc, 32));
    Value warpInBlock =
        arith::DivUIOp::create(b, loc, thread, indexConst(b, loc, 32));
    Value warp =
        arith::RemUIOp::create(b, loc, warpInBlock, indexConst(b, loc, 4));
    Value warpgroup =
        arith::DivUIOp::create(b, loc, thread, indexConst(b, loc, 128));
    Value row0 = arith::AddIOp::create(
        b, loc, work.row0,
        arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(b, loc, warpgroup,
                                  indexConst(b, loc, bytes.groupRows())),
            arith::MulIOp::create(b, loc, warp, indexConst(b, loc, 16))));
    return {lane, warpInBlock, row0};
  }
  /// The epilogue of a persistent grid's tile, on its accumulators: each
  /// warp rounds its rows to the product's type into its own part of the
  /// shared memory past the stages (which the next tile's loads fill
  /// meanwhile), reads them back along the rows and evaluates and stores
  /// the outputs on vectors of the plan's width, masked at the edges of M
  /// and N.
  LogicalResult emitWarpEpilogue(OpBuilder &b, const Pipeline &pipe,
                                 Value thread, Value accumulator,
                                 const WorkItem &work, Value m) const;
  /// The same on the f32 values a lane holds, given as `columnPairs`: for
  /// a fragment and its columns 8 j, the lane's pairs of its row and of
  /// the row 8 below (floats 4 j to 4 j + 3 of the fragment).
  using ColumnPairs =
      function_ref<std::pair<Value, Value>(int64_t fragment, int64_t j)>;
  LogicalResult emitWarpEpilogue(OpBuilder &b, const Pipeline &pipe,
                                 Value thread, ColumnPairs columnPairs,
                                 const WorkItem &work, Value m) const;
  /// The epilogue of a split's range in a warp-specialized kernel, warp
  /// by warp (no block barrier: the loading warpgroup is elsewhere): each
  /// warp with rows inside M stores its accumulators to the workspace as
  /// its lanes hold them and counts its arrival; the last warp of each
  /// position in the tile sums that position's partials in range order
  /// (the same result whichever range is last) and runs emitWarpEpilogue
  /// on the sums.
  LogicalResult emitWarpSplitEpilogue(OpBuilder &b, const Pipeline &pipe,
                                      Value thread, Value accumulator,
                                      const WorkItem &work, Value m,
                                      const SplitWorkspace &workspace) const;
  /// The epilogue through shared memory: the accumulators staged where
  /// the stages were; with a split, the range's partial tile to the
  /// workspace and, on the tile's last block, the partials summed in range
  /// order; the outputs evaluated on vectors of the plan's width along N.
  LogicalResult emitStagedEpilogue(OpBuilder &b, const LaunchIds &ids,
                                   const Pipeline &pipe,
                                   const SplitWorkspace *workspace,
                                   Value accumulator, const WorkItem &work,
                                   Value m) const;
  /// Whether the threads evaluate an operand's tiles from the inputs (a
  /// prologue without a buffer to load).
  bool hasEvaluatedPrologues() const {
    return llvm::any_of(tiled.products, [&](TiledProducts::Product p) {
      return !bufferOf(p.matmul.getA()) || !bufferOf(p.matmul.getB());
    });
  }
  /// Whether the grid is persistent (a block per multiprocessor, each
  /// looping over tiles) with the warps' epilogue (emitWarpEpilogue):
  /// unless K is split (the ranges' partials go through the stages), or
  /// the threads evaluate prologues (the loop around their tile fills
  /// spilled: 255 registers and 192 bytes of stack, ptxas, 2026-12-01).
  bool isPersistent() const { return split == 1 && !hasEvaluatedPrologues(); }
  /// Whether the loads are a warpgroup's of their own, persistent or
  /// split: unless the threads evaluate prologues or rewrite stages in
  /// place (the writes and the MMA then share the block barrier of every
  /// step). A split's blocks then keep all their stages loading instead
  /// of refilling each after a block barrier (H100, 2026-12-06, decode's
  /// down projection, 8 ranges of 16 tiles: 38.1 -> 36.4 us).
  bool isWarpSpecialized() const {
    return !hasEvaluatedPrologues() && !hasInPlacePrologues();
  }
  /// Blocks of a cluster of the launch: the tiles' where a warp-specialized
  /// kernel's loaders share A's tiles; else one.
  int64_t clusterBlocks() const {
    return isWarpSpecialized() ? tiles.clusterBlocks : 1;
  }
  /// Threads of the launch: the warpgroups that multiply, and the loading
  /// one of a warp-specialized kernel.
  int64_t launchThreads() const {
    return tiles.threads() + (isWarpSpecialized() ? kProducerThreads : 0);
  }
  /// Whether the threads rewrite an operand's tiles after TMA loads them.
  bool hasInPlacePrologues() const { return !sources.inPlace.empty(); }
  /// A value of the tensor-map type that a warpgroup descriptor of an
  /// operand loaded in boxes of `box` takes: its map, or for a prologue
  /// (no map) a poison of that type. The descriptor reads only the type's
  /// swizzling.
  Value typeCarrier(OpBuilder &b, Value map, ArrayRef<int64_t> box) const {
    if (map)
      return map;
    return ub::PoisonOp::create(b, loc, tensorMapType(box, element));
  }
  /// The product whose B box `box` of a tile holds.
  MatmulOp productOfBox(int64_t box) const {
    int64_t productBoxes = tileColumns / kBoxColumns;
    return tiled.products[box / productBoxes].matmul;
  }
  /// The thread's part of writing the prologues' values into `stage`
  /// for step `step`, then the fence that shows its stores to the tensor
  /// cores (nothing without such prologues): those the threads evaluate
  /// from the inputs (`inPlace` false, into a stage TMA does not fill), or
  /// those transformed in place (`inPlace`, once TMA has filled the stage).
  /// In place, `waitForStage` waits for TMA to fill the stage (after the
  /// other inputs' loads are issued).
  LogicalResult writePrologues(OpBuilder &b, const Pipeline &pipe, Value thread,
                               Value stage, Value step, Value row0,
                               ArrayRef<Value> boxCols, Value m, bool inPlace,
                               function_ref<void()> waitForStage = {}) const;
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
  const OperandSources &sources;
  Type element;
  int64_t kSize, kSteps, nSize, tileColumns, nTiles;
  // Made on the host, used in the launch.
  Value mapA;
  SmallVector<Value, kMaxBoxesB> mapsB;
  /// Box j of B's tile starts `boxOffsets[j]` columns past the tile's
  /// first output column (in its product's B).
  SmallVector<int64_t, kMaxBoxesB> boxOffsets;
  llvm::SmallMapVector<Value, Value, kMaxBoxesB> mapOfBuffer;
  /// The tensor maps of settled kernel inputs (KernelBuffers::settled) in
  /// a warp-specialized kernel without a cluster: the block's first stages
  /// of them load before the wait for the grid before this one.
  llvm::SmallDenseSet<Value, kMaxBoxesB> settledMaps;
};

} // namespace

LogicalResult TileLaunch::emit(OpBuilder &b, const SplitWorkspace *workspace,
                               StringRef nameSuffix) {
  // On the host: the tensor maps and the grid.
  // Prologues have no tensor map: the threads fill their tiles.
  Value a = MatmulOp(tiled.products.front().matmul).getA();
  if (Value buffer = bufferOf(a))
    mapA = createTensorMap(b, loc, buffer, {bytes.groupRows(), tiles.k});
  // Each product's boxes in turn (a pair's first product fills the first
  // half of the tile).
  int64_t productBoxes = tileColumns / kBoxColumns;
  for (int64_t box = 0; box < tiles.n / kBoxColumns; ++box) {
    TiledProducts::Product product = tiled.products[box / productBoxes];
    boxOffsets.push_back(product.column + box % productBoxes * kBoxColumns);
    Value buffer = bufferOf(product.matmul.getB());
    if (!buffer) {
      mapsB.push_back(Value());
      continue;
    }
    auto [it, inserted] = mapOfBuffer.try_emplace(buffer);
    if (inserted)
      it->second = createTensorMap(b, loc, buffer, {tiles.k, kBoxColumns});
    mapsB.push_back(it->second);
  }
  if (isWarpSpecialized() && clusterBlocks() == 1) {
    if (mapA && isSettled(a))
      settledMaps.insert(mapA);
    for (auto [box, map] : llvm::enumerate(mapsB))
      if (map &&
          isSettled(MatmulOp(tiled.products[box / productBoxes].matmul).getB()))
        settledMaps.insert(map);
  }
  Value blocks =
      arith::MulIOp::create(b, loc, tileCount(b), indexConst(b, loc, split));
  // Unsplit, the grid is persistent: a block per multiprocessor (one fits
  // each), looping over the tiles, so that a tile's epilogue runs while
  // the next one's first stages load. Clusters loop over their items
  // together: as many as the multiprocessors hold (a cluster's blocks are
  // in one GPC, whose multiprocessors come in pairs), at least one.
  int64_t cluster = clusterBlocks();
  if (isPersistent()) {
    FailureOr<Value> multiprocessors = multiprocessorCount(b, loc);
    if (failed(multiprocessors))
      return failure();
    Value clusterSize = indexConst(b, loc, cluster);
    Value clusters = arith::MinUIOp::create(
        b, loc, clusterItems(b),
        arith::DivUIOp::create(b, loc, *multiprocessors, clusterSize));
    blocks = arith::MulIOp::create(
        b, loc, arith::MaxUIOp::create(b, loc, clusters, indexConst(b, loc, 1)),
        clusterSize);
  }
  int64_t sharedBytes = bytes.stages() + kArrivalBytes + kSwizzleAlignment;
  // The warps' epilogue (persistent or warp-specialized) stages each
  // warp's rows past the stages.
  if (isPersistent() || isWarpSpecialized())
    sharedBytes += bytes.warpStagingBytes();
  return emitLaunch(
      b, loc, kernel, blocks, launchThreads(),
      [&](OpBuilder &b, const LaunchIds &ids) {
        if (isWarpSpecialized())
          return emitWarpSpecializedBody(b, ids, workspace);
        return emitBody(b, ids, workspace);
      },
      /*shared=*/{}, /*clusterBlocks=*/cluster > 1 ? cluster : 0, sharedBytes,
      nameSuffix);
}

/// The value of kernel input `input` that prologue `operand` reads at its
/// element (`row`, `column`), loaded by `evaluator`: lanes along the row,
/// or one value where the input is broadcast along it.
static Value loadPrologueInput(OpBuilder &b, Location loc,
                               PointEvaluator &evaluator, BlockArgument input,
                               Value operand, Value row, Value column) {
  SmallVector<Value> index;
  SmallVector<std::optional<int64_t>> sources =
      getBroadcastSources(shapeOf(input), shapeOf(operand));
  Value operandIndex[] = {row, column};
  for (std::optional<int64_t> source : sources)
    index.push_back(source ? operandIndex[*source] : indexConst(b, loc, 0));
  // Broadcast along the row: one value for all lanes.
  bool lanes = !sources.empty() && sources.back().has_value();
  return evaluator.load(input, index, lanes);
}

LogicalResult
TileLaunch::writePrologues(OpBuilder &b, const Pipeline &pipe, Value thread,
                           Value stage, Value step, Value row0,
                           ArrayRef<Value> boxCols, Value m, bool inPlace,
                           function_ref<void()> waitForStage) const {
  // A part of the stage that an operand's prologue writes: `rows` swizzled
  // rows from byte `offset`, element (r, c) of the part being the
  // operand's element (row + r, column + c), zero from `rowLimit` and
  // `columnLimit` on (as TMA fills).
  struct Part {
    Value operand;
    int64_t offset, rows;
    Value row, column, rowLimit, columnLimit;
  };
  // Whether this pass writes `operand`.
  auto writes = [&](Value operand) {
    return inPlace ? sources.inPlace.contains(operand) : !bufferOf(operand);
  };
  SmallVector<Part> parts;
  Value k0 = arith::MulIOp::create(b, loc, step, indexConst(b, loc, tiles.k));
  Value kLimit = indexConst(b, loc, kSize);
  Value a = MatmulOp(tiled.products.front().matmul).getA();
  if (writes(a))
    parts.push_back({a, 0, tiles.m, row0, k0, m, kLimit});
  for (auto [box, column] : llvm::enumerate(boxCols)) {
    Value operand = productOfBox(box).getB();
    if (writes(operand))
      parts.push_back(
          {operand,
           bytes.a() + static_cast<int64_t>(box) * tiles.k * kBoxColumns * 2,
           tiles.k, k0, column, kLimit,
           indexConst(b, loc, shapeOf(operand)[1])});
  }
  if (parts.empty())
    return success();

  Value tile = pipe.view(b, loc, pipe.stageOffset(b, loc, stage),
                         {bytes.stage() / 2}, element);
  auto unitType = VectorType::get({kUnitElements}, element);
  llvm::MaybeAlign unitAlignment = vectorAlignment(element, kUnitElements);
  Value zeros = arith::ConstantOp::create(
      b, loc, unitType, cast<TypedAttr>(b.getZeroAttr(unitType)));
  Value units8 = indexConst(b, loc, kSwizzleUnits);
  // The element offset in the stage of unit u of row r of a part from
  // byte `partOffset`: unit u ^ (r % 8) of the row's 128 bytes.
  auto unitOffset = [&](Value r, Value u, int64_t partOffset) -> Value {
    Value swizzled = arith::XOrIOp::create(
        b, loc, u, arith::RemUIOp::create(b, loc, r, units8));
    return arith::AddIOp::create(
        b, loc, indexConst(b, loc, partOffset / 2),
        arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(
                b, loc, r, indexConst(b, loc, kSwizzleUnits * kUnitElements)),
            arith::MulIOp::create(b, loc, swizzled,
                                  indexConst(b, loc, kUnitElements))));
  };
  PointEvaluator evaluator(b, loc, kernel, buffers.inputs, kUnitElements);
  // The thread's units of a part, `threads` apart (neighbouring threads
  // read neighbouring 16 bytes of a row), in batches whose loads are in
  // flight together. A loop over the batches keeps each unit's addresses
  // in the loop rather than hoisted out of the K loop, live all along.
  for (const Part &part : parts) {
    int64_t count = part.rows * kSwizzleUnits / tiles.threads();
    int64_t batch = std::min(kFillBatch, count);
    assert(part.rows * kSwizzleUnits % tiles.threads() == 0 &&
           count % batch == 0 && "whole batches of units per thread");
    auto batches = scf::ForOp::create(b, loc, indexConst(b, loc, 0),
                                      indexConst(b, loc, count / batch),
                                      indexConst(b, loc, 1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(batches.getBody());
    PointEvaluator::CacheScope scope(evaluator);
    Value firstUnit = arith::AddIOp::create(
        b, loc, thread,
        arith::MulIOp::create(b, loc, batches.getInductionVar(),
                              indexConst(b, loc, batch * tiles.threads())));
    // First every unit's indices and loads of the inputs from memory,
    // issued together (and, in place, before the wait for the stage, so
    // that their latency overlaps it); then the math and the stores.
    struct Unit {
      Value row, column, offset;
      SmallVector<Value> inputs;
    };
    SmallVector<Unit> units;
    BlockArgument source = sources.inPlace.lookup(part.operand);
    SmallVector<BlockArgument> inputs = getPrologueInputs(part.operand);
    llvm::erase(inputs, source);
    for (int64_t q = 0; q < batch; ++q) {
      Value i = arith::AddIOp::create(b, loc, firstUnit,
                                      indexConst(b, loc, q * tiles.threads()));
      Value r = arith::DivUIOp::create(b, loc, i, units8);
      Value u = arith::RemUIOp::create(b, loc, i, units8);
      Unit unit;
      unit.offset = unitOffset(r, u, part.offset);
      unit.row = arith::AddIOp::create(b, loc, part.row, r);
      unit.column = arith::AddIOp::create(
          b, loc, part.column,
          arith::MulIOp::create(b, loc, u, indexConst(b, loc, kUnitElements)));
      // Every unit reads inside the operand (a unit past its edges reads
      // the last one and is dropped), so that no branch waits on a load.
      Value inRow = arith::MinUIOp::create(
          b, loc, unit.row,
          arith::SubIOp::create(b, loc, part.rowLimit, indexConst(b, loc, 1)));
      Value inColumn = arith::MinUIOp::create(
          b, loc, unit.column,
          arith::SubIOp::create(b, loc, part.columnLimit,
                                indexConst(b, loc, kUnitElements)));
      for (BlockArgument input : inputs)
        unit.inputs.push_back(loadPrologueInput(b, loc, evaluator, input,
                                                part.operand, inRow, inColumn));
      units.push_back(std::move(unit));
    }
    if (inPlace)
      waitForStage();
    SmallVector<std::pair<Value, Value>> stores;
    for (Unit &unit : units) {
      PointEvaluator::CacheScope unitScope(evaluator);
      for (auto [input, value] : llvm::zip(inputs, unit.inputs))
        evaluator.known[input] = value;
      // In place, the unit's input is what TMA put in the tile.
      if (inPlace)
        evaluator.known[source] =
            extendToF32(b, loc,
                        vector::LoadOp::create(
                            b, loc, unitType, tile, ValueRange{unit.offset},
                            /*nontemporal=*/false, unitAlignment));
      Value valid = arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, unit.row,
                                part.rowLimit),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, unit.column,
                                part.columnLimit));
      // Every input is known: the indices do not matter.
      FailureOr<Value> value =
          evaluator.eval(part.operand, {unit.row, unit.column}, /*lanes=*/true);
      if (failed(value))
        return failure();
      stores.push_back(
          {arith::SelectOp::create(b, loc, valid,
                                   roundTo(b, loc, *value, element), zeros),
           unit.offset});
    }
    for (auto [unit, offset] : stores)
      vector::StoreOp::create(b, loc, unit, tile, ValueRange{offset},
                              /*nontemporal=*/false, unitAlignment);
  }
  // The tensor cores read shared memory through the async proxy.
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
  return success();
}

TileLaunch::WorkItem TileLaunch::workItem(OpBuilder &b, Value item,
                                          Value rowTileCount,
                                          Value rank) const {
  assert((clusterBlocks() == 1) == !rank && "a cluster's block has a rank");
  WorkItem work;
  Value unit = arith::DivUIOp::create(b, loc, item, indexConst(b, loc, split));
  work.range = arith::RemUIOp::create(b, loc, item, indexConst(b, loc, split));
  // Units (a tile, or a cluster's tiles) in groups of kRasterRows tile
  // rows, column by column within a group: the blocks running at once
  // share few rows of A and columns of B, which stay in L2.
  Value groupUnits = indexConst(b, loc, kRasterRows * clusterColumns());
  Value firstRow = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, unit, groupUnits),
      indexConst(b, loc, kRasterRows));
  Value rowsInGroup = arith::MinUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, rowTileCount, firstRow),
      indexConst(b, loc, kRasterRows));
  Value inGroup = arith::RemUIOp::create(b, loc, unit, groupUnits);
  Value rowTile = arith::AddIOp::create(
      b, loc, firstRow, arith::RemUIOp::create(b, loc, inGroup, rowsInGroup));
  Value columnTile = arith::DivUIOp::create(b, loc, inGroup, rowsInGroup);
  work.tile = unit;
  if (rank)
    columnTile = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, columnTile,
                              indexConst(b, loc, clusterBlocks())),
        rank);
  work.row0 =
      arith::MulIOp::create(b, loc, rowTile, indexConst(b, loc, tiles.m));
  work.col0 = arith::MulIOp::create(b, loc, columnTile,
                                    indexConst(b, loc, tileColumns));
  for (int64_t offset : boxOffsets)
    work.boxCols.push_back(
        arith::AddIOp::create(b, loc, work.col0, indexConst(b, loc, offset)));
  // The range's steps along K: [firstStep, firstStep + steps), ranges of
  // kSteps / split steps or one more.
  auto rangeStart = [&](Value range) {
    return arith::DivUIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, range, indexConst(b, loc, kSteps)),
        indexConst(b, loc, split));
  };
  work.firstStep = indexConst(b, loc, 0);
  work.steps = indexConst(b, loc, kSteps);
  if (split > 1) {
    work.firstStep = rangeStart(work.range);
    work.steps =
        arith::SubIOp::create(b, loc,
                              rangeStart(arith::AddIOp::create(
                                  b, loc, work.range, indexConst(b, loc, 1))),
                              work.firstStep);
  }
  return work;
}

Pipeline TileLaunch::createPipeline(OpBuilder &b) const {
  MLIRContext *context = b.getContext();
  Pipeline pipe{bytes};
  pipe.element = element;
  pipe.mapA = mapA;
  pipe.mapsB = mapsB;
  // The stages from the first swizzle boundary past the dynamic shared
  // memory's symbol (alignedDynamicShared says why).
  DynamicShared shared = alignedDynamicShared(b, loc);
  pipe.shared = shared.memory;
  pipe.base = shared.base;
  pipe.barriers = nvgpu::MBarrierCreateOp::create(
      b, loc,
      nvgpu::MBarrierGroupType::get(context, workgroupSpace(context),
                                    tiles.stages));
  return pipe;
}

LogicalResult TileLaunch::emitBody(OpBuilder &b, const LaunchIds &ids,
                                   const SplitWorkspace *workspace) {
  auto [m, rowTileCount] = rowTiles(b);
  Value zero = indexConst(b, loc, 0);
  Value one = indexConst(b, loc, 1);
  Value items = arith::MulIOp::create(b, loc, rowTileCount,
                                      indexConst(b, loc, nTiles * split));
  Pipeline pipe = createPipeline(b);
  // Without a tensor map (both operands prologues) no stage has a barrier
  // to wait on.
  bool tma = pipe.tmaBytes() > 0;
  Value first = isThreadZero(b, loc, ids.thread);
  Value warpgroup = uniformWarpgroup(b, loc, ids.thread);
  auto stageOf = [&](Value g) { return pipe.stageOf(b, loc, g); };
  auto parityOf = [&](Value g) { return pipe.parityOf(b, loc, g); };
  // `fill` for step `s` of a work item's first stages: every step is in
  // the one range of an unsplit kernel; a split's range may have fewer.
  auto forFirstStep = [&](const WorkItem &work, int64_t s,
                          function_ref<void()> fill) {
    if (split == 1)
      return fill();
    emitIf(b, loc,
           arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                 indexConst(b, loc, s), work.steps),
           fill);
  };
  // Thread 0's loads of the first stages of work item `item`, whose
  // first step is the block's step `g`.
  auto loadFirstStages = [&](Value item, Value g) {
    WorkItem work = workItem(b, item, rowTileCount);
    for (int64_t s = 0; tma && s < std::min(tiles.stages, kSteps); ++s)
      forFirstStep(work, s, [&, s] {
        Value step = indexConst(b, loc, s);
        pipe.load(b, loc, stageOf(arith::AddIOp::create(b, loc, g, step)),
                  arith::AddIOp::create(b, loc, work.firstStep, step),
                  work.row0, work.boxCols);
      });
  };
  emitIf(b, loc, first, [&] {
    for (int64_t s = 0; s < tiles.stages; ++s)
      nvgpu::MBarrierInitOp::create(b, loc, pipe.barriers, one,
                                    indexConst(b, loc, s),
                                    /*predicate=*/Value());
    // A block without work (M = 0: the grid's one block) touches no
    // tensor map: empty operands have none.
    emitIf(b, loc,
           arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, ids.block,
                                 items),
           [&] {
             prefetchTensorMaps(b);
             loadFirstStages(ids.block, zero);
           });
  });

  // The block's work items (a tile and K range each): in a persistent
  // grid, every grid-th item from the block's, each one's first stages
  // loaded during the previous one's epilogue; else the block's item, if
  // any (a grid has at least one block).
  OpBuilder::InsertionGuard guard(b);
  scf::ForOp itemLoop;
  Value item = ids.block, itemStart = zero;
  if (isPersistent()) {
    itemLoop = scf::ForOp::create(b, loc, ids.block, items, ids.grid,
                                  ValueRange{zero});
    b.setInsertionPointToStart(itemLoop.getBody());
    item = itemLoop.getInductionVar();
    itemStart = itemLoop.getRegionIterArgs()[0];
  } else {
    auto inRange = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, ids.block,
                              items));
    b.setInsertionPoint(inRange.thenBlock()->getTerminator());
  }
  WorkItem work = workItem(b, item, rowTileCount);

  // The prologues of the first stages, by every thread.
  for (int64_t s = 0;
       hasEvaluatedPrologues() && s < std::min(tiles.stages, kSteps); ++s) {
    LogicalResult filled = success();
    forFirstStep(work, s, [&, s] {
      Value step = indexConst(b, loc, s);
      filled = writePrologues(
          b, pipe, ids.thread,
          stageOf(arith::AddIOp::create(b, loc, itemStart, step)),
          arith::AddIOp::create(b, loc, work.firstStep, step), work.row0,
          work.boxCols, m, /*inPlace=*/false);
    });
    if (failed(filled))
      return failure();
  }
  // The barriers' initialization and the prologues' stores are seen by
  // every thread.
  gpu::BarrierOp::create(b, loc);
  // In-place prologues transform a stage once TMA filled it, the step
  // before its MMA (below, while the MMA of the step before runs); the
  // first step's before the loop.
  auto transformStage = [&](Value step) -> LogicalResult {
    Value g = arith::AddIOp::create(b, loc, itemStart, step);
    Value stage = stageOf(g);
    Value parity = parityOf(g);
    return writePrologues(b, pipe, ids.thread, stage,
                          arith::AddIOp::create(b, loc, work.firstStep, step),
                          work.row0, work.boxCols, m,
                          /*inPlace=*/true, [&] {
                            waitForPhase(b, loc, pipe.barriers, stage, parity);
                          });
  };
  if (hasInPlacePrologues() && kSteps > 0) {
    LogicalResult transformed = success();
    emitIf(b, loc,
           arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, zero,
                                 work.steps),
           [&] { transformed = transformStage(zero); });
    if (failed(transformed))
      return failure();
    gpu::BarrierOp::create(b, loc);
  }

  auto [accumulatorType, kLoop] = createKLoop(b, work);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value step = kLoop.getInductionVar();
    Value g = arith::AddIOp::create(b, loc, itemStart, step);
    Value stage = stageOf(g);
    if (tma)
      waitForPhase(b, loc, pipe.barriers, stage, parityOf(g));
    Value next = emitStepMma(b, pipe, stage, warpgroup, accumulatorType,
                             kLoop.getRegionIterArgs()[0]);
    if (hasInPlacePrologues()) {
      LogicalResult transformed = success();
      Value nextStep = arith::AddIOp::create(b, loc, step, one);
      emitIf(b, loc,
             arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, nextStep,
                                   work.steps),
             [&] { transformed = transformStage(nextStep); });
      if (failed(transformed))
        return failure();
    }
    // The previous step's MMA is done in every warp (and the next step's
    // in-place prologues are written): refill its stage with the step
    // `stages` after it.
    gpu::BarrierOp::create(b, loc);
    Value refillStep = arith::AddIOp::create(
        b, loc, step, indexConst(b, loc, tiles.stages - 1));
    Value refill = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, step, one),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, refillStep,
                              work.steps));
    Value previous = stageOf(arith::SubIOp::create(b, loc, g, one));
    Value refillFrom =
        arith::AddIOp::create(b, loc, work.firstStep, refillStep);
    if (tma)
      emitIf(b, loc, arith::AndIOp::create(b, loc, first, refill), [&] {
        pipe.load(b, loc, previous, refillFrom, work.row0, work.boxCols);
      });
    LogicalResult filled = success();
    if (hasEvaluatedPrologues())
      emitIf(b, loc, refill, [&] {
        filled = writePrologues(b, pipe, ids.thread, previous, refillFrom,
                                work.row0, work.boxCols, m, /*inPlace=*/false);
      });
    if (failed(filled))
      return failure();
    scf::YieldOp::create(b, loc, next);
  }
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  // Every warp's MMAs are done: the stages are free.
  gpu::BarrierOp::create(b, loc);
  Value nextStart = arith::AddIOp::create(b, loc, itemStart, work.steps);
  LogicalResult stored = success();
  if (isPersistent()) {
    // The next item's first stages load while this one's epilogue runs.
    Value nextItem = arith::AddIOp::create(b, loc, item, ids.grid);
    emitIf(b, loc,
           arith::AndIOp::create(
               b, loc, first,
               arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                     nextItem, items)),
           [&] { loadFirstStages(nextItem, nextStart); });
    stored = emitWarpEpilogue(b, pipe, ids.thread, kLoop.getResult(0), work, m);
  } else {
    // The staged epilogue takes the stages' place; the grid has a block
    // per item.
    stored = emitStagedEpilogue(b, ids, pipe, workspace, kLoop.getResult(0),
                                work, m);
  }
  if (failed(stored))
    return failure();
  if (itemLoop)
    scf::YieldOp::create(b, loc, nextStart);
  return success();
}

Value TileLaunch::emitStepMma(OpBuilder &b, const Pipeline &pipe, Value stage,
                              Value warpgroup,
                              nvgpu::WarpgroupAccumulatorType accumulatorType,
                              Value accumulator) const {
  MLIRContext *context = b.getContext();
  Value tileA = pipe.tileA(b, loc, stage, warpgroup);
  Value tileB = pipe.tileB(b, loc, stage, tiles.n);
  Value descA = nvgpu::WarpgroupGenerateDescriptorOp::create(
      b, loc,
      nvgpu::WarpgroupMatrixDescriptorType::get(
          context, sharedTile({bytes.groupRows(), tiles.k}, element)),
      tileA, typeCarrier(b, mapA, {bytes.groupRows(), tiles.k}));
  Value descB = nvgpu::WarpgroupGenerateDescriptorOp::create(
      b, loc,
      nvgpu::WarpgroupMatrixDescriptorType::get(
          context, sharedTile({tiles.k, tiles.n}, element)),
      tileB, typeCarrier(b, mapsB.front(), {tiles.k, kBoxColumns}));
  // Waits for all but this step's MMA (waitGroup = 1).
  return nvgpu::WarpgroupMmaOp::create(
      b, loc, accumulatorType, descA, descB,
      /*waitGroup=*/b.getI64IntegerAttr(1), /*transposeA=*/nullptr,
      /*transposeB=*/b.getUnitAttr(), accumulator);
}

LogicalResult
TileLaunch::emitWarpSpecializedBody(OpBuilder &b, const LaunchIds &ids,
                                    const SplitWorkspace *workspace) {
  MLIRContext *context = b.getContext();
  auto [m, rowTileCount] = rowTiles(b);
  Value zero = indexConst(b, loc, 0);
  Value one = indexConst(b, loc, 1);
  // The cluster's items: its tiles of a row of tiles (clusterColumns),
  // each K range of them with a split (unclustered).
  int64_t cluster = clusterBlocks();
  Value clusterSize = indexConst(b, loc, cluster);
  Value items =
      arith::MulIOp::create(b, loc, clusterItems(b), indexConst(b, loc, split));
  Value clusterIndex = arith::DivUIOp::create(b, loc, ids.block, clusterSize);
  Value clusters = arith::DivUIOp::create(b, loc, ids.grid, clusterSize);
  Pipeline pipe = createPipeline(b);
  assert(pipe.tmaBytes() > 0 && "warp-specialized kernels load every operand");
  Value rank;
  if (cluster > 1) {
    rank = arith::RemUIOp::create(b, loc, ids.block, clusterSize);
    pipe.rank = rank;
  }
  // A stage's "empty" barrier completes once every multiplying warp's MMA
  // of it is done, in each block of the cluster (each block's loads fill
  // all of them): then its next load may overwrite it.
  Value empties = nvgpu::MBarrierCreateOp::create(
      b, loc,
      nvgpu::MBarrierGroupType::get(context, workgroupSpace(context),
                                    tiles.stages));
  int64_t consumerWarps = tiles.threads() / 32;
  emitIf(b, loc, isThreadZero(b, loc, ids.thread), [&] {
    for (int64_t s = 0; s < tiles.stages; ++s) {
      Value stage = indexConst(b, loc, s);
      nvgpu::MBarrierInitOp::create(b, loc, pipe.barriers, one, stage,
                                    /*predicate=*/Value());
      nvgpu::MBarrierInitOp::create(
          b, loc, empties, indexConst(b, loc, consumerWarps * cluster), stage,
          /*predicate=*/Value());
    }
    // The other blocks' loads and arrivals reach these barriers.
    if (cluster > 1)
      NVVM::FenceMbarrierInitOp::create(b, loc);
  });
  // The barriers' initialization is seen by every thread of the cluster;
  // from here on the roles synchronize through the barriers alone.
  if (cluster > 1)
    clusterBarrier(b, loc);
  else
    gpu::BarrierOp::create(b, loc);
  auto setMaxRegisters = [&](int32_t count, NVVM::SetMaxRegisterAction action) {
    NVVM::SetMaxRegisterOp::create(b, loc, count, action);
  };
  // The cluster's work items, every clusters-th from the cluster's; `body`
  // builds one on the block's tile and the block's step before its first,
  // and the block's steps are numbered across the items
  // (Pipeline::stageOf).
  auto forEachItem =
      [&](function_ref<LogicalResult(const WorkItem &, Value)> body)
      -> LogicalResult {
    OpBuilder::InsertionGuard guard(b);
    // A split's grid has a block per item: no loop keeps the K loop's
    // values live through the epilogue.
    if (!isPersistent()) {
      auto inRange = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, clusterIndex,
                                items));
      b.setInsertionPoint(inRange.thenBlock()->getTerminator());
      return body(workItem(b, clusterIndex, rowTileCount, rank), zero);
    }
    auto itemLoop = scf::ForOp::create(b, loc, clusterIndex, items, clusters,
                                       ValueRange{zero});
    b.setInsertionPointToStart(itemLoop.getBody());
    WorkItem work = workItem(b, itemLoop.getInductionVar(), rowTileCount, rank);
    Value itemStart = itemLoop.getRegionIterArgs()[0];
    if (failed(body(work, itemStart)))
      return failure();
    scf::YieldOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, itemStart, work.steps).getResult());
    return success();
  };

  Value warpgroup = uniformWarpgroup(b, loc, ids.thread);
  auto role = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, warpgroup,
                            indexConst(b, loc, tiles.warpgroups)),
      /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  // The loads: the last warpgroup's first thread fills each stage once
  // its empty barrier has completed for the stage's previous round (a
  // fresh barrier counts as completed for the round before the first).
  b.setInsertionPoint(role.thenBlock()->getTerminator());
  setMaxRegisters(kProducerRegisters, NVVM::SetMaxRegisterAction::decrease);
  LogicalResult loaded = success();
  emitIf(b, loc,
         arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, ids.thread,
                               indexConst(b, loc, tiles.threads())),
         [&] {
           // A block without work (M = 0: the grid's one block) touches no
           // tensor map: empty operands have none.
           if (kSteps > 0)
             emitIf(b, loc,
                    arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          clusterIndex, items),
                    [&] { prefetchTensorMaps(b); });
           // The block's first stages of settled operands load before the
           // wait for the grid before this one, so that they overlap its
           // end; the others, and every later stage, after it (launched
           // otherwise, the wait returns at once). Then the kernels after
           // this one may start: they find the grids before it done.
           Value early = zero;
           auto isSettledMap = [&](Value map) {
             return settledMaps.contains(map);
           };
           auto isOtherMap = [&](Value map) { return !isSettledMap(map); };
           if (!settledMaps.empty()) {
             WorkItem first = workItem(b, clusterIndex, rowTileCount, rank);
             early = arith::SelectOp::create(
                 b, loc,
                 arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                       clusterIndex, items),
                 arith::MinUIOp::create(b, loc, first.steps,
                                        indexConst(b, loc, tiles.stages)),
                 zero);
             for (int64_t s = 0; s < tiles.stages; ++s) {
               Value stage = indexConst(b, loc, s);
               emitIf(b, loc,
                      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            stage, early),
                      [&] {
                        pipe.expectStage(b, loc, stage);
                        pipe.loadTiles(b, loc, stage,
                                       arith::AddIOp::create(
                                           b, loc, first.firstStep, stage),
                                       first.row0, first.boxCols, isSettledMap);
                      });
             }
             emitGridDependencyWait(b, loc);
           }
           loaded = forEachItem([&](const WorkItem &work, Value itemStart) {
             auto steps = scf::ForOp::create(b, loc, zero, work.steps, one);
             OpBuilder::InsertionGuard inner(b);
             b.setInsertionPointToStart(steps.getBody());
             Value step = steps.getInductionVar();
             Value g = arith::AddIOp::create(b, loc, itemStart, step);
             Value stage = pipe.stageOf(b, loc, g);
             Value kStep = arith::AddIOp::create(b, loc, work.firstStep, step);
             auto fill = [&] {
               Value previousRound = arith::XOrIOp::create(
                   b, loc, pipe.parityOf(b, loc, g),
                   arith::ConstantIntOp::create(b, loc, 1, 1));
               waitForPhase(b, loc, empties, stage, previousRound);
               pipe.load(b, loc, stage, kStep, work.row0, work.boxCols);
             };
             if (settledMaps.empty()) {
               fill();
               return success();
             }
             auto prefilled = scf::IfOp::create(
                 b, loc,
                 arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, g,
                                       early),
                 /*withElseRegion=*/true);
             b.setInsertionPoint(prefilled.thenBlock()->getTerminator());
             pipe.loadTiles(b, loc, stage, kStep, work.row0, work.boxCols,
                            isOtherMap);
             b.setInsertionPoint(prefilled.elseBlock()->getTerminator());
             fill();
             return success();
           });
         });
  if (failed(loaded))
    return failure();

  // The products: each step waits for its stage's bytes, issues its MMA
  // and, once the step before's MMA is done, releases that one's stage
  // (a warp's first lane arriving for the warp, on the stage's empty
  // barrier in every block of the cluster).
  b.setInsertionPoint(role.elseBlock()->getTerminator());
  setMaxRegisters(kConsumerRegisters, NVVM::SetMaxRegisterAction::increase);
  // Their epilogue reads and writes what the grids before may touch.
  if (!settledMaps.empty())
    NVVM::GriddepcontrolOp::create(b, loc, NVVM::GridDepActionKind::wait);
  Value lane =
      arith::RemUIOp::create(b, loc, ids.thread, indexConst(b, loc, 32));
  Value firstLane = isThreadZero(b, loc, lane);
  auto release = [&](Value g) {
    emitIf(b, loc, firstLane, [&] {
      Value stage = pipe.stageOf(b, loc, g);
      if (cluster == 1) {
        nvgpu::MBarrierArriveOp::create(
            b, loc, nvgpu::MBarrierTokenType::get(context), empties, stage);
        return;
      }
      // Release at the block's scope, as for a local barrier: the MMAs'
      // reads of the stage are done (wgmma.wait_group), and the release at
      // the cluster's scope would wait for the warp's global stores of the
      // epilogue before every arrival (MEMBAR.ALL.GPU, SASS).
      Value local = barrierPointer(b, loc, empties, stage);
      for (int64_t block = 0; block < cluster; ++block)
        NVVM::MBarrierArriveOp::create(
            b, loc, Type(), inClusterBlock(b, loc, local, block),
            /*count=*/Value(), NVVM::MemScopeKind::CTA);
    });
  };
  LogicalResult multiplied = forEachItem([&](const WorkItem &work,
                                             Value itemStart) -> LogicalResult {
    auto [accumulatorType, kLoop] = createKLoop(b, work);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(kLoop.getBody());
      Value step = kLoop.getInductionVar();
      Value g = arith::AddIOp::create(b, loc, itemStart, step);
      Value stage = pipe.stageOf(b, loc, g);
      waitForPhase(b, loc, pipe.barriers, stage, pipe.parityOf(b, loc, g));
      Value next = emitStepMma(b, pipe, stage, warpgroup, accumulatorType,
                               kLoop.getRegionIterArgs()[0]);
      emitIf(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, step, one),
          [&] { release(arith::SubIOp::create(b, loc, g, one)); });
      scf::YieldOp::create(b, loc, next);
    }
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    emitIf(b, loc,
           arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, zero,
                                 work.steps),
           [&] {
             release(arith::SubIOp::create(
                 b, loc, arith::AddIOp::create(b, loc, itemStart, work.steps),
                 one));
           });
    if (workspace)
      return emitWarpSplitEpilogue(b, pipe, ids.thread, kLoop.getResult(0),
                                   work, m, *workspace);
    return emitWarpEpilogue(b, pipe, ids.thread, kLoop.getResult(0), work, m);
  });
  if (failed(multiplied))
    return failure();
  // No block of a cluster exits while the others may still load into its
  // stages or arrive on its barriers.
  if (cluster > 1) {
    b.setInsertionPointAfter(role);
    clusterBarrier(b, loc);
  }
  return success();
}

LogicalResult TileLaunch::emitWarpSplitEpilogue(
    OpBuilder &b, const Pipeline &pipe, Value thread, Value accumulator,
    const WorkItem &work, Value m, const SplitWorkspace &workspace) const {
  Type f32 = b.getF32Type();
  int64_t fragmentFloats = tiles.n / 2;
  int64_t laneFloats = bytes.groupRows() / 64 * fragmentFloats;
  Value registers = accumulatorRegisters(b, accumulator);
  auto position = [&](int64_t i) {
    return SmallVector<int64_t, 2>{i / fragmentFloats, i % fragmentFloats};
  };
  int64_t warps = tiles.threads() / 32;
  auto [lane, warpInBlock, warpRow0] = warpPlace(b, thread, work);
  // Range `range`'s partial of the warp's position: vector j of every
  // lane side by side (a warp's store is 512 contiguous bytes). The
  // offsets are the first range's plus constants, so that one address
  // lives across the loops (not one per range).
  int64_t slotElements = 32 * laneFloats;
  Value firstRange = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(
          b, loc,
          arith::AddIOp::create(
              b, loc,
              arith::MulIOp::create(b, loc, work.tile,
                                    indexConst(b, loc, split * warps)),
              warpInBlock),
          indexConst(b, loc, slotElements)),
      arith::MulIOp::create(b, loc, lane, indexConst(b, loc, kPartialWidth)));
  auto vectorOffset = [&](Value range, int64_t j) {
    return arith::AddIOp::create(
        b, loc, firstRange,
        arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(b, loc, range,
                                  indexConst(b, loc, warps * slotElements)),
            indexConst(b, loc, j * 32 * kPartialWidth)));
  };
  auto partialType = VectorType::get({kPartialWidth}, f32);
  llvm::MaybeAlign alignment = vectorAlignment(f32, kPartialWidth);
  LogicalResult stored = success();
  // A warp whose first row (the lowest) is past M neither stores nor
  // counts, in every range alike.
  emitIf(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, warpRow0, m),
      [&] {
        for (int64_t j = 0; j < laneFloats / kPartialWidth; ++j) {
          SmallVector<Value, kPartialWidth> floats;
          for (int64_t e = 0; e < kPartialWidth; ++e)
            floats.push_back(LLVM::ExtractValueOp::create(
                b, loc, registers, position(kPartialWidth * j + e)));
          vector::StoreOp::create(
              b, loc,
              vector::FromElementsOp::create(b, loc, partialType, floats),
              workspace.partials, ValueRange{vectorOffset(work.range, j)},
              /*nontemporal=*/false, alignment);
        }
        Value counter = arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(b, loc, work.tile, indexConst(b, loc, warps)),
            warpInBlock);
        Value isLast = countWarpArrival(
            b, loc, workspace.arrivals, counter, lane,
            arith::ConstantIntOp::create(b, loc, split - 1, 32));
        emitIf(b, loc, isLast, [&] {
          // Each vector's partials summed in range order as the epilogue
          // stages its pairs (so that no lane holds all the sums at once).
          auto pairType = VectorType::get({2}, f32);
          stored = emitWarpEpilogue(
              b, pipe, thread,
              [&](int64_t fragment, int64_t j) {
                int64_t vector = fragment * fragmentFloats / kPartialWidth + j;
                Value sum;
                for (int64_t q = 0; q < split; ++q) {
                  Value partial = vector::LoadOp::create(
                      b, loc, partialType, workspace.partials,
                      ValueRange{vectorOffset(indexConst(b, loc, q), vector)},
                      /*nontemporal=*/false, alignment);
                  sum = sum ? arith::AddFOp::create(b, loc, sum, partial)
                            : partial;
                }
                auto half = [&](int64_t first) -> Value {
                  return vector::ShuffleOp::create(
                      b, loc, pairType, sum, sum,
                      ArrayRef<int64_t>{first, first + 1});
                };
                return std::make_pair(half(0), half(2));
              },
              work, m);
        });
      });
  return stored;
}

LogicalResult TileLaunch::emitWarpEpilogue(OpBuilder &b, const Pipeline &pipe,
                                           Value thread, Value accumulator,
                                           const WorkItem &work,
                                           Value m) const {
  Type f32 = b.getF32Type();
  Value registers = accumulatorRegisters(b, accumulator);
  auto pairType = VectorType::get({2}, f32);
  auto pair = [&](int64_t fragment, int64_t first) -> Value {
    SmallVector<Value, 2> lanes;
    for (int64_t c = 0; c < 2; ++c)
      lanes.push_back(LLVM::ExtractValueOp::create(
          b, loc, registers, ArrayRef<int64_t>{fragment, first + c}));
    return vector::FromElementsOp::create(b, loc, pairType, lanes);
  };
  return emitWarpEpilogue(
      b, pipe, thread,
      [&](int64_t fragment, int64_t j) {
        return std::make_pair(pair(fragment, 4 * j), pair(fragment, 4 * j + 2));
      },
      work, m);
}

LogicalResult TileLaunch::emitWarpEpilogue(OpBuilder &b, const Pipeline &pipe,
                                           Value thread,
                                           ColumnPairs columnPairs,
                                           const WorkItem &work,
                                           Value m) const {
  int64_t width = plan.getVector();
  if (kUnitElements % width != 0)
    return KernelOp(kernel).emitOpError(
               "matmul_wgmma's epilogue vectors must divide ")
           << kUnitElements << " elements";
  int64_t fragments = bytes.groupRows() / 64;
  // Fragment layout of warpgroup MMA (PTX ISA, "wgmma .m64nNk16"
  // register fragment D): in each 64 rows, lane l of warp w holds rows
  // 16 w + l / 4 and 8 rows below, and of each 8 columns the pair from
  // 2 (l % 4); floats 4 j + 2 h and 4 j + 2 h + 1 are the pair of columns
  // 8 j of the row 8 h below.
  auto [lane, warpInBlock, warpRow0] = warpPlace(b, thread, work);
  Value quadRow = arith::DivUIOp::create(b, loc, lane, indexConst(b, loc, 4));
  Value quadColumn = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, lane, indexConst(b, loc, 4)),
      indexConst(b, loc, 2));
  // The warp's 16 rows of the tile, rounded to the product's type, in its
  // own part of the shared memory past the stages (which the next tile's
  // loads fill meanwhile). Row r's 16-byte unit u is stored at unit
  // u ^ (r % 8): the pairs a store writes (8 rows, 4 lanes each) fall in
  // distinct banks.
  Value rows = pipe.view(
      b, loc,
      arith::AddIOp::create(
          b, loc, indexConst(b, loc, bytes.warpStagingOffset()),
          arith::MulIOp::create(b, loc, warpInBlock,
                                indexConst(b, loc, bytes.warpRowsBytes()))),
      {kWarpRows, tiles.n}, element);
  auto swizzled = [&](Value r, Value column) {
    Value unit = arith::DivUIOp::create(b, loc, column,
                                        indexConst(b, loc, kUnitElements));
    Value within = arith::RemUIOp::create(b, loc, column,
                                          indexConst(b, loc, kUnitElements));
    Value moved = arith::XOrIOp::create(
        b, loc, unit,
        arith::RemUIOp::create(b, loc, r, indexConst(b, loc, kSwizzleUnits)));
    return arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, moved, indexConst(b, loc, kUnitElements)),
        within);
  };
  // The views' alignment is not known to LLVM: the accesses state theirs
  // (a pair's column is even, a vector's a multiple of its width), else a
  // vector of 8 bf16 is loaded as 8 loads of 2 bytes (ptxas, 2026-12-01).
  auto syncWarp = [&] {
    NVVM::SyncWarpOp::create(b, loc,
                             arith::ConstantIntOp::create(b, loc, -1, 32));
  };
  int64_t rowVectors = tileColumns / width;
  PointEvaluator evaluator(b, loc, kernel, buffers.inputs, width);
  for (int64_t fragment = 0; fragment < fragments; ++fragment) {
    for (int64_t j = 0; j < tiles.n / 8; ++j) {
      auto [upper, lower] = columnPairs(fragment, j);
      Value pairs[] = {upper, lower};
      for (auto [h, pair] : llvm::enumerate(pairs)) {
        Value r =
            arith::AddIOp::create(b, loc, quadRow, indexConst(b, loc, 8 * h));
        // Column 8 j + quadColumn swizzled (unit j ^ (r % 8)), written as
        // unit j - j % 8 plus one of 8 columns per row, so that the
        // addresses live across the K loop are 16, not one per pair.
        Value column = arith::AddIOp::create(
            b, loc, indexConst(b, loc, (j - j % kSwizzleUnits) * kUnitElements),
            swizzled(
                r, arith::AddIOp::create(
                       b, loc, quadColumn,
                       indexConst(b, loc, j % kSwizzleUnits * kUnitElements))));
        vector::StoreOp::create(
            b, loc, roundTo(b, loc, pair, element), rows, ValueRange{r, column},
            /*nontemporal=*/false, vectorAlignment(element, 2));
      }
    }
    syncWarp();
    // Vectors of `width` along the rows, lane by lane: 16 rows of the
    // tile's columns, each product's (a pair's second is the tile's
    // second half) read back and the outputs evaluated on them.
    struct Point {
      SmallVector<Value> index, values;
    };
    // Vector `v`'s outputs evaluated, and stored when `masked` (only if
    // inside the output); else returned for the caller to store.
    auto emitVector = [&](Value v, bool masked) -> FailureOr<Point> {
      PointEvaluator::CacheScope vectorScope(evaluator);
      auto [r, c] = vectorPosition(b, loc, v, rowVectors, width);
      Value row = arith::AddIOp::create(
          b, loc, warpRow0,
          arith::AddIOp::create(b, loc, r, indexConst(b, loc, 64 * fragment)));
      Value col = arith::AddIOp::create(b, loc, work.col0, c);
      Point point{{row, col}, {}};
      auto evaluate = [&]() -> FailureOr<SmallVector<Value>> {
        for (auto [i, product] : llvm::enumerate(tiled.products)) {
          Value column = arith::AddIOp::create(
              b, loc, c, indexConst(b, loc, i * tileColumns));
          Value value = vector::LoadOp::create(
              b, loc, VectorType::get({width}, element), rows,
              ValueRange{r, swizzled(r, column)},
              /*nontemporal=*/false, vectorAlignment(element, width));
          if (width == 1)
            value = vector::ExtractOp::create(b, loc, value, 0);
          evaluator.known[product.value] = extendToF32(b, loc, value);
        }
        return evaluator.evalOutputs(point.index, width > 1);
      };
      if (!masked) {
        FailureOr<SmallVector<Value>> values = evaluate();
        if (failed(values))
          return failure();
        point.values = std::move(*values);
        return point;
      }
      // N is a multiple of the width: a vector is all in or all out.
      Value inside = arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, m),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, col,
                                indexConst(b, loc, nSize)));
      LogicalResult stored = success();
      emitIf(b, loc, inside, [&] {
        PointEvaluator::CacheScope scope(evaluator);
        FailureOr<SmallVector<Value>> values = evaluate();
        if (failed(values)) {
          stored = failure();
          return;
        }
        evaluator.storeValues(*values, buffers.outputs, point.index);
      });
      if (failed(stored))
        return failure();
      return point;
    };
    // A tile wholly inside the output (all but the edges') evaluates its
    // vectors unmasked, a batch of them in one straight line with their
    // stores after their loads: with two multiplying warps a scheduler,
    // the loads and the math of one vector alone leave it idle (bias + erf
    // gelu 4096^3: the epilogue cost 5% of the kernel, H200, 2026-12-02).
    // Edge tiles loop, masked.
    int64_t warpVectors = kWarpRows * rowVectors / 32;
    int64_t batch = std::min(warpVectors, kEpilogueBatch);
    if (warpVectors % batch != 0)
      batch = 1;
    Value tileInside = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::ule,
            arith::AddIOp::create(b, loc, work.row0,
                                  indexConst(b, loc, tiles.m)),
            m),
        arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::ule,
            arith::AddIOp::create(b, loc, work.col0,
                                  indexConst(b, loc, tileColumns)),
            indexConst(b, loc, nSize)));
    auto branch = scf::IfOp::create(b, loc, tileInside, /*withElse=*/true);
    LogicalResult stored = success();
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(branch.thenBlock());
      auto batches = scf::ForOp::create(b, loc, indexConst(b, loc, 0),
                                        indexConst(b, loc, warpVectors),
                                        indexConst(b, loc, batch));
      b.setInsertionPointToStart(batches.getBody());
      SmallVector<Point> points;
      for (int64_t i = 0; i < batch && succeeded(stored); ++i) {
        Value first = arith::AddIOp::create(b, loc, batches.getInductionVar(),
                                            indexConst(b, loc, i));
        FailureOr<Point> point = emitVector(
            arith::AddIOp::create(
                b, loc, lane,
                arith::MulIOp::create(b, loc, first, indexConst(b, loc, 32))),
            /*masked=*/false);
        if (failed(point))
          stored = failure();
        else
          points.push_back(std::move(*point));
      }
      for (const Point &point : points)
        evaluator.storeValues(point.values, buffers.outputs, point.index);

      b.setInsertionPoint(branch.elseBlock()->getTerminator());
      auto vectors = scf::ForOp::create(
          b, loc, lane, indexConst(b, loc, kWarpRows * rowVectors),
          indexConst(b, loc, 32));
      b.setInsertionPointToStart(vectors.getBody());
      if (succeeded(stored) &&
          failed(emitVector(vectors.getInductionVar(), /*masked=*/true)))
        stored = failure();
    }
    if (failed(stored))
      return failure();
    // Read before the next fragment's rows take their place.
    syncWarp();
  }
  return success();
}

LogicalResult TileLaunch::emitStagedEpilogue(OpBuilder &b, const LaunchIds &ids,
                                             const Pipeline &pipe,
                                             const SplitWorkspace *workspace,
                                             Value accumulator,
                                             const WorkItem &work,
                                             Value m) const {
  int64_t width = plan.getVector();
  Value zero = indexConst(b, loc, 0);
  Value first = isThreadZero(b, loc, ids.thread);
  Value warpgroup =
      arith::DivUIOp::create(b, loc, ids.thread, indexConst(b, loc, 128));
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
  nvgpu::WarpgroupMmaStoreOp::create(b, loc, accumulator, groupRows);
  gpu::BarrierOp::create(b, loc);

  // The tile's rows inside M.
  Value tileRows = arith::MinUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, m, work.row0),
      indexConst(b, loc, tiles.m));
  int64_t rowVectors = tileColumns / width;
  Value epilogueVectors =
      arith::MulIOp::create(b, loc, tileRows, indexConst(b, loc, rowVectors));
  if (workspace) {
    Type partialType = VectorType::get({kPartialWidth}, b.getF32Type());
    llvm::MaybeAlign partialAlignment =
        vectorAlignment(b.getF32Type(), kPartialWidth);
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
      auto [r, c] = vectorPosition(b, loc, copy.getInductionVar(),
                                   partialVectors, kPartialWidth);
      Value partial =
          vector::LoadOp::create(b, loc, partialType, staged, ValueRange{r, c},
                                 /*nontemporal=*/false, partialAlignment);
      vector::StoreOp::create(
          b, loc, partial, workspace->partials,
          ValueRange{partialOffset(b, work.tile, work.range, r, c)},
          /*nontemporal=*/false, partialAlignment);
    }
    Value isLast = countArrival(
        b, loc, workspace->arrivals, work.tile, pipe.arrivalSlot(b, loc), first,
        arith::ConstantIntOp::create(b, loc, split - 1, 32));
    // Only the last block runs the epilogue; the others loop over nothing.
    epilogueVectors =
        arith::SelectOp::create(b, loc, isLast, epilogueVectors, zero);
  }

  // The epilogue: vectors of `width` along N, a thread every `threads` of
  // them.
  OpBuilder::InsertionGuard guard(b);
  auto vectors = scf::ForOp::create(b, loc, ids.thread, epilogueVectors,
                                    indexConst(b, loc, tiles.threads()));
  b.setInsertionPointToStart(vectors.getBody());
  Value i = vectors.getInductionVar();
  auto [r, c] = vectorPosition(b, loc, i, rowVectors, width);
  Value row = arith::AddIOp::create(b, loc, work.row0, r);
  Value col = arith::AddIOp::create(b, loc, work.col0, c);
  // N is a multiple of the width: a vector is all in or all out.
  auto write =
      scf::IfOp::create(b, loc,
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                              col, indexConst(b, loc, nSize)));
  b.setInsertionPoint(write.thenBlock()->getTerminator());
  auto vectorType = VectorType::get({width}, b.getF32Type());
  PointEvaluator evaluator(b, loc, kernel, buffers.inputs, width);
  // A pair's second product is the tile's second half; the ranges'
  // partials are summed in range order.
  for (auto [i, tiledProduct] : llvm::enumerate(tiled.products)) {
    Value column =
        arith::AddIOp::create(b, loc, c, indexConst(b, loc, i * tileColumns));
    Value product;
    if (!workspace)
      product = vector::LoadOp::create(
          b, loc, vectorType, staged, ValueRange{r, column},
          /*nontemporal=*/false, vectorAlignment(b.getF32Type(), width));
    for (int64_t q = 0; workspace && q < split; ++q) {
      Value partial = vector::LoadOp::create(
          b, loc, vectorType, workspace->partials,
          ValueRange{
              partialOffset(b, work.tile, indexConst(b, loc, q), r, column)},
          /*nontemporal=*/false, vectorAlignment(b.getF32Type(), width));
      product =
          product ? arith::AddFOp::create(b, loc, product, partial) : partial;
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

/// The operands of `tiled` that are prologues (not kernel inputs), each
/// once.
static SmallVector<Value> getPrologueOperands(const TiledProducts &tiled) {
  SmallVector<Value> operands;
  for (TiledProducts::Product product : tiled.products)
    for (Value operand : {product.matmul.getA(), product.matmul.getB()})
      if (!isa<BlockArgument>(operand) &&
          !llvm::is_contained(operands, operand))
        operands.push_back(operand);
  return operands;
}

/// The kernel input from which the tiles compute prologue `operand` in
/// place: the one input of the operand's shape and type that it reads,
/// every other input read broadcast (a vector per row or column, a
/// scalar); null when there is none or several.
static BlockArgument getInPlaceSource(Value operand) {
  BlockArgument source;
  for (BlockArgument input : getPrologueInputs(operand)) {
    if (shapeOf(input) != shapeOf(operand))
      continue;
    if (source || input.getType() != operand.getType())
      return {};
    source = input;
  }
  return source;
}

/// Threads per block of a prologue's materializing launch.
constexpr int64_t kMaterializeThreads = 256;

/// `operand` (a 2-D prologue of the kernel body, its rows those of the
/// output when dynamic) evaluated into a fresh scratch buffer by a launch
/// of its own: vectors of 8 along its rows, a thread each.
static FailureOr<Value> materializePrologue(OpBuilder &b, Location loc,
                                            KernelOp kernel,
                                            const KernelBuffers &buffers,
                                            Value operand, int64_t ordinal) {
  ArrayRef<int64_t> shape = shapeOf(operand);
  auto type = MemRefType::get(shape, getElementTypeOrSelf(operand.getType()));
  Value rows =
      ShapedType::isDynamic(shape[0])
          ? memref::DimOp::create(b, loc, buffers.outputs[0], 0).getResult()
          : indexConst(b, loc, shape[0]);
  SmallVector<Value> dynamicSizes;
  if (ShapedType::isDynamic(shape[0]))
    dynamicSizes.push_back(rows);
  Value buffer = allocateScratch(b, loc, type, dynamicSizes);
  int64_t rowVectors = shape[1] / kUnitElements;
  Value vectors =
      arith::MulIOp::create(b, loc, rows, indexConst(b, loc, rowVectors));
  Value blocks = arith::MaxUIOp::create(
      b, loc, indexConst(b, loc, 1),
      arith::CeilDivUIOp::create(b, loc, vectors,
                                 indexConst(b, loc, kMaterializeThreads)));
  LogicalResult launched = emitLaunch(
      b, loc, kernel, blocks, kMaterializeThreads,
      [&](OpBuilder &b, const LaunchIds &ids) -> LogicalResult {
        auto [first, stride] = gridStride(b, loc, ids.block, ids.thread,
                                          ids.grid, kMaterializeThreads);
        auto loop = scf::ForOp::create(b, loc, first, vectors, stride);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(loop.getBody());
        auto [row, column] = vectorPosition(b, loc, loop.getInductionVar(),
                                            rowVectors, kUnitElements);
        PointEvaluator evaluator(b, loc, kernel, buffers.inputs, kUnitElements);
        FailureOr<Value> value =
            evaluator.eval(operand, {row, column}, /*lanes=*/true);
        if (failed(value))
          return failure();
        store(b, loc, *value, buffer, {row, column});
        return success();
      },
      /*shared=*/{}, /*clusterBlocks=*/0, /*dynamicShared=*/0,
      ("_prologue" + Twine(ordinal)).str());
  if (failed(launched))
    return failure();
  return buffer;
}

LogicalResult codegen::emitMatmulWgmma(OpBuilder &b, Location loc,
                                       KernelOp kernel, KernelPlanAttr plan,
                                       const KernelBuffers &buffers) {
  FailureOr<TiledProducts> tiled = getTiledProducts(kernel);
  if (failed(tiled))
    return kernel.emitOpError("matmul_wgmma needs the products of "
                              "TiledProducts (checked by the plan)");
  // Kernel inputs are loaded from their buffers. With few rows each tile
  // of B is read about once: a prologue with an input of its shape and
  // type is computed in place (TMA loads that input, the threads rewrite
  // the tile), another is evaluated by the threads from its inputs.
  OperandSources sources;
  for (TiledProducts::Product product : tiled->products)
    for (Value operand : {product.matmul.getA(), product.matmul.getB()}) {
      auto arg = dyn_cast<BlockArgument>(operand);
      if (!arg && (arg = getInPlaceSource(operand)))
        sources.inPlace[operand] = arg;
      if (arg)
        sources.loaded[operand] = buffers.inputs[arg.getArgNumber()];
    }
  // Many rows read each operand tile many times (A once per column of
  // tiles, B once per row of tiles): computing a prologue that often costs
  // more than writing it once (H200, 2026-12-01, a scale of A at 4096 x
  // 4096 x 4096: 0.306 ms in place, 0.396 evaluated by the threads, 0.238
  // materialized; autocast's converts 1.226 evaluated, 0.257
  // materialized), so every prologue is materialized into a scratch buffer
  // that the tiles load.
  auto manyRows = [&](OpBuilder &b) -> LogicalResult {
    OperandSources many;
    for (auto [operand, buffer] : sources.loaded)
      if (!sources.inPlace.contains(operand))
        many.loaded[operand] = buffer;
    SmallVector<Value> scratch;
    for (Value operand : getPrologueOperands(*tiled)) {
      FailureOr<Value> buffer =
          materializePrologue(b, loc, kernel, buffers, operand, scratch.size());
      if (failed(buffer))
        return failure();
      many.loaded[operand] = *buffer;
      scratch.push_back(*buffer);
    }
    if (failed(TileLaunch(loc, kernel, plan, buffers, *tiled, kWgmmaTiles,
                          /*split=*/1, many)
                   .emit(b, /*workspace=*/nullptr, "")))
      return failure();
    for (Value buffer : scratch)
      releaseScratch(b, loc, buffer);
    return success();
  };
  auto fewRows = [&](OpBuilder &b) {
    int64_t split = plan.getSplit();
    TileLaunch launch(loc, kernel, plan, buffers, *tiled,
                      getWgmmaFewRowTiles(*tiled), split, sources);
    if (split == 1)
      return launch.emit(b, /*workspace=*/nullptr, "_few_rows");
    FailureOr<Value> arrivals =
        acquireArrivalCounters(b, loc, launch.arrivalCount(b));
    if (failed(arrivals))
      return failure();
    SplitWorkspace workspace{
        allocateScratch(b, loc, b.getF32Type(), launch.partialElements(b)),
        *arrivals};
    if (failed(launch.emit(b, &workspace, "_few_rows")))
      return failure();
    releaseScratch(b, loc, workspace.partials);
    return releaseArrivalCounters(b, loc, workspace.arrivals);
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
