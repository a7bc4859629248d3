//===- LibraryMatmulCall.cpp - Matmul kernels as cuBLASLt calls -----------===//

#include "LibraryMatmulCall.h"

#include "fusion/Runtime/CudaMatmul.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::fusion;

FailureOr<LibraryMatmulCall> fusion::getLibraryMatmulCall(KernelOp kernel,
                                                          std::string &reason) {
  FailureOr<LibraryMatmul> match = matchLibraryMatmul(kernel, &reason);
  if (failed(match))
    return failure();
  Type element = getElementTypeOrSelf(match->matmul.getType());
  if (!element.isF32() && !element.isF16() && !element.isBF16()) {
    reason = "[library-epilogue] the library multiplies f32, f16 and bf16 "
             "matrices";
    return failure();
  }
  auto argNumber = [](Value v) {
    return cast<BlockArgument>(v).getArgNumber();
  };
  LibraryMatmulCall call;
  call.a = argNumber(match->a);
  call.b = argNumber(match->b);
  call.transposeA = match->transposeA;
  call.transposeB = match->transposeB;
  const LibraryEpilogue &epilogue = match->epilogue;
  if (epilogue.residual)
    call.residual = argNumber(epilogue.residual);
  if (epilogue.bias)
    call.bias = argNumber(epilogue.bias);
  call.alpha = epilogue.alpha;
  call.activation = epilogue.activation;
  call.element = element;
  return call;
}

/// The runtime entry for `element`, declared in the module on first use.
static func::FuncOp getEntry(OpBuilder &b, Location loc, Type element) {
  auto module =
      b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  std::string name = std::string(FUSION_CUDA_MATMUL_ENTRY) + "_" +
                     (element.isF32()   ? "f32"
                      : element.isF16() ? "f16"
                                        : "bf16");
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  // Unranked memrefs: a (rank, descriptor) pair each, whatever the rank.
  Type unranked = UnrankedMemRefType::get(element, /*memorySpace=*/0);
  SmallVector<Type> inputs(5, unranked);
  inputs.append({b.getI32Type(), b.getF32Type()});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto entry = func::FuncOp::create(b, loc, name,
                                    b.getFunctionType(inputs, TypeRange{}));
  entry.setPrivate();
  return entry;
}

void fusion::emitLibraryMatmulCall(OpBuilder &b, Location loc,
                                   const LibraryMatmulCall &call,
                                   ArrayRef<Value> inputs, Value output,
                                   bool tf32) {
  Type unranked = UnrankedMemRefType::get(call.element, /*memorySpace=*/0);
  auto erase = [&](Value buffer) -> Value {
    return memref::CastOp::create(b, loc, unranked, buffer);
  };
  int32_t flags = 0;
  // An absent operand is passed as the output, which the runtime does not
  // read for it.
  Value d = erase(output);
  Value residual = d, bias = d;
  if (call.residual) {
    flags |= FUSION_MATMUL_RESIDUAL;
    residual = erase(inputs[*call.residual]);
  }
  if (call.bias) {
    flags |= FUSION_MATMUL_BIAS;
    bias = erase(inputs[*call.bias]);
  }
  if (call.activation == LibraryActivation::relu)
    flags |= FUSION_MATMUL_RELU;
  if (call.activation == LibraryActivation::gelu)
    flags |= FUSION_MATMUL_GELU;
  if (tf32)
    flags |= FUSION_MATMUL_TF32;
  // A transposed operand: the stored buffer seen through its transpose, a
  // strided view the runtime reads with op = T.
  auto operand = [&](unsigned index, bool transposed) -> Value {
    Value buffer = inputs[index];
    if (!transposed)
      return erase(buffer);
    int64_t rank = cast<MemRefType>(buffer.getType()).getRank();
    SmallVector<unsigned> permutation =
        llvm::to_vector(llvm::seq<unsigned>(0, rank));
    std::swap(permutation[rank - 2], permutation[rank - 1]);
    auto map = AffineMapAttr::get(
        AffineMap::getPermutationMap(permutation, b.getContext()));
    return erase(memref::TransposeOp::create(b, loc, buffer, map));
  };
  func::FuncOp entry = getEntry(b, loc, call.element);
  func::CallOp::create(
      b, loc, entry,
      ValueRange{operand(call.a, call.transposeA),
                 operand(call.b, call.transposeB), residual, bias, d,
                 arith::ConstantIntOp::create(b, loc, flags, 32),
                 arith::ConstantFloatOp::create(
                     b, loc, b.getF32Type(),
                     APFloat(static_cast<float>(call.alpha)))});
}
