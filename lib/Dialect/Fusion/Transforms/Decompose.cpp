//===- Decompose.cpp - Composite ops to primitive ops ---------------------===//
//
// Rewrites rms_norm, layer_norm, softmax, logsumexp, gelu, silu and sigmoid
// into primitive fusion ops. The math runs in f32 (explicit converts around
// f16/bf16), so reductions accumulate in f32 as the dialect promises.
//
//===----------------------------------------------------------------------===//

#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <limits>

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSIONDECOMPOSE
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// Builds f32 primitive ops at one location.
class F32Builder {
public:
  F32Builder(PatternRewriter &rewriter, Location loc)
      : b(rewriter), loc(loc), f32(rewriter.getF32Type()) {}

  Value toF32(Value x) {
    if (getElementTypeOrSelf(x) == f32)
      return x;
    return ConvertOp::create(b, loc, x, f32);
  }
  Value fromF32(Value x, Type elementType) {
    if (elementType == f32)
      return x;
    return ConvertOp::create(b, loc, x, elementType);
  }
  /// A rank-0 f32 constant; it broadcasts against any shape.
  Value scalar(double value) {
    auto type = RankedTensorType::get({}, f32);
    return ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, static_cast<float>(value)));
  }

  template <typename OpTy, typename... Args> Value op(Args &&...args) {
    return OpTy::create(b, loc, std::forward<Args>(args)...).getResult();
  }
  Value add(Value l, Value r) { return op<AddOp>(l, r); }
  Value sub(Value l, Value r) { return op<SubOp>(l, r); }
  Value mul(Value l, Value r) { return op<MulOp>(l, r); }
  Value div(Value l, Value r) { return op<DivOp>(l, r); }
  template <typename ReduceOpTy>
  Value reduce(Value x, int64_t axis, bool keepDims) {
    return op<ReduceOpTy>(x, ArrayRef<int64_t>{axis}, keepDims);
  }

private:
  PatternRewriter &b;
  Location loc;
  Type f32;
};

/// Rewrites a composite op whose result has its first operand's element
/// type: `compute` gets the f32 builder and returns the f32 result. Ops
/// `keepWhole` holds are left alone.
template <typename OpTy> struct CompositePattern : OpRewritePattern<OpTy> {
  CompositePattern(MLIRContext *context, KeepWhole keepWhole)
      : OpRewritePattern<OpTy>(context), keepWhole(std::move(keepWhole)) {}

  virtual Value computeF32(F32Builder &f, OpTy op) const = 0;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const final {
    if (keepWhole && keepWhole(op))
      return rewriter.notifyMatchFailure(op, "kept whole");
    F32Builder f(rewriter, op.getLoc());
    Value result = computeF32(f, op);
    rewriter.replaceOp(op, f.fromF32(result, getElementTypeOrSelf(op)));
    return success();
  }

private:
  KeepWhole keepWhole;
};

static int64_t lastAxis(Value x) {
  return cast<RankedTensorType>(x.getType()).getRank() - 1;
}

// The bodies below build one op per statement: C++ leaves the order of
// argument evaluation open, and the printed IR should not depend on it.

struct DecomposeRmsNorm : CompositePattern<RmsNormOp> {
  using CompositePattern::CompositePattern;
  Value computeF32(F32Builder &f, RmsNormOp op) const override {
    Value x = f.toF32(op.getX());
    Value squares = f.op<SquareOp>(x);
    Value meanSquare =
        f.reduce<ReduceMeanOp>(squares, lastAxis(x), /*keepDims=*/true);
    Value epsilon = f.scalar(op.getEpsilon().convertToDouble());
    Value inv = f.op<RsqrtOp>(f.add(meanSquare, epsilon));
    Value normalized = f.mul(x, inv);
    Value weight = f.toF32(op.getWeight());
    return f.mul(normalized, weight);
  }
};

struct DecomposeLayerNorm : CompositePattern<LayerNormOp> {
  using CompositePattern::CompositePattern;
  Value computeF32(F32Builder &f, LayerNormOp op) const override {
    Value x = f.toF32(op.getX());
    int64_t axis = lastAxis(x);
    Value mean = f.reduce<ReduceMeanOp>(x, axis, /*keepDims=*/true);
    Value centered = f.sub(x, mean);
    Value squares = f.op<SquareOp>(centered);
    Value variance = f.reduce<ReduceMeanOp>(squares, axis, /*keepDims=*/true);
    Value epsilon = f.scalar(op.getEpsilon().convertToDouble());
    Value inv = f.op<RsqrtOp>(f.add(variance, epsilon));
    Value normalized = f.mul(centered, inv);
    Value gamma = f.toF32(op.getGamma());
    Value scaled = f.mul(normalized, gamma);
    Value beta = f.toF32(op.getBeta());
    return f.add(scaled, beta);
  }
};

struct DecomposeSoftmax : CompositePattern<SoftmaxOp> {
  using CompositePattern::CompositePattern;
  Value computeF32(F32Builder &f, SoftmaxOp op) const override {
    Value x = f.toF32(op.getX());
    int64_t axis = op.getAxis();
    Value max = f.reduce<ReduceMaxOp>(x, axis, /*keepDims=*/true);
    Value e = f.op<ExpOp>(f.sub(x, max));
    Value sum = f.reduce<ReduceSumOp>(e, axis, /*keepDims=*/true);
    return f.div(e, sum);
  }
};

struct DecomposeLogSumExp : CompositePattern<LogSumExpOp> {
  using CompositePattern::CompositePattern;
  Value computeF32(F32Builder &f, LogSumExpOp op) const override {
    Value x = f.toF32(op.getX());
    int64_t axis = op.getAxis();
    Value max = f.reduce<ReduceMaxOp>(x, axis, /*keepDims=*/true);
    // A row whose maximum is not finite (a +inf in it, or all of it -inf)
    // is shifted by 0, not by its maximum (x - max would be inf - inf):
    // exp and log then give +inf and -inf, as torch.logsumexp does.
    Value finite = f.op<CmpOp>(CmpPredicate::lt, f.op<AbsOp>(max),
                               f.scalar(std::numeric_limits<double>::infinity()));
    Value shift = f.op<SelectOp>(finite, max, f.scalar(0.0));
    Value e = f.op<ExpOp>(f.sub(x, shift));
    Value sum = f.reduce<ReduceSumOp>(e, axis, /*keepDims=*/false);
    // Reducing the size-1 axis of `shift` drops it without another pass.
    Value rowShift = f.reduce<ReduceMaxOp>(shift, axis, /*keepDims=*/false);
    Value logSum = f.op<LogOp>(sum);
    return f.add(logSum, rowShift);
  }
};

/// 1 + exp(-x), the denominator of sigmoid, silu and tanh
/// gelu.
static Value logisticDenominator(F32Builder &f, Value x) {
  Value e = f.op<ExpOp>(f.op<NegOp>(x));
  Value one = f.scalar(1.0);
  return f.add(e, one);
}

struct DecomposeGelu : CompositePattern<GeluOp> {
  using CompositePattern::CompositePattern;
  Value computeF32(F32Builder &f, GeluOp op) const override {
    Value x = f.toF32(op.getX());
    if (op.getApproximation() == GeluApproximation::tanh) {
      // 0.5 (1 + tanh(u)) = sigmoid(2u): x / (1 + exp(-2u)) with
      // u = sqrt(2/pi) (x + 0.044715 x^3). No 1 + tanh cancelling in the
      // left tail, and an exp and a division instead of a tanh.
      Value cube = f.mul(x, f.op<SquareOp>(x));
      Value coefficient = f.scalar(0.044715);
      Value poly = f.add(x, f.mul(cube, coefficient));
      Value scale = f.scalar(2.0 * std::sqrt(2.0 / M_PI));
      return f.div(x, logisticDenominator(f, f.mul(poly, scale)));
    }
    Value scale = f.scalar(1.0 / std::sqrt(2.0));
    Value inner = f.op<ErfOp>(f.mul(x, scale));
    Value half = f.scalar(0.5);
    Value halfX = f.mul(x, half);
    Value one = f.scalar(1.0);
    return f.mul(halfX, f.add(inner, one));
  }
};

struct DecomposeSigmoid : CompositePattern<SigmoidOp> {
  using CompositePattern::CompositePattern;
  Value computeF32(F32Builder &f, SigmoidOp op) const override {
    Value x = f.toF32(op.getX());
    return f.op<ReciprocalOp>(logisticDenominator(f, x));
  }
};

struct DecomposeSilu : CompositePattern<SiluOp> {
  using CompositePattern::CompositePattern;
  Value computeF32(F32Builder &f, SiluOp op) const override {
    Value x = f.toF32(op.getX());
    return f.div(x, logisticDenominator(f, x));
  }
};

struct FusionDecomposePass
    : fusion::impl::FusionDecomposeBase<FusionDecomposePass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // An attention kernel's softmax stays whole for its strategy; the
    // lowerings decompose it if they compute the kernel op by op.
    populateDecomposePatterns(patterns, elementwise, [](Operation *op) {
      auto kernel = op->getParentOfType<KernelOp>();
      return kernel && kernel.getKind() == KernelKind::attention;
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void fusion::populateDecomposePatterns(RewritePatternSet &patterns,
                                       bool elementwise, KeepWhole keepWhole) {
  patterns.add<DecomposeRmsNorm, DecomposeLayerNorm, DecomposeSoftmax,
               DecomposeLogSumExp>(patterns.getContext(), keepWhole);
  if (elementwise)
    patterns.add<DecomposeGelu, DecomposeSigmoid, DecomposeSilu>(
        patterns.getContext(), keepWhole);
}
