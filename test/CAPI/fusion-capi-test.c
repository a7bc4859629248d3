/*===- fusion-capi-test.c - Fusion from C ---------------------------------===*\
|*                                                                            *|
|* A C host: loads the fusion dialect through its handle, registers Fusion's  *|
|* passes and pipelines, parses a module and runs "fusion-pipeline" by name.  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

// RUN: fusion-capi-test 2>&1 | FileCheck %s

#include "fusion-c/Registration.h"
#include "mlir-c/Dialect/Func.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <stdio.h>
#include <stdlib.h>

static void printToStdout(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

static const char *source =
    "func.func @chain(%x: tensor<64xf32>, %w: tensor<64xf32>) -> "
    "tensor<64xf32> {\n"
    "  %0 = fusion.exp %x : tensor<64xf32>\n"
    "  %1 = fusion.mul %0, %w : tensor<64xf32>\n"
    "  %2 = fusion.relu %1 : tensor<64xf32>\n"
    "  return %2 : tensor<64xf32>\n"
    "}\n";

int main(void) {
  MlirContext context = mlirContextCreate();
  MlirDialectHandle fusion = mlirGetDialectHandle__fusion__();
  mlirDialectHandleRegisterDialect(fusion, context);
  mlirDialectHandleLoadDialect(fusion, context);
  mlirDialectHandleLoadDialect(mlirGetDialectHandle__func__(), context);
  // CHECK: namespace: fusion
  MlirStringRef name = mlirDialectHandleGetNamespace(fusion);
  printf("namespace: %.*s\n", (int)name.length, name.data);

  fusionRegisterPassesAndPipelines();
  MlirModule module =
      mlirModuleCreateParse(context, mlirStringRefCreateFromCString(source));
  if (mlirModuleIsNull(module)) {
    fprintf(stderr, "parse failed\n");
    return 1;
  }

  MlirPassManager pm = mlirPassManagerCreate(context);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  MlirLogicalResult parsed = mlirParsePassPipeline(
      opm, mlirStringRefCreateFromCString("builtin.module(fusion-pipeline)"),
      printToStdout, NULL);
  if (mlirLogicalResultIsFailure(parsed)) {
    fprintf(stderr, "\nunknown pipeline\n");
    return 1;
  }
  if (mlirLogicalResultIsFailure(
          mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module)))) {
    fprintf(stderr, "pipeline failed\n");
    mlirOperationPrint(mlirModuleGetOperation(module), printToStdout, NULL);
    return 1;
  }
  // One kernel holds the three ops.
  // CHECK: fusion.kernel elementwise "chain_k0"
  // CHECK: fusion.exp
  // CHECK: fusion.mul
  // CHECK: fusion.relu
  // CHECK: fusion.yield
  // CHECK-NOT: fusion.kernel
  mlirOperationPrint(mlirModuleGetOperation(module), printToStdout, NULL);
  printf("\n");

  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
  mlirContextDestroy(context);
  return 0;
}
