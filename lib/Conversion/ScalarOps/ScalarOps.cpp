//===- ScalarOps.cpp - The math of fusion ops on scalars ------------------===//

#include "fusion/Conversion/ScalarOps.h"

#include "fusion/Dialect/Fusion/IR/FusionOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
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

/// The significant bits of bf16 (8) or f16 (11) where `type` (or its
/// element type) is one of them, else 0.
static unsigned getHalfBits(Type type) {
  Type element = getElementTypeOrSelf(type);
  return element.isBF16() ? 8 : element.isF16() ? 11 : 0;
}

/// The most significant bits among the bf16 and f16 roundings that `result`
/// reaches (getMathPrecision), or 0 where it reaches other values too.
/// `known` keeps the answers found so far (a value used by several paths,
/// or twice by one op, is asked once).
static unsigned getFinestHalfRounding(Value result,
                                      DenseMap<Value, unsigned> &known) {
  if (unsigned bits = getHalfBits(result.getType()))
    return bits;
  if (auto it = known.find(result); it != known.end())
    return it->second;
  bool nonNegative = isa_and_nonnull<ExpOp>(result.getDefiningOp());
  auto roundingThrough = [&](Operation *user) -> unsigned {
    if (isa<ConvertOp>(user))
      return getHalfBits(user->getResult(0).getType());
    // A relative error stays relative through products and quotients, and
    // through sums of terms of one sign.
    if (isa<MulOp, DivOp>(user) || (nonNegative && isa<ReduceSumOp>(user)))
      return getFinestHalfRounding(user->getResult(0), known);
    return 0;
  };
  unsigned finest = 0;
  for (Operation *user : result.getUsers()) {
    unsigned bits = roundingThrough(user);
    if (!bits) {
      finest = 0;
      break;
    }
    finest = std::max(finest, bits);
  }
  known[result] = finest;
  return finest;
}

MathPrecision fusion::getMathPrecision(Value result) {
  DenseMap<Value, unsigned> known;
  switch (getFinestHalfRounding(result, known)) {
  case 0:
    return MathPrecision::exact;
  case 8:
    return MathPrecision::roundedToBF16;
  default:
    return MathPrecision::roundedToHalf;
  }
}

/// The fast-math flags of the exponentials and divisions by at least 1 that
/// `precision` allows.
static arith::FastMathFlags getFastMathFlags(MathPrecision precision) {
  return precision == MathPrecision::exact ? arith::FastMathFlags::none
                                           : arith::FastMathFlags::afn;
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
  /// x / d for a denominator d of at least 1 (maybe +inf: the logistic
  /// 1 + exp(-y), erfc's 1 + p t), where an approximate division holds over
  /// the whole range. Divisions by arbitrary values (subnormal, or past
  /// 2^126) are not marked.
  Value divByAtLeastOne(Value x, Value d) const {
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
  return m.divByAtLeastOne(f32Constant(m.b, m.loc, 1.0, x.getType()),
                           buildLogisticDenominator(m, x));
}

/// erfc(t) = u exp(P(u) - t^2) for t >= 0, u = 1 / (1 + kErfcScale t): P's
/// coefficients from u^0 up, fitted (iteratively reweighted least squares,
/// near minimax) to float64's erfc over t in [0, 10], where P's relative
/// error is at most 1.3e-6. Past t = 10, erfc(t) < 2e-45 underflows f32.
constexpr double kErfcScale = 0.38;
constexpr double kErfcPolynomial[] = {-1.5387117757940114, 0.9796815900825275,
                                      0.563351933740649,   -0.28344614381816796,
                                      0.9571646415376578,  -0.9530657737637813,
                                      0.27502529827559785};

/// Erf gelu whose result is rounded to bf16 or f16: x Phi(x), with Phi(x)
/// = 1 - q for x >= 0 and q below, q = erfc(|x| / sqrt 2) / 2, in base 2:
/// with s = |x| sqrt(log2(e) / 2), q = u 2^(P(u) log2(e) - 1 - s^2).
/// Relative error about 2^-16 in f32 (f32 emulated in numpy, results.md:
/// the exponent, down to -2^7, loses its last bits; flushed where q alone
/// underflows, results below 4 FLT_MIN), where x (1 + erf(x / sqrt 2)) / 2
/// loses the whole left tail to 1 + erf cancelling. A division and a power
/// of 2 in their hardware forms and 8 FMAs, against libdevice's erf of two
/// ranges.
static Value buildGeluByErfc(const MathForms &m, Value x) {
  OpBuilder &b = m.b;
  Location loc = m.loc;
  Type type = x.getType();
  auto constant = [&](double value) {
    return f32Constant(b, loc, value, type);
  };
  const double log2e = M_LOG2E;
  Value s = arith::MulFOp::create(b, loc, math::AbsFOp::create(b, loc, x),
                                  constant(std::sqrt(log2e / 2.0)));
  Value u = m.divByAtLeastOne(
      constant(1.0),
      math::FmaOp::create(b, loc, s, constant(kErfcScale / std::sqrt(log2e)),
                          constant(1.0)));
  Value poly =
      constant(kErfcPolynomial[std::size(kErfcPolynomial) - 1] * log2e);
  for (int64_t i = std::size(kErfcPolynomial) - 2; i >= 0; --i)
    poly = math::FmaOp::create(
        b, loc, poly, u,
        constant(kErfcPolynomial[i] * log2e - (i == 0 ? 1.0 : 0.0)));
  Value exponent =
      math::FmaOp::create(b, loc, arith::NegFOp::create(b, loc, s), s, poly);
  Value q = arith::MulFOp::create(
      b, loc, u,
      math::Exp2Op::create(b, loc, exponent, getFastMathFlags(m.precision)));
  Value phi = arith::SelectOp::create(
      b, loc,
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x,
                            constant(0.0)),
      arith::SubFOp::create(b, loc, constant(1.0), q), q);
  return arith::MulFOp::create(b, loc, x, phi);
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
    return m.divByAtLeastOne(x, buildLogisticDenominator(m, twoU));
  }
  if (isRoundedToHalf(m.precision))
    return buildGeluByErfc(m, x);
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
      .Case([&](TanhOp) {
        return math::TanhOp::create(b, loc, a[0],
                                    precision == MathPrecision::roundedToBF16
                                        ? arith::FastMathFlags::afn
                                        : arith::FastMathFlags::none);
      })
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
