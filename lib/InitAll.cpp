//===- InitAll.cpp - Register everything Fusion provides ------------------===//

#include "fusion/InitAll.h"

#include "fusion/Conversion/Passes.h"
#include "fusion/Dialect/Fusion/IR/FusionDialect.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"
#include "fusion/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"

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

bool fusion::reportKnownParserCrashes(llvm::SourceMgr &sourceMgr) {
  llvm::StringRef text =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBuffer();
  llvm::Regex indexArray("array<[[:space:]]*index[[:space:]]*:");
  bool found = false;
  llvm::SmallVector<llvm::StringRef, 1> match;
  for (llvm::StringRef rest = text; indexArray.match(rest, &match);) {
    sourceMgr.PrintMessage(llvm::SMLoc::getFromPointer(match[0].data()),
                           llvm::SourceMgr::DK_Error,
                           "dense arrays of 'index' are not supported (use "
                           "i64: MLIR 22's parser cannot read them)");
    found = true;
    rest = rest.drop_front(match[0].end() - rest.begin());
  }
  return found;
}
