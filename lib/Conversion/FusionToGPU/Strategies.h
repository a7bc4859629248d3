//===- Strategies.h - One GPU strategy per kernel plan ----------*- C++ -*-===//
//
// The strategies of fusion-kernels-to-gpu, one per file, each carrying out
// a `#fusion.plan` (KernelPlan.h) it does not re-decide: it emits one
// gpu.launch for the kernel on its device buffers at the builder's point.
// The library matmul strategy is a host call instead (LibraryMatmulCall.h).
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_LIB_CONVERSION_FUSIONTOGPU_STRATEGIES_H
#define FUSION_LIB_CONVERSION_FUSIONTOGPU_STRATEGIES_H

#include "Launch.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::fusion::codegen {

/// `elementwise`: a grid-stride loop over vectors (Elementwise.cpp).
LogicalResult emitElementwise(OpBuilder &b, Location loc, KernelOp kernel,
                              KernelPlanAttr plan,
                              const KernelBuffers &buffers);

/// `rows` and `cluster_rows`: a block (or a cluster) per row (Rows.cpp).
LogicalResult emitRows(OpBuilder &b, Location loc, KernelOp kernel,
                       KernelPlanAttr plan, const KernelBuffers &buffers);

/// `columns`: blocks of column vectors going down the rows, with a split
/// the last block of each tile combining the row ranges (Columns.cpp).
LogicalResult emitColumns(OpBuilder &b, Location loc, KernelOp kernel,
                          KernelPlanAttr plan, const KernelBuffers &buffers);

/// `split_reduction`: blocks per output element and range of its elements,
/// with a split the last block of each output combining the ranges
/// (SplitReduction.cpp).
LogicalResult emitSplitReduction(OpBuilder &b, Location loc, KernelOp kernel,
                                 KernelPlanAttr plan,
                                 const KernelBuffers &buffers);

/// `matmul_tiles`: shared-memory tiles of the product (MatmulTiles.cpp).
LogicalResult emitMatmulTiles(OpBuilder &b, Location loc, KernelOp kernel,
                              KernelPlanAttr plan,
                              const KernelBuffers &buffers);

/// `matmul_wgmma`: TMA, mbarriers and warpgroup MMA on sm_90
/// (MatmulWgmma.cpp).
LogicalResult emitMatmulWgmma(OpBuilder &b, Location loc, KernelOp kernel,
                              KernelPlanAttr plan,
                              const KernelBuffers &buffers);

/// `attention_rows`: a block per query row and range of keys, the softmax
/// online (AttentionRows.cpp).
LogicalResult emitAttentionRows(OpBuilder &b, Location loc, KernelOp kernel,
                                KernelPlanAttr plan,
                                const KernelBuffers &buffers);
/// `attention_tiles`: a block per 128 or 192 query rows (the plan's
/// threads; with 512, the host picks per call) on sm_90 tensor cores, the
/// softmax online (AttentionTiles.cpp).
LogicalResult emitAttentionTiles(OpBuilder &b, Location loc, KernelOp kernel,
                                 KernelPlanAttr plan,
                                 const KernelBuffers &buffers);
/// `per_element`: a thread per output element (PerElement.cpp).
LogicalResult emitPerElement(OpBuilder &b, Location loc, KernelOp kernel,
                             KernelPlanAttr plan,
                             const KernelBuffers &buffers);

/// The cluster side of `cluster_rows` (ClusterRows.cpp): `numSlots` f32
/// slots for the blocks' partial reductions in dynamic shared memory
/// (gpu.launch takes no workgroup attributions with clusters); the rows
/// strategy asks for two per reduction, rows alternating between them, so
/// that a row's slot is not written while a block may still read the one
/// of the row before.
Value clusterSlots(OpBuilder &b, Location loc, int64_t numSlots);
/// Waits for every thread of the cluster; shared-memory writes before it
/// are visible to the whole cluster after it.
void clusterBarrier(OpBuilder &b, Location loc);
/// The combination of the block totals `total` of the `blocks` blocks of a
/// cluster, through slot `slot` (an index) of every block's `slots`, in
/// block order (the same result in every block).
Value combineOverCluster(OpBuilder &b, Location loc, Operation *reduction,
                         Value total, Value slots, Value slot, Value tid,
                         int64_t blocks);

/// The address of byte `byteOffset` of shared buffer `buffer` (a workgroup
/// memref), as a pointer to shared memory.
Value sharedAddress(OpBuilder &b, Location loc, Value buffer,
                    int64_t byteOffset);
Value sharedAddress(OpBuilder &b, Location loc, Value buffer, Value byteOffset);
/// The shared-memory `address` (of this block) as it lies in block `block`
/// of the cluster: a pointer to distributed shared memory (mapa).
Value inClusterBlock(OpBuilder &b, Location loc, Value address, int64_t block);

/// f32 divisions and approximate exponentials in `launch` in the GPU's
/// forms (GpuMathForms.cpp).
void useGpuMathForms(gpu::LaunchOp launch);

} // namespace mlir::fusion::codegen

#endif // FUSION_LIB_CONVERSION_FUSIONTOGPU_STRATEGIES_H
