//===- FusionToLinalg.cpp - Fusion ops to linalg on tensors ---------------===//
//
// Outlines every fusion.kernel into a private function and lowers fusion ops
// to linalg, tensor, arith and math ops on tensors (see Passes.td).
//
// Longer than 600 lines on purpose: one conversion pattern set (a pattern
// per op family) sharing its broadcast maps and f32 promotion, as upstream
// keeps its TOSA-to-linalg patterns together.
//
//===----------------------------------------------------------------------===//

#include "fusion/Conversion/Passes.h"
#include "fusion/Conversion/ScalarOps.h"

#include "fusion/Dialect/Fusion/Analysis/DynamicDims.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "fusion/Dialect/Fusion/Transforms/KernelFusion.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <functional>

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSIONTOLINALG
#include "fusion/Conversion/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static Value f32Constant(OpBuilder &b, Location loc, double value) {
  return fusion::f32Constant(b, loc, value, b.getF32Type());
}

/// The sizes of `type`'s dynamic dimensions, read from the first of
/// `operands` that has the (trailing-aligned) dimension dynamic too.
static SmallVector<Value> getDynamicSizes(OpBuilder &b, Location loc,
                                          RankedTensorType type,
                                          ValueRange operands) {
  SmallVector<Value> sizes;
  int64_t rank = type.getRank();
  for (int64_t j = 0; j < rank; ++j) {
    if (!type.isDynamicDim(j))
      continue;
    Value size;
    for (Value operand : operands) {
      auto operandType = cast<RankedTensorType>(operand.getType());
      int64_t i = j - (rank - operandType.getRank());
      if (i >= 0 && operandType.isDynamicDim(i)) {
        size = tensor::DimOp::create(b, loc, operand, i);
        break;
      }
    }
    assert(size && "a dynamic result dimension has a dynamic operand");
    sizes.push_back(size);
  }
  return sizes;
}

/// Reads an operand of `operandShape` in the iteration space of
/// `resultShape` with numpy broadcasting (trailing dims aligned; a size-1
/// dimension reads index 0).
static AffineMap getBroadcastMap(MLIRContext *context,
                                 ArrayRef<int64_t> operandShape,
                                 ArrayRef<int64_t> resultShape) {
  SmallVector<AffineExpr> exprs;
  for (std::optional<int64_t> source :
       getBroadcastSources(operandShape, resultShape))
    exprs.push_back(source ? getAffineDimExpr(*source, context)
                           : getAffineConstantExpr(0, context));
  return AffineMap::get(resultShape.size(), 0, exprs, context);
}

/// The scalar of a splat constant operand, if it is one.
static std::optional<TypedAttr> getSplatScalar(Value value) {
  SplatElementsAttr splat;
  if (!matchPattern(value, m_Constant(&splat)))
    return std::nullopt;
  return splat.getSplatValue<TypedAttr>();
}

using ScalarBody =
    function_ref<Value(OpBuilder &, Location, ArrayRef<Value> args)>;

/// Lowers an elementwise op to one linalg.generic. `body` gets the scalar
/// operands (floats in f32, masks as i1) and returns the scalar result,
/// which is rounded to the result's element type.
static void lowerElementwise(Operation *op, ValueRange operands,
                             ConversionPatternRewriter &rewriter,
                             ScalarBody body) {
  Location loc = op->getLoc();
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  MLIRContext *context = op->getContext();

  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  SmallVector<std::optional<TypedAttr>> scalars;
  for (Value operand : operands) {
    scalars.push_back(getSplatScalar(operand));
    if (scalars.back())
      continue;
    inputs.push_back(operand);
    maps.push_back(getBroadcastMap(
        context, cast<RankedTensorType>(operand.getType()).getShape(),
        resultType.getShape()));
  }
  maps.push_back(rewriter.getMultiDimIdentityMap(resultType.getRank()));
  Value init = tensor::EmptyOp::create(
      rewriter, loc, resultType.getShape(), resultType.getElementType(),
      getDynamicSizes(rewriter, loc, resultType, inputs));
  SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, resultType, inputs, init, maps, iterators,
      [&](OpBuilder &b, Location bodyLoc, ValueRange blockArgs) {
        SmallVector<Value> args;
        unsigned next = 0;
        for (const std::optional<TypedAttr> &scalar : scalars) {
          Value arg =
              scalar
                  ? arith::ConstantOp::create(b, bodyLoc, *scalar).getResult()
                  : blockArgs[next++];
          args.push_back(extendToF32(b, bodyLoc, arg));
        }
        Value result = body(b, bodyLoc, args);
        linalg::YieldOp::create(
            b, bodyLoc,
            roundTo(b, bodyLoc, result, resultType.getElementType()));
      });
  rewriter.replaceOp(op, generic.getResults());
}

//===----------------------------------------------------------------------===//
// Elementwise patterns
//===----------------------------------------------------------------------===//

template <typename OpTy>
struct ElementwiseLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    lowerElementwise(op, adaptor.getOperands(), rewriter,
                     [&](OpBuilder &b, Location loc, ArrayRef<Value> args) {
                       return buildElementwise(b, loc, op, args);
                     });
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//



template <typename OpTy>
struct ReduceLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getX();
    auto inputType = cast<RankedTensorType>(input.getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    ArrayRef<int64_t> axes = op.getAxes();
    Type f32 = rewriter.getF32Type();

    // The accumulator: the kept dimensions, in f32.
    SmallVector<int64_t> keptShape;
    SmallVector<Value> keptSizes;
    SmallVector<AffineExpr> outExprs;
    SmallVector<utils::IteratorType> iterators;
    for (int64_t d = 0; d < inputType.getRank(); ++d) {
      if (llvm::is_contained(axes, d)) {
        iterators.push_back(utils::IteratorType::reduction);
        continue;
      }
      iterators.push_back(utils::IteratorType::parallel);
      keptShape.push_back(inputType.getDimSize(d));
      outExprs.push_back(rewriter.getAffineDimExpr(d));
      if (inputType.isDynamicDim(d))
        keptSizes.push_back(tensor::DimOp::create(rewriter, loc, input, d));
    }
    auto accType = RankedTensorType::get(keptShape, f32);
    Value empty =
        tensor::EmptyOp::create(rewriter, loc, keptShape, f32, keptSizes);
    Value acc =
        linalg::FillOp::create(rewriter, loc,
                               buildReductionIdentity(rewriter, loc, op, f32),
                               empty)
            .getResult(0);
    SmallVector<AffineMap> maps = {
        rewriter.getMultiDimIdentityMap(inputType.getRank()),
        AffineMap::get(inputType.getRank(), 0, outExprs, op.getContext())};
    Value reduced = linalg::GenericOp::create(
                        rewriter, loc, accType, input, acc, maps, iterators,
                        [&](OpBuilder &b, Location l, ValueRange args) {
                          Value x = extendToF32(b, l, args[0]);
                          Value r = buildReductionCombine(b, l, op, args[1], x);
                          linalg::YieldOp::create(b, l, ValueRange{r});
                        })
                        .getResult(0);

    // Mean: divide by the number of reduced elements; then round to the
    // element type.
    Value count;
    if (isa<ReduceMeanOp>(op.getOperation())) {
      count = arith::ConstantIndexOp::create(rewriter, loc, 1);
      for (int64_t axis : axes)
        count = arith::MulIOp::create(
            rewriter, loc, count,
            tensor::DimOp::create(rewriter, loc, input, axis));
      count = arith::UIToFPOp::create(
          rewriter, loc, f32,
          arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(),
                                     count));
    }
    Type elementType = resultType.getElementType();
    auto flatType = RankedTensorType::get(keptShape, elementType);
    if (count || elementType != f32) {
      Value out = tensor::EmptyOp::create(rewriter, loc, keptShape, elementType,
                                          keptSizes);
      AffineMap id = rewriter.getMultiDimIdentityMap(keptShape.size());
      reduced =
          linalg::GenericOp::create(
              rewriter, loc, flatType, reduced, out,
              SmallVector<AffineMap>{id, id},
              SmallVector<utils::IteratorType>(keptShape.size(),
                                               utils::IteratorType::parallel),
              [&](OpBuilder &b, Location l, ValueRange args) {
                Value v = args[0];
                if (count)
                  v = arith::DivFOp::create(b, l, v, count);
                linalg::YieldOp::create(b, l, roundTo(b, l, v, elementType));
              })
              .getResult(0);
    }

    if (op.getKeepDims()) {
      // Each kept dimension takes the size-1 dimensions around it.
      SmallVector<ReassociationIndices> groups;
      int64_t pending = 0;
      for (int64_t d = 0; d < inputType.getRank(); ++d) {
        if (llvm::is_contained(axes, d)) {
          if (groups.empty())
            ++pending;
          else
            groups.back().push_back(d);
          continue;
        }
        ReassociationIndices group;
        for (int64_t p = d - pending; p <= d; ++p)
          group.push_back(p);
        pending = 0;
        groups.push_back(group);
      }
      reduced = tensor::ExpandShapeOp::create(rewriter, loc, resultType,
                                              reduced, groups);
    }
    rewriter.replaceOp(op, reduced);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Data movement, matmul, constants
//===----------------------------------------------------------------------===//

struct SliceLowering : OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getX();
    auto resultType = cast<RankedTensorType>(op.getType());
    // An empty result is an empty tensor: extract_slice's verifier calls
    // offset 0 of a size-0 dimension out of bounds.
    if (resultType.hasStaticShape() && resultType.getNumElements() == 0) {
      rewriter.replaceOpWithNewOp<tensor::EmptyOp>(
          op, resultType.getShape(), resultType.getElementType());
      return success();
    }
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (auto [d, offset, size, stride] :
         llvm::enumerate(op.getOffsets(), op.getSizes(), op.getStrides())) {
      offsets.push_back(rewriter.getIndexAttr(offset));
      strides.push_back(rewriter.getIndexAttr(stride));
      if (size == -1)
        sizes.push_back(tensor::getMixedSize(rewriter, loc, input, d));
      else
        sizes.push_back(rewriter.getIndexAttr(size));
    }
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, cast<RankedTensorType>(op.getType()), input, offsets, sizes,
        strides);
    return success();
  }
};

/// A generic with no inputs computing each element of a tensor of `type`
/// (dynamic sizes `sizes`) from its index (`element`).
static Value buildIndexedGeneric(
    OpBuilder &b, Location loc, RankedTensorType type, ValueRange sizes,
    function_ref<Value(OpBuilder &, Location, ValueRange)> element) {
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(),
                                       type.getElementType(), sizes);
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, type, ValueRange(), init,
      b.getMultiDimIdentityMap(type.getRank()), iterators,
      [&](OpBuilder &b, Location l, ValueRange) {
        SmallVector<Value> index;
        for (int64_t d = 0; d < type.getRank(); ++d)
          index.push_back(linalg::IndexOp::create(b, l, d));
        linalg::YieldOp::create(b, l, element(b, l, index));
      });
  return generic.getResult(0);
}

/// A generic over the result whose body reads each point from the operand
/// it lies in (`tensor.extract` in one `scf.if` branch per operand), as the
/// GPU evaluator does. (Copies into slots of one result tensor would share
/// that tensor with another concatenation's once CSE merges their empty
/// tensors, and bufferize into strided copies.)
struct ConcatLowering : OpConversionPattern<ConcatOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getType());
    Value first = adaptor.getInputs().front();
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < resultType.getRank(); ++d)
      if (resultType.isDynamicDim(d))
        sizes.push_back(tensor::DimOp::create(rewriter, loc, first, d));
    int64_t axis = op.getAxis();
    SmallVector<int64_t> offsets = op.getOffsets();
    ValueRange inputs = adaptor.getInputs();
    Value result = buildIndexedGeneric(
        rewriter, loc, resultType, sizes,
        [&](OpBuilder &b, Location l, ValueRange index) {
          auto extract = [&](OpBuilder &b, size_t k) -> Value {
            SmallVector<Value> at(index);
            if (offsets[k] != 0)
              at[axis] = arith::SubIOp::create(
                  b, l, index[axis],
                  arith::ConstantIndexOp::create(b, l, offsets[k]));
            return tensor::ExtractOp::create(b, l, inputs[k], at);
          };
          // Operand k if the point lies before operand k + 1, else the
          // operands after it.
          std::function<Value(OpBuilder &, size_t)> from =
              [&](OpBuilder &b, size_t k) -> Value {
            if (k + 1 == inputs.size())
              return extract(b, k);
            Value before = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::ult, index[axis],
                arith::ConstantIndexOp::create(b, l, offsets[k + 1]));
            return scf::IfOp::create(
                       b, l, before,
                       [&](OpBuilder &b, Location l) {
                         scf::YieldOp::create(b, l, extract(b, k));
                       },
                       [&](OpBuilder &b, Location l) {
                         scf::YieldOp::create(b, l, from(b, k + 1));
                       })
                .getResult(0);
          };
          return from(b, 0);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct TransposeLowering : OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getX();
    auto resultType = cast<RankedTensorType>(op.getType());
    SmallVector<Value> sizes;
    for (auto [j, p] : llvm::enumerate(op.getPermutation()))
      if (resultType.isDynamicDim(j))
        sizes.push_back(tensor::DimOp::create(rewriter, loc, input, p));
    Value init = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                         resultType.getElementType(), sizes);
    rewriter.replaceOp(op, linalg::TransposeOp::create(
                               rewriter, loc, input, init, op.getPermutation())
                               ->getResults());
    return success();
  }
};

/// A reshape between kernels: collapsed to one dimension, then expanded
/// to the result's shape (a rank-0 side takes an empty reassociation);
/// with dynamic sizes, collapsed to one dimension per dynamic size and
/// expanded from there (groupByDynamicDims). Views that bufferization keeps
/// views.
struct ReshapeLowering : OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value value = adaptor.getX();
    auto inputType = cast<RankedTensorType>(value.getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    if (!inputType.hasStaticShape()) {
      SmallVector<ReassociationIndices> in =
          groupByDynamicDims(inputType.getShape());
      SmallVector<ReassociationIndices> out =
          groupByDynamicDims(resultType.getShape());
      SmallVector<OpFoldResult> sizes;
      int64_t k = 0;
      SmallVector<int64_t> dynamicIn = getDynamicDims(inputType.getShape());
      for (int64_t size : resultType.getShape())
        sizes.push_back(ShapedType::isDynamic(size)
                            ? OpFoldResult(tensor::DimOp::create(
                                  rewriter, loc, value, dynamicIn[k++]))
                            : OpFoldResult(rewriter.getIndexAttr(size)));
      value = tensor::CollapseShapeOp::create(rewriter, loc, value, in);
      rewriter.replaceOp(op, tensor::ExpandShapeOp::create(
                                 rewriter, loc, resultType, value, out, sizes));
      return success();
    }
    auto all = [](int64_t rank) {
      ReassociationIndices group;
      for (int64_t d = 0; d < rank; ++d)
        group.push_back(d);
      return SmallVector<ReassociationIndices>{group};
    };
    if (inputType.getRank() == 0 || resultType.getRank() == 0) {
      SmallVector<ReassociationIndices> none;
      if (inputType.getRank() == 0)
        value = tensor::ExpandShapeOp::create(rewriter, loc, resultType, value,
                                              none);
      else
        value = tensor::CollapseShapeOp::create(rewriter, loc, resultType,
                                                value, none);
      rewriter.replaceOp(op, value);
      return success();
    }
    if (inputType.getRank() > 1)
      value = tensor::CollapseShapeOp::create(rewriter, loc, value,
                                              all(inputType.getRank()));
    if (resultType.getRank() > 1)
      value = tensor::ExpandShapeOp::create(rewriter, loc, resultType, value,
                                            all(resultType.getRank()));
    rewriter.replaceOp(op, value);
    return success();
  }
};

struct MatmulLowering : OpConversionPattern<MatmulOp> {
  using OpConversionPattern::OpConversionPattern;

  /// The size of dynamic batch dimension `j` of `batch`, read from the
  /// operand that has it dynamic (trailing-aligned).
  static Value getBatchSize(OpBuilder &b, Location loc, int64_t j,
                            int64_t batch, ArrayRef<Value> operands) {
    for (Value operand : operands) {
      auto type = cast<RankedTensorType>(operand.getType());
      int64_t i = j - (batch - (type.getRank() - 2));
      if (i >= 0 && type.isDynamicDim(i))
        return tensor::DimOp::create(b, loc, operand, i);
    }
    llvm_unreachable("a dynamic batch dimension has a dynamic operand");
  }

  LogicalResult
  matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = op.getContext();
    Value a = adaptor.getA(), b = adaptor.getB();
    auto aType = cast<RankedTensorType>(a.getType());
    auto bType = cast<RankedTensorType>(b.getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    int64_t batch = resultType.getRank() - 2;
    // Iteration space: batch..., m, n, k.
    AffineExpr m = getAffineDimExpr(batch, context),
               n = getAffineDimExpr(batch + 1, context),
               k = getAffineDimExpr(batch + 2, context);
    auto operandMap = [&](RankedTensorType type, AffineExpr row,
                          AffineExpr col) {
      SmallVector<AffineExpr> exprs;
      for (std::optional<int64_t> source :
           getBroadcastSources(type.getShape().drop_back(2),
                               resultType.getShape().drop_back(2)))
        exprs.push_back(source ? getAffineDimExpr(*source, context)
                               : getAffineConstantExpr(0, context));
      exprs.push_back(row);
      exprs.push_back(col);
      return AffineMap::get(batch + 3, 0, exprs, context);
    };
    SmallVector<AffineExpr> outExprs;
    for (int64_t j = 0; j < batch; ++j)
      outExprs.push_back(getAffineDimExpr(j, context));
    outExprs.push_back(m);
    outExprs.push_back(n);
    SmallVector<AffineMap> maps = {
        operandMap(aType, m, k), operandMap(bType, k, n),
        AffineMap::get(batch + 3, 0, outExprs, context)};
    SmallVector<utils::IteratorType> iterators(batch + 2,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);

    // Dynamic sizes: batch from either operand, M from a, N from b.
    SmallVector<Value> sizes;
    for (int64_t j = 0; j < resultType.getRank(); ++j) {
      if (!resultType.isDynamicDim(j))
        continue;
      if (j == batch)
        sizes.push_back(
            tensor::DimOp::create(rewriter, loc, a, aType.getRank() - 2));
      else if (j == batch + 1)
        sizes.push_back(
            tensor::DimOp::create(rewriter, loc, b, bType.getRank() - 1));
      else
        sizes.push_back(getBatchSize(rewriter, loc, j, batch, {a, b}));
    }
    Type f32 = rewriter.getF32Type();
    Value empty = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                          f32, sizes);
    Value acc = linalg::FillOp::create(rewriter, loc,
                                       f32Constant(rewriter, loc, 0.0), empty)
                    .getResult(0);
    Value product = linalg::GenericOp::create(
                        rewriter, loc, acc.getType(), ValueRange{a, b}, acc,
                        maps, iterators,
                        [&](OpBuilder &bb, Location l, ValueRange args) {
                          Value p = arith::MulFOp::create(
                              bb, l, extendToF32(bb, l, args[0]),
                              extendToF32(bb, l, args[1]));
                          Value sum = arith::AddFOp::create(bb, l, args[2], p);
                          linalg::YieldOp::create(bb, l, sum);
                        })
                        .getResult(0);
    if (resultType.getElementType() != f32) {
      Value out = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                          resultType.getElementType(), sizes);
      AffineMap id = rewriter.getMultiDimIdentityMap(resultType.getRank());
      product = linalg::GenericOp::create(
                    rewriter, loc, resultType, product, out,
                    SmallVector<AffineMap>{id, id},
                    SmallVector<utils::IteratorType>(
                        resultType.getRank(), utils::IteratorType::parallel),
                    [&](OpBuilder &bb, Location l, ValueRange args) {
                      linalg::YieldOp::create(
                          bb, l,
                          roundTo(bb, l, args[0], resultType.getElementType()));
                    })
                    .getResult(0);
    }
    rewriter.replaceOp(op, product);
    return success();
  }
};

/// A generic with no inputs: each element its index along the dimension
/// (a dynamic size read off the source).
struct IotaLowering : OpConversionPattern<IotaOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(IotaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    SmallVector<Value> sizes;
    if (type.isDynamicDim(op.getDimension()))
      sizes.push_back(tensor::DimOp::create(rewriter, op.getLoc(),
                                            adaptor.getSource(),
                                            *op.getSourceDimension()));
    rewriter.replaceOp(
        op, buildIndexedGeneric(
                rewriter, op.getLoc(), type, sizes,
                [&](OpBuilder &b, Location l, ValueRange index) {
                  Value position = arith::UIToFPOp::create(
                      b, l, b.getF32Type(),
                      arith::IndexCastUIOp::create(b, l, b.getI64Type(),
                                                   index[op.getDimension()]));
                  return roundTo(b, l, position, type.getElementType());
                }));
    return success();
  }
};

struct ConstantLowering : OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, cast<TypedAttr>(op.getValue()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

void fusion::populateFusionToLinalgPatterns(RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<ElementwiseLowering<AddOp>, ElementwiseLowering<SubOp>,
               ElementwiseLowering<MulOp>, ElementwiseLowering<DivOp>,
               ElementwiseLowering<MaxOp>, ElementwiseLowering<MinOp>,
               ElementwiseLowering<PowOp>, ElementwiseLowering<NegOp>,
               ElementwiseLowering<AbsOp>, ElementwiseLowering<ExpOp>,
               ElementwiseLowering<LogOp>, ElementwiseLowering<TanhOp>,
               ElementwiseLowering<ErfOp>, ElementwiseLowering<SqrtOp>,
               ElementwiseLowering<RsqrtOp>, ElementwiseLowering<ReciprocalOp>,
               ElementwiseLowering<SquareOp>, ElementwiseLowering<ReluOp>,
               ElementwiseLowering<SigmoidOp>, ElementwiseLowering<SiluOp>,
               ElementwiseLowering<GeluOp>, ElementwiseLowering<CmpOp>,
               ElementwiseLowering<SelectOp>, ElementwiseLowering<ConvertOp>,
               IotaLowering, ReduceLowering<ReduceSumOp>,
               ReduceLowering<ReduceMaxOp>, ReduceLowering<ReduceMinOp>,
               ReduceLowering<ReduceMeanOp>, SliceLowering, ConcatLowering,
               TransposeLowering, ReshapeLowering, MatmulLowering,
               ConstantLowering>(context);
}

//===----------------------------------------------------------------------===//
// Destination passing
//===----------------------------------------------------------------------===//

/// Whether `function` is an outlined kernel.
static bool isKernelFunction(func::FuncOp function) {
  return function && function->hasAttr("fusion.kernel_id");
}

/// Makes `value` land in `out`: the op computing it writes into `out`
/// directly when its destination is a fresh `tensor.empty` (or a fill of
/// one), otherwise a `linalg.copy` does. Returns the value that holds the
/// result in `out`.
static Value writeInto(OpBuilder &builder, Value value, Value out) {
  if (auto result = dyn_cast<OpResult>(value)) {
    Operation *op = result.getOwner();
    OpOperand *init = nullptr;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      // Writing straight into the output only when nothing reads it back:
      // not the op itself (an accumulator) and no later op in the kernel.
      OpOperand *tied = linalgOp.getDpsInitOperand(result.getResultNumber());
      if (value.hasOneUse() && !linalgOp.payloadUsesValueFromOperand(tied))
        init = tied;
    } else if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      if (isKernelFunction(callee))
        init =
            &call->getOpOperand(call->getNumOperands() - call->getNumResults() +
                                result.getResultNumber());
    }
    if (init && init->get().getType() == out.getType()) {
      Value destination = init->get();
      OpOperand *emptyUse = init;
      if (auto fill = destination.getDefiningOp<linalg::FillOp>();
          fill && fill->hasOneUse()) {
        emptyUse = &fill.getDpsInitsMutable()[0];
        destination = emptyUse->get();
      }
      if (auto empty = destination.getDefiningOp<tensor::EmptyOp>();
          empty && empty->hasOneUse()) {
        emptyUse->set(out);
        empty.erase();
        return value;
      }
    }
  }
  return linalg::CopyOp::create(builder, value.getLoc(), value, out)
      .getResult(0);
}

/// Appends one output argument per result to `function` (unless it has
/// them already, from `firstOut`) and makes every returned value land in
/// its output argument.
static void makeDestinationPassing(func::FuncOp function,
                                   std::optional<unsigned> firstOut) {
  Block &body = function.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  if (!firstOut) {
    firstOut = function.getNumArguments();
    SmallVector<Type> argTypes(function.getArgumentTypes());
    for (Type type : function.getResultTypes()) {
      argTypes.push_back(type);
      body.addArgument(type, function.getLoc());
    }
    function.setType(FunctionType::get(function.getContext(), argTypes,
                                       function.getResultTypes()));
  }
  OpBuilder builder(ret);
  for (OpOperand &operand : ret->getOpOperands())
    operand.set(
        writeInto(builder, operand.get(),
                  body.getArgument(*firstOut + operand.getOperandNumber())));
}

namespace {
struct FusionToLinalgPass
    : fusion::impl::FusionToLinalgBase<FusionToLinalgPass> {
  void runOnOperation() override;

  /// Replaces every kernel by a call to a private function holding its body,
  /// with one output argument per result (destination-passing style).
  LogicalResult outlineKernels();

  LogicalResult passDestinationsAtCalls(func::FuncOp function);
};
} // namespace

LogicalResult FusionToLinalgPass::outlineKernels() {
  ModuleOp module = getOperation();
  SymbolTable symbols(module);
  SmallVector<KernelOp> kernels;
  module.walk([&](KernelOp kernel) { kernels.push_back(kernel); });
  for (auto [id, kernel] : llvm::enumerate(kernels)) {
    auto parent = kernel->getParentOfType<func::FuncOp>();
    if (!parent)
      return kernel.emitOpError("must be inside a func.func to be lowered");
    std::string name = kernel.getName().value_or("").str();
    if (name.empty())
      name = (parent.getName() + "_k" + Twine(id)).str();

    // The caller allocates each result; dynamic sizes come from the inputs.
    OpBuilder builder(kernel);
    SmallVector<Value> outputs;
    for (auto [result, yielded] :
         llvm::zip(kernel.getResults(), kernel.getYield().getValues())) {
      auto type = cast<RankedTensorType>(result.getType());
      SmallVector<Value> sizes;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        if (!type.isDynamicDim(d))
          continue;
        std::optional<std::pair<Value, int64_t>> source =
            traceDynamicDim(yielded, d);
        if (!source)
          return kernel.emitOpError("cannot tell the size of dynamic "
                                    "dimension ")
                 << d << " of result " << result.getResultNumber()
                 << " from the kernel's inputs";
        sizes.push_back(tensor::DimOp::create(builder, kernel.getLoc(),
                                              source->first, source->second));
      }
      outputs.push_back(tensor::EmptyOp::create(builder, kernel.getLoc(),
                                                type.getShape(),
                                                type.getElementType(), sizes));
    }

    SmallVector<Type> argTypes(kernel.getInputs().getTypes());
    llvm::append_range(argTypes, kernel.getResultTypes());
    OpBuilder moduleBuilder(parent);
    auto function = func::FuncOp::create(
        moduleBuilder, kernel.getLoc(), name,
        moduleBuilder.getFunctionType(argTypes, kernel.getResultTypes()));
    function.setPrivate();
    function->setAttr(
        "fusion.kernel_kind",
        moduleBuilder.getStringAttr(stringifyKernelKind(kernel.getKind())));
    function->setAttr("fusion.kernel_id", moduleBuilder.getI64IntegerAttr(id));
    function.getBody().takeBody(kernel.getBody());
    Block &body = function.getBody().front();
    for (Type type : kernel.getResultTypes())
      body.addArgument(type, kernel.getLoc());
    YieldOp yield = cast<YieldOp>(body.getTerminator());
    OpBuilder bodyBuilder(yield);
    func::ReturnOp::create(bodyBuilder, yield.getLoc(), yield.getValues());
    yield.erase();
    symbols.insert(function);

    SmallVector<Value> operands(kernel.getInputs());
    llvm::append_range(operands, outputs);
    auto call =
        func::CallOp::create(builder, kernel.getLoc(), function, operands);
    kernel->replaceAllUsesWith(call.getResults());
    kernel.erase();
  }
  return success();
}

void FusionToLinalgPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *context = &getContext();
  eraseFusionOptions(module);

  // Composite ops become primitive ops first.
  {
    RewritePatternSet patterns(context);
    populateDecomposePatterns(patterns);
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return signalPassFailure();
  }
  if (failed(outlineKernels()))
    return signalPassFailure();

  ConversionTarget target(*context);
  target.addLegalDialect<arith::ArithDialect, func::FuncDialect,
                         linalg::LinalgDialect, math::MathDialect,
                         scf::SCFDialect, tensor::TensorDialect>();
  target.addIllegalDialect<FusionDialect>();
  RewritePatternSet patterns(context);
  populateFusionToLinalgPatterns(patterns);
  if (failed(applyPartialConversion(module, target, std::move(patterns))))
    return signalPassFailure();

  // Results land in output arguments: kernels already have them, public
  // functions get them (their C interface is destination-passing).
  for (auto function : module.getOps<func::FuncOp>()) {
    if (function.isExternal())
      continue;
    if (isKernelFunction(function)) {
      makeDestinationPassing(function, function.getNumArguments() -
                                           function.getNumResults());
    } else if (function.isPublic()) {
      if (failed(passDestinationsAtCalls(function)))
        return signalPassFailure();
      makeDestinationPassing(function, std::nullopt);
      function->setAttr("llvm.emit_c_interface", UnitAttr::get(context));
    }
  }
}

/// Calls of `function` from the module (a `main` run by mlir-runner, say)
/// pass a fresh tensor per result as the output arguments it is about to
/// take; dynamic result sizes are not known at a call.
LogicalResult
FusionToLinalgPass::passDestinationsAtCalls(func::FuncOp function) {
  std::optional<SymbolTable::UseRange> uses =
      SymbolTable::getSymbolUses(function, getOperation());
  if (!uses)
    return success();
  for (SymbolTable::SymbolUse use : *uses) {
    auto call = dyn_cast<func::CallOp>(use.getUser());
    if (!call)
      return use.getUser()->emitOpError(
          "uses a public function that becomes destination-passing");
    OpBuilder builder(call);
    SmallVector<Value> operands(call.getOperands());
    for (Type type : call.getResultTypes()) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor || !tensor.hasStaticShape())
        return call.emitOpError("calls a public fusion function with a "
                                "result of dynamic shape; only the C "
                                "interface can size it");
      operands.push_back(tensor::EmptyOp::create(builder, call.getLoc(),
                                                 tensor.getShape(),
                                                 tensor.getElementType()));
    }
    call->setOperands(operands);
  }
  return success();
}
