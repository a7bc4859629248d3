//===- Traffic.cpp - Device-memory traffic of fusion programs -------------===//

#include "fusion/Dialect/Fusion/Analysis/Traffic.h"

#include "fusion/Dialect/Fusion/IR/FusionOps.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::fusion;

ByteCount::ByteCount(int64_t bytes) {
  if (bytes != 0)
    terms[{}] = bytes;
}

ByteCount ByteCount::ofType(Type type) {
  auto tensor = dyn_cast_if_present<RankedTensorType>(type);
  if (!tensor)
    return ByteCount();
  int64_t bytes =
      std::max<int64_t>(1, tensor.getElementType().getIntOrFloatBitWidth() / 8);
  SmallVector<unsigned, 2> symbols;
  for (auto [i, dim] : llvm::enumerate(tensor.getShape())) {
    if (ShapedType::isDynamic(dim))
      symbols.push_back(i);
    else
      bytes *= dim;
  }
  ByteCount count;
  if (bytes != 0)
    count.terms[symbols] = bytes;
  return count;
}

ByteCount &ByteCount::operator+=(const ByteCount &other) {
  for (const auto &[symbols, coefficient] : other.terms)
    if ((terms[symbols] += coefficient) == 0)
      terms.erase(symbols);
  return *this;
}

std::optional<int64_t> ByteCount::getStatic() const {
  if (terms.empty())
    return 0;
  if (terms.size() == 1 && terms.begin()->first.empty())
    return terms.begin()->second;
  return std::nullopt;
}

int64_t ByteCount::estimate(int64_t dynamicSize) const {
  int64_t total = 0;
  for (const auto &[symbols, coefficient] : terms) {
    int64_t term = coefficient;
    for (size_t i = 0; i < symbols.size(); ++i)
      term *= dynamicSize;
    total += term;
  }
  return total;
}

std::string ByteCount::str() const {
  if (terms.empty())
    return "0";
  std::string result;
  llvm::raw_string_ostream os(result);
  // Highest degree first, the constant last.
  bool first = true;
  for (auto it = terms.rbegin(); it != terms.rend(); ++it) {
    if (!first)
      os << " + ";
    first = false;
    os << it->second;
    for (unsigned symbol : it->first)
      os << "*d" << symbol;
  }
  return result;
}

bool fusion::isSplatConstant(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  return constant && isa<SplatElementsAttr>(constant.getValue());
}

bool fusion::isComputeOp(Operation *op) {
  return isa<FusionDialect>(op->getDialect()) &&
         !isa<ConstantOp, KernelOp, YieldOp>(op);
}

/// Reads of the distinct non-splat values in `values`.
static ByteCount readsOf(ValueRange values) {
  ByteCount bytes;
  llvm::SmallDenseSet<Value> seen;
  for (Value value : values)
    if (seen.insert(value).second && !isSplatConstant(value))
      bytes += ByteCount::ofType(value.getType());
  return bytes;
}

KernelTraffic fusion::getKernelTraffic(KernelOp kernel) {
  KernelTraffic traffic;
  traffic.read = readsOf(kernel.getInputs());
  for (Type type : kernel.getResultTypes())
    traffic.written += ByteCount::ofType(type);
  return traffic;
}

KernelTraffic fusion::getOpTraffic(Operation *op) {
  KernelTraffic traffic;
  traffic.read = readsOf(op->getOperands());
  for (Type type : op->getResultTypes())
    traffic.written += ByteCount::ofType(type);
  return traffic;
}
