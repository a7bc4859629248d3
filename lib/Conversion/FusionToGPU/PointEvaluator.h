//===- PointEvaluator.h - A kernel body's values at one point ---*- C++ -*-===//
//
// The per-element evaluator every GPU strategy uses: the value of a kernel
// body value at a multi-index, as f32 scalar or vector math (i1 for masks),
// rounded to each op's element type as the CPU path does. What it computes
// is cached per scope: values built in a loop or branch body are forgotten
// when the body's CacheScope ends, so nothing is reused where it does not
// dominate.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_LIB_CONVERSION_FUSIONTOGPU_POINTEVALUATOR_H
#define FUSION_LIB_CONVERSION_FUSIONTOGPU_POINTEVALUATOR_H

#include "fusion/Dialect/Fusion/IR/FusionOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

#include <map>
#include <optional>
#include <tuple>
#include <vector>

namespace mlir::fusion::codegen {

class PointEvaluator {
  using Cache = std::map<std::tuple<void *, std::vector<void *>, bool>, Value>;

public:
  PointEvaluator(OpBuilder &b, Location loc, KernelOp kernel,
                 ArrayRef<Value> buffers, int64_t width, bool flat = false)
      : b(b), loc(loc), kernel(kernel), buffers(buffers), width(width),
        flat(flat) {}

  /// Values already computed for every point that follows (a row kernel's
  /// reduction results).
  DenseMap<Value, Value> known;

  /// Rows read in shifted vectors (hasShiftedRowVectors): their vectors
  /// start `lag` columns into the row, on a vector boundary of inputs of
  /// `shape`, which are read in aligned vectors; an input broadcast along
  /// the rows is read from the two aligned vectors around each.
  struct ShiftedRows {
    SmallVector<int64_t> shape;
    Value lag;
  };
  std::optional<ShiftedRows> shiftedRows;

  /// Rows staged in shared memory (a row plan's `row = staged`): the block's
  /// part of the current row of each staged input, by argument number (a
  /// 1-D shared buffer), and the column its first element is. Loads of
  /// those inputs read the part there.
  struct StagedRows {
    DenseMap<unsigned, Value> parts;
    Value firstColumn;
  };
  std::optional<StagedRows> stagedRows;

  /// Rounds vectors of two lanes to bf16 through packed conversions
  /// (cvt.rn.bf16x2.f32, a zero beside each lane) whose bits are the
  /// rounded f32: LLVM splits a vector round trip whose lanes are read
  /// apart into scalar conversions, each a quarter-rate F2F on sm_90. Set
  /// by the strategies whose evaluation that bounds (attention_tiles'
  /// softmax).
  bool packedRounding = false;

  /// Inputs (by argument number) the launch reads once
  /// (getInputsReadOnce): their 16-byte vectors are loaded with an L2
  /// evict-first policy (loadEvictFirst).
  llvm::SmallDenseSet<unsigned> evictFirst;

  /// Inputs read in lanes are read element by element (rows of any length,
  /// so vectors could be misaligned), lanes past a row's end at its last
  /// element.
  bool gatherLoads = false;

  /// Element (`row`, `col`) of matmul operand `operand` for the output
  /// element at `index` (batch dimensions broadcast as the op does).
  FailureOr<Value> evalMatmulOperand(MatmulOp op, Value operand,
                                     ArrayRef<Value> index, Value row,
                                     Value col);

  /// The size of dimension `dim` of body value `value`: static, or read
  /// from the input buffer it comes from.
  FailureOr<Value> sizeOf(Value value, int64_t dim);

  /// The value of `value` at `index`; a vector of `width` lanes along the
  /// last dimension when `lanes`, a scalar otherwise.
  FailureOr<Value> eval(Value value, ArrayRef<Value> index, bool lanes);

  /// Every kernel output at `index` (vectors of `width` lanes when
  /// `lanes`), stored into its buffer of `outputs`.
  LogicalResult storeOutputs(ArrayRef<Value> outputs, ArrayRef<Value> index,
                             bool lanes);

  /// What storeOutputs stores, evaluated and not yet stored: a strategy
  /// stores several points' later (storeValues), so that no store comes
  /// between their loads (which may alias it for all LLVM and ptxas know).
  FailureOr<SmallVector<Value>> evalOutputs(ArrayRef<Value> index, bool lanes);

  /// `values` (evalOutputs') stored into their buffers of `outputs` at
  /// `index`.
  void storeValues(ArrayRef<Value> values, ArrayRef<Value> outputs,
                   ArrayRef<Value> index);

  /// While alive, what the evaluator computes is forgotten at its end: open
  /// one for every loop or branch body the builder enters.
  class CacheScope {
  public:
    explicit CacheScope(PointEvaluator &evaluator)
        : evaluator(evaluator), saved(evaluator.cache) {}
    ~CacheScope() { evaluator.cache = std::move(saved); }

  private:
    PointEvaluator &evaluator;
    Cache saved;
  };

  /// Kernel input `arg` at `index` as f32: a vector of `width` lanes along
  /// the last dimension when `lanes`, a scalar otherwise.
  Value load(BlockArgument arg, ArrayRef<Value> index, bool lanes);

  /// f32 `value` rounded to `element` and back (packedRounding's form for
  /// two lanes and bf16).
  Value roundThrough(Value value, Type element);

private:
  /// The vector at `index` of an input broadcast along shifted rows.
  Value loadAcrossRows(OpBuilder &b, Value buffer, ArrayRef<Value> index);
  FailureOr<Value> evalOp(Operation *op, ArrayRef<Value> index, bool lanes);
  FailureOr<Value> evalLoopReduction(Operation *op, ArrayRef<Value> index);
  /// The operand at the index of the same row-major position.
  FailureOr<Value> evalReshape(ReshapeOp reshape, ArrayRef<Value> index,
                               bool lanes);
  FailureOr<Value> evalMatmul(MatmulOp op, ArrayRef<Value> index);
  /// Evaluates lane by lane and assembles the vector.
  FailureOr<Value> gather(Value value, ArrayRef<Value> index);
  Value splatIfNeeded(Value v, bool lanes);

  OpBuilder &b;
  Location loc;
  KernelOp kernel;
  ArrayRef<Value> buffers;
  int64_t width;
  /// Points are flat offsets into values of the output's shape (buffers of
  /// that shape are collapsed to 1-D); other values hold one element.
  bool flat;
  Cache cache;
};

} // namespace mlir::fusion::codegen

#endif // FUSION_LIB_CONVERSION_FUSIONTOGPU_POINTEVALUATOR_H
