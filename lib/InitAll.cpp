//===- InitAll.cpp - Register everything Fusion provides ------------------===//

#include "fusion/InitAll.h"

#include "fusion/Conversion/Passes.h"
#include "fusion/Dialect/Fusion/IR/FusionDialect.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"
#include "fusion/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"

void fusion::registerDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::fusion::FusionDialect>();
}

void fusion::registerPasses() {
  mlir::fusion::registerFusionPasses();
  mlir::fusion::registerFusionConversionPasses();
}

void fusion::registerPipelines() { mlir::fusion::registerFusionPipelines(); }
