//===- MatmulWgmma.cpp - The Hopper tensor-core matmul strategy -----------===//
//
// Matmul kernels on sm_90 tensor cores, built from upstream nvgpu ops: a
// block of two warpgroups per 256 x 128 output tile (WgmmaTiles), 128 rows
// each. Thread 0 issues TMA loads of 256 x 64 tiles of A and 64 x 128 tiles
// of B into 128-byte-swizzled shared memory, 4 stages deep, each stage
// completing an mbarrier by its byte count; the warpgroups wait on a
// stage's barrier, multiply their rows of it into f32 accumulators with
// warpgroup MMA (B read N-major: `transposeB`) and, once the previous
// stage's MMA is done, refill that stage. TMA fills zeros past M, N and K, so
// ragged sizes need no masks on the way in. The accumulators go through shared
// memory to the epilogue, which evaluates the kernel's outputs on them as
// vectors along N, masked at the edges of M and N, and stores each output once.
//
// A pair of products sharing A (TiledProducts: the gated MLP's two halves)
// loads B's tile as 64 columns of each, so each accumulator holds both
// products of 64 output columns and the epilogue combines them.
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
using Tiles = WgmmaTiles;

/// Rows of the tile each warpgroup multiplies.
constexpr int64_t kGroupTileRows = Tiles::m / Tiles::warpgroups;
/// A TMA box is at most 256 rows; A is loaded a warpgroup's rows a box.
constexpr int64_t kGroupTileABytes = kGroupTileRows * Tiles::k * 2;
/// Bytes of one stage: a tile of A and a tile of B (2-byte elements).
constexpr int64_t kTileABytes = Tiles::m * Tiles::k * 2;
constexpr int64_t kTileBBytes = Tiles::k * Tiles::n * 2;
constexpr int64_t kStageBytes = kTileABytes + kTileBBytes;
/// A TMA box with 128-byte swizzling is at most 128 bytes wide: B's tile
/// is loaded as boxes of 64 columns, side by side. A pair of products
/// (TiledProducts) takes a box of each: 64 output columns a tile.
constexpr int64_t kBoxColumns = 64;
constexpr int64_t kBoxesB = Tiles::n / kBoxColumns;
/// 128-byte swizzling repeats every 1024 bytes; stages start on that
/// boundary, which the dynamic shared memory's base need not be on.
constexpr int64_t kSwizzleAlignment = 1024;
/// Tile rows of a group of tiles (see the launch body).
constexpr int64_t kRasterRows = 8;
/// The accumulator tile staged for the epilogue fits in the stages.
static_assert(Tiles::m * Tiles::n * 4 <= Tiles::stages * kStageBytes);

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
  Value shared;   // the dynamic shared memory, as bytes
  Value base;     // offset of the first stage (swizzle-aligned)
  Value barriers; // one mbarrier per stage
  Value mapA;
  /// The tensor map each box of B's tile is loaded from.
  SmallVector<Value, kBoxesB> mapsB;
  Type element;

  Value view(OpBuilder &b, Location loc, Value offset, ArrayRef<int64_t> shape,
             Type type) const {
    return memref::ViewOp::create(b, loc, sharedTile(shape, type), shared,
                                  arith::AddIOp::create(b, loc, base, offset),
                                  ValueRange{});
  }
  Value stageOffset(OpBuilder &b, Location loc, Value stage) const {
    return arith::MulIOp::create(b, loc, stage,
                                 indexConst(b, loc, kStageBytes));
  }
  /// The rows of A's tile that warpgroup `group` multiplies.
  Value tileA(OpBuilder &b, Location loc, Value stage, Value group) const {
    Value offset = arith::AddIOp::create(
        b, loc, stageOffset(b, loc, stage),
        arith::MulIOp::create(b, loc, group,
                              indexConst(b, loc, kGroupTileABytes)));
    return view(b, loc, offset, {kGroupTileRows, Tiles::k}, element);
  }
  Value tileB(OpBuilder &b, Location loc, Value stage,
              int64_t columns = Tiles::n, int64_t column = 0) const {
    Value offset = arith::AddIOp::create(
        b, loc, stageOffset(b, loc, stage),
        indexConst(b, loc, kTileABytes + column * Tiles::k * 2));
    return view(b, loc, offset, {Tiles::k, columns}, element);
  }

  /// Thread 0's loads of step `step` along K into `stage`: A's rows from
  /// `row`, box j of B's tile from column `boxCols[j]`, completing the
  /// stage's barrier.
  void load(OpBuilder &b, Location loc, Value stage, Value step, Value row,
            ArrayRef<Value> boxCols) const {
    nvgpu::MBarrierArriveExpectTxOp::create(
        b, loc, barriers, indexConst(b, loc, kStageBytes), stage,
        /*predicate=*/Value());
    Value k = arith::MulIOp::create(b, loc, step, indexConst(b, loc, Tiles::k));
    // Coordinates are innermost first.
    for (int64_t group = 0; group < Tiles::warpgroups; ++group) {
      Value boxRow = arith::AddIOp::create(
          b, loc, row, indexConst(b, loc, group * kGroupTileRows));
      nvgpu::TmaAsyncLoadOp::create(
          b, loc, tileA(b, loc, stage, indexConst(b, loc, group)), barriers,
          mapA, ValueRange{k, boxRow}, stage, /*multicastMask=*/Value(),
          /*predicate=*/Value());
    }
    for (int64_t box = 0; box < kBoxesB; ++box)
      nvgpu::TmaAsyncLoadOp::create(
          b, loc, tileB(b, loc, stage, kBoxColumns, box * kBoxColumns),
          barriers, mapsB[box], ValueRange{boxCols[box], k}, stage,
          /*multicastMask=*/Value(), /*predicate=*/Value());
  }
};

Value isThreadZero(OpBuilder &b, Location loc, Value thread) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread,
                               indexConst(b, loc, 0));
}

} // namespace

LogicalResult codegen::emitMatmulWgmma(OpBuilder &b, Location loc,
                                       KernelOp kernel, KernelPlanAttr plan,
                                       const KernelBuffers &buffers) {
  FailureOr<TiledProducts> tiled = getTiledProducts(kernel);
  if (failed(tiled))
    return kernel.emitOpError("matmul_wgmma needs the products of "
                              "TiledProducts (checked by the plan)");
  MatmulOp matmul = tiled->products.front().matmul;
  MLIRContext *context = b.getContext();
  int64_t width = plan.getVector();
  auto bufferOf = [&](Value operand) {
    return buffers.inputs[cast<BlockArgument>(operand).getArgNumber()];
  };
  Value bufferA = bufferOf(matmul.getA());
  Type element = cast<MemRefType>(bufferA.getType()).getElementType();
  int64_t kSize = shapeOf(matmul.getA())[1];
  int64_t nSize = tiled->shape[1];
  int64_t kSteps = llvm::divideCeil(kSize, Tiles::k);
  // A pair's tile holds a box of each product: fewer output columns.
  int64_t tileColumns = tiled->isPair() ? kBoxColumns : Tiles::n;
  int64_t nTiles = llvm::divideCeil(nSize, tileColumns);

  // On the host: the tensor maps and the grid, a block per output tile.
  Value mapA = createTensorMap(b, loc, bufferA, {kGroupTileRows, Tiles::k});
  // Box j of B's tile: a product's columns from `boxOffsets[j]` on, past
  // the tile's first output column.
  SmallVector<Value, kBoxesB> mapsB;
  SmallVector<int64_t, kBoxesB> boxOffsets;
  llvm::SmallMapVector<Value, Value, kBoxesB> mapOfBuffer;
  for (int64_t box = 0; box < kBoxesB; ++box) {
    TiledProducts::Product product = tiled->products[tiled->isPair() ? box : 0];
    Value buffer = bufferOf(product.matmul.getB());
    auto [it, inserted] = mapOfBuffer.try_emplace(buffer);
    if (inserted)
      it->second = createTensorMap(b, loc, buffer, {Tiles::k, kBoxColumns});
    mapsB.push_back(it->second);
    boxOffsets.push_back(tiled->isPair() ? product.column : box * kBoxColumns);
  }
  Value out0 = buffers.outputs[0];
  auto mTiles = [&](OpBuilder &b) {
    Value m = memref::DimOp::create(b, loc, out0, 0);
    return std::make_pair(
        m, arith::CeilDivUIOp::create(b, loc, m, indexConst(b, loc, Tiles::m))
               .getResult());
  };
  Value blocks = arith::MulIOp::create(b, loc, mTiles(b).second,
                                       indexConst(b, loc, nTiles));
  int64_t sharedBytes = Tiles::stages * kStageBytes + kSwizzleAlignment;

  return emitLaunch(
      b, loc, kernel, blocks, Tiles::threads,
      [&](OpBuilder &b, const LaunchIds &ids) -> LogicalResult {
        auto [m, tiles] = mTiles(b);
        Value tile = ids.block;
        // A grid of at least one block: past the tiles, nothing to do.
        auto inRange = scf::IfOp::create(
            b, loc,
            arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::ult, tile,
                arith::MulIOp::create(b, loc, tiles,
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
            b, loc, arith::SubIOp::create(b, loc, tiles, firstRow),
            indexConst(b, loc, kRasterRows));
        Value inGroup = arith::RemUIOp::create(b, loc, tile, groupTiles);
        Value row0 = arith::MulIOp::create(
            b, loc,
            arith::AddIOp::create(
                b, loc, firstRow,
                arith::RemUIOp::create(b, loc, inGroup, rowsInGroup)),
            indexConst(b, loc, Tiles::m));
        Value col0 = arith::MulIOp::create(
            b, loc, arith::DivUIOp::create(b, loc, inGroup, rowsInGroup),
            indexConst(b, loc, tileColumns));
        SmallVector<Value, kBoxesB> boxCols;
        for (int64_t offset : boxOffsets)
          boxCols.push_back(
              arith::AddIOp::create(b, loc, col0, indexConst(b, loc, offset)));

        Pipeline pipe;
        pipe.element = element;
        pipe.mapA = mapA;
        pipe.mapsB = mapsB;
        pipe.shared = gpu::DynamicSharedMemoryOp::create(
            b, loc,
            MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                            MemRefLayoutAttrInterface{},
                            workgroupSpace(context)));
        Value address =
            memref::ExtractAlignedPointerAsIndexOp::create(b, loc, pipe.shared);
        Value alignment = indexConst(b, loc, kSwizzleAlignment);
        pipe.base = arith::RemUIOp::create(
            b, loc,
            arith::SubIOp::create(
                b, loc, alignment,
                arith::RemUIOp::create(b, loc, address, alignment)),
            alignment);
        pipe.barriers = nvgpu::MBarrierCreateOp::create(
            b, loc,
            nvgpu::MBarrierGroupType::get(context, workgroupSpace(context),
                                          Tiles::stages));
        Value zero = indexConst(b, loc, 0);
        Value one = indexConst(b, loc, 1);
        Value first = isThreadZero(b, loc, ids.thread);
        Value warpgroup =
            arith::DivUIOp::create(b, loc, ids.thread, indexConst(b, loc, 128));
        {
          auto init = scf::IfOp::create(b, loc, first);
          OpBuilder::InsertionGuard inner(b);
          b.setInsertionPoint(init.thenBlock()->getTerminator());
          for (int64_t s = 0; s < Tiles::stages; ++s)
            nvgpu::MBarrierInitOp::create(b, loc, pipe.barriers, one,
                                          indexConst(b, loc, s),
                                          /*predicate=*/Value());
          // With K = 0 the operands are empty and have no tensor maps.
          if (kSteps > 0) {
            nvgpu::TmaPrefetchOp::create(b, loc, mapA, /*predicate=*/Value());
            for (auto [buffer, map] : mapOfBuffer)
              nvgpu::TmaPrefetchOp::create(b, loc, map, /*predicate=*/Value());
          }
          for (int64_t s = 0; s < std::min(Tiles::stages, kSteps); ++s)
            pipe.load(b, loc, indexConst(b, loc, s), indexConst(b, loc, s),
                      row0, boxCols);
        }
        // The barriers' initialization is seen by every thread.
        gpu::BarrierOp::create(b, loc);

        auto accumulatorType = nvgpu::WarpgroupAccumulatorType::get(
            context,
            VectorType::get({kGroupTileRows, Tiles::n}, b.getF32Type()));
        Value accumulator = nvgpu::WarpgroupMmaInitAccumulatorOp::create(
            b, loc, accumulatorType);
        Value stages = indexConst(b, loc, Tiles::stages);
        auto kLoop =
            scf::ForOp::create(b, loc, zero, indexConst(b, loc, kSteps), one,
                               ValueRange{accumulator});
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
                                                 indexConst(b, loc, 10000000),
                                                 stage);
          Value tileA = pipe.tileA(b, loc, stage, warpgroup);
          Value tileB = pipe.tileB(b, loc, stage);
          Value descA = nvgpu::WarpgroupGenerateDescriptorOp::create(
              b, loc,
              nvgpu::WarpgroupMatrixDescriptorType::get(
                  context, sharedTile({kGroupTileRows, Tiles::k}, element)),
              tileA, mapA);
          Value descB = nvgpu::WarpgroupGenerateDescriptorOp::create(
              b, loc,
              nvgpu::WarpgroupMatrixDescriptorType::get(
                  context, sharedTile({Tiles::k, Tiles::n}, element)),
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
              b, loc, step, indexConst(b, loc, Tiles::stages - 1));
          Value refill = arith::AndIOp::create(
              b, loc,
              arith::AndIOp::create(
                  b, loc, first,
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, step,
                                        one)),
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                    refillStep, indexConst(b, loc, kSteps)));
          auto reload = scf::IfOp::create(b, loc, refill);
          {
            OpBuilder::InsertionGuard load(b);
            b.setInsertionPoint(reload.thenBlock()->getTerminator());
            Value previous = arith::RemUIOp::create(
                b, loc, arith::SubIOp::create(b, loc, step, one), stages);
            pipe.load(b, loc, previous, refillStep, row0, boxCols);
          }
          scf::YieldOp::create(b, loc, next);
        }
        NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
        // Every stage is read: the accumulators take their place.
        gpu::BarrierOp::create(b, loc);
        Value staged =
            pipe.view(b, loc, zero, {Tiles::m, Tiles::n}, b.getF32Type());
        // Upstream's lowering of the store places a thread's rows by its
        // warp in the block (thread id / 32), not in its warpgroup: the
        // rows of warpgroup w land 64 * w rows further than its own, so its
        // view starts that much earlier (at row 64 * w instead of 128 * w;
        // still inside the staged tile).
        Value groupRows = pipe.view(
            b, loc,
            arith::MulIOp::create(
                b, loc, warpgroup,
                indexConst(b, loc, (kGroupTileRows - 64) * Tiles::n * 4)),
            {kGroupTileRows, Tiles::n}, b.getF32Type());
        nvgpu::WarpgroupMmaStoreOp::create(b, loc, kLoop.getResult(0),
                                           groupRows);
        gpu::BarrierOp::create(b, loc);

        // The epilogue: vectors of `width` along N, a thread every
        // `threads` of them.
        int64_t rowVectors = tileColumns / width;
        auto vectors = scf::ForOp::create(
            b, loc, ids.thread, indexConst(b, loc, Tiles::m * rowVectors),
            indexConst(b, loc, Tiles::threads));
        b.setInsertionPointToStart(vectors.getBody());
        Value i = vectors.getInductionVar();
        Value r =
            arith::DivUIOp::create(b, loc, i, indexConst(b, loc, rowVectors));
        Value c = arith::MulIOp::create(
            b, loc,
            arith::RemUIOp::create(b, loc, i, indexConst(b, loc, rowVectors)),
            indexConst(b, loc, width));
        Value row = arith::AddIOp::create(b, loc, row0, r);
        Value col = arith::AddIOp::create(b, loc, col0, c);
        // N is a multiple of the width: a vector is all in or all out.
        Value inside = arith::AndIOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, m),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, col,
                                  indexConst(b, loc, nSize)));
        auto write = scf::IfOp::create(b, loc, inside);
        b.setInsertionPoint(write.thenBlock()->getTerminator());
        PointEvaluator evaluator(b, loc, kernel, buffers.inputs, width);
        // A pair's second product is the tile's second box of columns.
        for (auto [i, tiledProduct] : llvm::enumerate(tiled->products)) {
          Value column = arith::AddIOp::create(
              b, loc, c, indexConst(b, loc, i * kBoxColumns));
          Value product = vector::LoadOp::create(
              b, loc, VectorType::get({width}, b.getF32Type()), staged,
              ValueRange{r, column});
          if (width == 1)
            product = vector::ExtractOp::create(b, loc, product, 0);
          // The product is rounded to its type, as the op defines it.
          product = extendToF32(b, loc, roundTo(b, loc, product, element));
          evaluator.known[tiledProduct.value] = product;
        }
        SmallVector<Value> index = {row, col};
        return evaluator.storeOutputs(buffers.outputs, index, width > 1);
      },
      /*shared=*/{}, /*clusterBlocks=*/0, sharedBytes);
}
