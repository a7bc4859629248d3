//===- fusion-opt.cpp - The Fusion optimizer driver -----------------------===//
//
// mlir-opt with the fusion dialect and passes, plus the upstream dialects,
// passes, extensions and LLVM/NVVM translations a pipeline down to cubin
// needs.
//
//===----------------------------------------------------------------------===//

#include "fusion/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include "llvm/Support/raw_ostream.h"
#include <cstdlib>

int main(int argc, char **argv) {
  fusion::setDefaultCudaPath();

  mlir::DialectRegistry registry;
  fusion::registerDialects(registry);
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);

  fusion::registerPasses();
  fusion::registerPipelines();
  mlir::registerAllPasses();

  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "Fusion version " << FUSION_VERSION << " (built with MLIR "
       << LLVM_VERSION_STRING << ")\n";
  });

  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "Fusion optimizer driver\n", registry);
  // Input the upstream parser would crash on gets a diagnostic instead.
  if (inputFilename != "-") {
    llvm::SourceMgr sourceMgr;
    if (auto buffer = llvm::MemoryBuffer::getFile(inputFilename)) {
      sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
      if (fusion::reportKnownParserCrashes(sourceMgr))
        return EXIT_FAILURE;
    }
  }
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, inputFilename, outputFilename, registry));
}
