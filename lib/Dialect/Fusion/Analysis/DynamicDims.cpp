//===- DynamicDims.cpp - Where a dynamic size comes from ------------------===//

#include "fusion/Dialect/Fusion/Analysis/DynamicDims.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace mlir::fusion;

std::optional<std::pair<Value, int64_t>> fusion::traceDynamicDim(Value value,
                                                                 int64_t dim) {
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (auto kernel = dyn_cast<KernelOp>(arg.getOwner()->getParentOp()))
        return std::make_pair(kernel.getInputs()[arg.getArgNumber()], dim);
      return std::make_pair(value, dim);
    }
    Operation *op = value.getDefiningOp();
    if (!isa<FusionDialect>(op->getDialect()))
      return std::make_pair(value, dim);
    if (auto kernel = dyn_cast<KernelOp>(op)) {
      value =
          kernel.getYield().getOperand(cast<OpResult>(value).getResultNumber());
      continue;
    }
    std::optional<DimRef> source;
    for (auto [from, to] : getEqualDims(op))
      if (to.value == value && to.dim == dim) {
        source = from;
        break;
      }
    if (!source)
      return std::nullopt;
    value = source->value;
    dim = source->dim;
  }
}

//===----------------------------------------------------------------------===//
// SizeClasses
//===----------------------------------------------------------------------===//

SizeClasses::SizeClasses(Operation *root) {
  auto rankOf = [](Value v) -> int64_t {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return type ? type.getRank() : 0;
  };
  auto uniteAll = [&](Value a, Value b) {
    for (int64_t d = 0, e = std::min(rankOf(a), rankOf(b)); d < e; ++d)
      unite({a, d}, {b, d});
  };
  root->walk([&](Operation *op) {
    if (auto kernel = dyn_cast<KernelOp>(op)) {
      for (auto [input, arg] :
           llvm::zip(kernel.getInputs(), kernel.getBodyBlock().getArguments()))
        uniteAll(input, arg);
      for (auto [result, yielded] :
           llvm::zip(kernel.getResults(), kernel.getYield().getOperands()))
        uniteAll(result, yielded);
      return;
    }
    for (auto [a, b] : getEqualDims(op))
      unite(a, b);
  });
}

unsigned SizeClasses::idOf(DimRef ref) {
  auto [it, inserted] = ids.try_emplace({ref.value, ref.dim}, parent.size());
  if (inserted) {
    parent.push_back(it->second);
    int64_t size = -1;
    if (auto type = dyn_cast<RankedTensorType>(ref.value.getType()))
      if (ref.dim < type.getRank() && !type.isDynamicDim(ref.dim))
        size = type.getDimSize(ref.dim);
    staticSize.push_back(size);
  }
  return it->second;
}

unsigned SizeClasses::find(unsigned id) {
  while (parent[id] != id) {
    parent[id] = parent[parent[id]];
    id = parent[id];
  }
  return id;
}

void SizeClasses::unite(DimRef a, DimRef b) {
  unsigned x = find(idOf(a)), y = find(idOf(b));
  if (x == y)
    return;
  parent[y] = x;
  if (staticSize[x] < 0)
    staticSize[x] = staticSize[y];
}

unsigned SizeClasses::getClass(DimRef ref) { return find(idOf(ref)); }

std::optional<int64_t> SizeClasses::getStaticSize(DimRef ref) {
  int64_t size = staticSize[getClass(ref)];
  if (size < 0)
    return std::nullopt;
  return size;
}

bool SizeClasses::areEqual(DimRef a, DimRef b) {
  if (getClass(a) == getClass(b))
    return true;
  std::optional<int64_t> x = getStaticSize(a), y = getStaticSize(b);
  return x && y && *x == *y;
}

//===----------------------------------------------------------------------===//
// Checks and result sizes of a function
//===----------------------------------------------------------------------===//

/// The function's inputs, then the values it returns.
static SmallVector<Value> getSignatureValues(Operation *function) {
  auto interface = cast<FunctionOpInterface>(function);
  SmallVector<Value> values(interface.getArguments());
  Region &body = interface.getFunctionBody();
  if (!body.empty())
    llvm::append_range(values, body.front().getTerminator()->getOperands());
  return values;
}

FunctionSizeChecks fusion::getSizeChecks(Operation *function) {
  SizeClasses classes(function);
  SmallVector<Value> values = getSignatureValues(function);
  llvm::MapVector<unsigned, SizeCheck> byClass;
  for (auto [index, value] : llvm::enumerate(values)) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    for (int64_t d = 0; type && d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d))
        continue;
      DimRef ref{value, d};
      SizeCheck &check = byClass[classes.getClass(ref)];
      check.staticSize = classes.getStaticSize(ref).value_or(-1);
      check.members.push_back({int64_t(index), d});
    }
  }
  FunctionSizeChecks checks;
  checks.numInputs = cast<FunctionOpInterface>(function).getNumArguments();
  for (auto &[cls, check] : byClass)
    if (check.staticSize >= 0 || check.members.size() > 1)
      checks.checks.push_back(std::move(check));
  return checks;
}

SmallVector<SmallVector<std::optional<std::pair<int64_t, int64_t>>>>
fusion::getResultSizeSources(Operation *function) {
  SizeClasses classes(function);
  auto interface = cast<FunctionOpInterface>(function);
  // The first input dimension of each class.
  llvm::DenseMap<unsigned, std::pair<int64_t, int64_t>> inputOfClass;
  for (BlockArgument arg : interface.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    for (int64_t d = 0; type && d < type.getRank(); ++d)
      inputOfClass.try_emplace(classes.getClass({arg, d}),
                               int64_t(arg.getArgNumber()), d);
  }
  SmallVector<SmallVector<std::optional<std::pair<int64_t, int64_t>>>> sources;
  SmallVector<Value> values = getSignatureValues(function);
  for (Value result :
       ArrayRef(values).drop_front(interface.getNumArguments())) {
    auto &dims = sources.emplace_back();
    auto type = dyn_cast<RankedTensorType>(result.getType());
    for (int64_t d = 0; type && d < type.getRank(); ++d) {
      auto it = inputOfClass.find(classes.getClass({result, d}));
      if (type.isDynamicDim(d) && it != inputOfClass.end())
        dims.push_back(it->second);
      else
        dims.push_back(std::nullopt);
    }
  }
  return sources;
}

Attribute fusion::encodeSizeChecks(MLIRContext *context,
                                   const FunctionSizeChecks &checks) {
  SmallVector<Attribute> encoded;
  for (const SizeCheck &check : checks.checks) {
    SmallVector<int64_t> values = {check.staticSize};
    for (auto [arg, dim] : check.members)
      values.append({arg, dim});
    encoded.push_back(DenseI64ArrayAttr::get(context, values));
  }
  Builder b(context);
  return b.getDictionaryAttr(
      {b.getNamedAttr("inputs", b.getI64IntegerAttr(checks.numInputs)),
       b.getNamedAttr("checks", b.getArrayAttr(encoded))});
}

FailureOr<FunctionSizeChecks> fusion::decodeSizeChecks(Attribute attr) {
  auto dict = dyn_cast_or_null<DictionaryAttr>(attr);
  auto inputs = dict ? dict.getAs<IntegerAttr>("inputs") : nullptr;
  auto array = dict ? dict.getAs<ArrayAttr>("checks") : nullptr;
  if (!inputs || !array)
    return failure();
  FunctionSizeChecks checks;
  checks.numInputs = inputs.getInt();
  for (Attribute element : array) {
    auto values = dyn_cast<DenseI64ArrayAttr>(element);
    if (!values || values.size() < 3 || values.size() % 2 != 1)
      return failure();
    SizeCheck &check = checks.checks.emplace_back();
    check.staticSize = values[0];
    for (int64_t i = 1; i < values.size(); i += 2)
      check.members.push_back({values[i], values[i + 1]});
  }
  return checks;
}
