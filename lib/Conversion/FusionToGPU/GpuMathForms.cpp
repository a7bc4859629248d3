//===- GpuMathForms.cpp - The GPU's forms of division, exp and tanh -------===//
//
// f32 divisions in launches become `div.full.f32` (full range, at most 2
// ulp; Triton's default) instead of the IEEE `div.rn.f32` that arith.divf
// lowers to, a long instruction sequence per element (sigmoid and silu
// divide for every element). Those marked `afn` divide by a denominator of
// at least 1 (1 + exp(-y), erfc's 1 + p t) in an op rounded to bf16 or f16
// (ScalarOps' MathPrecision): they become the dividend times
// `rcp.approx.ftz.f32` of the divisor (at most 1 ulp, then the product's
// rounding; a divisor past 2^126 gives 0, where the quotient is below
// FLT_MIN times the dividend; the product keeps subnormal quotients, as
// tanh gelu's x / 2 near 0). A division of a vector by a splat scalar (a
// row's sum in softmax) takes the IEEE reciprocal of the scalar once and
// products per lane (buildSharedReciprocal). Exponentials marked `afn` become
// `ex2.approx.ftz.f32` (of x log2(e) for exp), which flushes results
// below FLT_MIN to zero; tanh marked `afn` (an op rounded to bf16 only)
// becomes `tanh.approx.f32` (relative error at most 2^-10.987). These forms
// spare the instructions that rescale subnormal operands and results around
// each approximation (SASS: a compare, a select and two multiplies for
// div.approx, a compare and two multiplies for ex2.approx, against one MUFU
// each). Vectors are computed lane by lane, as LLVM would. The CPU path keeps
// IEEE division and libm's exponentials.
//
//===----------------------------------------------------------------------===//

#include "Strategies.h"

#include "fusion/Conversion/ScalarOps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::codegen;

/// Intrinsic `name` of `arguments` (f32, or vectors of f32 of `type`,
/// lane by lane).
static Value callIntrinsic(OpBuilder &b, Location loc, StringRef name,
                           Type type, ValueRange arguments) {
  StringAttr intrinsic = b.getStringAttr(name);
  auto call = [&](ValueRange scalars) -> Value {
    return LLVM::CallIntrinsicOp::create(b, loc, b.getF32Type(), intrinsic,
                                         scalars)
        .getResult(0);
  };
  auto vector = dyn_cast<VectorType>(type);
  if (!vector)
    return call(arguments);
  SmallVector<Value> lanes;
  for (int64_t lane = 0; lane < vector.getNumElements(); ++lane) {
    SmallVector<Value> scalars;
    for (Value argument : arguments)
      scalars.push_back(vector::ExtractOp::create(b, loc, argument, lane));
    lanes.push_back(call(scalars));
  }
  return vector::FromElementsOp::create(b, loc, vector, lanes);
}

static bool isApproximate(arith::FastMathFlags flags) {
  return bitEnumContainsAll(flags, arith::FastMathFlags::afn);
}

/// The scalar f32 that `div` divides every lane of a vector by, where one
/// reciprocal of it serves all the lanes. (Scalar divisions keep div.full
/// even where a loop does not change the divisor: its scale and reciprocal
/// would hold two registers through the loop where the divisor holds one,
/// and a random graph's element-by-element kernel spilled with them.)
static Value getSharedDivisor(arith::DivFOp div) {
  auto splat = div.getRhs().getDefiningOp<vector::BroadcastOp>();
  return splat && splat.getSource().getType().isF32() ? splat.getSource()
                                                       : Value();
}

/// A shared divisor d as a scale k (a power of two) and r = 1 / (d k)
/// rounded (IEEE division, once): x / d is then (x k) r. k = 1 where d and
/// 1 / d are normal; 2^-64 for |d| > 2^66, so that r stays normal (x k
/// loses bits only where the quotient is below 2^-128); 2^64 for |d| below
/// FLT_MIN or zero, where x k overflows only if x / d does. Two roundings
/// after an exact scaling: at most 2 ulp, as div.full.
struct SharedReciprocal {
  Value scale, reciprocal;
};

static SharedReciprocal buildSharedReciprocal(OpBuilder &b, Location loc,
                                              Value divisor) {
  auto constant = [&](double value) {
    return f32Constant(b, loc, value, b.getF32Type());
  };
  Value magnitude = math::AbsFOp::create(b, loc, divisor);
  Value huge = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                     magnitude, constant(std::ldexp(1.0, 66)));
  Value tiny = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                     magnitude, constant(std::ldexp(1.0, -126)));
  Value scale = arith::SelectOp::create(
      b, loc, huge, constant(std::ldexp(1.0, -64)),
      arith::SelectOp::create(b, loc, tiny, constant(std::ldexp(1.0, 64)),
                              constant(1.0)));
  Value reciprocal = arith::DivFOp::create(
      b, loc, constant(1.0), arith::MulFOp::create(b, loc, divisor, scale));
  return {scale, reciprocal};
}

/// `op`'s result in the GPU's form, or null to keep it. `reciprocals` keeps
/// the shared divisors' reciprocals, built once after each divisor.
static Value getGpuForm(OpBuilder &b, Operation *op, gpu::LaunchOp launch,
                        DenseMap<Value, SharedReciprocal> &reciprocals) {
  Location loc = op->getLoc();
  Type type = op->getResult(0).getType();
  if (auto div = dyn_cast<arith::DivFOp>(op)) {
    if (!isApproximate(div.getFastmath())) {
      Value divisor = getSharedDivisor(div);
      if (!divisor)
        return callIntrinsic(b, loc, "llvm.nvvm.div.full", type,
                             {div.getLhs(), div.getRhs()});
      auto [it, inserted] = reciprocals.try_emplace(divisor);
      if (inserted) {
        OpBuilder::InsertionGuard guard(b);
        if (launch.getBody().isAncestor(divisor.getParentRegion()))
          b.setInsertionPointAfterValue(divisor);
        else
          b.setInsertionPointToStart(&launch.getBody().front());
        it->second = buildSharedReciprocal(b, loc, divisor);
      }
      // (A shared divisor is a splat: `type` is a vector.)
      auto lanes = [&](Value scalar) -> Value {
        return vector::BroadcastOp::create(b, loc, type, scalar);
      };
      return arith::MulFOp::create(
          b, loc,
          arith::MulFOp::create(b, loc, div.getLhs(), lanes(it->second.scale)),
          lanes(it->second.reciprocal));
    }
    // x (1 / d): the product in full range (x * 1 folds away).
    return arith::MulFOp::create(
        b, loc, div.getLhs(),
        callIntrinsic(b, loc, "llvm.nvvm.rcp.approx.ftz.f", type,
                      div.getRhs()));
  }
  auto flags = cast<arith::ArithFastMathInterface>(op).getFastMathFlagsAttr();
  if (!flags || !isApproximate(flags.getValue()))
    return Value();
  Value x = op->getOperand(0);
  if (isa<math::TanhOp>(op))
    // LLVM's tanh marked afn is NVPTX's tanh.approx.f32 (one MUFU op, where
    // libdevice's tanhf takes two and a dozen FMAs and selects).
    return LLVM::TanhOp::create(
        b, loc, x,
        LLVM::FastmathFlagsAttr::get(b.getContext(), LLVM::FastmathFlags::afn));
  if (isa<math::ExpOp>(op))
    x = arith::MulFOp::create(b, loc, x, f32Constant(b, loc, M_LOG2E, type));
  return callIntrinsic(b, loc, "llvm.nvvm.ex2.approx.ftz.f32", type, x);
}

void codegen::useGpuMathForms(gpu::LaunchOp launch) {
  SmallVector<Operation *> ops;
  launch.getBody().walk([&](Operation *op) {
    if (isa<arith::DivFOp, math::ExpOp, math::Exp2Op, math::TanhOp>(op) &&
        getElementTypeOrSelf(op->getResult(0).getType()).isF32())
      ops.push_back(op);
  });
  DenseMap<Value, SharedReciprocal> reciprocals;
  for (Operation *op : ops) {
    OpBuilder b(op);
    if (Value form = getGpuForm(b, op, launch, reciprocals)) {
      op->getResult(0).replaceAllUsesWith(form);
      op->erase();
    }
  }
}
