//===- CudaMatmul.h - The library-matmul entry of the CUDA runtime -*- C -*-===//
//
// The contract between the host code that fusion-kernels-to-gpu emits for a
// library matmul kernel and the CUDA runtime that carries it out with
// cuBLASLt. Both sides include this header: the codes below are its single
// definition.
//
//   void fusion_cuda_matmul_<T>(int64_t aRank, void *a, int64_t bRank,
//                               void *b, int64_t cRank, void *c,
//                               int64_t biasRank, void *bias, int64_t dRank,
//                               void *d, int32_t flags, float alpha);
//
// for T = f32, f16, bf16, the element type of every operand.
//
// Each (rank, descriptor) pair is an unranked memref as MLIR passes it: the
// descriptor holds the allocated and aligned pointers, the offset, then
// `rank` sizes and `rank` strides (in elements). Row-major semantics:
//
//   D[..., M, N] = act(alpha * A[..., M, K] @ B[..., K, N] + C + bias[N])
//
// with batch dimensions broadcast as numpy does; C is read when
// FUSION_MATMUL_RESIDUAL is set, bias when FUSION_MATMUL_BIAS is set (an
// absent operand is passed as D again and not read).
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_RUNTIME_CUDAMATMUL_H
#define FUSION_RUNTIME_CUDAMATMUL_H

/// The entries are this prefix and the element type's name.
#define FUSION_CUDA_MATMUL_ENTRY "fusion_cuda_matmul"

/// What the call computes beyond alpha * A @ B.
enum FusionMatmulFlags {
  FUSION_MATMUL_RESIDUAL = 1 << 0,
  FUSION_MATMUL_BIAS = 1 << 1,
  FUSION_MATMUL_RELU = 1 << 2,
  /// The tanh approximation of gelu (the library's GELU).
  FUSION_MATMUL_GELU = 1 << 3,
  /// f32 products may use TF32 tensor cores.
  FUSION_MATMUL_TF32 = 1 << 4,
};

#endif // FUSION_RUNTIME_CUDAMATMUL_H
