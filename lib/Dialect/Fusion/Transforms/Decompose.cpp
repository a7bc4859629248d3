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

  template <typename OpTy, typename... Args>
  Value op(Args &&...args) {
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
/// type: `compute` gets the f32 builder and returns the f32 result.
template <typename OpTy>
struct CompositePattern : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  virtual Value computeF32(F32Builder &f, OpTy op) const = 0;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const final {
    F32Builder f(rewriter, op.getLoc());
    Value result = computeF32(f, op);
    rewriter.replaceOp(op, f.fromF32(result, getElementTypeOrSelf(op)));
    return success();
  }
};

static int64_t lastAxis(Value x) {
  return cast<RankedTensorType>(x.getType()).getRank() - 1;
}

struct DecomposeRmsNorm : CompositePattern<RmsNormOp> {
  using CompositePattern::CompositePattern;
  Value computeF32(F32Builder &f, RmsNormOp op) const override {
    Value x = f.toF32(op.getX());
    Value meanSquare = f.reduce<ReduceMeanOp>(f.op<SquareOp>(x),
                                              lastAxis(x), /*keepDims=*/true);
    Value inv = f.op<RsqrtOp>(
        f.add(meanSquare, f.scalar(op.getEpsilon().convertToDouble())));
    return f.mul(f.mul(x, inv), f.toF32(op.getWeight()));
  }
};

struct DecomposeLayerNorm : CompositePattern<LayerNormOp> {
  using CompositePattern::CompositePattern;
  Value computeF32(F32Builder &f, LayerNormOp op) const override {
    Value x = f.toF32(op.getX());
    int64_t axis = lastAxis(x);
    Value centered =
        f.sub(x, f.reduce<ReduceMeanOp>(x, axis, /*keepDims=*/true));
    Value variance = f.reduce<ReduceMeanOp>(f.op<SquareOp>(centered), axis,
                                            /*keepDims=*/true);
    Value inv = f.op<RsqrtOp>(
        f.add(variance, f.scalar(op.getEpsilon().convertToDouble())));
    Value normalized = f.mul(f.mul(centered, inv), f.toF32(op.getGamma()));
    return f.add(normalized, f.toF32(op.getBeta()));
  }
};

struct DecomposeSoftmax : CompositePattern<SoftmaxOp> {
  using CompositePattern::CompositePattern;
  Value computeF32(F32Builder &f, SoftmaxOp op) const override {
    Value x = f.toF32(op.getX());
    int64_t axis = op.getAxis();
    Value max = f.reduce<ReduceMaxOp>(x, axis, /*keepDims=*/true);
    Value e = f.op<ExpOp>(f.sub(x, max));
    return f.div(e, f.reduce<ReduceSumOp>(e, axis, /*keepDims=*/true));
  }
};

struct DecomposeLogSumExp : CompositePattern<LogSumExpOp> {
  using CompositePattern::CompositePattern;
  Value computeF32(F32Builder &f, LogSumExpOp op) const override {
    Value x = f.toF32(op.getX());
    int64_t axis = op.getAxis();
    Value max = f.reduce<ReduceMaxOp>(x, axis, /*keepDims=*/true);
    Value sum = f.reduce<ReduceSumOp>(f.op<ExpOp>(f.sub(x, max)), axis,
                                      /*keepDims=*/false);
    // Reducing the size-1 axis of `max` drops it without another pass over x.
    Value rowMax = f.reduce<ReduceMaxOp>(max, axis, /*keepDims=*/false);
    return f.add(f.op<LogOp>(sum), rowMax);
  }
};

struct DecomposeGelu : CompositePattern<GeluOp> {
  using CompositePattern::CompositePattern;
  Value computeF32(F32Builder &f, GeluOp op) const override {
    Value x = f.toF32(op.getX());
    Value inner;
    if (op.getApproximation() == GeluApproximation::tanh) {
      // sqrt(2/pi) * (x + 0.044715 x^3)
      Value cube = f.mul(x, f.op<SquareOp>(x));
      Value poly = f.add(x, f.mul(cube, f.scalar(0.044715)));
      inner = f.op<TanhOp>(f.mul(poly, f.scalar(std::sqrt(2.0 / M_PI))));
    } else {
      inner = f.op<ErfOp>(f.mul(x, f.scalar(1.0 / std::sqrt(2.0))));
    }
    Value half = f.mul(x, f.scalar(0.5));
    return f.mul(half, f.add(inner, f.scalar(1.0)));
  }
};

/// 1 + exp(-x), the denominator of sigmoid and silu.
static Value logisticDenominator(F32Builder &f, Value x) {
  return f.add(f.op<ExpOp>(f.op<NegOp>(x)), f.scalar(1.0));
}

struct DecomposeSigmoid : CompositePattern<SigmoidOp> {
  using CompositePattern::CompositePattern;
  Value computeF32(F32Builder &f, SigmoidOp op) const override {
    return f.op<ReciprocalOp>(logisticDenominator(f, f.toF32(op.getX())));
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
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposePatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void fusion::populateDecomposePatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeRmsNorm, DecomposeLayerNorm, DecomposeSoftmax,
               DecomposeLogSumExp, DecomposeGelu, DecomposeSigmoid,
               DecomposeSilu>(patterns.getContext());
}
