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

codegen::DynamicShared codegen::alignedDynamicShared(OpBuilder &b,
                                                     Location loc) {
  Value memory = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface{},
                      workgroupSpace(b.getContext())));
  Value symbol = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memory);
  Value alignment = indexConst(b, loc, kSwizzleAlignment);
  Value base = arith::SubIOp::create(
      b, loc, alignment, arith::RemUIOp::create(b, loc, symbol, alignment));
  return {memory, symbol, base};
}

MemRefType codegen::sharedTile(ArrayRef<int64_t> shape, Type element) {
  return MemRefType::get(shape, element, MemRefLayoutAttrInterface{},
                         workgroupSpace(element.getContext()));
}

nvgpu::TensorMapDescriptorType
codegen::tensorMapType(ArrayRef<int64_t> box, Type element,
                       nvgpu::TensorMapSwizzleKind swizzle) {
  return nvgpu::TensorMapDescriptorType::get(
      element.getContext(), sharedTile(box, element), swizzle,
      nvgpu::TensorMapL2PromoKind::L2PROMO_NONE,
      nvgpu::TensorMapOOBKind::OOB_ZERO,
      nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
}

Value codegen::createTensorMap(OpBuilder &b, Location loc, Value buffer,
                               ArrayRef<int64_t> box,
                               nvgpu::TensorMapSwizzleKind swizzle) {
  auto type = cast<MemRefType>(buffer.getType());
  Value unranked = memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(type.getElementType(), Attribute{}),
      buffer);
  SmallVector<Value> boxSizes;
  for (int64_t size : box)
    boxSizes.push_back(indexConst(b, loc, size));
  return nvgpu::TmaCreateDescriptorOp::create(
      b, loc, tensorMapType(box, type.getElementType(), swizzle), unranked,
      boxSizes);
}

Value codegen::collapseBatches(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  int64_t rank = type.getRank();
  if (rank == 2) {
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1)};
    for (int64_t d = 0; d < 2; ++d)
      sizes.push_back(memref::DimOp::create(b, loc, buffer, d).getResult());
    SmallVector<int64_t> shape3 = {1, type.getDimSize(0), type.getDimSize(1)};
    return memref::ExpandShapeOp::create(
        b, loc, MemRefType::get(shape3, type.getElementType()), buffer,
        ArrayRef<ReassociationIndices>{{0, 1}, {2}}, sizes);
  }
  ReassociationIndices batch;
  for (int64_t d = 0; d < rank - 2; ++d)
    batch.push_back(d);
  return memref::CollapseShapeOp::create(
      b, loc, buffer,
      ArrayRef<ReassociationIndices>{batch, {rank - 2}, {rank - 1}});
}

Value codegen::collapsedBatch(OpBuilder &b, Location loc, Value buffer,
                              ArrayRef<int64_t> operand, ArrayRef<int64_t> out,
                              ArrayRef<Value> batch) {
  Value flat = indexConst(b, loc, 0);
  for (auto [d, source] : llvm::enumerate(getBroadcastSources(operand, out))) {
    Value size = memref::DimOp::create(b, loc, buffer, d);
    flat = arith::MulIOp::create(b, loc, flat, size);
    if (source)
      flat = arith::AddIOp::create(b, loc, flat, batch[*source]);
  }
  return flat;
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
void codegen::emitGridDependencyWait(OpBuilder &b, Location loc) {
  NVVM::GriddepcontrolOp::create(b, loc, NVVM::GridDepActionKind::wait);
  NVVM::GriddepcontrolOp::create(b, loc,
                                 NVVM::GridDepActionKind::launch_dependents);
}

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
