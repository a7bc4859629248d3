//===- FusionPlugin.cpp - Fusion for a stock mlir-opt ---------------------===//
//
// libFusionPlugin.so: the fusion dialect, passes and pipelines for an
// mlir-opt of the same MLIR version, without building anything against
// Fusion:
//
//   mlir-opt --load-dialect-plugin=libFusionPlugin.so \
//            --load-pass-plugin=libFusionPlugin.so \
//            --pass-pipeline='builtin.module(fusion-pipeline)' in.mlir
//
// (Plugins load while the command line is parsed, after mlir-opt has made
// one option per registered pass: Fusion's passes are named in
// --pass-pipeline, not as --fusion-... flags.)
//
//===----------------------------------------------------------------------===//

#include "fusion/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "Fusion", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            fusion::registerDialects(*registry);
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "Fusion", LLVM_VERSION_STRING, [] {
            // The NVVM pipeline finds ptxas and libdevice as fusion-opt does.
            fusion::setDefaultCudaPath();
            fusion::registerPasses();
            fusion::registerPipelines();
          }};
}
