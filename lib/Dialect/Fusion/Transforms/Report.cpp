//===- Report.cpp - Kernels, launches and predicted traffic ---------------===//

#include "fusion/Dialect/Fusion/Analysis/Traffic.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "fusion/Dialect/Fusion/Transforms/PassOutput.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cmath>

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSIONREPORT
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// The target a time is predicted for.
struct Target {
  double bytesPerUs;
  double flopsPerUs16, flopsPerUs32;
  /// Each dynamic size; 0: no prediction with dynamic sizes.
  int64_t dynamicSize;

  /// Microseconds: the larger of moving `bytes` and computing `flops`.
  std::optional<double> predict(const ByteCount &bytes, const ByteCount &flops,
                                bool f32) const {
    std::optional<int64_t> b = bytes.getStatic(), f = flops.getStatic();
    if ((!b || !f) && dynamicSize <= 0)
      return std::nullopt;
    double moved = b ? *b : bytes.estimate(dynamicSize);
    double computed = f ? *f : flops.estimate(dynamicSize);
    return std::max(moved / bytesPerUs,
                    computed / (f32 ? flopsPerUs32 : flopsPerUs16));
  }
};

struct KernelEntry {
  std::string name;
  std::string kind;
  /// The plan's strategy and row storage ("rows/streamed"), when planned.
  std::optional<std::string> plan;
  int64_t ops = 0;
  KernelTraffic traffic;
  ByteCount flops;
  std::optional<double> predictedUs;
};

struct FunctionEntry {
  std::string name;
  std::vector<KernelEntry> kernels;
  int64_t launches = 0, unfusedLaunches = 0;
  ByteCount bytes, unfusedBytes, flops;
  /// The sum over kernels, when every kernel has one.
  std::optional<double> predictedUs = 0.0;
};

/// Whether `kernel`'s products are f32 (the slower matmul peak).
bool hasF32Matmul(KernelOp kernel) {
  bool f32 = false;
  kernel.getBodyBlock().walk([&](MatmulOp matmul) {
    f32 |= getElementTypeOrSelf(matmul.getType()).isF32();
  });
  return f32;
}

FunctionEntry summarize(FunctionOpInterface function, const Target &target) {
  FunctionEntry entry;
  entry.name = function.getName().str();
  function.getFunctionBody().walk([&](Operation *op) {
    if (auto kernel = dyn_cast<KernelOp>(op)) {
      KernelEntry k;
      k.name = kernel.getName().value_or("").str();
      k.kind = stringifyKernelKind(kernel.getKind()).str();
      if (KernelPlanAttr plan = kernel.getPlanAttr()) {
        k.plan = stringifyKernelStrategy(plan.getStrategy()).str();
        if (plan.getRow() != RowStorage::none)
          *k.plan += "/" + stringifyRowStorage(plan.getRow()).str();
      }
      k.traffic = getKernelTraffic(kernel);
      k.flops = getKernelFlops(kernel);
      k.predictedUs = target.predict(k.traffic.read + k.traffic.written,
                                     k.flops, hasF32Matmul(kernel));
      for (Operation &inner : kernel.getBodyBlock())
        k.ops += isComputeOp(&inner);
      entry.flops += k.flops;
      if (entry.predictedUs && k.predictedUs)
        *entry.predictedUs += *k.predictedUs;
      else
        entry.predictedUs.reset();
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
    // An op left outside any kernel runs on its own (not predicted).
    if (!op->getParentOfType<KernelOp>()) {
      entry.launches += 1;
      entry.bytes += alone.read + alone.written;
      entry.predictedUs.reset();
    }
  });
  return entry;
}

/// A time as a JSON number (rounded to 0.001 us), or null.
llvm::json::Value timeValue(std::optional<double> us) {
  if (!us)
    return nullptr;
  return std::round(*us * 1000) / 1000;
}

/// A time for the text report.
std::string timeText(std::optional<double> us) {
  return us ? llvm::formatv("{0:f1}", *us).str() : "-";
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
      object["plan"] = k.plan ? llvm::json::Value(*k.plan)
                              : llvm::json::Value(nullptr);
      addBytes(object, "bytes_read", k.traffic.read);
      addBytes(object, "bytes_written", k.traffic.written);
      addBytes(object, "flops", k.flops);
      object["predicted_us"] = timeValue(k.predictedUs);
      kernels.push_back(std::move(object));
    }
    llvm::json::Object object{{"name", f.name},
                              {"kernels", int64_t(f.kernels.size())},
                              {"launches", f.launches},
                              {"unfused_launches", f.unfusedLaunches},
                              {"kernel_list", std::move(kernels)}};
    addBytes(object, "bytes", f.bytes);
    addBytes(object, "unfused_bytes", f.unfusedBytes);
    addBytes(object, "flops", f.flops);
    object["predicted_us"] = timeValue(f.predictedUs);
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
       << f.unfusedBytes.str() << " bytes)";
    if (f.flops.getStatic() != 0)
      os << ", " << f.flops.str() << " FLOPs";
    if (f.predictedUs)
      os << ", predicted " << timeText(f.predictedUs) << " us\n";
    else
      os << ", no predicted time (dynamic sizes: set dynamic-size)\n";
    if (f.kernels.empty())
      continue;
    os << llvm::formatv("  {0,-24} {1,-16} {2,5}  {3,-20} {4,-20} {5,-20} {6}\n",
                        "kernel", "kind", "ops", "bytes read",
                        "bytes written", "FLOPs", "us");
    for (const KernelEntry &k : f.kernels)
      os << llvm::formatv("  {0,-24} {1,-16} {2,5}  {3,-20} {4,-20} {5,-20} "
                          "{6}\n",
                          k.name, k.kind, k.ops, k.traffic.read.str(),
                          k.traffic.written.str(), k.flops.str(),
                          timeText(k.predictedUs));
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
    if (bandwidth <= 0 || matmulTflops <= 0 || f32MatmulTflops <= 0) {
      getOperation().emitError("fusion-report: bandwidth, matmul-tflops and "
                               "f32-matmul-tflops must be positive");
      return signalPassFailure();
    }
    // GB/s and TFLOP/s, per microsecond.
    Target target{bandwidth * 1e3, matmulTflops * 1e6, f32MatmulTflops * 1e6,
                  dynamicSize};
    std::vector<FunctionEntry> functions;
    getOperation().walk([&](FunctionOpInterface function) {
      if (!function.isExternal())
        functions.push_back(summarize(function, target));
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
