//===- MatmulTiles.cpp - The shared-memory tile matmul strategy -----------===//
//
// Matmul kernels of TiledProducts (one product, or a pair sharing A): a
// block of 16 x 16 threads per output tile (grid-stride over tiles). Per
// step of 16 along K, the block stages a tile of each operand in shared
// memory (zeros past the edges), then each thread accumulates its element of
// each product in f32; the epilogue is evaluated on the accumulators. The
// fallback where the tensor-core strategy does not apply.
//
//===----------------------------------------------------------------------===//

#include "PointEvaluator.h"
#include "Strategies.h"

#include "fusion/Conversion/ScalarOps.h"
#include "fusion/Dialect/Fusion/Analysis/KernelPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::codegen;

LogicalResult codegen::emitMatmulTiles(OpBuilder &b, Location loc,
                                       KernelOp kernel, KernelPlanAttr plan,
                                       const KernelBuffers &buffers) {
  // The plan is 256 threads: one per element of a 16 x 16 tile.
  constexpr int64_t kTile = 16;
  assert(plan.getThreads() == kTile * kTile && "checked by checkPlan");
  FailureOr<TiledProducts> tiled = getTiledProducts(kernel);
  if (failed(tiled))
    return kernel.emitOpError("matmul_tiles needs the products of "
                              "TiledProducts (checked by the plan)");
  MatmulOp matmul = tiled->products.front().matmul;
  int64_t numProducts = tiled->products.size();
  MLIRContext *context = b.getContext();
  Value out0 = buffers.outputs[0];
  int64_t rank = cast<MemRefType>(out0.getType()).getRank();
  auto tileSizes = [&](OpBuilder &b) {
    // [batch..., tiles along M, tiles along N] and the sizes M, N.
    SmallVector<Value> sizes = sizesOf(b, loc, out0);
    Value m = sizes[rank - 2], n = sizes[rank - 1];
    Value tile = indexConst(b, loc, kTile);
    sizes[rank - 2] = arith::CeilDivUIOp::create(b, loc, m, tile);
    sizes[rank - 1] = arith::CeilDivUIOp::create(b, loc, n, tile);
    return std::make_tuple(sizes, m, n);
  };
  SmallVector<Value> tiles = std::get<0>(tileSizes(b));
  auto workgroup = gpu::AddressSpaceAttr::get(
      context, gpu::GPUDialect::getWorkgroupAddressSpace());
  // One padding column keeps the column reads of B free of bank conflicts.
  auto tileType = MemRefType::get({kTile, kTile + 1}, b.getF32Type(),
                                  MemRefLayoutAttrInterface{}, workgroup);
  return emitLaunch(
      b, loc, kernel, product(b, loc, tiles), kTile * kTile,
      [&](OpBuilder &b, const LaunchIds &ids) -> LogicalResult {
        Value aTile = ids.shared[0];
        auto [tiles, m, n] = tileSizes(b);
        Value tile = indexConst(b, loc, kTile);
        Value zero = indexConst(b, loc, 0);
        Value tx = arith::RemUIOp::create(b, loc, ids.thread, tile);
        Value ty = arith::DivUIOp::create(b, loc, ids.thread, tile);
        PointEvaluator sizer(b, loc, kernel, buffers.inputs, 1);
        FailureOr<Value> kSize =
            sizer.sizeOf(matmul.getA(), shapeOf(matmul.getA()).size() - 1);
        if (failed(kSize))
          return matmul.emitOpError("cannot size the dynamic inner dimension");

        auto tileLoop = scf::ForOp::create(b, loc, ids.block,
                                           product(b, loc, tiles), ids.grid);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(tileLoop.getBody());
        SmallVector<Value> index =
            delinearize(b, loc, tileLoop.getInductionVar(), tiles);
        Value row = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, index[rank - 2], tile), ty);
        Value col = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, index[rank - 1], tile), tx);
        index[rank - 2] = row;
        index[rank - 1] = col;

        // Stages element (r, c) of an operand into `buffer`[ty][tx], zero
        // outside [0, rows) x [0, cols).
        auto stage = [&](MatmulOp op, Value operand, Value r, Value c,
                         Value rows, Value cols,
                         Value buffer) -> LogicalResult {
          Value inside = arith::AndIOp::create(
              b, loc,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, r, rows),
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, c,
                                    cols));
          auto guarded = scf::IfOp::create(b, loc, b.getF32Type(), inside,
                                           /*withElseRegion=*/true);
          {
            OpBuilder::InsertionGuard inner(b);
            b.setInsertionPointToStart(guarded.thenBlock());
            PointEvaluator evaluator(b, loc, kernel, buffers.inputs, 1);
            FailureOr<Value> v =
                evaluator.evalMatmulOperand(op, operand, index, r, c);
            if (failed(v))
              return failure();
            scf::YieldOp::create(b, loc, *v);
            b.setInsertionPointToStart(guarded.elseBlock());
            scf::YieldOp::create(b, loc,
                                 f32Constant(b, loc, 0.0, b.getF32Type()));
          }
          memref::StoreOp::create(b, loc, guarded.getResult(0), buffer,
                                  ValueRange{ty, tx});
          return success();
        };

        // Each product's columns of B: the tile's, from its first column.
        SmallVector<Value> bColumns, bSizes;
        for (TiledProducts::Product p : tiled->products) {
          bColumns.push_back(
              arith::AddIOp::create(b, loc, col, indexConst(b, loc, p.column)));
          FailureOr<Value> size = sizer.sizeOf(
              p.matmul.getB(), shapeOf(p.matmul.getB()).size() - 1);
          if (failed(size))
            return p.matmul.emitOpError("cannot size the dynamic N");
          bSizes.push_back(*size);
        }

        SmallVector<Value> zeros(numProducts,
                                 f32Constant(b, loc, 0.0, b.getF32Type()));
        auto kLoop = scf::ForOp::create(b, loc, zero, *kSize, tile, zeros);
        {
          OpBuilder::InsertionGuard inner(b);
          b.setInsertionPointToStart(kLoop.getBody());
          Value k0 = kLoop.getInductionVar();
          if (failed(stage(matmul, matmul.getA(), row,
                           arith::AddIOp::create(b, loc, k0, tx), m, *kSize,
                           aTile)))
            return failure();
          for (auto [i, p] : llvm::enumerate(tiled->products))
            if (failed(stage(p.matmul, p.matmul.getB(),
                             arith::AddIOp::create(b, loc, k0, ty), bColumns[i],
                             *kSize, bSizes[i], ids.shared[1 + i])))
              return failure();
          gpu::BarrierOp::create(b, loc);
          SmallVector<Value> acc(kLoop.getRegionIterArgs());
          for (int64_t k = 0; k < kTile; ++k) {
            Value kk = indexConst(b, loc, k);
            Value a = memref::LoadOp::create(b, loc, aTile, ValueRange{ty, kk});
            for (int64_t i = 0; i < numProducts; ++i) {
              Value bv = memref::LoadOp::create(b, loc, ids.shared[1 + i],
                                                ValueRange{kk, tx});
              acc[i] = math::FmaOp::create(b, loc, a, bv, acc[i]);
            }
          }
          // The next step overwrites the tiles.
          gpu::BarrierOp::create(b, loc);
          scf::YieldOp::create(b, loc, acc);
        }

        // The epilogue, for the threads whose element exists.
        Value inside = arith::AndIOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, m),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, col, n));
        auto write = scf::IfOp::create(b, loc, inside);
        b.setInsertionPoint(write.thenBlock()->getTerminator());
        PointEvaluator evaluator(b, loc, kernel, buffers.inputs, 1);
        Type element = getElementTypeOrSelf(matmul.getType());
        for (auto [i, p] : llvm::enumerate(tiled->products)) {
          Value product = kLoop.getResult(i);
          if (!element.isF32())
            product = extendToF32(b, loc, roundTo(b, loc, product, element));
          evaluator.known[p.value] = product;
        }
        return evaluator.storeOutputs(buffers.outputs, index, false);
      },
      SmallVector<Type>(1 + numProducts, tileType));
}
