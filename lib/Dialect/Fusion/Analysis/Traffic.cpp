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
  return ofElements(
      type,
      std::max<int64_t>(1, tensor.getElementType().getIntOrFloatBitWidth() / 8));
}

ByteCount ByteCount::ofElements(Type type, int64_t perElement,
                                ArrayRef<unsigned> extraSymbols) {
  auto tensor = dyn_cast_if_present<RankedTensorType>(type);
  if (!tensor)
    return ByteCount();
  int64_t bytes = perElement;
  SmallVector<unsigned, 2> symbols(extraSymbols);
  for (auto [i, dim] : llvm::enumerate(tensor.getShape())) {
    if (ShapedType::isDynamic(dim))
      symbols.push_back(i);
    else
      bytes *= dim;
  }
  llvm::sort(symbols);
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

std::optional<double> fusion::getSplatFloat(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
  if (!splat || !isa<FloatType>(splat.getElementType()))
    return std::nullopt;
  return splat.getSplatValue<APFloat>().convertToDouble();
}

bool fusion::isComputeOp(Operation *op) {
  // A reshape is a view between kernels, never in one.
  return isa<FusionDialect>(op->getDialect()) &&
         !isa<ConstantOp, KernelOp, YieldOp, ReshapeOp>(op);
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

/// The bytes a kernel reads of an input bound to `arg`: all of it, unless
/// the input is only sliced, in which case the slices (at most all of it),
/// or only gives iotas their size (none of it).
static ByteCount readOfArgument(BlockArgument arg, Value input) {
  ByteCount whole = ByteCount::ofType(input.getType());
  if (!arg.use_empty() &&
      llvm::all_of(arg.getUsers(), [](Operation *u) { return isa<IotaOp>(u); }))
    return ByteCount();
  if (arg.use_empty() || !llvm::all_of(arg.getUsers(), [](Operation *u) {
        return isa<SliceOp>(u);
      }))
    return whole;
  ByteCount slices;
  for (Operation *user : arg.getUsers())
    slices += ByteCount::ofType(user->getResult(0).getType());
  std::optional<int64_t> s = slices.getStatic(), w = whole.getStatic();
  return (s && w && *s > *w) ? whole : slices;
}

KernelTraffic fusion::getKernelTraffic(KernelOp kernel) {
  KernelTraffic traffic;
  // With a plan, an input is read as many times as the plan reads it (a
  // streamed row once per pass).
  ArrayRef<int64_t> passes;
  if (KernelPlanAttr plan = kernel.getPlanAttr())
    passes = plan.getPasses();
  llvm::SmallDenseSet<Value> seen;
  for (auto [index, arg, input] :
       llvm::enumerate(kernel.getBodyBlock().getArguments(), kernel.getInputs())) {
    if (!seen.insert(input).second || isSplatConstant(input))
      continue;
    ByteCount once = readOfArgument(arg, input);
    int64_t times = index < passes.size() ? passes[index] : 1;
    for (int64_t i = 0; i < times; ++i)
      traffic.read += once;
  }
  for (Type type : kernel.getResultTypes())
    traffic.written += ByteCount::ofType(type);
  return traffic;
}

KernelTraffic fusion::getOpTraffic(Operation *op) {
  KernelTraffic traffic;
  // A slice reads only the part it takes.
  traffic.read = isa<SliceOp>(op)
                     ? ByteCount::ofType(op->getResult(0).getType())
                     : readsOf(op->getOperands());
  for (Type type : op->getResultTypes())
    traffic.written += ByteCount::ofType(type);
  return traffic;
}

ByteCount fusion::getKernelFlops(KernelOp kernel) {
  ByteCount flops;
  kernel.getBodyBlock().walk([&](MatmulOp matmul) {
    auto a = cast<RankedTensorType>(matmul.getA().getType());
    int64_t k = a.getShape().back();
    SmallVector<unsigned, 1> dynamicK;
    if (ShapedType::isDynamic(k))
      dynamicK.push_back(a.getRank() - 1);
    flops += ByteCount::ofElements(matmul.getType(),
                                   ShapedType::isDynamic(k) ? 2 : 2 * k,
                                   dynamicK);
  });
  return flops;
}
