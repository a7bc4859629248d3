//===- ClusterRows.cpp - The cluster side of the cluster_rows strategy ----===//
//
// A row split over the blocks of a thread-block cluster: each block reduces
// its part, publishes its total in shared memory, and reads every block's
// total through distributed shared memory (mapa), so that all blocks
// continue with the row's total. Rows alternate between two sets of slots:
// a block writes a row's slot after the cluster barrier of the row before,
// which every block reaches after its reads of the slot two rows back.
// Rows.cpp runs the rest of the row. The addressing of other blocks' shared
// memory is shared with attention_rows, whose clusters fold a query row's
// ranges the same way.
//
//===----------------------------------------------------------------------===//

#include "Strategies.h"

#include "fusion/Conversion/ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::codegen;

Value codegen::clusterSlots(OpBuilder &b, Location loc, int64_t numSlots) {
  auto workgroup = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  Value bytes = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface{}, workgroup));
  return memref::ViewOp::create(
      b, loc,
      MemRefType::get({numSlots}, b.getF32Type(), MemRefLayoutAttrInterface{},
                      workgroup),
      bytes, indexConst(b, loc, 0), ValueRange{});
}

void codegen::clusterBarrier(OpBuilder &b, Location loc) {
  NVVM::ClusterArriveOp::create(b, loc, /*aligned=*/UnitAttr());
  NVVM::ClusterWaitOp::create(b, loc, /*aligned=*/UnitAttr());
}

Value codegen::combineOverCluster(OpBuilder &b, Location loc,
                                  Operation *reduction, Value total,
                                  Value slots, Value slot, Value tid,
                                  int64_t splits) {
  Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                        indexConst(b, loc, 0));
  emitIf(b, loc, isFirst,
         [&] { memref::StoreOp::create(b, loc, total, slots, slot); });
  clusterBarrier(b, loc);
  // The slot's address in this block's shared memory, then in each block's.
  Value local = sharedAddress(
      b, loc, slots,
      arith::MulIOp::create(b, loc, slot,
                            indexConst(b, loc, int64_t(sizeof(float)))));
  Value acc = buildReductionIdentity(b, loc, reduction, b.getF32Type());
  for (int64_t block = 0; block < splits; ++block)
    acc = buildReductionCombine(
        b, loc, reduction, acc,
        LLVM::LoadOp::create(b, loc, b.getF32Type(),
                             inClusterBlock(b, loc, local, block)));
  return acc;
}

Value codegen::sharedAddress(OpBuilder &b, Location loc, Value buffer,
                             int64_t byteOffset) {
  return sharedAddress(b, loc, buffer, indexConst(b, loc, byteOffset));
}

Value codegen::sharedAddress(OpBuilder &b, Location loc, Value buffer,
                             Value byteOffset) {
  auto sharedPtr = LLVM::LLVMPointerType::get(
      b.getContext(), static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared));
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  Value address = arith::AddIOp::create(b, loc, base, byteOffset);
  return LLVM::IntToPtrOp::create(
      b, loc, sharedPtr,
      arith::IndexCastUIOp::create(b, loc, b.getI64Type(), address)
          .getResult());
}

Value codegen::inClusterBlock(OpBuilder &b, Location loc, Value address,
                              int64_t block) {
  auto clusterPtr = LLVM::LLVMPointerType::get(
      b.getContext(),
      static_cast<unsigned>(NVVM::NVVMMemorySpace::SharedCluster));
  return NVVM::MapaOp::create(
      b, loc, clusterPtr, address,
      arith::ConstantIntOp::create(b, loc, block, 32).getResult());
}
