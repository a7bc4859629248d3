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

/// The GPU's workgroup (shared) address space.
Attribute workgroupSpace(MLIRContext *context);

/// A memref of `shape` in shared memory.
MemRefType sharedTile(ArrayRef<int64_t> shape, Type element);

/// A tensor map of boxes of `box` elements, 128-byte swizzled, zeros past
/// the tensor's edges.
nvgpu::TensorMapDescriptorType tensorMapType(ArrayRef<int64_t> box,
                                             Type element);

/// On the host: the tensor map of `buffer` (in global memory) in boxes of
/// `box`.
Value createTensorMap(OpBuilder &b, Location loc, Value buffer,
                      ArrayRef<int64_t> box);

/// The shared-memory address of barrier `id` of `group`, for the NVVM
/// operations nvgpu has no form of.
Value barrierPointer(OpBuilder &b, Location loc, Value group, Value id);

/// Waits until barrier `id` of `group` completes its phase of parity
/// `parity` (an i1).
void waitForPhase(OpBuilder &b, Location loc, Value group, Value id,
                  Value parity);

/// The warpgroup of `thread`, as its warp's first lane has it (a value
/// ptxas knows is uniform across the warp).
Value uniformWarpgroup(OpBuilder &b, Location loc, Value thread);

Value isThreadZero(OpBuilder &b, Location loc, Value thread);

} // namespace mlir::fusion::codegen

#endif // FUSION_LIB_CONVERSION_FUSIONTOGPU_HOPPER_H
