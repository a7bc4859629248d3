//===- CountTraffic.cpp - Run-time traffic counters on the CPU path -------===//

#include "fusion/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSIONCOUNTTRAFFIC
#include "fusion/Conversion/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;

static constexpr StringLiteral kRecordFunction = "fusion_traffic_record";

/// Whether `memref` is one of `function`'s arguments or a view of one.
static bool isExternalBuffer(Value memref, func::FuncOp function) {
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
    memref = view.getViewSource();
  auto arg = dyn_cast<BlockArgument>(memref);
  return arg && arg.getOwner() == &function.getBody().front();
}

/// Emits the call recording one access of `memref[indices]`.
static void recordAccess(OpBuilder &b, Location loc, int64_t kernelId,
                         Value memref, ValueRange indices, bool isWrite) {
  auto type = cast<MemRefType>(memref.getType());
  Type i64 = b.getI64Type();
  int64_t bytes =
      std::max<int64_t>(1, type.getElementType().getIntOrFloatBitWidth() / 8);
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value linear = metadata.getOffset();
  for (auto [index, stride] : llvm::zip(indices, metadata.getStrides()))
    linear = arith::AddIOp::create(
        b, loc, linear, arith::MulIOp::create(b, loc, index, stride));
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value address = arith::AddIOp::create(
      b, loc, base,
      arith::MulIOp::create(b, loc, linear,
                            arith::ConstantIndexOp::create(b, loc, bytes)));
  func::CallOp::create(
      b, loc, kRecordFunction, TypeRange{},
      ValueRange{arith::ConstantIntOp::create(b, loc, i64, kernelId),
                 arith::IndexCastOp::create(b, loc, i64, address),
                 arith::ConstantIntOp::create(b, loc, i64, bytes),
                 arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                              isWrite ? 1 : 0)});
}

namespace {
struct CountTrafficPass
    : fusion::impl::FusionCountTrafficBase<CountTrafficPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder builder(module.getBodyRegion());
    if (!module.lookupSymbol(kRecordFunction)) {
      builder.setInsertionPointToStart(module.getBody());
      auto decl = func::FuncOp::create(
          builder, module.getLoc(), kRecordFunction,
          builder.getFunctionType({builder.getI64Type(), builder.getI64Type(),
                                   builder.getI64Type(), builder.getI32Type()},
                                  {}));
      decl.setPrivate();
    }
    WalkResult result = module.walk([&](func::FuncOp function) {
      auto id = function->getAttrOfType<IntegerAttr>("fusion.kernel_id");
      if (!id || function.isExternal())
        return WalkResult::advance();
      WalkResult inner = function.walk([&](Operation *op) {
        if (auto copy = dyn_cast<memref::CopyOp>(op);
            copy && (isExternalBuffer(copy.getSource(), function) ||
                     isExternalBuffer(copy.getTarget(), function))) {
          copy.emitOpError("is not counted: lower copies of kernel buffers "
                           "to loops before fusion-count-traffic");
          return WalkResult::interrupt();
        }
        OpBuilder b(op);
        if (auto load = dyn_cast<memref::LoadOp>(op);
            load && isExternalBuffer(load.getMemRef(), function))
          recordAccess(b, load.getLoc(), id.getInt(), load.getMemRef(),
                       load.getIndices(), /*isWrite=*/false);
        else if (auto store = dyn_cast<memref::StoreOp>(op);
                 store && isExternalBuffer(store.getMemRef(), function))
          recordAccess(b, store.getLoc(), id.getInt(), store.getMemRef(),
                       store.getIndices(), /*isWrite=*/true);
        return WalkResult::advance();
      });
      return inner.wasInterrupted() ? WalkResult::interrupt()
                                    : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
