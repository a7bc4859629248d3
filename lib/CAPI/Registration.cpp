//===- Registration.cpp - Fusion's C API ----------------------------------===//

#include "fusion-c/Registration.h"

#include "fusion/Dialect/Fusion/IR/FusionDialect.h"
#include "fusion/InitAll.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Fusion, fusion,
                                      mlir::fusion::FusionDialect)

void fusionRegisterDialects(MlirDialectRegistry registry) {
  fusion::registerDialects(*unwrap(registry));
}

void fusionRegisterPassesAndPipelines(void) {
  fusion::registerPasses();
  fusion::registerPipelines();
}
