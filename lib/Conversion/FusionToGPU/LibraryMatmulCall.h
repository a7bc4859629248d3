//===- LibraryMatmulCall.h - Matmul kernels as cuBLASLt calls ---*- C++ -*-===//
//
// The library strategy of fusion-kernels-to-gpu: a matmul kernel that is one
// library call (LibraryMatmul.h) becomes a host call of the CUDA runtime's
// fusion_cuda_matmul_<type> (include/fusion/Runtime/CudaMatmul.h) instead
// of a launch.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_LIB_CONVERSION_FUSIONTOGPU_LIBRARYMATMULCALL_H
#define FUSION_LIB_CONVERSION_FUSIONTOGPU_LIBRARYMATMULCALL_H

#include "fusion/Dialect/Fusion/Analysis/LibraryMatmul.h"

#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir::fusion {

/// A library matmul in terms of the kernel's inputs, which outlives the
/// kernel's body (the lowering decomposes bodies before it emits code).
struct LibraryMatmulCall {
  unsigned a = 0, b = 0;
  /// Read transposed: the buffer is passed as a transposed (strided) view,
  /// which the runtime reads with op = T.
  bool transposeA = false, transposeB = false;
  std::optional<unsigned> residual, bias;
  double alpha = 1.0;
  LibraryActivation activation = LibraryActivation::none;
  Type element;
};

/// `kernel` as a library call, or failure with the reason in `reason`.
FailureOr<LibraryMatmulCall> getLibraryMatmulCall(KernelOp kernel,
                                                  std::string &reason);

/// Emits the host call running `call` on the kernel's input buffers
/// `inputs` into `output`; `tf32` lets f32 products use TF32.
void emitLibraryMatmulCall(OpBuilder &b, Location loc,
                           const LibraryMatmulCall &call,
                           ArrayRef<Value> inputs, Value output, bool tf32);

} // namespace mlir::fusion

#endif // FUSION_LIB_CONVERSION_FUSIONTOGPU_LIBRARYMATMULCALL_H
