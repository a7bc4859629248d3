//===- Hopper.h - TMA, mbarriers and warpgroups for sm_90 strategies -*- C++
//-*-===//
//
// What the Hopper tensor-core strategies (MatmulWgmma.cpp,
// AttentionTiles.cpp) share: shared-memory tiles, TMA tensor maps of
// 128-byte-swizzled boxes, waits on mbarrier phases, and the thread ids
// they branch on.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_LIB_CONVERSION_FUSIONTOGPU_HOPPER_H
#define FUSION_LIB_CONVERSION_FUSIONTOGPU_HOPPER_H

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::fusion::codegen {

/// 128-byte swizzling repeats every 1024 bytes; tiles start on that
/// boundary, which the dynamic shared memory's base need not be on.
constexpr int64_t kSwizzleAlignment = 1024;

/// A launch's dynamic shared memory (bytes) and, as an offset into it,
/// its first kSwizzleAlignment boundary strictly past the memory's symbol:
/// the symbol is lowered to a one-byte static variable (NVPTX demotes the
/// zero-size global), laid out among the kernel's static shared objects
/// (mbarriers) right after it, so tiles start at `base`, past those objects
/// (tens of bytes), inside the kSwizzleAlignment bytes of slack the launch
/// asks for beyond its layout. (Starting on the symbol itself put a stage
/// over the mbarriers: compute-sanitizer racecheck, 2026-12-01.)
struct DynamicShared {
  Value memory, symbol, base;
};
DynamicShared alignedDynamicShared(OpBuilder &b, Location loc);

/// The GPU's workgroup (shared) address space.
Attribute workgroupSpace(MLIRContext *context);

/// A memref of `shape` in shared memory.
MemRefType sharedTile(ArrayRef<int64_t> shape, Type element);

/// A tensor map of boxes of `box` elements, `swizzle`d (128-byte by
/// default), zeros past the tensor's edges.
nvgpu::TensorMapDescriptorType
tensorMapType(ArrayRef<int64_t> box, Type element,
              nvgpu::TensorMapSwizzleKind swizzle =
                  nvgpu::TensorMapSwizzleKind::SWIZZLE_128B);

/// On the host: the tensor map of `buffer` (in global memory) in boxes of
/// `box`.
Value createTensorMap(OpBuilder &b, Location loc, Value buffer,
                      ArrayRef<int64_t> box,
                      nvgpu::TensorMapSwizzleKind swizzle =
                          nvgpu::TensorMapSwizzleKind::SWIZZLE_128B);

/// `buffer` (`[batch..., rows, columns]` in global memory) as `[batches,
/// rows, columns]`: a 3-D tensor map of it fills zeros past each batch's
/// rows.
Value collapseBatches(OpBuilder &b, Location loc, Value buffer);

/// The batch of `buffer` (an operand of shape `operand`) in its
/// collapseBatches form that the output batch `batch` (a multi-index over
/// the output's batch axes `out`) reads: its broadcast axes at 0.
Value collapsedBatch(OpBuilder &b, Location loc, Value buffer,
                     ArrayRef<int64_t> operand, ArrayRef<int64_t> out,
                     ArrayRef<Value> batch);

/// The shared-memory address of barrier `id` of `group`, for the NVVM
/// operations nvgpu has no form of.
Value barrierPointer(OpBuilder &b, Location loc, Value group, Value id);

/// Waits until barrier `id` of `group` completes its phase of parity
/// `parity` (an i1).
void waitForPhase(OpBuilder &b, Location loc, Value group, Value id,
                  Value parity);

/// In a kernel that reads settled inputs (KernelBuffers::settled) before
/// it: waits for the grids before this one (`griddepcontrol.wait`), then
/// lets the kernels after it launch (`launch_dependents`), which then find
/// those grids done. fusion-launch-dependents adds neither to a kernel that
/// waits itself; its other threads that touch what the grids before may
/// write wait too.
void emitGridDependencyWait(OpBuilder &b, Location loc);

/// The warpgroup of `thread`, as its warp's first lane has it (a value
/// ptxas knows is uniform across the warp).
Value uniformWarpgroup(OpBuilder &b, Location loc, Value thread);

Value isThreadZero(OpBuilder &b, Location loc, Value thread);

} // namespace mlir::fusion::codegen

#endif // FUSION_LIB_CONVERSION_FUSIONTOGPU_HOPPER_H
