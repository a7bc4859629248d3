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

#include <cstdlib>
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  // The NVVM target finds libdevice and ptxas through these variables; the
  // usual install is the default, as for nvcc.
  if (!std::getenv("CUDA_HOME") && !std::getenv("CUDA_ROOT") &&
      !std::getenv("CUDA_PATH") && llvm::sys::fs::exists("/usr/local/cuda"))
    setenv("CUDA_HOME", "/usr/local/cuda", /*overwrite=*/0);

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

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Fusion optimizer driver\n", registry));
}
