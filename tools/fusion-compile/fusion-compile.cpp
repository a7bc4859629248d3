//===- fusion-compile.cpp - A fusion module to a shared library -----------===//
//
//   fusion-compile IN.mlir --target=cuda|cpu [--chip=sm_90] [--no-fuse]
//                  [--matmul-epilogue=none|library|any]
//                  [--matmul-backend=auto|library|generated] [--matmul-tf32]
//                  [--launch-dependents]
//                  [--count-traffic] -o libNAME.so
//
// Runs fusion-to-nvvm (cuda) or fusion-to-cpu (cpu), translates to LLVM IR,
// optimizes and emits a host object, and links it with the system compiler
// driver into a shared library whose public functions are callable as
// `_mlir_ciface_<function>(inputs..., outputs...)` with memref descriptors.
// Beside it, `libNAME.json` lists each function's input and output types
// and, for each dynamic output dimension, the input dimension it takes its
// size from; fusion.cpu and fusion.cuda use them to check arguments and
// allocate outputs.
//
//===----------------------------------------------------------------------===//

#include "fusion/Dialect/Fusion/Analysis/DynamicDims.h"
#include "fusion/Dialect/Fusion/Analysis/InPlace.h"
#include "fusion/InitAll.h"
#include "fusion/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <cstdlib>

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.mlir>"),
                                      cl::Required);
static cl::opt<std::string> outputFile("o", cl::desc("Output shared library"),
                                       cl::value_desc("libNAME.so"),
                                       cl::Required);
static cl::opt<std::string> target("target", cl::desc("cuda or cpu"),
                                   cl::init("cuda"));
static cl::opt<std::string> chip("chip", cl::desc("GPU to compile for"),
                                 cl::init("sm_90"));
static cl::opt<bool> noFuse("no-fuse",
                            cl::desc("One kernel per op (for comparison)"));
static cl::opt<mlir::fusion::MatmulEpilogue> matmulEpilogue(
    "matmul-epilogue",
    cl::desc("Which elementwise ops join a matmul: its epilogue, and with "
             "any its operands' prologues"),
    cl::init(mlir::fusion::MatmulEpilogue::library),
    mlir::fusion::matmulEpilogueValues());
static cl::opt<mlir::fusion::MatmulBackend>
    matmulBackend("matmul-backend",
                  cl::desc("CUDA target: how matmul kernels run"),
                  cl::init(mlir::fusion::MatmulBackend::automatic),
                  mlir::fusion::matmulBackendValues());
static cl::opt<bool>
    matmulTf32("matmul-tf32",
               cl::desc("CUDA target: library f32 matmuls may use TF32"));
static cl::opt<bool> launchDependents(
    "launch-dependents",
    cl::desc("CUDA target: kernels launch as programmatic dependents of the "
             "kernel before them (sm_90 and newer)"));
static cl::opt<bool>
    countTraffic("count-traffic",
                 cl::desc("CPU target: count each kernel's traffic"));
static cl::opt<bool> keepObject("keep-object",
                                cl::desc("Keep the intermediate object file"));

/// Per public function of `kernels` (the module with its kernels formed):
/// the (input, result) pairs whose result may be written into the input.
static llvm::StringMap<llvm::json::Array> inPlaceResults(ModuleOp kernels) {
  llvm::StringMap<llvm::json::Array> pairs;
  for (auto function : kernels.getOps<func::FuncOp>()) {
    llvm::json::Array array;
    for (auto [input, result] : mlir::fusion::getInPlaceResults(function))
      array.push_back(llvm::json::Array{input, result});
    pairs[function.getName()] = std::move(array);
  }
  return pairs;
}

/// Writes `<output without .so>.json`: the target, whether kernels count
/// their traffic, each public function's tensor types, and the results
/// that may be written into an input's buffer (`in_place`, from
/// `kernels`: the module with its kernels formed as the lowering forms them).
static LogicalResult writeSignatures(ModuleOp module, ModuleOp kernels,
                                     StringRef output, StringRef targetName) {
  llvm::StringMap<llvm::json::Array> inPlace = inPlaceResults(kernels);
  llvm::json::Object functions;
  for (auto function : module.getOps<func::FuncOp>()) {
    if (!function.isPublic() || function.isExternal())
      continue;
    auto types = [](TypeRange range) {
      llvm::json::Array array;
      for (Type type : range) {
        std::string text;
        llvm::raw_string_ostream os(text);
        os << type;
        array.push_back(text);
      }
      return array;
    };
    // Where each dynamic output dimension comes from: [input, dimension]
    // (null for a static one); fusion-record-size-checks refuses a function
    // with a dynamic result size no input gives.
    llvm::json::Array sources;
    for (const auto &dims : mlir::fusion::getResultSizeSources(function)) {
      llvm::json::Array entries;
      for (const auto &source : dims)
        if (source)
          entries.push_back(llvm::json::Array{source->first, source->second});
        else
          entries.push_back(nullptr);
      sources.push_back(std::move(entries));
    }
    functions[function.getName()] = llvm::json::Object{
        {"inputs", types(function.getArgumentTypes())},
        {"outputs", types(function.getResultTypes())},
        {"output_dim_sources", std::move(sources)},
        {"in_place", std::move(inPlace[function.getName()])}};
  }
  SmallString<256> path(output);
  llvm::sys::path::replace_extension(path, "json");
  std::string error;
  auto file = openOutputFile(path, &error);
  if (!file) {
    llvm::errs() << "fusion-compile: " << error << "\n";
    return failure();
  }
  llvm::json::Object document{{"target", targetName},
                              {"count_traffic", bool(countTraffic)},
                              {"functions", std::move(functions)}};
  file->os() << llvm::formatv("{0:1}", llvm::json::Value(std::move(document)))
             << "\n";
  file->keep();
  return success();
}

/// Optimizes `llvmModule` and writes a position-independent host object.
static LogicalResult emitObject(llvm::Module &llvmModule, StringRef path) {
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *host = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!host) {
    llvm::errs() << "fusion-compile: " << error << "\n";
    return failure();
  }
  std::unique_ptr<llvm::TargetMachine> machine(host->createTargetMachine(
      triple, "generic", "", llvm::TargetOptions(), llvm::Reloc::PIC_));
  llvmModule.setDataLayout(machine->createDataLayout());
  llvmModule.setTargetTriple(triple);
  if (auto err = makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0,
                                           machine.get())(&llvmModule)) {
    llvm::errs() << "fusion-compile: optimization failed: " << err << "\n";
    return failure();
  }
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    llvm::errs() << "fusion-compile: " << path << ": " << ec.message() << "\n";
    return failure();
  }
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, out, nullptr,
                                   llvm::CodeGenFileType::ObjectFile)) {
    llvm::errs() << "fusion-compile: the host target cannot emit objects\n";
    return failure();
  }
  passes.run(llvmModule);
  return success();
}

/// Links `object` into the shared library `output` against Fusion's
/// runtime (found next to this tool, in ../lib).
static LogicalResult link(StringRef object, StringRef output, StringRef argv0,
                          bool cuda) {
  auto cc = llvm::sys::findProgramByName("cc");
  if (!cc) {
    llvm::errs() << "fusion-compile: no C compiler driver (cc) to link with\n";
    return failure();
  }
  std::string self = llvm::sys::fs::getMainExecutable(
      argv0.data(), reinterpret_cast<void *>(&link));
  SmallString<256> libDir(
      llvm::sys::path::parent_path(llvm::sys::path::parent_path(self)));
  llvm::sys::path::append(libDir, "lib");
  std::string runtime = cuda ? "-lfusion_cuda_runtime" : "-lfusion_cpu_runtime";
  std::string libFlag = "-L" + libDir.str().str();
  // The runtime is looked for beside the library first (a bundle), then in
  // the build that made it.
  std::string rpath = "-Wl,-rpath,$ORIGIN:" + libDir.str().str();
  // -Bsymbolic: the library's calls to its own functions bind to them, not
  // to a same-named symbol loaded earlier (a function `step` or `exp` would
  // otherwise call libc's).
  SmallVector<StringRef> args = {
      *cc,     "-shared", object, "-o", output, "-Wl,-Bsymbolic",
      libFlag, runtime,   rpath,  "-lm"};
  std::string message;
  int status =
      llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, {}, 0, 0, &message);
  if (status != 0) {
    llvm::errs() << "fusion-compile: linking failed"
                 << (message.empty() ? "" : ": " + message) << "\n";
    return failure();
  }
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  ::fusion::setDefaultCudaPath();
  cl::ParseCommandLineOptions(argc, argv,
                              "Fusion: compile a module into a shared library");
  if (target != "cuda" && target != "cpu") {
    llvm::errs() << "fusion-compile: --target must be cuda or cpu, got '"
                 << target << "'\n";
    return 1;
  }

  DialectRegistry registry;
  ::fusion::registerDialects(registry);
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  MLIRContext context(registry);

  llvm::SourceMgr sourceMgr;
  std::string error;
  auto input = openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << "fusion-compile: " << error << "\n";
    return 1;
  }
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  if (::fusion::reportKnownParserCrashes(sourceMgr))
    return 1;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  // The kernels as the lowering forms them, for the in-place analysis (the
  // lowering itself leaves no fusion.kernel to look at).
  OwningOpRef<ModuleOp> kernels = module->clone();
  PassManager formKernels(&context);
  mlir::fusion::buildFusionKernels(formKernels, !noFuse, matmulEpilogue,
                                   target == "cuda"
                                       ? mlir::fusion::kGpuAttentionKernels
                                       : mlir::fusion::kCpuAttentionKernels,
                                   chip);
  if (failed(formKernels.run(*kernels)) ||
      failed(writeSignatures(*module, *kernels, outputFile, target)))
    return 1;

  PassManager pm(&context);
  if (target == "cuda") {
    mlir::fusion::FusionToNvvmOptions options;
    options.fuse = !noFuse;
    options.matmulEpilogue = matmulEpilogue;
    options.chip = chip;
    options.format = "bin";
    options.matmulBackend = matmulBackend;
    options.matmulTf32 = matmulTf32;
    options.launchDependents = launchDependents;
    mlir::fusion::buildFusionToNvvmPipeline(pm, options);
  } else {
    mlir::fusion::FusionToCpuOptions options;
    options.fuse = !noFuse;
    options.matmulEpilogue = matmulEpilogue;
    options.countTraffic = countTraffic;
    mlir::fusion::buildFusionToCpuPipeline(pm, options);
  }
  if (failed(pm.run(*module)))
    return 1;

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext);
  if (!llvmModule) {
    llvm::errs() << "fusion-compile: translation to LLVM IR failed\n";
    return 1;
  }
  SmallString<256> object(outputFile.getValue());
  llvm::sys::path::replace_extension(object, "o");
  if (failed(emitObject(*llvmModule, object)) ||
      failed(link(object, outputFile, argv[0], target == "cuda")))
    return 1;
  if (!keepObject)
    llvm::sys::fs::remove(object);
  return 0;
}
