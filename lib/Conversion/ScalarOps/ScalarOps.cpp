//===- ScalarOps.cpp - The math of fusion ops on scalars ------------------===//

#include "fusion/Conversion/ScalarOps.h"

#include "fusion/Dialect/Fusion/IR/FusionOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fusion;

Value fusion::extendToF32(OpBuilder &b, Location loc, Value value) {
  auto type = dyn_cast<FloatType>(getElementTypeOrSelf(value.getType()));
  if (!type || type.isF32())
    return value;
  Type f32 = b.getF32Type();
  if (auto vector = dyn_cast<VectorType>(value.getType()))
    f32 = vector.clone(f32);
  return arith::ExtFOp::create(b, loc, f32, value);
}

Value fusion::roundTo(OpBuilder &b, Location loc, Value value,
                      Type elementType) {
  Type current = getElementTypeOrSelf(value.getType());
  if (current == elementType || !isa<FloatType>(elementType))
    return value;
  Type type = elementType;
  if (auto vector = dyn_cast<VectorType>(value.getType()))
    type = vector.clone(elementType);
  if (cast<FloatType>(elementType).getWidth() <
      cast<FloatType>(current).getWidth())
    return arith::TruncFOp::create(b, loc, type, value);
  return arith::ExtFOp::create(b, loc, type, value);
}

Value fusion::f32Constant(OpBuilder &b, Location loc, double value, Type like) {
  auto scalar = b.getF32FloatAttr(static_cast<float>(value));
  if (auto vector = dyn_cast<VectorType>(like))
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(vector.clone(b.getF32Type()),
                               static_cast<float>(value)));
  return arith::ConstantOp::create(b, loc, scalar);
}

Value fusion::buildReductionCombine(OpBuilder &b, Location loc, Operation *op,
                                   Value acc, Value x) {
  switch (getReductionCombiner(op)) {
  case ReductionCombiner::maximum:
    return arith::MaximumFOp::create(b, loc, acc, x);
  case ReductionCombiner::minimum:
    return arith::MinimumFOp::create(b, loc, acc, x);
  case ReductionCombiner::add:
    return arith::AddFOp::create(b, loc, acc, x);
  }
  llvm_unreachable("unknown reduction combiner");
}

Value fusion::buildReductionIdentity(OpBuilder &b, Location loc, Operation *op,
                                     Type like) {
  return f32Constant(b, loc, getReductionIdentity(getReductionCombiner(op)),
                     like);
}

static bool isHalf(Type type) {
  Type element = getElementTypeOrSelf(type);
  return element.isBF16() || element.isF16();
}

/// getMathPrecision with the answers found so far (a value used by several
/// paths, or twice by one op, is asked once).
static bool reachesHalfOnly(Value result, DenseMap<Value, bool> &known) {
  if (isHalf(result.getType()))
    return true;
  if (auto it = known.find(result); it != known.end())
    return it->second;
  bool nonNegative = isa_and_nonnull<ExpOp>(result.getDefiningOp());
  auto usedForHalf = [&](Operation *user) {
    if (isa<ConvertOp>(user))
      return isHalf(user->getResult(0).getType());
    // A relative error stays relative through products and quotients, and
    // through sums of terms of one sign.
    if (isa<MulOp, DivOp>(user) || (nonNegative && isa<ReduceSumOp>(user)))
      return reachesHalfOnly(user->getResult(0), known);
    return false;
  };
  bool half =
      !result.use_empty() && llvm::all_of(result.getUsers(), usedForHalf);
  known[result] = half;
  return half;
}

MathPrecision fusion::getMathPrecision(Value result) {
  DenseMap<Value, bool> known;
  return reachesHalfOnly(result, known) ? MathPrecision::roundedToHalf
                                        : MathPrecision::exact;
}

/// The fast-math flags of the exponentials and logistic divisions that
/// `precision` allows.
static arith::FastMathFlags getFastMathFlags(MathPrecision precision) {
  return precision == MathPrecision::roundedToHalf ? arith::FastMathFlags::afn
                                                   : arith::FastMathFlags::none;
}

Value fusion::buildExp(OpBuilder &b, Location loc, Value x,
                       MathPrecision precision) {
  return math::ExpOp::create(b, loc, x, getFastMathFlags(precision));
}

namespace {
/// Builds exponentials and divisions marked as `precision` allows.
struct MathForms {
  OpBuilder &b;
  Location loc;
  MathPrecision precision;

  Value exp(Value x) const { return buildExp(b, loc, x, precision); }
  /// x / d for a logistic denominator d = 1 + exp(-y), at least 1 (maybe
  /// +inf), where an approximate division holds over the whole range.
  /// Divisions by arbitrary values (subnormal, or past 2^126) are not
  /// marked.
  Value divByLogistic(Value x, Value d) const {
    return arith::DivFOp::create(b, loc, x, d, getFastMathFlags(precision));
  }
};
} // namespace

/// 1 + exp(-x), the denominator of sigmoid and of tanh gelu.
static Value buildLogisticDenominator(const MathForms &m, Value x) {
  Value e = m.exp(arith::NegFOp::create(m.b, m.loc, x));
  return arith::AddFOp::create(m.b, m.loc, e,
                               f32Constant(m.b, m.loc, 1.0, x.getType()));
}

/// 1 / (1 + exp(-x)).
static Value buildSigmoid(const MathForms &m, Value x) {
  return m.divByLogistic(f32Constant(m.b, m.loc, 1.0, x.getType()),
                         buildLogisticDenominator(m, x));
}

static Value buildGelu(const MathForms &m, Value x,
                       GeluApproximation approximation) {
  OpBuilder &b = m.b;
  Location loc = m.loc;
  Type t = x.getType();
  if (approximation == GeluApproximation::tanh) {
    // 0.5 (1 + tanh(u)) = sigmoid(2u): x / (1 + exp(-2u)) with
    // u = sqrt(2/pi) (x + 0.044715 x^3). No 1 + tanh cancelling in the left
    // tail, and an exp and a division instead of a tanh (bias_gelu is
    // bound by instructions on the GPU).
    Value cube =
        arith::MulFOp::create(b, loc, x, arith::MulFOp::create(b, loc, x, x));
    Value poly = arith::AddFOp::create(
        b, loc, x,
        arith::MulFOp::create(b, loc, cube, f32Constant(b, loc, 0.044715, t)));
    Value twoU = arith::MulFOp::create(
        b, loc, poly, f32Constant(b, loc, 2.0 * std::sqrt(2.0 / M_PI), t));
    return m.divByLogistic(x, buildLogisticDenominator(m, twoU));
  }
  Value inner = math::ErfOp::create(
      b, loc,
      arith::MulFOp::create(b, loc, x,
                            f32Constant(b, loc, 1.0 / std::sqrt(2.0), t)));
  Value half = arith::MulFOp::create(b, loc, x, f32Constant(b, loc, 0.5, t));
  Value onePlus =
      arith::AddFOp::create(b, loc, inner, f32Constant(b, loc, 1.0, t));
  return arith::MulFOp::create(b, loc, half, onePlus);
}

static arith::CmpFPredicate getPredicate(CmpPredicate predicate) {
  switch (predicate) {
  case CmpPredicate::eq:
    return arith::CmpFPredicate::OEQ;
  case CmpPredicate::ne:
    return arith::CmpFPredicate::UNE;
  case CmpPredicate::lt:
    return arith::CmpFPredicate::OLT;
  case CmpPredicate::le:
    return arith::CmpFPredicate::OLE;
  case CmpPredicate::gt:
    return arith::CmpFPredicate::OGT;
  case CmpPredicate::ge:
    return arith::CmpFPredicate::OGE;
  }
  llvm_unreachable("unknown predicate");
}

Value fusion::buildElementwise(OpBuilder &b, Location loc, Operation *op,
                               ArrayRef<Value> a, MathPrecision precision) {
  Type t = a.empty() ? Type() : a[0].getType();
  MathForms m{b, loc, precision};
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case([&](AddOp) { return arith::AddFOp::create(b, loc, a[0], a[1]); })
      .Case([&](SubOp) { return arith::SubFOp::create(b, loc, a[0], a[1]); })
      .Case([&](MulOp) { return arith::MulFOp::create(b, loc, a[0], a[1]); })
      .Case([&](DivOp) { return arith::DivFOp::create(b, loc, a[0], a[1]); })
      .Case(
          [&](MaxOp) { return arith::MaximumFOp::create(b, loc, a[0], a[1]); })
      .Case(
          [&](MinOp) { return arith::MinimumFOp::create(b, loc, a[0], a[1]); })
      .Case([&](PowOp) { return math::PowFOp::create(b, loc, a[0], a[1]); })
      .Case([&](NegOp) { return arith::NegFOp::create(b, loc, a[0]); })
      .Case([&](AbsOp) { return math::AbsFOp::create(b, loc, a[0]); })
      .Case([&](ExpOp) { return m.exp(a[0]); })
      .Case([&](LogOp) { return math::LogOp::create(b, loc, a[0]); })
      .Case([&](TanhOp) { return math::TanhOp::create(b, loc, a[0]); })
      .Case([&](ErfOp) { return math::ErfOp::create(b, loc, a[0]); })
      .Case([&](SqrtOp) { return math::SqrtOp::create(b, loc, a[0]); })
      .Case([&](RsqrtOp) { return math::RsqrtOp::create(b, loc, a[0]); })
      .Case([&](ReciprocalOp) {
        return arith::DivFOp::create(b, loc, f32Constant(b, loc, 1.0, t), a[0]);
      })
      .Case([&](SquareOp) { return arith::MulFOp::create(b, loc, a[0], a[0]); })
      .Case([&](ReluOp) {
        return arith::MaximumFOp::create(b, loc, a[0],
                                         f32Constant(b, loc, 0.0, t));
      })
      .Case([&](SigmoidOp) { return buildSigmoid(m, a[0]); })
      .Case([&](SiluOp) {
        return arith::MulFOp::create(b, loc, a[0], buildSigmoid(m, a[0]));
      })
      .Case([&](GeluOp gelu) {
        return buildGelu(m, a[0], gelu.getApproximation());
      })
      .Case([&](CmpOp cmp) {
        return arith::CmpFOp::create(b, loc, getPredicate(cmp.getPredicate()),
                                     a[0], a[1]);
      })
      .Case([&](SelectOp) {
        return arith::SelectOp::create(b, loc, a[0], a[1], a[2]);
      })
      .Case([&](ConvertOp) { return a[0]; })
      .Default([](Operation *) -> Value {
        llvm_unreachable("not an elementwise fusion op");
      });
}
