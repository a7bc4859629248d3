//===- Report.cpp - Kernels, launches and predicted traffic ---------------===//

#include "fusion/Dialect/Fusion/Analysis/Traffic.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "fusion/Dialect/Fusion/Transforms/PassOutput.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSIONREPORT
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

struct KernelEntry {
  std::string name;
  std::string kind;
  int64_t ops = 0;
  KernelTraffic traffic;
};

struct FunctionEntry {
  std::string name;
  std::vector<KernelEntry> kernels;
  int64_t launches = 0, unfusedLaunches = 0;
  ByteCount bytes, unfusedBytes;
};

FunctionEntry summarize(FunctionOpInterface function) {
  FunctionEntry entry;
  entry.name = function.getName().str();
  function.getFunctionBody().walk([&](Operation *op) {
    if (auto kernel = dyn_cast<KernelOp>(op)) {
      KernelEntry k;
      k.name = kernel.getName().value_or("").str();
      k.kind = stringifyKernelKind(kernel.getKind()).str();
      k.traffic = getKernelTraffic(kernel);
      for (Operation &inner : kernel.getBodyBlock())
        k.ops += isComputeOp(&inner);
      // One launch per kernel (a split wide row is one cluster launch).
      ++entry.launches;
      entry.bytes += k.traffic.read + k.traffic.written;
      entry.kernels.push_back(std::move(k));
      return;
    }
    if (!isComputeOp(op))
      return;
    KernelTraffic alone = getOpTraffic(op);
    entry.unfusedLaunches += 1;
    entry.unfusedBytes += alone.read + alone.written;
    // An op left outside any kernel runs on its own.
    if (!op->getParentOfType<KernelOp>()) {
      entry.launches += 1;
      entry.bytes += alone.read + alone.written;
    }
  });
  return entry;
}

/// A count as a JSON number, or null with a formula under `key_formula`.
void addBytes(llvm::json::Object &object, StringRef key,
              const ByteCount &count) {
  if (std::optional<int64_t> bytes = count.getStatic()) {
    object[key] = *bytes;
    return;
  }
  object[key] = nullptr;
  object[(key + "_formula").str()] = count.str();
}

void printJson(ArrayRef<FunctionEntry> functions, raw_ostream &os) {
  llvm::json::Array list;
  for (const FunctionEntry &f : functions) {
    llvm::json::Array kernels;
    for (const KernelEntry &k : f.kernels) {
      llvm::json::Object object{
          {"name", k.name}, {"kind", k.kind}, {"ops", k.ops}};
      addBytes(object, "bytes_read", k.traffic.read);
      addBytes(object, "bytes_written", k.traffic.written);
      kernels.push_back(std::move(object));
    }
    llvm::json::Object object{{"name", f.name},
                              {"kernels", int64_t(f.kernels.size())},
                              {"launches", f.launches},
                              {"unfused_launches", f.unfusedLaunches},
                              {"kernel_list", std::move(kernels)}};
    addBytes(object, "bytes", f.bytes);
    addBytes(object, "unfused_bytes", f.unfusedBytes);
    list.push_back(std::move(object));
  }
  os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                   {"functions", std::move(list)}}))
     << "\n";
}

void printText(ArrayRef<FunctionEntry> functions, raw_ostream &os) {
  for (const FunctionEntry &f : functions) {
    os << "function @" << f.name << ": " << f.kernels.size() << " kernels, "
       << f.launches << " launches, " << f.bytes.str()
       << " bytes (unfused: " << f.unfusedLaunches << " launches, "
       << f.unfusedBytes.str() << " bytes)\n";
    if (f.kernels.empty())
      continue;
    os << llvm::formatv("  {0,-24} {1,-16} {2,5}  {3,-20} {4}\n", "kernel",
                        "kind", "ops", "bytes read", "bytes written");
    for (const KernelEntry &k : f.kernels)
      os << llvm::formatv("  {0,-24} {1,-16} {2,5}  {3,-20} {4}\n", k.name,
                          k.kind, k.ops, k.traffic.read.str(),
                          k.traffic.written.str());
  }
}

struct FusionReportPass : fusion::impl::FusionReportBase<FusionReportPass> {
  using Base::Base;

  void runOnOperation() override {
    if (format != "text" && format != "json") {
      getOperation().emitError("fusion-report: format must be text or json, "
                               "got '")
          << format << "'";
      return signalPassFailure();
    }
    std::vector<FunctionEntry> functions;
    getOperation().walk([&](FunctionOpInterface function) {
      if (!function.isExternal())
        functions.push_back(summarize(function));
    });

    PassOutput out;
    if (failed(out.open(output, getOperation(), "fusion-report")))
      return signalPassFailure();
    raw_ostream *os = &out.os();
    if (format == "json")
      printJson(functions, *os);
    else
      printText(functions, *os);
    out.keep();
    markAllAnalysesPreserved();
  }
};

} // namespace
