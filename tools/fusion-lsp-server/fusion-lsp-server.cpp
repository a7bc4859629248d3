//===- fusion-lsp-server.cpp - MLIR's language server with Fusion ---------===//
//
// MLIR's LSP server (diagnostics, hover, go-to-definition, symbols) for
// .mlir files, with the fusion dialect and every upstream dialect
// registered. Editors start it as they start mlir-lsp-server.
//
//===----------------------------------------------------------------------===//

#include "fusion/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Tools/mlir-lsp-server/MlirLspServerMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  fusion::registerDialects(registry);
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  return mlir::failed(mlir::MlirLspServerMain(argc, argv, registry));
}
