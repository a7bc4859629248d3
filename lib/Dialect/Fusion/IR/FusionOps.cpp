//===- FusionOps.cpp - Operations of the fusion dialect -------------------===//
//
// Shape rules, verifiers and custom syntax. Folds live in FusionFolds.cpp.
//
//===----------------------------------------------------------------------===//

#include "fusion/Dialect/Fusion/IR/FusionOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"

#include <limits>

using namespace mlir;
using namespace mlir::fusion;

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>>
fusion::broadcastShapes(ArrayRef<ArrayRef<int64_t>> shapes) {
  size_t rank = 0;
  for (ArrayRef<int64_t> shape : shapes)
    rank = std::max(rank, shape.size());
  // Start from all-ones and merge each shape in, aligned at the right.
  SmallVector<int64_t> result(rank, 1);
  for (ArrayRef<int64_t> shape : shapes) {
    size_t offset = rank - shape.size();
    for (auto [i, dim] : llvm::enumerate(shape)) {
      int64_t &out = result[offset + i];
      if (dim == 1 || dim == out)
        continue;
      if (out == 1) {
        out = dim;
        continue;
      }
      // Static n > 1 wins over a dynamic size; two distinct statics clash.
      if (ShapedType::isDynamic(dim))
        continue;
      if (ShapedType::isDynamic(out)) {
        out = dim;
        continue;
      }
      return failure();
    }
  }
  return result;
}

RankedTensorType fusion::getBroadcastResultType(ArrayRef<Type> types,
                                                Type elementType) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Type type : types)
    shapes.push_back(cast<RankedTensorType>(type).getShape());
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes(shapes);
  assert(succeeded(shape) && "builder called on incompatible shapes");
  return RankedTensorType::get(*shape, elementType);
}

RankedTensorType fusion::getReducedType(RankedTensorType type,
                                        ArrayRef<int64_t> axes, bool keepDims) {
  SmallVector<int64_t> shape;
  for (auto [i, dim] : llvm::enumerate(type.getShape())) {
    if (!llvm::is_contained(axes, static_cast<int64_t>(i)))
      shape.push_back(dim);
    else if (keepDims)
      shape.push_back(1);
  }
  return RankedTensorType::get(shape, type.getElementType());
}

/// Verifies that `op`'s single result has the broadcast shape of `operands`
/// with `elementType`.
static LogicalResult verifyBroadcastResult(Operation *op, ValueRange operands,
                                           Type elementType) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value operand : operands)
    shapes.push_back(cast<RankedTensorType>(operand.getType()).getShape());
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes(shapes);
  if (failed(shape)) {
    InFlightDiagnostic diag =
        op->emitOpError("operand shapes are not broadcast-compatible:");
    llvm::interleave(
        operands.getTypes(), [&](Type t) { diag << " " << t; },
        [&] { diag << ","; });
    return diag;
  }
  auto expected = RankedTensorType::get(*shape, elementType);
  Type actual = op->getResult(0).getType();
  if (actual != expected)
    return op->emitOpError("result type ")
           << actual << " does not match the broadcast of the operands; "
           << "expected " << expected;
  return success();
}

/// Verifies that `axis` indexes a dimension of a rank-`rank` tensor.
static LogicalResult verifyAxis(Operation *op, int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank)
    return op->emitOpError("axis ")
           << axis << " is out of range for a rank-" << rank
           << " operand (expected 0 <= axis < " << rank << ")";
  return success();
}

static LogicalResult verifyResultType(Operation *op, Type expected) {
  Type actual = op->getResult(0).getType();
  if (actual != expected)
    return op->emitOpError("result type ")
           << actual << " is wrong; expected " << expected;
  return success();
}

//===----------------------------------------------------------------------===//
// Custom syntax: `: T` when operands and result share one type, otherwise
// `: (T0, T1) -> R`.
//===----------------------------------------------------------------------===//

static ParseResult parseElementwiseTypes(OpAsmParser &parser, Type &lhs,
                                         Type &rhs, Type &result) {
  if (failed(parser.parseOptionalLParen())) {
    if (parser.parseType(lhs))
      return failure();
    rhs = result = lhs;
    return success();
  }
  return failure(parser.parseType(lhs) || parser.parseComma() ||
                 parser.parseType(rhs) || parser.parseRParen() ||
                 parser.parseArrow() || parser.parseType(result));
}

static void printElementwiseTypes(OpAsmPrinter &printer, Operation *, Type lhs,
                                  Type rhs, Type result) {
  if (lhs == rhs && rhs == result) {
    printer << lhs;
    return;
  }
  printer << "(" << lhs << ", " << rhs << ") -> " << result;
}

/// An iota's types: `: R` without a source, `: S -> R` with one.
static ParseResult
parseIotaTypes(OpAsmParser &parser,
               std::optional<OpAsmParser::UnresolvedOperand> source,
               Type &sourceType, Type &result) {
  if (!source)
    return parser.parseType(result);
  return failure(parser.parseType(sourceType) || parser.parseArrow() ||
                 parser.parseType(result));
}

static void printIotaTypes(OpAsmPrinter &printer, Operation *, Value source,
                           Type sourceType, Type result) {
  if (source)
    printer << sourceType << " -> ";
  printer << result;
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

#define FUSION_DEFINE_BINARY_VERIFIER(OP)                                      \
  LogicalResult OP::verify() {                                                 \
    return verifyBroadcastResult(getOperation(), getOperands(),                \
                                 getElementTypeOrSelf(getLhs().getType()));    \
  }
FUSION_DEFINE_BINARY_VERIFIER(AddOp)
FUSION_DEFINE_BINARY_VERIFIER(SubOp)
FUSION_DEFINE_BINARY_VERIFIER(MulOp)
FUSION_DEFINE_BINARY_VERIFIER(DivOp)
FUSION_DEFINE_BINARY_VERIFIER(MaxOp)
FUSION_DEFINE_BINARY_VERIFIER(MinOp)
FUSION_DEFINE_BINARY_VERIFIER(PowOp)
#undef FUSION_DEFINE_BINARY_VERIFIER

LogicalResult CmpOp::verify() {
  return verifyBroadcastResult(getOperation(), getOperands(),
                               IntegerType::get(getContext(), 1));
}

LogicalResult SelectOp::verify() {
  return verifyBroadcastResult(getOperation(), getOperands(),
                               getElementTypeOrSelf(getA().getType()));
}

LogicalResult IotaOp::verify() {
  auto type = cast<RankedTensorType>(getType());
  int64_t dim = getDimension();
  if (dim >= type.getRank())
    return emitOpError("dimension ")
           << dim << " is out of range for a result of rank " << type.getRank();
  if (static_cast<bool>(getSource()) != getSourceDimension().has_value())
    return emitOpError("takes a source and its dimension together");
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d) && (d != dim || !getSource()))
      return emitOpError("needs a static shape, or dimension ")
             << dim << " alone dynamic with a source giving its size: got "
             << type;
  auto element = cast<FloatType>(type.getElementType());
  if (getSource()) {
    auto sourceType = cast<RankedTensorType>(getSource().getType());
    int64_t sourceDim = *getSourceDimension();
    if (sourceDim >= sourceType.getRank())
      return emitOpError("source dimension ")
             << sourceDim << " is out of range for a source of rank "
             << sourceType.getRank();
    if (type.getDimSize(dim) != sourceType.getDimSize(sourceDim))
      return emitOpError("dimension ")
             << dim << " of the result must have the size of dimension "
             << sourceDim << " of the source: got " << type << " and "
             << sourceType;
    if (type.isDynamicDim(dim) && !element.isF32())
      return emitOpError("positions of a dynamic size must be f32 (exact up "
                         "to 2^24): got ")
             << element;
    if (type.isDynamicDim(dim))
      return success();
  }
  // Integers below 2^precision are exact.
  int64_t exact = int64_t(1) << element.getFPMantissaWidth();
  if (type.getDimSize(dim) > exact)
    return emitOpError("positions along dimension ")
           << dim << " (" << type.getDimSize(dim) << ") are not all exact in "
           << element << " (at most " << exact << ")";
  return success();
}

/// A static shape needs no source: dropped in place.
OpFoldResult IotaOp::fold(FoldAdaptor) {
  if (!getSource() || !getType().hasStaticShape())
    return {};
  getSourceMutable().clear();
  removeSourceDimensionAttr();
  return getResult();
}

LogicalResult ConvertOp::verify() {
  auto in = cast<RankedTensorType>(getX().getType());
  auto out = cast<RankedTensorType>(getType());
  if (in.getShape() != out.getShape())
    return emitOpError("result shape must equal the operand shape: got ")
           << out << " for an operand of type " << in;
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

static LogicalResult verifyReduction(Operation *op, RankedTensorType input,
                                     ArrayRef<int64_t> axes, bool keepDims) {
  if (axes.empty())
    return op->emitOpError("axes must not be empty");
  int64_t rank = input.getRank();
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (failed(verifyAxis(op, axis, rank)))
      return failure();
    if (i > 0 && axes[i - 1] >= axis)
      return op->emitOpError("axes must be sorted and unique, got [")
             << axes << "]";
  }
  return verifyResultType(op, getReducedType(input, axes, keepDims));
}

ArrayRef<int64_t> fusion::getReduceAxes(Operation *op) {
  if (auto r = dyn_cast<ReduceSumOp>(op))
    return r.getAxes();
  if (auto r = dyn_cast<ReduceMaxOp>(op))
    return r.getAxes();
  if (auto r = dyn_cast<ReduceMinOp>(op))
    return r.getAxes();
  if (auto r = dyn_cast<ReduceMeanOp>(op))
    return r.getAxes();
  return {};
}

SmallVector<std::optional<int64_t>>
fusion::getBroadcastSources(ArrayRef<int64_t> operandShape,
                            ArrayRef<int64_t> resultShape) {
  int64_t offset = resultShape.size() - operandShape.size();
  SmallVector<std::optional<int64_t>> sources;
  for (auto [i, dim] : llvm::enumerate(operandShape)) {
    int64_t j = i + offset;
    if (dim == 1 && resultShape[j] != 1)
      sources.push_back(std::nullopt);
    else
      sources.push_back(j);
  }
  return sources;
}

SmallVector<int64_t> fusion::getDynamicDims(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> dims;
  for (auto [d, size] : llvm::enumerate(shape))
    if (ShapedType::isDynamic(size))
      dims.push_back(d);
  return dims;
}

SmallVector<SmallVector<int64_t, 2>>
fusion::groupByDynamicDims(ArrayRef<int64_t> shape) {
  SmallVector<SmallVector<int64_t, 2>> groups;
  SmallVector<int64_t, 2> leading;
  for (auto [d, size] : llvm::enumerate(shape)) {
    if (ShapedType::isDynamic(size))
      groups.emplace_back();
    (groups.empty() ? leading : groups.back()).push_back(d);
  }
  if (!groups.empty())
    groups.front().insert(groups.front().begin(), leading.begin(),
                          leading.end());
  return groups;
}

/// The products of the runs of static sizes around the dynamic sizes of
/// `shape`: one more than there are dynamic sizes.
static SmallVector<int64_t> staticRuns(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> runs = {1};
  for (int64_t size : shape) {
    if (ShapedType::isDynamic(size))
      runs.push_back(1);
    else
      runs.back() *= size;
  }
  return runs;
}

SmallVector<std::pair<DimRef, DimRef>> fusion::getEqualDims(Operation *op) {
  SmallVector<std::pair<DimRef, DimRef>> pairs;
  if (op->getNumResults() != 1 ||
      !isa<RankedTensorType>(op->getResult(0).getType()))
    return pairs;
  Value result = op->getResult(0);
  ArrayRef<int64_t> resultShape =
      cast<RankedTensorType>(result.getType()).getShape();
  auto shapeOf = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  // Operand dimension i gives result dimension j.
  auto same = [&](Value operand, int64_t i, int64_t j) {
    pairs.push_back({DimRef{operand, i}, DimRef{result, j}});
  };
  auto broadcastInto = [&](Value operand, ArrayRef<int64_t> operandShape,
                           ArrayRef<int64_t> intoShape) {
    for (auto [i, j] :
         llvm::enumerate(getBroadcastSources(operandShape, intoShape)))
      if (j)
        same(operand, i, *j);
  };
  auto reduced = [&](Value x, ArrayRef<int64_t> axes, bool keepDims) {
    int64_t j = 0;
    for (int64_t i = 0, e = shapeOf(x).size(); i < e; ++i) {
      bool isAxis = llvm::is_contained(axes, i);
      if (!isAxis)
        same(x, i, j);
      if (!isAxis || keepDims)
        ++j;
    }
  };

  if (isElementwiseMath(op) || isa<SoftmaxOp>(op)) {
    for (Value operand : op->getOperands())
      broadcastInto(operand, shapeOf(operand), resultShape);
  } else if (ArrayRef<int64_t> axes = getReduceAxes(op); !axes.empty()) {
    // Every reduce_* op keeps the reduced dimensions (as 1) or drops them.
    Value x = op->getOperand(0);
    bool keepDims = resultShape.size() == shapeOf(x).size();
    reduced(x, axes, keepDims);
  } else if (auto lse = dyn_cast<LogSumExpOp>(op)) {
    reduced(lse.getX(), {lse.getAxis()}, false);
  } else if (isa<RmsNormOp, LayerNormOp>(op)) {
    Value x = op->getOperand(0);
    int64_t last = shapeOf(x).size() - 1;
    for (int64_t i = 0; i <= last; ++i)
      same(x, i, i);
    for (Value parameter : op->getOperands().drop_front())
      pairs.push_back({DimRef{parameter, 0}, DimRef{x, last}});
  } else if (auto slice = dyn_cast<SliceOp>(op)) {
    for (auto [i, size] : llvm::enumerate(slice.getSizes()))
      if (size == -1)
        same(slice.getX(), i, i);
  } else if (auto transpose = dyn_cast<TransposeOp>(op)) {
    for (auto [j, i] : llvm::enumerate(transpose.getPermutation()))
      same(transpose.getX(), i, j);
  } else if (auto iota = dyn_cast<IotaOp>(op)) {
    if (Value source = iota.getSource())
      same(source, *iota.getSourceDimension(), iota.getDimension());
  } else if (auto concat = dyn_cast<ConcatOp>(op)) {
    for (Value input : concat.getInputs())
      for (int64_t d = 0, e = resultShape.size(); d < e; ++d)
        if (d != static_cast<int64_t>(concat.getAxis()))
          same(input, d, d);
  } else if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    // The k-th dynamic dimension of the operand is the result's k-th.
    for (auto [in, out] : llvm::zip(getDynamicDims(shapeOf(reshape.getX())),
                                    getDynamicDims(resultShape)))
      same(reshape.getX(), in, out);
  } else if (auto matmul = dyn_cast<MatmulOp>(op)) {
    Value a = matmul.getA(), b = matmul.getB();
    int64_t aRank = shapeOf(a).size(), bRank = shapeOf(b).size();
    int64_t rank = resultShape.size();
    broadcastInto(a, shapeOf(a).drop_back(2), resultShape.drop_back(2));
    broadcastInto(b, shapeOf(b).drop_back(2), resultShape.drop_back(2));
    same(a, aRank - 2, rank - 2);
    same(b, bRank - 1, rank - 1);
    pairs.push_back({DimRef{a, aRank - 1}, DimRef{b, bRank - 2}});
  }
  return pairs;
}

ReductionCombiner fusion::getReductionCombiner(Operation *op) {
  if (isa<ReduceMaxOp>(op))
    return ReductionCombiner::maximum;
  if (isa<ReduceMinOp>(op))
    return ReductionCombiner::minimum;
  return ReductionCombiner::add;
}

double fusion::getReductionIdentity(ReductionCombiner combiner) {
  switch (combiner) {
  case ReductionCombiner::maximum:
    return -std::numeric_limits<double>::infinity();
  case ReductionCombiner::minimum:
    return std::numeric_limits<double>::infinity();
  case ReductionCombiner::add:
    return 0.0;
  }
  llvm_unreachable("unknown reduction combiner");
}

bool fusion::isElementwiseMath(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, PowOp, NegOp, AbsOp,
             ExpOp, LogOp, TanhOp, ErfOp, SqrtOp, RsqrtOp, ReciprocalOp,
             SquareOp, ReluOp, SigmoidOp, SiluOp, GeluOp, CmpOp, SelectOp,
             ConvertOp>(op);
}

bool fusion::isTrivialReduction(Operation *op) {
  ArrayRef<int64_t> axes = getReduceAxes(op);
  if (axes.empty())
    return false;
  auto input = cast<RankedTensorType>(op->getOperand(0).getType());
  return llvm::all_of(
      axes, [&](int64_t axis) { return input.getDimSize(axis) == 1; });
}

#define FUSION_DEFINE_REDUCE_VERIFIER(OP)                                      \
  LogicalResult OP::verify() {                                                 \
    return verifyReduction(getOperation(),                                     \
                           cast<RankedTensorType>(getX().getType()),           \
                           getAxes(), getKeepDims());                          \
  }
FUSION_DEFINE_REDUCE_VERIFIER(ReduceSumOp)
FUSION_DEFINE_REDUCE_VERIFIER(ReduceMaxOp)
FUSION_DEFINE_REDUCE_VERIFIER(ReduceMinOp)
FUSION_DEFINE_REDUCE_VERIFIER(ReduceMeanOp)
#undef FUSION_DEFINE_REDUCE_VERIFIER

//===----------------------------------------------------------------------===//
// Normalisations and softmax
//===----------------------------------------------------------------------===//

/// Verifies that `param` (named `name`) is a 1-D tensor of `x`'s last
/// dimension and element type.
static LogicalResult verifyNormParameter(Operation *op, Value x, Value param,
                                         StringRef name) {
  auto xType = cast<RankedTensorType>(x.getType());
  auto pType = cast<RankedTensorType>(param.getType());
  if (xType.getRank() == 0)
    return op->emitOpError("x must have at least one dimension");
  // A static parameter size needs the same static last dimension: the
  // result keeps x's type, so the parameter must not refine it.
  int64_t last = xType.getShape().back();
  if (pType.getRank() != 1 ||
      (!pType.isDynamicDim(0) && pType.getDimSize(0) != last)) {
    InFlightDiagnostic diag = op->emitOpError() << name;
    if (ShapedType::isDynamic(last))
      diag << " must be a 1-D tensor of dynamic size, as x's last dimension "
              "is dynamic";
    else
      diag << " must be a 1-D tensor of x's last dimension (" << last << ")";
    return diag << ", got " << pType;
  }
  if (pType.getElementType() != xType.getElementType())
    return op->emitOpError()
           << name << " element type " << pType.getElementType()
           << " differs from x's " << xType.getElementType();
  return success();
}

static LogicalResult verifyEpsilon(Operation *op, APFloat epsilon) {
  if (epsilon.isNegative() || !epsilon.isFinite())
    return op->emitOpError("epsilon must be a finite non-negative number");
  return success();
}

LogicalResult RmsNormOp::verify() {
  if (failed(verifyNormParameter(*this, getX(), getWeight(), "weight")))
    return failure();
  return verifyEpsilon(*this, getEpsilon());
}

LogicalResult LayerNormOp::verify() {
  if (failed(verifyNormParameter(*this, getX(), getGamma(), "gamma")) ||
      failed(verifyNormParameter(*this, getX(), getBeta(), "beta")))
    return failure();
  return verifyEpsilon(*this, getEpsilon());
}

LogicalResult SoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(),
                    cast<RankedTensorType>(getX().getType()).getRank());
}

LogicalResult LogSumExpOp::verify() {
  auto input = cast<RankedTensorType>(getX().getType());
  if (failed(verifyAxis(*this, getAxis(), input.getRank())))
    return failure();
  return verifyResultType(
      *this, getReducedType(input, {getAxis()}, /*keepDims=*/false));
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::verify() {
  auto input = cast<RankedTensorType>(getX().getType());
  int64_t rank = input.getRank();
  ArrayRef<int64_t> offsets = getOffsets(), sizes = getSizes(),
                    strides = getStrides();
  if (static_cast<int64_t>(offsets.size()) != rank ||
      static_cast<int64_t>(sizes.size()) != rank ||
      static_cast<int64_t>(strides.size()) != rank)
    return emitOpError("offsets, sizes and strides must each have one entry "
                       "per dimension (")
           << rank << "), got " << offsets.size() << ", " << sizes.size()
           << " and " << strides.size();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t dim = input.getDimSize(d);
    int64_t offset = offsets[d], size = sizes[d], stride = strides[d];
    if (size == -1) {
      if (offset != 0 || stride != 1)
        return emitOpError("dimension ")
               << d << ": size -1 keeps the whole dimension and needs offset "
               << "0 and stride 1";
      shape.push_back(dim);
      continue;
    }
    if (ShapedType::isDynamic(dim))
      return emitOpError("dimension ")
             << d << " is dynamic and can only be kept whole (offset 0, "
             << "size -1, stride 1)";
    if (stride < 1)
      return emitOpError("dimension ") << d << ": stride must be at least 1, "
                                       << "got " << stride;
    // The last index, offset + (size - 1) * stride, must be below dim;
    // compared by division, since the product can overflow int64.
    if (offset < 0 || size < 0 ||
        (size > 0 && (offset >= dim || (size - 1) > (dim - 1 - offset) / stride)))
      return emitOpError("dimension ")
             << d << ": slice [offset " << offset << ", size " << size
             << ", stride " << stride << "] is out of bounds for size " << dim;
    shape.push_back(size);
  }
  return verifyResultType(*this,
                          RankedTensorType::get(shape, input.getElementType()));
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one operand");
  auto first = cast<RankedTensorType>(getInputs().front().getType());
  int64_t rank = first.getRank();
  int64_t axis = getAxis();
  if (failed(verifyAxis(*this, axis, rank)))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    auto type = cast<RankedTensorType>(input.getType());
    if (type.getRank() != rank)
      return emitOpError("operand ")
             << i << " has rank " << type.getRank() << ", expected " << rank;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t size = type.getDimSize(d);
      if (d == axis) {
        if (ShapedType::isDynamic(size))
          return emitOpError("operand ")
                 << i << " is dynamic along axis " << axis
                 << ": concatenation needs static sizes there";
        shape[axis] += size;
        continue;
      }
      if (size != shape[d])
        return emitOpError("operand ")
               << i << " has type " << type << ": every operand needs "
               << "operand 0's sizes " << first << " but along axis " << axis;
    }
  }
  return verifyResultType(*this,
                          RankedTensorType::get(shape, first.getElementType()));
}

SmallVector<int64_t> ConcatOp::getOffsets() {
  SmallVector<int64_t> offsets;
  int64_t offset = 0;
  for (Value input : getInputs()) {
    offsets.push_back(offset);
    offset += cast<RankedTensorType>(input.getType()).getDimSize(getAxis());
  }
  return offsets;
}

LogicalResult TransposeOp::verify() {
  auto input = cast<RankedTensorType>(getX().getType());
  ArrayRef<int64_t> perm = getPermutation();
  int64_t rank = input.getRank();
  llvm::SmallBitVector seen(rank);
  bool valid = static_cast<int64_t>(perm.size()) == rank;
  for (int64_t p : perm) {
    if (!valid || p < 0 || p >= rank || seen.test(p)) {
      valid = false;
      break;
    }
    seen.set(p);
  }
  if (!valid)
    return emitOpError("permutation [")
           << perm << "] is not a permutation of the " << rank
           << " dimensions of " << input;
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(input.getDimSize(p));
  return verifyResultType(*this,
                          RankedTensorType::get(shape, input.getElementType()));
}

LogicalResult ReshapeOp::verify() {
  auto input = cast<RankedTensorType>(getX().getType());
  auto result = cast<RankedTensorType>(getType());
  if (input.hasStaticShape() && result.hasStaticShape() &&
      input.getNumElements() != result.getNumElements())
    return emitOpError("changes the number of elements: ")
           << input << " has " << input.getNumElements() << ", " << result
           << " has " << result.getNumElements();
  // Dynamic sizes keep their order and size: the same number on each side,
  // and the same products of static sizes between them.
  if ((!input.hasStaticShape() || !result.hasStaticShape()) &&
      staticRuns(input.getShape()) != staticRuns(result.getShape()))
    return emitOpError("must keep each dynamic size, in order, with the same "
                       "product of static sizes between them: ")
           << input << " -> " << result;
  if (auto kernel = (*this)->getParentOfType<KernelOp>();
      kernel && kernel.getKind() != KernelKind::elementwise)
    return emitOpError("is evaluated inside elementwise kernels only, not "
                       "in a ")
           << stringifyKernelKind(kernel.getKind()) << " kernel";
  return success();
}

LogicalResult MatmulOp::verify() {
  auto a = cast<RankedTensorType>(getA().getType());
  auto b = cast<RankedTensorType>(getB().getType());
  if (a.getRank() < 2 || b.getRank() < 2)
    return emitOpError("operands must have rank 2 or more ([..., M, K] and "
                       "[..., K, N]), got ")
           << a << " and " << b;
  int64_t ka = a.getShape().back(), kb = b.getShape()[b.getRank() - 2];
  if (!ShapedType::isDynamic(ka) && !ShapedType::isDynamic(kb) && ka != kb)
    return emitOpError("inner dimensions differ: lhs has K = ")
           << ka << ", rhs has K = " << kb;
  FailureOr<SmallVector<int64_t>> batch =
      broadcastShapes({a.getShape().drop_back(2), b.getShape().drop_back(2)});
  if (failed(batch))
    return emitOpError("batch dimensions are not broadcast-compatible: ")
           << a << " and " << b;
  SmallVector<int64_t> shape = *batch;
  shape.push_back(a.getShape()[a.getRank() - 2]);
  shape.push_back(b.getShape().back());
  return verifyResultType(*this,
                          RankedTensorType::get(shape, a.getElementType()));
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

void KernelOp::build(OpBuilder &builder, OperationState &state,
                     TypeRange resultTypes, KernelKind kind,
                     ValueRange inputs) {
  state.addOperands(inputs);
  state.addTypes(resultTypes);
  state.getOrAddProperties<Properties>().kind =
      KernelKindAttr::get(builder.getContext(), kind);
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (Value input : inputs)
    block->addArgument(input.getType(), input.getLoc());
}

YieldOp KernelOp::getYield() {
  return cast<YieldOp>(getBodyBlock().getTerminator());
}

LogicalResult KernelOp::verifyRegions() {
  Block &block = getBodyBlock();
  if (block.getArgumentTypes() != getInputs().getTypes())
    return emitOpError("body arguments must match the inputs one to one, got (")
           << block.getArgumentTypes() << ") for inputs ("
           << getInputs().getTypes() << ")";
  for (Operation &op : block.without_terminator()) {
    if (!isa<FusionDialect>(op.getDialect()) || isa<KernelOp>(op))
      return op.emitOpError("cannot be inside a fusion.kernel: a kernel holds "
                            "fusion ops other than fusion.kernel");
  }
  if (getYield().getValues().getTypes() != getResultTypes())
    return emitOpError("yielded types (")
           << getYield().getValues().getTypes()
           << ") must match the kernel's result types (" << getResultTypes()
           << ")";
  if (KernelPlanAttr plan = getPlanAttr()) {
    if (plan.getPasses().size() != getInputs().size())
      return emitOpError("plan reads ")
             << plan.getPasses().size() << " inputs, the kernel has "
             << getInputs().size();
    KernelKind kind = getKind();
    bool rowKind =
        kind == KernelKind::row_reduction || kind == KernelKind::wide_row;
    switch (plan.getStrategy()) {
    case KernelStrategy::elementwise:
      if (kind != KernelKind::elementwise)
        return emitOpError("an elementwise plan needs an elementwise kernel");
      break;
    case KernelStrategy::rows:
    case KernelStrategy::cluster_rows:
      if (!rowKind)
        return emitOpError("a rows plan needs a row_reduction or wide_row "
                           "kernel");
      break;
    case KernelStrategy::matmul_tiles:
    case KernelStrategy::matmul_wgmma:
    case KernelStrategy::library_matmul:
      if (kind != KernelKind::matmul)
        return emitOpError("a matmul plan needs a matmul kernel");
      break;
    case KernelStrategy::columns:
      if (kind != KernelKind::column_reduction)
        return emitOpError("a columns plan needs a column_reduction kernel");
      break;
    case KernelStrategy::split_reduction:
      if (kind != KernelKind::reduction && !rowKind)
        return emitOpError("a split_reduction plan needs a reduction, "
                           "row_reduction or wide_row kernel");
      break;
    case KernelStrategy::attention_rows:
    case KernelStrategy::attention_tiles:
      if (kind != KernelKind::attention)
        return emitOpError("an attention plan needs an attention kernel");
      break;
    case KernelStrategy::per_element:
      break;
    }
  }
  return success();
}

#define GET_OP_CLASSES
#include "fusion/Dialect/Fusion/IR/FusionOps.cpp.inc"
