//===- PointEvaluator.cpp - A kernel body's values at one point -----------===//

#include "PointEvaluator.h"

#include "Launch.h"

#include "fusion/Conversion/ScalarOps.h"
#include "fusion/Dialect/Fusion/Analysis/DynamicDims.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <functional>

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::codegen;

Value PointEvaluator::splatIfNeeded(Value v, bool lanes) {
  if (!lanes || isa<VectorType>(v.getType()))
    return v;
  return vector::BroadcastOp::create(b, loc,
                                     VectorType::get({width}, v.getType()), v);
}

Value PointEvaluator::load(BlockArgument arg, ArrayRef<Value> index,
                           bool lanes) {
  Value buffer = buffers[arg.getArgNumber()];
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  if (stagedRows) {
    if (Value part = stagedRows->parts.lookup(arg.getArgNumber())) {
      Value at =
          arith::SubIOp::create(b, loc, index.back(), stagedRows->firstColumn);
      if (!lanes)
        return extendToF32(b, loc, memref::LoadOp::create(b, loc, part, at));
      return extendToF32(
          b, loc,
          vector::LoadOp::create(b, loc, VectorType::get({width}, element),
                                 part, at, /*nontemporal=*/false,
                                 vectorAlignment(element, width)));
    }
  }
  if (!lanes)
    return extendToF32(b, loc, memref::LoadOp::create(b, loc, buffer, index));
  if (gatherLoads) {
    // Lanes past the row's end (whose values the caller masks) read its
    // last element: in bounds at the end of the buffer.
    auto memref = cast<MemRefType>(buffer.getType());
    Value last = arith::SubIOp::create(
        b, loc, memref::DimOp::create(b, loc, buffer, memref.getRank() - 1),
        indexConst(b, loc, 1));
    SmallVector<Value> elements;
    SmallVector<Value> at(index);
    for (int64_t lane = 0; lane < width; ++lane) {
      at.back() = lane == 0 ? index.back()
                            : arith::MinUIOp::create(
                                  b, loc,
                                  arith::AddIOp::create(
                                      b, loc, index.back(),
                                      indexConst(b, loc, lane)),
                                  last);
      elements.push_back(
          extendToF32(b, loc, memref::LoadOp::create(b, loc, buffer, at)));
    }
    return vector::FromElementsOp::create(
        b, loc, VectorType::get({width}, b.getF32Type()), elements);
  }
  if (shiftedRows && cast<MemRefType>(buffer.getType()).getShape() !=
                         ArrayRef<int64_t>(shiftedRows->shape))
    return extendToF32(b, loc, loadAcrossRows(b, buffer, index));
  auto type = VectorType::get({width}, element);
  if (evictFirst.contains(arg.getArgNumber()) &&
      width * element.getIntOrFloatBitWidth() == 128)
    return extendToF32(b, loc, loadEvictFirst(b, loc, type, buffer, index));
  return extendToF32(b, loc,
                     vector::LoadOp::create(b, loc, type, buffer, index,
                                            /*nontemporal=*/false,
                                            vectorAlignment(element, width)));
}

Value PointEvaluator::loadAcrossRows(OpBuilder &b, Value buffer,
                                     ArrayRef<Value> index) {
  auto memref = cast<MemRefType>(buffer.getType());
  auto type = VectorType::get({width}, memref.getElementType());
  // Only where the column is the flat offset ([H], [1, H], ...) do the
  // vectors lie `lag` past a boundary; elsewhere an unaligned load (which
  // the backend splits into elements).
  if (!llvm::all_of(memref.getShape().drop_back(),
                    [](int64_t d) { return d == 1; }))
    return vector::LoadOp::create(b, loc, type, buffer, index,
                                  /*nontemporal=*/false,
                                  vectorAlignment(memref.getElementType(), 1));
  // The two aligned vectors around it, shifted by the row's lag with a
  // barrel of selects (no branch; the lag is the same for every vector of
  // the row). The strategy keeps the second in bounds (see emitRows).
  SmallVector<Value> at(index);
  at.back() = arith::SubIOp::create(b, loc, index.back(), shiftedRows->lag);
  auto alignedLoad = [&](ArrayRef<Value> at) -> Value {
    return vector::LoadOp::create(
        b, loc, type, buffer, at, /*nontemporal=*/false,
        vectorAlignment(memref.getElementType(), width));
  };
  Value lo = alignedLoad(at);
  at.back() =
      arith::AddIOp::create(b, loc, at.back(), indexConst(b, loc, width));
  Value hi = alignedLoad(at);
  // Lanes [0, 2 * width - 1) of the pair, then each power of two of the
  // lag drops that many lanes from the front where its bit is set.
  auto lanesFrom = [&](Value a, Value c, int64_t first, int64_t count) {
    SmallVector<int64_t> lanes;
    for (int64_t lane = 0; lane < count; ++lane)
      lanes.push_back(first + lane);
    return vector::ShuffleOp::create(b, loc, a, c, lanes).getResult();
  };
  Value window = lanesFrom(lo, hi, 0, 2 * width - 1);
  int64_t length = 2 * width - 1;
  Value lag =
      arith::IndexCastOp::create(b, loc, b.getI32Type(), shiftedRows->lag);
  for (int64_t bit = llvm::PowerOf2Ceil(width) / 2; bit >= 1; bit /= 2) {
    int64_t next = length - bit;
    Value set = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(b, loc, lag,
                              arith::ConstantIntOp::create(b, loc, bit, 32)),
        arith::ConstantIntOp::create(b, loc, 0, 32));
    window = arith::SelectOp::create(b, loc, set,
                                     lanesFrom(window, window, bit, next),
                                     lanesFrom(window, window, 0, next));
    length = next;
  }
  return window;
}

FailureOr<Value> PointEvaluator::eval(Value value, ArrayRef<Value> index,
                                      bool lanes) {
  if (auto it = known.find(value); it != known.end())
    return splatIfNeeded(it->second, lanes);
  std::vector<void *> key;
  for (Value i : index)
    key.push_back(i.getAsOpaquePointer());
  auto cacheKey = std::make_tuple(value.getAsOpaquePointer(), key, lanes);
  if (auto it = cache.find(cacheKey); it != cache.end())
    return it->second;

  FailureOr<Value> result = failure();
  if (auto arg = dyn_cast<BlockArgument>(value))
    result = load(arg, index, lanes);
  else
    result = evalOp(value.getDefiningOp(), index, lanes);
  if (failed(result))
    return failure();
  // Round at every op to its element type, as the CPU path does.
  Type element = getElementTypeOrSelf(value.getType());
  if (isa<FloatType>(element) && !element.isF32())
    result = roundThrough(*result, element);
  cache[cacheKey] = *result;
  return result;
}

Value PointEvaluator::roundThrough(Value value, Type element) {
  auto vector = dyn_cast<VectorType>(value.getType());
  if (!packedRounding || !element.isBF16() || !vector ||
      vector.getNumElements() != 2)
    return extendToF32(b, loc, roundTo(b, loc, value, element));
  // Each lane rounded by a packed conversion of its own with a zero low
  // half (cvt.rn.bf16x2.f32 d, x, 0): d's bits are the rounded f32 (a bf16
  // is the upper half of the f32 it widens to), with no bit moves to
  // unpack a pair (H200, 2026-12-03: fewer instructions a score, faster).
  Type i32 = b.getI32Type();
  Value zero = f32Constant(b, loc, 0.0, b.getF32Type());
  SmallVector<Value, 2> lanes;
  for (int64_t lane = 0; lane < 2; ++lane) {
    Value packed = NVVM::ConvertF32x2ToBF16x2Op::create(
        b, loc, VectorType::get({2}, element),
        vector::ExtractOp::create(b, loc, value, lane), zero,
        /*random_bits=*/Value(), NVVM::FPRoundingMode::RN,
        NVVM::SaturationMode::NONE, /*relu=*/false);
    lanes.push_back(arith::BitcastOp::create(
        b, loc, b.getF32Type(), LLVM::BitcastOp::create(b, loc, i32, packed)));
  }
  return vector::FromElementsOp::create(b, loc, vector, lanes);
}

FailureOr<Value> PointEvaluator::gather(Value value, ArrayRef<Value> index) {
  SmallVector<Value> elements;
  SmallVector<Value> laneIndex(index);
  for (int64_t lane = 0; lane < width; ++lane) {
    laneIndex.back() =
        arith::AddIOp::create(b, loc, index.back(), indexConst(b, loc, lane));
    FailureOr<Value> v = eval(value, laneIndex, /*lanes=*/false);
    if (failed(v))
      return failure();
    elements.push_back(*v);
  }
  return vector::FromElementsOp::create(
             b, loc, VectorType::get({width}, elements[0].getType()), elements)
      .getResult();
}

FailureOr<Value> PointEvaluator::evalOp(Operation *op, ArrayRef<Value> index,
                                        bool lanes) {
  Value result = op->getResult(0);
  ArrayRef<int64_t> shape = shapeOf(result);

  if (auto constant = dyn_cast<ConstantOp>(op)) {
    auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
    if (!splat)
      return op->emitOpError("only splat constants can be inside a GPU "
                             "kernel");
    if (splat.getElementType().isInteger(1))
      return splatIfNeeded(
          arith::ConstantIntOp::create(b, loc, splat.getSplatValue<bool>(), 1)
              .getResult(),
          lanes);
    return splatIfNeeded(
        f32Constant(b, loc, splat.getSplatValue<APFloat>().convertToDouble(),
                    b.getF32Type()),
        lanes);
  }

  if (auto iota = dyn_cast<IotaOp>(op)) {
    // Its own index along the dimension (lanes along the last one count
    // up from it).
    if (flat)
      return op->emitOpError("cannot be evaluated at a flat offset");
    int64_t dim = iota.getDimension();
    Value position =
        arith::IndexCastUIOp::create(b, loc, b.getI32Type(), index[dim]);
    if (!lanes || dim != static_cast<int64_t>(shape.size()) - 1)
      return splatIfNeeded(
          arith::UIToFPOp::create(b, loc, b.getF32Type(), position), lanes);
    auto laneType = VectorType::get({width}, b.getI32Type());
    SmallVector<int32_t> lanesUp =
        llvm::to_vector(llvm::seq<int32_t>(0, static_cast<int32_t>(width)));
    Value steps = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(laneType, ArrayRef<int32_t>(lanesUp)));
    Value positions = arith::AddIOp::create(
        b, loc, vector::BroadcastOp::create(b, loc, laneType, position), steps);
    return arith::UIToFPOp::create(
               b, loc, VectorType::get({width}, b.getF32Type()), positions)
        .getResult();
  }

  if (isElementwiseMath(op)) {
    SmallVector<Value> args;
    for (Value operand : op->getOperands()) {
      ArrayRef<int64_t> s = shapeOf(operand);
      if (flat) {
        bool whole = s == shape;
        SmallVector<Value> operandIndex(whole ? index.size() : s.size(),
                                        indexConst(b, loc, 0));
        if (whole)
          operandIndex.assign(index.begin(), index.end());
        FailureOr<Value> v = eval(operand, operandIndex, lanes && whole);
        if (failed(v))
          return failure();
        args.push_back(splatIfNeeded(*v, lanes));
        continue;
      }
      SmallVector<Value> operandIndex;
      for (std::optional<int64_t> source : getBroadcastSources(s, shape))
        operandIndex.push_back(source ? index[*source] : indexConst(b, loc, 0));
      // Broadcast along the last dimension: one value for all lanes.
      bool operandLanes =
          lanes && !s.empty() && !(s.back() == 1 && shape.back() != 1);
      FailureOr<Value> v = eval(operand, operandIndex, operandLanes);
      if (failed(v))
        return failure();
      args.push_back(splatIfNeeded(*v, lanes));
    }
    return buildElementwise(b, loc, op, args, getMathPrecision(result));
  }

  if (auto slice = dyn_cast<SliceOp>(op)) {
    // Vector loads stay aligned only if the slice starts on a vector.
    if (lanes && (slice.getStrides().back() != 1 ||
                  slice.getOffsets().back() % width != 0))
      return gather(result, index);
    SmallVector<Value> operandIndex;
    for (auto [i, offset, stride] :
         llvm::zip(index, slice.getOffsets(), slice.getStrides())) {
      Value scaled =
          stride == 1
              ? i
              : arith::MulIOp::create(b, loc, i, indexConst(b, loc, stride));
      operandIndex.push_back(
          offset == 0 ? scaled
                      : arith::AddIOp::create(b, loc, scaled,
                                              indexConst(b, loc, offset)));
    }
    return eval(slice.getX(), operandIndex, lanes);
  }

  if (auto concat = dyn_cast<ConcatOp>(op)) {
    int64_t axis = concat.getAxis();
    SmallVector<int64_t> offsets = concat.getOffsets();
    // Lanes along the axis lie in one operand only where every operand
    // starts on a vector.
    if (lanes && axis == static_cast<int64_t>(shape.size()) - 1 &&
        llvm::any_of(offsets, [&](int64_t o) { return o % width != 0; }))
      return gather(result, index);
    // The operands in turn, each in a branch of its own (only the operand
    // a point lies in is read): `if (i < o1) x0[i] else if (i < o2)
    // x1[i - o1] else ...`.
    Type element = b.getF32Type();
    if (getElementTypeOrSelf(result.getType()).isInteger(1))
      element = b.getI1Type();
    Type type = lanes ? VectorType::get({width}, element) : element;
    std::function<FailureOr<Value>(size_t)> evalFrom =
        [&](size_t first) -> FailureOr<Value> {
      auto evalOperand = [&]() -> FailureOr<Value> {
        SmallVector<Value> operandIndex(index);
        if (offsets[first] != 0)
          operandIndex[axis] = arith::SubIOp::create(
              b, loc, index[axis], indexConst(b, loc, offsets[first]));
        FailureOr<Value> v =
            eval(concat.getInputs()[first], operandIndex, lanes);
        if (failed(v))
          return failure();
        return splatIfNeeded(*v, lanes);
      };
      if (first + 1 == offsets.size())
        return evalOperand();
      Value inFirst =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index[axis],
                                indexConst(b, loc, offsets[first + 1]));
      auto branch = scf::IfOp::create(b, loc, TypeRange{type}, inFirst,
                                      /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(b);
      for (auto [region, part] :
           {std::make_pair(&branch.getThenRegion(), first),
            std::make_pair(&branch.getElseRegion(), first + 1)}) {
        b.setInsertionPointToStart(&region->front());
        CacheScope scope(*this);
        FailureOr<Value> v = part == first ? evalOperand() : evalFrom(part);
        if (failed(v))
          return failure();
        scf::YieldOp::create(b, loc, *v);
      }
      return branch.getResult(0);
    };
    return evalFrom(0);
  }

  if (auto transpose = dyn_cast<TransposeOp>(op)) {
    ArrayRef<int64_t> perm = transpose.getPermutation();
    if (lanes && perm.back() != static_cast<int64_t>(perm.size()) - 1)
      return gather(result, index);
    SmallVector<Value> operandIndex(perm.size());
    for (auto [j, p] : llvm::enumerate(perm))
      operandIndex[p] = index[j];
    return eval(transpose.getX(), operandIndex, lanes);
  }

  if (auto reshape = dyn_cast<ReshapeOp>(op))
    return evalReshape(reshape, index, lanes);

  if (isTrivialReduction(op)) {
    ArrayRef<int64_t> axes = getReduceAxes(op);
    Value input = op->getOperand(0);
    SmallVector<Value> operandIndex;
    unsigned next = 0;
    for (int64_t d = 0; d < static_cast<int64_t>(shapeOf(input).size()); ++d) {
      if (llvm::is_contained(axes, d)) {
        operandIndex.push_back(indexConst(b, loc, 0));
        if (op->hasAttr("keep_dims"))
          ++next;
      } else {
        operandIndex.push_back(index[next++]);
      }
    }
    bool operandLanes =
        lanes && !llvm::is_contained(axes, int64_t(shapeOf(input).size()) - 1);
    FailureOr<Value> v = eval(input, operandIndex, operandLanes);
    if (failed(v))
      return failure();
    return splatIfNeeded(*v, lanes);
  }

  if (isRealReduction(op)) {
    if (lanes)
      return gather(result, index);
    return evalLoopReduction(op, index);
  }

  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    if (lanes)
      return gather(result, index);
    return evalMatmul(matmul, index);
  }

  return op->emitOpError("has no GPU lowering (decompose composite ops "
                         "first)");
}

/// Whether a vector of `width` lanes along the last dimension of `to`,
/// starting on a multiple of `width`, is one aligned vector along the last
/// dimension of `from` when `from` is reshaped into `to`: the same dynamic
/// dimension last on both sides, or static last sizes `width` divides.
static bool keepsLanes(ArrayRef<int64_t> from, ArrayRef<int64_t> to,
                       int64_t width) {
  if (from.empty() || to.empty())
    return false;
  if (ShapedType::isDynamic(from.back()) || ShapedType::isDynamic(to.back()))
    return ShapedType::isDynamic(from.back()) &&
           ShapedType::isDynamic(to.back());
  return from.back() % width == 0 && to.back() % width == 0;
}

FailureOr<Value> PointEvaluator::evalReshape(ReshapeOp reshape,
                                             ArrayRef<Value> index,
                                             bool lanes) {
  if (flat)
    return reshape.emitOpError("cannot be evaluated at a flat offset");
  ArrayRef<int64_t> from = shapeOf(reshape.getX());
  ArrayRef<int64_t> to = shapeOf(reshape.getResult());
  if (lanes && !keepsLanes(from, to, width))
    return gather(reshape.getResult(), index);
  // The shapes alternate runs of static sizes and the dynamic sizes between
  // them, each run of one product on both sides (the verifier's rule): a
  // dynamic dimension keeps its index, and each run's position, row-major
  // within the run, is the same on both sides.
  SmallVector<Value> operandIndex(from.size());
  // Static run [i, iEnd) of `to` onto [j, jEnd) of `from`: equal sizes at
  // either end map one to one; the rest is linearized in `to` and split in
  // `from` by constants.
  auto mapRun = [&](size_t i, size_t iEnd, size_t j, size_t jEnd) {
    while (i < iEnd && j < jEnd && to[i] == from[j])
      operandIndex[j++] = index[i++];
    while (i < iEnd && j < jEnd && to[iEnd - 1] == from[jEnd - 1])
      operandIndex[--jEnd] = index[--iEnd];
    Value position = indexConst(b, loc, 0);
    for (size_t d = i; d < iEnd; ++d)
      position = arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, position, indexConst(b, loc, to[d])),
          index[d]);
    for (size_t d = jEnd; d-- > j;) {
      if (d == j) {
        operandIndex[d] = position;
        break;
      }
      Value size = indexConst(b, loc, from[d]);
      operandIndex[d] = arith::RemUIOp::create(b, loc, position, size);
      position = arith::DivUIOp::create(b, loc, position, size);
    }
  };
  for (size_t i = 0, j = 0;;) {
    size_t iEnd = i, jEnd = j;
    while (iEnd < to.size() && !ShapedType::isDynamic(to[iEnd]))
      ++iEnd;
    while (jEnd < from.size() && !ShapedType::isDynamic(from[jEnd]))
      ++jEnd;
    mapRun(i, iEnd, j, jEnd);
    if (iEnd == to.size() || jEnd == from.size())
      break;
    // The dynamic size after the run keeps its index.
    operandIndex[jEnd] = index[iEnd];
    i = iEnd + 1;
    j = jEnd + 1;
  }
  return eval(reshape.getX(), operandIndex, lanes);
}

FailureOr<Value> PointEvaluator::evalLoopReduction(Operation *op,
                                                   ArrayRef<Value> index) {
  Value input = op->getOperand(0);
  ArrayRef<int64_t> axes = getReduceAxes(op);
  int64_t rank = shapeOf(input).size();
  // The input index: result dims where kept, loop variables on the axes.
  SmallVector<Value> inputIndex(rank);
  unsigned next = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(axes, d)) {
      if (op->hasAttr("keep_dims"))
        ++next;
      continue;
    }
    inputIndex[d] = index[next++];
  }
  // Sizes of the reduced axes come from the input's source buffer; all
  // are read here, outside the loops (the mean's count is used after them).
  Value count = indexConst(b, loc, 1);
  SmallVector<Value> sizes;
  for (int64_t axis : axes) {
    FailureOr<Value> size = sizeOf(input, axis);
    if (failed(size))
      return op->emitOpError("cannot size the dynamic axis ") << axis;
    sizes.push_back(*size);
    count = arith::MulIOp::create(b, loc, count, *size);
  }
  Value acc = buildReductionIdentity(b, loc, op, b.getF32Type());
  std::function<FailureOr<Value>(unsigned, Value)> loop =
      [&](unsigned a, Value init) -> FailureOr<Value> {
    if (a == axes.size()) {
      // What the loop body computes stays in it.
      CacheScope scope(*this);
      FailureOr<Value> x = eval(input, inputIndex, /*lanes=*/false);
      if (failed(x))
        return failure();
      return buildReductionCombine(b, loc, op, init, *x);
    }
    int64_t axis = axes[a];
    auto forOp = scf::ForOp::create(b, loc, indexConst(b, loc, 0), sizes[a],
                                    indexConst(b, loc, 1), ValueRange{init});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forOp.getBody());
    inputIndex[axis] = forOp.getInductionVar();
    FailureOr<Value> inner = loop(a + 1, forOp.getRegionIterArgs()[0]);
    if (failed(inner))
      return failure();
    scf::YieldOp::create(b, loc, *inner);
    return forOp.getResult(0);
  };
  FailureOr<Value> total = loop(0, acc);
  if (failed(total))
    return failure();
  if (!isa<ReduceMeanOp>(op))
    return total;
  Value n = arith::UIToFPOp::create(
      b, loc, b.getF32Type(),
      arith::IndexCastOp::create(b, loc, b.getI64Type(), count));
  return arith::DivFOp::create(b, loc, *total, n).getResult();
}

FailureOr<Value> PointEvaluator::sizeOf(Value value, int64_t dim) {
  int64_t size = shapeOf(value)[dim];
  if (!ShapedType::isDynamic(size))
    return indexConst(b, loc, size);
  std::optional<std::pair<Value, int64_t>> source = traceDynamicDim(value, dim);
  if (!source)
    return failure();
  // The trace ends at a kernel input; read that input's buffer.
  for (auto [input, buffer] : llvm::zip(kernel.getInputs(), buffers))
    if (input == source->first)
      return memref::DimOp::create(b, loc, buffer, source->second).getResult();
  return failure();
}

FailureOr<Value> PointEvaluator::evalMatmulOperand(MatmulOp op, Value operand,
                                                   ArrayRef<Value> index,
                                                   Value row, Value col) {
  SmallVector<Value> operandIndex;
  for (std::optional<int64_t> source : getBroadcastSources(
           shapeOf(operand).drop_back(2), shapeOf(op.getResult()).drop_back(2)))
    operandIndex.push_back(source ? index[*source] : indexConst(b, loc, 0));
  operandIndex.push_back(row);
  operandIndex.push_back(col);
  return eval(operand, operandIndex, /*lanes=*/false);
}

FailureOr<Value> PointEvaluator::evalMatmul(MatmulOp op,
                                            ArrayRef<Value> index) {
  ArrayRef<int64_t> shape = shapeOf(op.getResult());
  int64_t batch = shape.size() - 2;
  Value m = index[batch], n = index[batch + 1];
  FailureOr<Value> size = sizeOf(op.getA(), shapeOf(op.getA()).size() - 1);
  if (failed(size))
    return op.emitOpError("cannot size the dynamic inner dimension");
  auto forOp = scf::ForOp::create(
      b, loc, indexConst(b, loc, 0), *size, indexConst(b, loc, 1),
      ValueRange{f32Constant(b, loc, 0.0, b.getF32Type())});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forOp.getBody());
    Value kk = forOp.getInductionVar();
    CacheScope scope(*this);
    FailureOr<Value> a = evalMatmulOperand(op, op.getA(), index, m, kk);
    FailureOr<Value> bv = failure();
    if (succeeded(a))
      bv = evalMatmulOperand(op, op.getB(), index, kk, n);
    if (failed(bv))
      return failure();
    Value sum = arith::AddFOp::create(b, loc, forOp.getRegionIterArgs()[0],
                                      arith::MulFOp::create(b, loc, *a, *bv));
    scf::YieldOp::create(b, loc, sum);
  }
  return forOp.getResult(0);
}

LogicalResult PointEvaluator::storeOutputs(ArrayRef<Value> outputs,
                                           ArrayRef<Value> index, bool lanes) {
  for (auto [value, buffer] :
       llvm::zip(kernel.getYield().getValues(), outputs)) {
    FailureOr<Value> v = eval(value, index, lanes);
    if (failed(v))
      return failure();
    store(b, loc, *v, buffer, index);
  }
  return success();
}

void PointEvaluator::storeValues(ArrayRef<Value> values,
                                 ArrayRef<Value> outputs,
                                 ArrayRef<Value> index) {
  for (auto [value, buffer] : llvm::zip_equal(values, outputs))
    store(b, loc, value, buffer, index);
}

FailureOr<SmallVector<Value>> PointEvaluator::evalOutputs(ArrayRef<Value> index,
                                                          bool lanes) {
  SmallVector<Value> values;
  for (Value value : kernel.getYield().getValues()) {
    FailureOr<Value> v = eval(value, index, lanes);
    if (failed(v))
      return failure();
    values.push_back(*v);
  }
  return values;
}
