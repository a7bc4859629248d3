//===- Passes.h - Conversions out of the fusion dialect ---------*- C++ -*-===//

#ifndef FUSION_CONVERSION_PASSES_H
#define FUSION_CONVERSION_PASSES_H

#include "fusion/Dialect/Fusion/IR/FusionDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/CommandLine.h"

namespace mlir {
class RewritePatternSet;
class TypeConverter;

namespace fusion {

/// How `fusion-kernels-to-gpu` runs matmul kernels.
enum class MatmulBackend {
  /// A library call where the kernel is one (LibraryMatmul.h), else a
  /// generated kernel.
  automatic,
  /// Always a library call (cuBLASLt); an error where the kernel is not one.
  library,
  /// Always a generated kernel.
  generated,
};

/// The values of a `matmul-backend` option.
inline auto matmulBackendValues() {
  return llvm::cl::values(
      clEnumValN(MatmulBackend::automatic, "auto",
                 "a library call where the kernel maps onto one, else a "
                 "generated kernel"),
      clEnumValN(MatmulBackend::library, "library",
                 "cuBLASLt, with its epilogue; an error for other kernels"),
      clEnumValN(MatmulBackend::generated, "generated",
                 "Fusion's own kernel"));
}

#define GEN_PASS_DECL
#include "fusion/Conversion/Passes.h.inc"

/// Patterns lowering primitive fusion ops to linalg, tensor, arith and math
/// ops on tensors.
void populateFusionToLinalgPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "fusion/Conversion/Passes.h.inc"

} // namespace fusion
} // namespace mlir

#endif // FUSION_CONVERSION_PASSES_H
