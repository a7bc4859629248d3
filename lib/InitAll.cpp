//===- InitAll.cpp - Register everything Fusion provides ------------------===//

#include "fusion/InitAll.h"

#include "fusion/Conversion/Passes.h"
#include "fusion/Dialect/Fusion/IR/FusionDialect.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"
#include "fusion/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "llvm/Support/FileSystem.h"

#include <cstdlib>

void fusion::registerDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::fusion::FusionDialect>();
}

void fusion::registerPasses() {
  mlir::fusion::registerFusionPasses();
  mlir::fusion::registerFusionConversionPasses();
}

void fusion::registerPipelines() { mlir::fusion::registerFusionPipelines(); }

void fusion::setDefaultCudaPath() {
  if (!std::getenv("CUDA_HOME") && !std::getenv("CUDA_ROOT") &&
      !std::getenv("CUDA_PATH") && llvm::sys::fs::exists("/usr/local/cuda"))
    setenv("CUDA_HOME", "/usr/local/cuda", /*overwrite=*/0);
}
