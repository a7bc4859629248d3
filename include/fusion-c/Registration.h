/*===- fusion-c/Registration.h - Fusion's C API -------------------*- C -*-===*\
|*                                                                            *|
|* For bindings and C hosts, in MLIR's C API conventions: a dialect handle    *|
|* (mlirGetDialectHandle__fusion__) and registration of the passes and        *|
|* pipelines with the global pass registry (then usable by name in            *|
|* mlirParsePassPipeline).                                                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef FUSION_C_REGISTRATION_H
#define FUSION_C_REGISTRATION_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Fusion, fusion);

/// Inserts the fusion dialect into `registry` (the C form of
/// fusion::registerDialects).
MLIR_CAPI_EXPORTED void fusionRegisterDialects(MlirDialectRegistry registry);

/// Registers every Fusion pass (fusion-fuse-producer-consumer, ...,
/// fusion-kernels-to-gpu) and pipeline (fusion-pipeline, fusion-to-cpu,
/// fusion-to-nvvm) with the global registry.
MLIR_CAPI_EXPORTED void fusionRegisterPassesAndPipelines(void);

#ifdef __cplusplus
}
#endif

#endif /* FUSION_C_REGISTRATION_H */
