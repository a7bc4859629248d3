//===- embed-opt.cpp - An mlir-opt of another compiler, with Fusion -------===//
//
// The compiler's own dialects and passes (here: func, arith, tensor and the
// upstream transforms), plus Fusion's dialect, passes and pipelines, each
// registered with one call from fusion/InitAll.h.
//
//===----------------------------------------------------------------------===//

#include "fusion/InitAll.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::arith::ArithDialect, mlir::func::FuncDialect,
                  mlir::tensor::TensorDialect>();
  mlir::registerTransformsPasses();

  fusion::registerDialects(registry);
  fusion::registerPasses();
  fusion::registerPipelines();

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "A compiler that embeds Fusion\n", registry));
}
