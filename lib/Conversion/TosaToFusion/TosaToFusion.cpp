//===- TosaToFusion.cpp - TOSA front end ----------------------------------===//
//
// Rewrites the TOSA ops that have a fusion counterpart on floating-point
// tensors (elementwise math, comparisons, select, casts between floats,
// clamp, reductions, slice, transpose, matmul, constants) into fusion ops,
// so TOSA from torch-mlir, TFLite or ONNX importers flows into the fusion
// pipeline. Every other TOSA op stays as it is, with a remark saying why.
//
//===----------------------------------------------------------------------===//

#include "fusion/Conversion/Passes.h"

#include "fusion/Dialect/Fusion/IR/FusionOps.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_CONVERTTOSATOFUSION
#include "fusion/Conversion/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

static bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

/// Whether `value` is a constant zero (a TOSA zero point or shift).
static bool isZero(Value value) {
  DenseElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return false;
  if (attr.getElementType().isIntOrIndex())
    return llvm::all_of(attr.getValues<APInt>(),
                        [](const APInt &v) { return v.isZero(); });
  return llvm::all_of(attr.getValues<APFloat>(),
                      [](const APFloat &v) { return v.isZero(); });
}

/// The integers of a tosa.const_shape operand.
static std::optional<SmallVector<int64_t>> constShape(Value value) {
  auto shape = value.getDefiningOp<tosa::ConstShapeOp>();
  if (!shape)
    return std::nullopt;
  return llvm::to_vector(shape.getValues().getValues<int64_t>());
}

/// A rank-0 splat of `value` in the element type of `like`.
static Value scalarConstant(OpBuilder &b, Location loc, Type like,
                            double value) {
  Type element = getElementTypeOrSelf(like);
  auto type = RankedTensorType::get({}, element);
  return ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, b.getFloatAttr(element, value)));
}

/// Rewrites `op` into fusion ops, or returns why it cannot.
class Converter {
public:
  explicit Converter(OpBuilder &b) : b(b) {}
  /// The replacement value, or failure with `reason` set.
  FailureOr<Value> convert(Operation *op, std::string &reason);

private:
  template <typename FusionOp>
  Value unary(Operation *op) {
    return FusionOp::create(b, op->getLoc(), op->getResult(0).getType(),
                            op->getOperand(0));
  }
  template <typename FusionOp>
  Value binary(Operation *op) {
    return FusionOp::create(b, op->getLoc(), op->getResult(0).getType(),
                            op->getOperand(0), op->getOperand(1));
  }
  Value compare(Operation *op, CmpPredicate predicate) {
    return CmpOp::create(b, op->getLoc(), op->getResult(0).getType(),
                         predicate, op->getOperand(0), op->getOperand(1));
  }

  OpBuilder &b;
};

FailureOr<Value> Converter::convert(Operation *op, std::string &reason) {
  Location loc = op->getLoc();
  if (!isa<tosa::ConstOp, tosa::SelectOp, tosa::GreaterOp, tosa::GreaterEqualOp,
           tosa::EqualOp, tosa::AddOp, tosa::SubOp, tosa::MaximumOp,
           tosa::MinimumOp, tosa::PowOp, tosa::MulOp, tosa::NegateOp,
           tosa::ExpOp, tosa::LogOp, tosa::TanhOp, tosa::SigmoidOp,
           tosa::RsqrtOp, tosa::ReciprocalOp, tosa::AbsOp, tosa::ErfOp,
           tosa::CastOp, tosa::ClampOp, tosa::ReduceSumOp, tosa::ReduceMaxOp,
           tosa::ReduceMinOp, tosa::SliceOp, tosa::ConcatOp, tosa::TransposeOp,
           tosa::ReshapeOp, tosa::MatMulOp>(op)) {
    reason = "has no fusion counterpart";
    return failure();
  }
  // Math needs floating-point data in and out (comparisons: in); shifts,
  // zero points and shapes are checked where they matter.
  OperandRange data = op->getOperands();
  if (isa<tosa::MulOp, tosa::MatMulOp>(op))
    data = data.take_front(2);
  else if (isa<tosa::NegateOp, tosa::SliceOp, tosa::ReshapeOp>(op))
    data = data.take_front(1);
  else if (isa<tosa::SelectOp>(op))
    data = data.drop_front(1);
  bool floatOperands = llvm::all_of(
      data, [&](Value v) { return isFloatTensor(v.getType()); });
  bool floatResult = isFloatTensor(op->getResult(0).getType());
  auto floatsOnly = [&]() -> FailureOr<Value> {
    reason = "operates on integer or unranked tensors, which the fusion "
             "dialect does not model";
    return failure();
  };

  if (auto constant = dyn_cast<tosa::ConstOp>(op)) {
    if (!floatResult)
      return floatsOnly();
    return ConstantOp::create(b, loc, op->getResult(0).getType(),
                              cast<ElementsAttr>(constant.getValues()))
        .getResult();
  }
  if (isa<tosa::SelectOp>(op)) {
    if (!floatOperands || !floatResult)
      return floatsOnly();
    return SelectOp::create(b, loc, op->getResult(0).getType(),
                            op->getOperand(0), op->getOperand(1),
                            op->getOperand(2))
        .getResult();
  }
  if (isa<tosa::GreaterOp, tosa::GreaterEqualOp, tosa::EqualOp>(op)) {
    if (!floatOperands)
      return floatsOnly();
    if (isa<tosa::GreaterOp>(op))
      return compare(op, CmpPredicate::gt);
    if (isa<tosa::GreaterEqualOp>(op))
      return compare(op, CmpPredicate::ge);
    return compare(op, CmpPredicate::eq);
  }
  if (!floatOperands || !floatResult)
    return floatsOnly();

  // One-to-one ops.
  Value direct =
      llvm::TypeSwitch<Operation *, Value>(op)
          .Case([&](tosa::AddOp) { return binary<AddOp>(op); })
          .Case([&](tosa::SubOp) { return binary<SubOp>(op); })
          .Case([&](tosa::MaximumOp) { return binary<MaxOp>(op); })
          .Case([&](tosa::MinimumOp) { return binary<MinOp>(op); })
          .Case([&](tosa::PowOp) { return binary<PowOp>(op); })
          .Case([&](tosa::ExpOp) { return unary<ExpOp>(op); })
          .Case([&](tosa::LogOp) { return unary<LogOp>(op); })
          .Case([&](tosa::TanhOp) { return unary<TanhOp>(op); })
          .Case([&](tosa::SigmoidOp) { return unary<SigmoidOp>(op); })
          .Case([&](tosa::RsqrtOp) { return unary<RsqrtOp>(op); })
          .Case([&](tosa::ReciprocalOp) { return unary<ReciprocalOp>(op); })
          .Case([&](tosa::AbsOp) { return unary<AbsOp>(op); })
          .Case([&](tosa::ErfOp) { return unary<ErfOp>(op); })
          .Case([&](tosa::CastOp) { return unary<ConvertOp>(op); })
          .Default([](Operation *) { return Value(); });
  if (direct)
    return direct;
  if (auto mul = dyn_cast<tosa::MulOp>(op)) {
    // The shift only applies to integers; a float mul has shift 0.
    return MulOp::create(b, loc, mul.getType(), mul.getInput1(),
                         mul.getInput2())
        .getResult();
  }
  if (auto negate = dyn_cast<tosa::NegateOp>(op)) {
    if (!isZero(negate.getInput1Zp()) || !isZero(negate.getOutputZp())) {
      reason = "has non-zero zero points";
      return failure();
    }
    return NegOp::create(b, loc, negate.getType(), negate.getInput1())
        .getResult();
  }
  if (auto clamp = dyn_cast<tosa::ClampOp>(op)) {
    auto low = dyn_cast<FloatAttr>(clamp.getMinValAttr());
    auto high = dyn_cast<FloatAttr>(clamp.getMaxValAttr());
    if (!low || !high) {
      reason = "has non-float bounds";
      return failure();
    }
    Type type = clamp.getType();
    Value lowered = MaxOp::create(
        b, loc, type, clamp.getInput(),
        scalarConstant(b, loc, type, low.getValueAsDouble()));
    return MinOp::create(b, loc, type, lowered,
                         scalarConstant(b, loc, type, high.getValueAsDouble()))
        .getResult();
  }
  if (isa<tosa::ReduceSumOp, tosa::ReduceMaxOp, tosa::ReduceMinOp>(op)) {
    // TOSA keeps the reduced axis with size 1.
    int64_t axis = op->getAttrOfType<IntegerAttr>("axis").getInt();
    Type type = op->getResult(0).getType();
    auto axes = b.getDenseI64ArrayAttr({axis});
    UnitAttr keep = b.getUnitAttr();
    if (isa<tosa::ReduceSumOp>(op))
      return ReduceSumOp::create(b, loc, type, op->getOperand(0), axes, keep)
          .getResult();
    if (isa<tosa::ReduceMaxOp>(op))
      return ReduceMaxOp::create(b, loc, type, op->getOperand(0), axes, keep)
          .getResult();
    return ReduceMinOp::create(b, loc, type, op->getOperand(0), axes, keep)
        .getResult();
  }
  if (auto slice = dyn_cast<tosa::SliceOp>(op)) {
    std::optional<SmallVector<int64_t>> start = constShape(slice.getStart());
    std::optional<SmallVector<int64_t>> size = constShape(slice.getSize());
    if (!start || !size) {
      reason = "has a start or size that is not a tosa.const_shape";
      return failure();
    }
    // A size of -1 runs to the end of the dimension.
    auto inputType = cast<RankedTensorType>(slice.getInput1().getType());
    for (auto [d, s] : llvm::enumerate(*size)) {
      if (s != -1)
        continue;
      if (inputType.isDynamicDim(d)) {
        reason = "runs to the end of a dynamic dimension";
        return failure();
      }
      s = inputType.getDimSize(d) - (*start)[d];
    }
    SmallVector<int64_t> strides(start->size(), 1);
    return SliceOp::create(b, loc, slice.getType(), slice.getInput1(), *start,
                           *size, strides)
        .getResult();
  }
  if (auto concat = dyn_cast<tosa::ConcatOp>(op)) {
    if (!floatOperands || !floatResult)
      return floatsOnly();
    // fusion.concat's shapes: every operand's other sizes operand 0's,
    // its sizes along the axis static.
    auto first = cast<RankedTensorType>(op->getOperand(0).getType());
    int64_t axis = concat.getAxis();
    SmallVector<int64_t> shape(first.getShape());
    shape[axis] = 0;
    for (Value input : op->getOperands()) {
      ArrayRef<int64_t> sizes =
          cast<RankedTensorType>(input.getType()).getShape();
      for (int64_t d = 0, e = sizes.size(); d < e; ++d) {
        if (d == axis && !ShapedType::isDynamic(sizes[d])) {
          shape[axis] += sizes[d];
        } else if (d == axis || sizes[d] != first.getDimSize(d)) {
          reason = "joins operands of dynamic sizes along the axis, or of "
                   "sizes that differ elsewhere";
          return failure();
        }
      }
    }
    if (RankedTensorType::get(shape, first.getElementType()) !=
        concat.getType()) {
      reason = "has a result type other than its operands' joined shape";
      return failure();
    }
    return ConcatOp::create(b, loc, concat.getType(), op->getOperands(), axis)
        .getResult();
  }
  if (auto reshape = dyn_cast<tosa::ReshapeOp>(op)) {
    if (!floatOperands || !floatResult)
      return floatsOnly();
    auto input = cast<RankedTensorType>(reshape.getInput1().getType());
    if (!input.hasStaticShape() || !reshape.getType().hasStaticShape()) {
      reason = "reshapes a dynamic shape (fusion.reshape is static)";
      return failure();
    }
    return ReshapeOp::create(b, loc, reshape.getType(), reshape.getInput1())
        .getResult();
  }
  if (auto transpose = dyn_cast<tosa::TransposeOp>(op)) {
    SmallVector<int64_t> permutation(transpose.getPerms().begin(),
                                     transpose.getPerms().end());
    return TransposeOp::create(b, loc, transpose.getType(),
                               transpose.getInput1(), permutation)
        .getResult();
  }
  if (auto matmul = dyn_cast<tosa::MatMulOp>(op)) {
    if (!isZero(matmul.getAZp()) || !isZero(matmul.getBZp())) {
      reason = "has non-zero zero points";
      return failure();
    }
    // TOSA may accumulate into a wider type (bf16 x bf16 -> f32): the
    // operands are converted first, as the fusion matmul keeps its type.
    auto resultType = cast<RankedTensorType>(matmul.getType());
    Type element = resultType.getElementType();
    auto widen = [&](Value v) -> Value {
      auto type = cast<RankedTensorType>(v.getType());
      if (type.getElementType() == element)
        return v;
      return ConvertOp::create(b, loc, type.clone(element), v);
    };
    Value lhs = widen(matmul.getA());
    Value rhs = widen(matmul.getB());
    return MatmulOp::create(b, loc, resultType, lhs, rhs).getResult();
  }
  llvm_unreachable("every op listed above is handled");
}

struct ConvertTosaToFusionPass
    : fusion::impl::ConvertTosaToFusionBase<ConvertTosaToFusionPass> {
  void runOnOperation() override {
    // Constants last: the shifts and zero points of converted ops are dead
    // by then and simply go.
    SmallVector<Operation *> ops, constants;
    getOperation()->walk([&](Operation *op) {
      if (isa<tosa::ConstOp>(op))
        constants.push_back(op);
      else if (isa<tosa::TosaDialect>(op->getDialect()) &&
               !isa<tosa::ConstShapeOp>(op))
        ops.push_back(op);
    });
    llvm::append_range(ops, constants);
    OpBuilder b(&getContext());
    Converter converter(b);
    for (Operation *op : ops) {
      if (isa<tosa::ConstOp>(op) && op->use_empty()) {
        op->erase();
        continue;
      }
      b.setInsertionPoint(op);
      std::string reason;
      FailureOr<Value> replacement = converter.convert(op, reason);
      if (failed(replacement)) {
        op->emitRemark() << "not converted to fusion: '" << op->getName()
                         << "' " << reason;
        continue;
      }
      op->getResult(0).replaceAllUsesWith(*replacement);
      op->erase();
    }
    // Shapes only the converted slices used.
    getOperation()->walk([](tosa::ConstShapeOp shape) {
      if (shape->use_empty())
        shape->erase();
    });
  }
};

} // namespace
