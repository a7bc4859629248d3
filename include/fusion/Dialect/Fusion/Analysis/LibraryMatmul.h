//===- LibraryMatmul.h - Matmul kernels a BLAS library can run --*- C++ -*-===//
//
// The one description of what a library matmul (cuBLASLt) computes in a
// single call, read by the fusion engine (which epilogue ops may join a
// matmul kernel under `matmul-epilogue=library`) and by the GPU lowering
// (which kernels become library calls, and with which epilogue):
//
//   D = act(alpha * (A @ B) + beta * C + bias)
//
// with C a full-shaped addend (a residual), bias broadcast over rows (one
// value per column), act relu or tanh-gelu. The library applies the
// epilogue to the f32 accumulator and rounds once, at D. A or B may be read
// transposed (its last two dimensions swapped, as `x @ w^T` of a Linear
// layer or `q @ k^T` have it): the library reads the stored matrix with
// op = T, so the transpose is never written to memory.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_DIALECT_FUSION_ANALYSIS_LIBRARYMATMUL_H
#define FUSION_DIALECT_FUSION_ANALYSIS_LIBRARYMATMUL_H

#include "fusion/Dialect/Fusion/IR/FusionOps.h"

#include <string>

namespace mlir::fusion {

/// The activations of cuBLASLt's epilogues.
enum class LibraryActivation { none, relu, gelu };

/// A matmul followed by the epilogue ops a library call computes. Built op
/// by op from the product: a scale by a constant, then a residual addend,
/// then a bias, then an activation, each optional, in that order.
struct LibraryEpilogue {
  double alpha = 1.0;
  /// The full-shaped addend C (beta = 1), or null.
  Value residual;
  /// The bias broadcast over rows, or null.
  Value bias;
  LibraryActivation activation = LibraryActivation::none;

  /// Takes `op`, which reads the chain's current value `current`, into the
  /// epilogue. `isInput` says whether a value is read from memory (a kernel
  /// input): residuals and biases must be. Returns "" on success, else the
  /// reason, as a remark states it ("[library-epilogue] ...").
  std::string extend(Operation *op, Value current,
                     function_ref<bool(Value)> isInput);
};

/// Whether `permutation` swaps the last two dimensions and keeps the others.
bool isMatrixTranspose(ArrayRef<int64_t> permutation);

/// The stored operand behind the matmul operand `operand` and whether it is
/// read transposed: `operand` itself, or the input of a matrix transpose
/// whose only user is the product.
std::pair<Value, bool> storedOperand(Value operand);

/// A matmul kernel as one library call: operand and epilogue values are
/// the kernel's block arguments.
struct LibraryMatmul {
  MatmulOp matmul;
  /// The stored operands (block arguments) and whether the product reads
  /// each transposed (through a fusion.transpose of its last two dimensions
  /// at the start of the kernel).
  Value a, b;
  bool transposeA = false, transposeB = false;
  LibraryEpilogue epilogue;
  /// What the kernel writes: the end of the chain.
  Value result;
};

/// `kernel` as one library call, or failure with the reason in `reason`.
FailureOr<LibraryMatmul> matchLibraryMatmul(KernelOp kernel,
                                            std::string *reason = nullptr);

} // namespace mlir::fusion

#endif // FUSION_DIALECT_FUSION_ANALYSIS_LIBRARYMATMUL_H
