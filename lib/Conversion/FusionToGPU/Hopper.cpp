//===- Hopper.cpp - TMA, mbarriers and warpgroups for sm_90 strategies ----===//

#include "Hopper.h"
#include "Launch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fusion;

Attribute codegen::workgroupSpace(MLIRContext *context) {
  return gpu::AddressSpaceAttr::get(
      context, gpu::GPUDialect::getWorkgroupAddressSpace());
}

MemRefType codegen::sharedTile(ArrayRef<int64_t> shape, Type element) {
  return MemRefType::get(shape, element, MemRefLayoutAttrInterface{},
                         workgroupSpace(element.getContext()));
}

/// A tensor map of boxes of `box` elements, 128-byte swizzled, zeros past
/// the tensor's edges.
nvgpu::TensorMapDescriptorType codegen::tensorMapType(ArrayRef<int64_t> box,
                                                      Type element) {
  return nvgpu::TensorMapDescriptorType::get(
      element.getContext(), sharedTile(box, element),
      nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
      nvgpu::TensorMapL2PromoKind::L2PROMO_NONE,
      nvgpu::TensorMapOOBKind::OOB_ZERO,
      nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
}

/// The tensor map of `buffer` (a matrix in global memory) in boxes of `box`.
Value codegen::createTensorMap(OpBuilder &b, Location loc, Value buffer,
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

/// The shared-memory address of barrier `id` of `group`, for the NVVM
/// operations nvgpu has no form of: reached through the memref nvgpu's
/// lowering makes of the group (reconcile-unrealized-casts folds the cast
/// with the lowering's).
Value codegen::barrierPointer(OpBuilder &b, Location loc, Value group,
                              Value id) {
  auto groupType = cast<nvgpu::MBarrierGroupType>(group.getType());
  auto memrefType =
      MemRefType::get({groupType.getNumBarriers()}, b.getI64Type(),
                      MemRefLayoutAttrInterface{}, groupType.getMemorySpace());
  Value barriers = UnrealizedConversionCastOp::create(b, loc, memrefType, group)
                       .getResult(0);
  Value address = arith::AddIOp::create(
      b, loc, memref::ExtractAlignedPointerAsIndexOp::create(b, loc, barriers),
      arith::MulIOp::create(b, loc, id, indexConst(b, loc, 8)));
  return LLVM::IntToPtrOp::create(
      b, loc,
      LLVM::LLVMPointerType::get(
          b.getContext(), static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared)),
      arith::IndexCastUIOp::create(b, loc, b.getI64Type(), address)
          .getResult());
}

/// Waits until barrier `id` of `group` completes its phase of parity
/// `parity` (an i1): a loop of NVVM's try_wait without a suspend-time hint
/// (nvgpu's try_wait.parity takes one).
void codegen::waitForPhase(OpBuilder &b, Location loc, Value group, Value id,
                           Value parity) {
  Value pointer = barrierPointer(b, loc, group, id);
  Value phase = arith::ExtUIOp::create(b, loc, b.getI32Type(), parity);
  auto loop = scf::WhileOp::create(b, loc, TypeRange{}, ValueRange{});
  OpBuilder::InsertionGuard guard(b);
  b.createBlock(&loop.getBefore());
  Value done = NVVM::MBarrierTryWaitOp::create(b, loc, b.getI1Type(), pointer,
                                               phase, /*ticks=*/Value());
  scf::ConditionOp::create(
      b, loc,
      arith::XOrIOp::create(b, loc, done,
                            arith::ConstantIntOp::create(b, loc, 1, 1)),
      ValueRange{});
  b.createBlock(&loop.getAfter());
  scf::YieldOp::create(b, loc);
}

/// The warpgroup of `thread`, as its warp's first lane has it: ptxas then
/// knows the value is the same across the warp and keeps what is computed
/// from it (the MMAs' descriptors of A) in uniform registers, instead of
/// moving each descriptor into them before its MMA (H200, 2026-12-01: twice
/// the instructions issued of cuBLAS's kernel, ncu).
Value codegen::uniformWarpgroup(OpBuilder &b, Location loc, Value thread) {
  Value group = arith::IndexCastUIOp::create(
      b, loc, b.getI32Type(),
      arith::DivUIOp::create(b, loc, thread, indexConst(b, loc, 128)));
  Value broadcast = gpu::ShuffleOp::create(b, loc, group, /*offset=*/0,
                                           /*width=*/32, gpu::ShuffleMode::IDX)
                        .getShuffleResult();
  return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), broadcast);
}

Value codegen::isThreadZero(OpBuilder &b, Location loc, Value thread) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread,
                               indexConst(b, loc, 0));
}
