//===- FusionFolds.cpp - Folds of the fusion dialect ----------------------===//
//
// Identities users expect (x + 0, x * 1, neg(neg x), converts to the same
// type) and evaluation of elementwise ops on splat constants. Scalars are
// evaluated in double and rounded once to the result's element type.
//
//===----------------------------------------------------------------------===//

#include "fusion/Dialect/Fusion/IR/FusionOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/APFloat.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fusion;

/// The value of a splat float constant, if `attr` is one.
static std::optional<double> getSplatFloat(Attribute attr) {
  auto splat = dyn_cast_if_present<SplatElementsAttr>(attr);
  if (!splat || !isa<FloatType>(splat.getElementType()))
    return std::nullopt;
  return splat.getSplatValue<APFloat>().convertToDouble();
}

static bool isSplatOf(Attribute attr, double value) {
  std::optional<double> splat = getSplatFloat(attr);
  return splat && *splat == value;
}

/// A splat of `value` with `type`, rounded to its float element type; null
/// when `type` has dynamic dimensions.
static Attribute makeFloatSplat(Type type, double value) {
  auto shaped = cast<ShapedType>(type);
  if (!shaped.hasStaticShape())
    return {};
  auto floatType = cast<FloatType>(shaped.getElementType());
  APFloat result(value);
  bool losesInfo = false;
  result.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                 &losesInfo);
  return DenseElementsAttr::get(shaped, result);
}

static OpFoldResult foldUnarySplat(Attribute x, Type resultType,
                                   llvm::function_ref<double(double)> fn) {
  if (std::optional<double> v = getSplatFloat(x))
    return makeFloatSplat(resultType, fn(*v));
  return {};
}

static OpFoldResult
foldBinarySplat(Attribute lhs, Attribute rhs, Type resultType,
                llvm::function_ref<double(double, double)> fn) {
  std::optional<double> a = getSplatFloat(lhs), b = getSplatFloat(rhs);
  if (a && b)
    return makeFloatSplat(resultType, fn(*a, *b));
  return {};
}

/// `x op c -> x` when `c` is a splat of `identity` and broadcasting against
/// it does not change x's type.
static OpFoldResult foldRightIdentity(Value x, Attribute c, double identity,
                                      Type resultType) {
  if (x.getType() == resultType && isSplatOf(c, identity))
    return x;
  return {};
}

static double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

static double nanPropagating(double a, double b, bool wantMax) {
  if (std::isnan(a) || std::isnan(b))
    return std::nan("");
  return wantMax ? std::max(a, b) : std::min(a, b);
}

//===----------------------------------------------------------------------===//
// Binary ops
//===----------------------------------------------------------------------===//

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult r =
          foldRightIdentity(getLhs(), adaptor.getRhs(), 0.0, getType()))
    return r;
  if (OpFoldResult r =
          foldRightIdentity(getRhs(), adaptor.getLhs(), 0.0, getType()))
    return r;
  return foldBinarySplat(adaptor.getLhs(), adaptor.getRhs(), getType(),
                         [](double a, double b) { return a + b; });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult r =
          foldRightIdentity(getLhs(), adaptor.getRhs(), 0.0, getType()))
    return r;
  return foldBinarySplat(adaptor.getLhs(), adaptor.getRhs(), getType(),
                         [](double a, double b) { return a - b; });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult r =
          foldRightIdentity(getLhs(), adaptor.getRhs(), 1.0, getType()))
    return r;
  if (OpFoldResult r =
          foldRightIdentity(getRhs(), adaptor.getLhs(), 1.0, getType()))
    return r;
  return foldBinarySplat(adaptor.getLhs(), adaptor.getRhs(), getType(),
                         [](double a, double b) { return a * b; });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult r =
          foldRightIdentity(getLhs(), adaptor.getRhs(), 1.0, getType()))
    return r;
  return foldBinarySplat(adaptor.getLhs(), adaptor.getRhs(), getType(),
                         [](double a, double b) { return a / b; });
}

OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs() && getLhs().getType() == getType())
    return getLhs();
  return foldBinarySplat(adaptor.getLhs(), adaptor.getRhs(), getType(),
                         [](double a, double b) {
                           return nanPropagating(a, b, /*wantMax=*/true);
                         });
}

OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs() && getLhs().getType() == getType())
    return getLhs();
  return foldBinarySplat(adaptor.getLhs(), adaptor.getRhs(), getType(),
                         [](double a, double b) {
                           return nanPropagating(a, b, /*wantMax=*/false);
                         });
}

OpFoldResult PowOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult r =
          foldRightIdentity(getLhs(), adaptor.getRhs(), 1.0, getType()))
    return r;
  return foldBinarySplat(adaptor.getLhs(), adaptor.getRhs(), getType(),
                         [](double a, double b) { return std::pow(a, b); });
}

//===----------------------------------------------------------------------===//
// Unary ops
//===----------------------------------------------------------------------===//

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getX().getDefiningOp<NegOp>())
    return inner.getX();
  return foldUnarySplat(adaptor.getX(), getType(), [](double x) { return -x; });
}

#define FUSION_DEFINE_UNARY_FOLD(OP, EXPR)                                     \
  OpFoldResult OP::fold(FoldAdaptor adaptor) {                                 \
    return foldUnarySplat(adaptor.getX(), getType(),                           \
                          [](double x) -> double { return EXPR; });            \
  }
FUSION_DEFINE_UNARY_FOLD(AbsOp, std::fabs(x))
FUSION_DEFINE_UNARY_FOLD(ExpOp, std::exp(x))
FUSION_DEFINE_UNARY_FOLD(LogOp, std::log(x))
FUSION_DEFINE_UNARY_FOLD(TanhOp, std::tanh(x))
FUSION_DEFINE_UNARY_FOLD(ErfOp, std::erf(x))
FUSION_DEFINE_UNARY_FOLD(SigmoidOp, sigmoid(x))
FUSION_DEFINE_UNARY_FOLD(ReluOp, std::isnan(x) ? x : std::max(x, 0.0))
FUSION_DEFINE_UNARY_FOLD(SiluOp, x *sigmoid(x))
FUSION_DEFINE_UNARY_FOLD(SqrtOp, std::sqrt(x))
FUSION_DEFINE_UNARY_FOLD(RsqrtOp, 1.0 / std::sqrt(x))
FUSION_DEFINE_UNARY_FOLD(ReciprocalOp, 1.0 / x)
FUSION_DEFINE_UNARY_FOLD(SquareOp, x *x)
#undef FUSION_DEFINE_UNARY_FOLD

//===----------------------------------------------------------------------===//
// Comparison, selection, conversion, constants
//===----------------------------------------------------------------------===//

OpFoldResult CmpOp::fold(FoldAdaptor adaptor) {
  std::optional<double> a = getSplatFloat(adaptor.getLhs());
  std::optional<double> b = getSplatFloat(adaptor.getRhs());
  auto type = cast<ShapedType>(getType());
  if (!a || !b || !type.hasStaticShape())
    return {};
  bool value = false;
  switch (getPredicate()) {
  case CmpPredicate::eq:
    value = *a == *b;
    break;
  case CmpPredicate::ne:
    value = *a != *b;
    break;
  case CmpPredicate::lt:
    value = *a < *b;
    break;
  case CmpPredicate::le:
    value = *a <= *b;
    break;
  case CmpPredicate::gt:
    value = *a > *b;
    break;
  case CmpPredicate::ge:
    value = *a >= *b;
    break;
  }
  return DenseElementsAttr::get(type, value);
}

OpFoldResult SelectOp::fold(FoldAdaptor adaptor) {
  auto cond = dyn_cast_if_present<SplatElementsAttr>(adaptor.getCond());
  Value chosen;
  if (cond)
    chosen = cond.getSplatValue<bool>() ? getA() : getB();
  else if (getA() == getB())
    chosen = getA();
  if (chosen && chosen.getType() == getType())
    return chosen;
  return {};
}

/// Whether every value of `narrow` (subnormals included) is exactly
/// representable in `wide`.
static bool isExactlyRepresentable(FloatType narrow, FloatType wide) {
  const llvm::fltSemantics &n = narrow.getFloatSemantics();
  const llvm::fltSemantics &w = wide.getFloatSemantics();
  auto smallestExponent = [](const llvm::fltSemantics &s) {
    return APFloat::semanticsMinExponent(s) -
           static_cast<int>(APFloat::semanticsPrecision(s));
  };
  return APFloat::semanticsPrecision(w) >= APFloat::semanticsPrecision(n) &&
         APFloat::semanticsMaxExponent(w) >= APFloat::semanticsMaxExponent(n) &&
         smallestExponent(w) <= smallestExponent(n);
}

OpFoldResult ConvertOp::fold(FoldAdaptor adaptor) {
  if (getX().getType() == getType())
    return getX();
  // narrow -> wide -> narrow is the identity.
  if (auto inner = getX().getDefiningOp<ConvertOp>()) {
    auto original = cast<FloatType>(getElementTypeOrSelf(inner.getX()));
    auto middle = cast<FloatType>(getElementTypeOrSelf(inner.getType()));
    if (inner.getX().getType() == getType() &&
        isExactlyRepresentable(original, middle))
      return inner.getX();
  }
  return foldUnarySplat(adaptor.getX(), getType(), [](double x) { return x; });
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

/// A splat of `attr`'s value with `type` (for shape-only ops on splats).
static OpFoldResult reshapeSplat(Attribute attr, Type type) {
  auto splat = dyn_cast_if_present<SplatElementsAttr>(attr);
  auto shaped = cast<ShapedType>(type);
  if (!splat || !shaped.hasStaticShape())
    return {};
  return splat.resizeSplat(shaped);
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  if (getX().getType() == getType() &&
      llvm::all_of(getOffsets(), [](int64_t o) { return o == 0; }) &&
      llvm::all_of(getStrides(), [](int64_t s) { return s == 1; }))
    return getX();
  return reshapeSplat(adaptor.getX(), getType());
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1)
    return getInputs().front();
  return {};
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getX().getType() == getType())
    return getX();
  // A reshape of a reshape reshapes the first operand.
  if (auto inner = getX().getDefiningOp<ReshapeOp>()) {
    getXMutable().assign(inner.getX());
    return getResult();
  }
  if (auto dense = dyn_cast_if_present<DenseElementsAttr>(adaptor.getX()))
    return dense.reshape(cast<ShapedType>(getType()));
  return {};
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPermutation();
  bool identity = llvm::all_of(llvm::enumerate(perm), [](auto it) {
    return static_cast<int64_t>(it.index()) == it.value();
  });
  if (identity)
    return getX();
  return reshapeSplat(adaptor.getX(), getType());
}
