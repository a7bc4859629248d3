//===- fusion-reduce.cpp - MLIR's test-case reducer with Fusion -----------===//
//
// mlir-reduce with the fusion dialect, passes and pipelines registered:
// shrinks a module while an interestingness script (exit status 1 = still
// interesting) keeps saying so. See docs/embedding.md.
//
//   fusion-reduce in.mlir --reduction-tree='traversal-mode=0 test=check.sh' -o min.mlir
//
// The fusion dialect offers no reduction patterns: MLIR 22's reduction
// tree crashes when a dialect's patterns, applied to the whole module
// first, make it uninteresting (fixed upstream after 22, llvm-project
// PR 195997). Ops are erased, and --opt-reduction-pass runs passes.
//
//===----------------------------------------------------------------------===//

#include "fusion/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-reduce/MlirReduceMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  fusion::registerPasses();
  fusion::registerPipelines();

  mlir::DialectRegistry registry;
  fusion::registerDialects(registry);
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::MLIRContext context(registry);
  return mlir::failed(mlir::mlirReduceMain(argc, argv, context));
}
