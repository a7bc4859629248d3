//===- ClusterRows.cpp - The cluster side of the cluster_rows strategy ----===//
//
// A row split over the blocks of a thread-block cluster: each block reduces
// its part, publishes its total in shared memory, and reads every block's
// total through distributed shared memory (mapa), so that all blocks
// continue with the row's total. Rows.cpp runs the rest of the row.
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
                                  Value slots, int64_t ordinal, Value tid,
                                  int64_t splits) {
  Value slot = indexConst(b, loc, ordinal);
  Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                        indexConst(b, loc, 0));
  emitIf(b, loc, isFirst,
         [&] { memref::StoreOp::create(b, loc, total, slots, slot); });
  clusterBarrier(b, loc);
  // The slot's address in this block's shared memory, then in each block's.
  MLIRContext *context = b.getContext();
  auto sharedPtr = LLVM::LLVMPointerType::get(
      context, static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared));
  auto clusterPtr = LLVM::LLVMPointerType::get(
      context, static_cast<unsigned>(NVVM::NVVMMemorySpace::SharedCluster));
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, slots);
  Value address = arith::AddIOp::create(
      b, loc, base, indexConst(b, loc, ordinal * int64_t(sizeof(float))));
  Value local = LLVM::IntToPtrOp::create(
      b, loc, sharedPtr,
      arith::IndexCastUIOp::create(b, loc, b.getI64Type(), address)
          .getResult());
  Value acc = buildReductionIdentity(b, loc, reduction, b.getF32Type());
  for (int64_t block = 0; block < splits; ++block) {
    Value remote = NVVM::MapaOp::create(
        b, loc, clusterPtr, local,
        arith::ConstantIntOp::create(b, loc, block, 32).getResult());
    acc = buildReductionCombine(
        b, loc, reduction, acc,
        LLVM::LoadOp::create(b, loc, b.getF32Type(), remote));
  }
  return acc;
}
