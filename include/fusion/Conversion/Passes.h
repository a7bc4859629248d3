//===- Passes.h - Conversions out of the fusion dialect ---------*- C++ -*-===//

#ifndef FUSION_CONVERSION_PASSES_H
#define FUSION_CONVERSION_PASSES_H

#include "fusion/Dialect/Fusion/Analysis/KernelPlan.h"
#include "fusion/Dialect/Fusion/IR/FusionDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/CommandLine.h"

namespace mlir {
class RewritePatternSet;
class TypeConverter;

namespace fusion {

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
