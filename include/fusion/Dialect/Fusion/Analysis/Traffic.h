//===- Traffic.h - Device-memory traffic of fusion programs -----*- C++ -*-===//
//
// Byte counts for the fusion cost model and fusion-report. A count is a
// polynomial in the dynamic dimensions: the symbol `d<i>` stands for a
// dynamic size at dimension i (counted from the left), on the assumption
// that dynamic sizes at the same position agree (one dynamic row count).
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_DIALECT_FUSION_ANALYSIS_TRAFFIC_H
#define FUSION_DIALECT_FUSION_ANALYSIS_TRAFFIC_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include <map>
#include <optional>
#include <string>

namespace mlir::fusion {
class KernelOp;

/// A number of bytes: sum of coefficient * product of dynamic-size symbols.
/// (Operation counts use the same polynomials: getKernelFlops.)
class ByteCount {
public:
  ByteCount() = default;
  explicit ByteCount(int64_t bytes);

  /// The bytes a tensor of `type` occupies in device memory (i1 takes a
  /// byte). Null types and non-tensors count zero.
  static ByteCount ofType(Type type);
  /// `perElement` times the elements of `type`, times the dynamic sizes
  /// `extraSymbols` (dimension indices, as the symbols `d<i>`).
  static ByteCount ofElements(Type type, int64_t perElement,
                              ArrayRef<unsigned> extraSymbols = {});

  ByteCount &operator+=(const ByteCount &other);
  friend ByteCount operator+(ByteCount a, const ByteCount &b) { return a += b; }

  /// The count when no dynamic size is involved.
  std::optional<int64_t> getStatic() const;
  /// The count with every dynamic size set to `dynamicSize`, for decisions.
  int64_t estimate(int64_t dynamicSize = 1024) const;
  /// "8192*d0 + 16", or "0".
  std::string str() const;

private:
  /// Sorted symbol indices (a multiset) -> coefficient.
  std::map<SmallVector<unsigned, 2>, int64_t> terms;
};

/// Whether `value` is a splat fusion.constant: it broadcasts from registers
/// and costs no traffic.
bool isSplatConstant(Value value);

/// The value of a splat float fusion.constant, if `value` is one.
std::optional<double> getSplatFloat(Value value);

/// A compute op of the fusion dialect: not a constant, kernel, yield or
/// reshape.
bool isComputeOp(Operation *op);

/// Traffic of one kernel: each external input read once (splat constants
/// free), or as many times as the kernel's plan reads it; each result
/// written once.
struct KernelTraffic {
  ByteCount read, written;
};
KernelTraffic getKernelTraffic(KernelOp kernel);

/// Traffic of `op` run alone, as one launch: its operands read, its results
/// written.
KernelTraffic getOpTraffic(Operation *op);

/// Floating-point operations of the matmuls in `kernel`: 2*M*N*K per
/// product (times the batch). Elementwise math is not counted: kernels
/// without a matmul are bound by their bytes.
ByteCount getKernelFlops(KernelOp kernel);

} // namespace mlir::fusion

#endif // FUSION_DIALECT_FUSION_ANALYSIS_TRAFFIC_H
