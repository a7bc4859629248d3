//===- ScalarOps.h - The math of fusion ops on scalars ----------*- C++ -*-===//
//
// Shared by the lowerings: what one element of a fusion op computes, as
// arith/math ops on f32 scalars or vectors of f32 (masks as i1).
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_CONVERSION_SCALAROPS_H
#define FUSION_CONVERSION_SCALAROPS_H

#include "mlir/IR/Builders.h"

namespace mlir::fusion {

/// `value` (a float scalar or vector) extended to f32; other types as is.
Value extendToF32(OpBuilder &b, Location loc, Value value);

/// An f32 `value` rounded to `elementType` (kept as a vector if it is one).
Value roundTo(OpBuilder &b, Location loc, Value value, Type elementType);

/// An f32 constant shaped like `like` (a scalar, or a splat vector).
Value f32Constant(OpBuilder &b, Location loc, double value, Type like);

/// `acc` combined with `x` (f32 scalars or vectors) as reduce op `op`
/// combines (getReductionCombiner), and the combiner's identity as an f32
/// constant shaped like `like`: one definition for both lowerings.
Value buildReductionCombine(OpBuilder &b, Location loc, Operation *op,
                            Value acc, Value x);
Value buildReductionIdentity(OpBuilder &b, Location loc, Operation *op,
                             Type like);

/// How exactly an op's f32 math must come out. `exact`: the accurate forms
/// (a few ulp of f32). `roundedToHalf`: the op's result reaches only bf16
/// or f16 values, through steps that keep a relative error relative, so
/// its exponentials and its divisions by a denominator of at least 1 (1 +
/// exp(-y): sigmoid, silu, tanh gelu) are marked `afn` (approximate
/// functions), which the GPU lowering turns into hardware approximations
/// (ex2.approx, rcp.approx) whose f32 errors, about 2^-17 relative at most,
/// stay far below that rounding's 2^-9 (bf16) or 2^-11 (f16), and erf gelu
/// is computed from a fitted erfc (about 2^-16). Divisions by arbitrary
/// values keep the full-range form. `sumTerm`: an exponential exp(y - m),
/// m the running max of y, is a term of a sum that has a term exp(0) = 1
/// (an online sum of softmax or logsumexp): only its error relative to the
/// sum counts, so it takes ex2.approx of (y - m) log2(e) too. A term's
/// relative error is about 2^-22 + |y - m| 2^-23 (the product's rounding),
/// and one below FLT_MIN is flushed; over a sum of terms of one sign
/// weighted by their size, that is less than 2^-18 relative to the sum for
/// any number of terms up to 2^31, below the sum's own rounding bound from
/// a few dozen terms on. `roundedToBF16`: `roundedToHalf` where every
/// rounding reached is to bf16 (8 significant bits), so that tanh may take
/// its hardware approximation too (tanh.approx.f32, relative error at most
/// 2^-10.987: at most an eighth of bf16's spacing, so the rounded result is
/// within one ulp of bf16; f16's spacing is as fine as that error, so not
/// for f16).
enum class MathPrecision { exact, roundedToHalf, roundedToBF16, sumTerm };

/// Whether `precision` is `roundedToHalf` or the stricter `roundedToBF16`.
inline bool isRoundedToHalf(MathPrecision precision) {
  return precision == MathPrecision::roundedToHalf ||
         precision == MathPrecision::roundedToBF16;
}

/// The precision the op defining `result` (a value of a kernel body) needs:
/// `roundedToHalf` where `result` is bf16 or f16, or where every use is a
/// conversion to bf16 or f16, a product or quotient whose result needs only
/// that, or (for an exponential, never negative) a sum whose result needs
/// only that; a softmax's exponentials in a bf16 softmax, not a
/// logsumexp's (its log turns their relative error into an absolute one).
/// `roundedToBF16` where each of those roundings is to bf16.
MathPrecision getMathPrecision(Value result);

/// exp(x) (f32 scalar or vector) in the form `precision` allows.
Value buildExp(OpBuilder &b, Location loc, Value x, MathPrecision precision);

/// One element of elementwise fusion op `op` from its operands' elements
/// `args` (f32 for floats, i1 for masks; scalars or vectors of one shape).
/// The result is f32 (i1 for cmp); `convert` returns its operand.
Value buildElementwise(OpBuilder &b, Location loc, Operation *op,
                       ArrayRef<Value> args,
                       MathPrecision precision = MathPrecision::exact);

} // namespace mlir::fusion

#endif // FUSION_CONVERSION_SCALAROPS_H
