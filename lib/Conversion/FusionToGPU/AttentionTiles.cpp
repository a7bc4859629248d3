//===- AttentionTiles.cpp - The attention_tiles strategy ------------------===//
//
// Attention with many query rows on sm_90 tensor cores (FlashAttention's
// online softmax): a block per batch and 64 query rows per multiplying
// warpgroup (two, or three where their registers hold D = 64's
// accumulators: the plan's threads), and one warpgroup more. The last
// loads: Q's rows once, then K's and V's rows 128 keys
// a step through TMA into two stages of 128-byte-swizzled shared memory,
// each tile refilled once the multiplying warps release it (an "empty"
// mbarrier per tile and stage, as in the warp-specialized matmul; K's
// released as soon as its scores are computed, so that the next K loads a
// step ahead), and between them, where they can be staged, each
// multiplying warpgroup's rows of the step's inputs read per score (a
// bias; else those are read from global memory, score by score). The
// others multiply 64 query rows each: S = Q K^T with
// warpgroup MMA (K read K-major), the scores' math (scale, mask, bias,
// soft-cap: the kernel body's at that point, PointEvaluator) on the
// accumulator in registers, the online softmax (running maximum and sum
// per row, the output rescaled as the maximum grows), the probabilities
// rounded to the operands' type and kept in registers (the scores'
// fragment is the layout of an MMA's A operand), then O += P V (P from
// registers, V read N-major from shared memory). A step's S is issued
// with the previous step's P V, and its softmax runs while that product
// does. The scores never reach global memory; K and V are read once per
// block of query rows. Each warpgroup writes its output rows into its rows
// of the tile's Q buffer and stores them by TMA (whole rows); the loader
// gets the buffer back once TMA has read it. Each row's log-sum-exp
// (max + log(sum)) is written where the kernel has it as a second result.
//
// Rows and keys past the sequences' ends: the tensor maps are 3-D (batch,
// row, column), so TMA fills zeros past each batch's rows, and keys past
// the end are masked to -inf before the softmax. Q, K or V may be a view of
// an input (heads sliced out of a projection `[B, S, 3 H, D]` and moved
// before the sequence): its tensor map then has the view's rank and reads
// it in place, a row of D elements at a time, where a copy kernel would
// have written it out first. Under a key limit (a
// causal mask computed from positions, AttentionKernelShape::KeyLimit) a
// block goes only through the tiles up to its last row's last key, and
// masks only in the steps that reach past a row's. The MMAs are NVVM's
// wgmma.mma_async on descriptors built here (nvgpu's warpgroup.mma steps
// B's descriptor along K as an N-major operand only, and S reads K
// K-major).
//
//===----------------------------------------------------------------------===//

#include "Hopper.h"
#include "PointEvaluator.h"
#include "Strategies.h"

#include "fusion/Conversion/ScalarOps.h"
#include "fusion/Dialect/Fusion/Analysis/KernelPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::codegen;

namespace {

/// A warpgroup's query rows.
constexpr int64_t kGroupRows = kAttentionTilesGroupRows;
/// Threads of a warpgroup.
constexpr int64_t kGroupThreads = 128;
/// Key tiles ahead of the one multiplied whose inputs read per score (a
/// bias) are asked of L2: one (H100, 2026-12-06: the bias program 9-15%
/// faster than two; what more blocks ask ahead L2 does not keep).
constexpr int64_t kPrefetchTiles = 1;
/// Stages of K and V tiles in flight.
constexpr int64_t kStages = 2;
/// Every tile is loaded in boxes of 64 x 64 elements: 128-byte rows (the
/// swizzle's width), 8 KiB.
constexpr int64_t kBox = 64;
constexpr int64_t kBoxBytes = kBox * kBox * 2;
/// The K extent of one warpgroup MMA (bf16, f16).
constexpr int64_t kMmaK = 16;
/// How a step's softmax reads the inputs read per score, if any.
enum class ScoreReads { none, fromMemory, staged };
/// Registers a thread keeps on each side (setmaxnreg) with `groups`
/// multiplying warpgroups, head size `head`, and inputs read per score as
/// `reads`: the block's pool is what it is launched with (MatmulWgmma.cpp),
/// 65536 / threads each (168 for 384 threads, 128 for 512), and D = 64's
/// accumulators fit 160 without spills. With two, the split was measured
/// (H100, 2026-12-06, attention_prefill.py; 56 / 224, 40 / 232, 24 / 240):
/// a softmax reading a bias per score from memory (its loads in flight) was
/// fastest at 240 (up to 7%), D = 64 at 232 or 240 (1024 rows 10% faster,
/// longer within 2%), D = 128 otherwise at 224 (240 1-3% slower). A
/// producer also loading staged inputs spills below 40 (D = 64) or 56.
struct RoleRegisters {
  int32_t producer, consumer;
};
constexpr RoleRegisters roleRegisters(int64_t groups, int64_t head,
                                      ScoreReads reads) {
  if (groups != 2)
    return {24, 160};
  if (reads == ScoreReads::fromMemory)
    return {24, 240};
  if (head != 64)
    return {56, 224};
  return reads == ScoreReads::staged ? RoleRegisters{40, 232}
                                     : RoleRegisters{24, 240};
}
constexpr bool fitsLaunchRegisters(int64_t threads, int64_t head,
                                   ScoreReads reads) {
  int64_t groups = threads / kGroupThreads - 1;
  RoleRegisters roles = roleRegisters(groups, head, reads);
  return kGroupThreads * roles.producer +
             groups * kGroupThreads * roles.consumer <=
         65536 / threads / 8 * 8 * threads;
}
static_assert(
    fitsLaunchRegisters(kAttentionTilesThreads, 128, ScoreReads::none) &&
    fitsLaunchRegisters(kAttentionTilesThreads, 128, ScoreReads::fromMemory) &&
    fitsLaunchRegisters(kAttentionTilesThreads, 128, ScoreReads::staged) &&
    fitsLaunchRegisters(kAttentionTilesThreads, 64, ScoreReads::staged) &&
    fitsLaunchRegisters(kAttentionTilesWideThreads, 64, ScoreReads::none));
/// A wide block's time (three multiplying warpgroups) against a narrow
/// one's (two), as wide : narrow: 1.3 (H200, D = 64, 2026-12-03: 5262
/// against 6155 us at 16384 rows, 21 waves of wide blocks against 32).
constexpr struct {
  int64_t wide, narrow;
} kAttentionTilesWideBlockTime{13, 10};
/// Q buffers a persistent block may have: the next tile's Q loads into
/// the other while a tile runs (SharedLayout::queryBuffers).
constexpr int64_t kMaxQueryBuffers = 2;
/// Barriers of the "full" group: each Q buffer's, then K and V of each
/// stage; of the "empty" group: K and V of each stage, released apart (K
/// once its scores are computed, a step before V), so that the next K loads
/// early, then each Q buffer's.
constexpr int64_t kQueriesLoaded = 0;
constexpr int64_t kKeysLoaded = kMaxQueryBuffers;
constexpr int64_t kValuesLoaded = kKeysLoaded + kStages;
constexpr int64_t kFullBarriers = kValuesLoaded + kStages;
constexpr int64_t kKeysReleased = 0;
constexpr int64_t kValuesReleased = kStages;
constexpr int64_t kQueriesReleased = 2 * kStages;
constexpr int64_t kEmptyBarriers = kQueriesReleased + kMaxQueryBuffers;
/// Buffers of the inputs read per score (staged) a block may have: the
/// steps take them in turn, so that a step's load is issued that many steps
/// ahead (SharedLayout::scoreBuffers).
constexpr int64_t kMaxScoreBuffers = 2;
/// With inputs read per score staged (below), a barrier more of each group
/// per multiplying warpgroup and buffer (buffer b's of warpgroup g at
/// b * groups + g): its rows of them loaded, and released.
constexpr int64_t kScoresLoaded = kFullBarriers;
constexpr int64_t kScoresReleased = kEmptyBarriers;
/// The shared memory a block may have (sm_90).
constexpr int64_t kSharedBytes = 227 * 1024;

/// Byte offsets of the tiles in shared memory (from a swizzle boundary),
/// for head size `head`, `groups` multiplying warpgroups, `scoreBytes`
/// a warpgroup of inputs read per score staged per step, and
/// `queryBuffers` Q tiles.
struct SharedLayout {
  int64_t head;
  int64_t groups;
  int64_t scoreBytes = 0;
  int64_t queryBuffers = 1;
  int64_t scoreBuffers = 1;

  constexpr int64_t headBoxes() const { return head / kBox; }
  /// Q's first buffer: warpgroup g's rows, box b of the head at
  /// (g * headBoxes + b); buffer i queryBytes() * i further.
  constexpr int64_t queries(int64_t group, int64_t box) const {
    return (group * headBoxes() + box) * kBoxBytes;
  }
  constexpr int64_t queryBytes() const {
    return groups * kGroupRows * head * 2;
  }
  constexpr int64_t keyBytes() const { return kAttentionTilesKeys * head * 2; }
  constexpr int64_t stageBytes() const { return 2 * keyBytes(); }
  /// A stage's K: box b of the head holds every key's columns 64 b..,
  /// the keys' 64-row boxes one after the other (one swizzled tile).
  constexpr int64_t keys(int64_t stage) const {
    return queryBuffers * queryBytes() + stage * stageBytes();
  }
  constexpr int64_t keyBox(int64_t box, int64_t keyHalf) const {
    return (box * (kAttentionTilesKeys / kBox) + keyHalf) * kBoxBytes;
  }
  /// A stage's V: for each 64 keys, the head's boxes side by side (the
  /// N-major B operand of an MMA of 64 along K).
  constexpr int64_t values(int64_t stage) const {
    return keys(stage) + keyBytes();
  }
  constexpr int64_t valueBox(int64_t keyChunk, int64_t box) const {
    return (keyChunk * headBoxes() + box) * kBoxBytes;
  }
  /// Warpgroup g's rows of a step's inputs read per score in buffer
  /// `buffer` (read at the start of the step's softmax; the step
  /// scoreBuffers later loads into it once they are).
  constexpr int64_t scores(int64_t group, int64_t buffer = 0) const {
    return keys(kStages) + (buffer * groups + group) * scoreBytes;
  }
  constexpr int64_t total() const { return scores(0, scoreBuffers); }
};
static_assert(SharedLayout{128, 2}.total() + kSwizzleAlignment <=
                  kSharedBytes &&
              SharedLayout{kAttentionTilesWideMaxHead, 3}.total() +
                      kSwizzleAlignment <=
                  kSharedBytes);

/// A warpgroup MMA's shared-memory matrix descriptor (PTX ISA, "Matrix
/// Descriptor Format") of the 128-byte-swizzled tile at shared address
/// `address` (an index), with leading and stride byte offsets `leading` and
/// `stride`.
Value matrixDescriptor(OpBuilder &b, Location loc, Value address,
                       int64_t leading, int64_t stride) {
  Type i64 = b.getI64Type();
  Value start = arith::ShRUIOp::create(
      b, loc,
      arith::AndIOp::create(b, loc,
                            arith::IndexCastUIOp::create(b, loc, i64, address),
                            arith::ConstantIntOp::create(b, loc, 0x3FFFF, 64)),
      arith::ConstantIntOp::create(b, loc, 4, 64));
  int64_t fields = ((leading >> 4) << 16) | ((stride >> 4) << 32) |
                   (int64_t(1) << 62); // swizzle mode 1: 128 bytes
  return arith::OrIOp::create(b, loc, start,
                              arith::ConstantIntOp::create(b, loc, fields, 64));
}

/// `descriptor` moved `bytes` further (a step along K inside a tile).
Value advance(OpBuilder &b, Location loc, Value descriptor, int64_t bytes) {
  if (bytes == 0)
    return descriptor;
  return arith::AddIOp::create(
      b, loc, descriptor, arith::ConstantIntOp::create(b, loc, bytes >> 4, 64));
}

/// The f32 accumulator of a 64 x `n` warpgroup MMA, as NVVM has it.
LLVM::LLVMStructType accumulatorType(MLIRContext *context, int64_t n) {
  return LLVM::LLVMStructType::getLiteral(
      context, SmallVector<Type>(n / 2, Float32Type::get(context)));
}

/// One wgmma.mma_async of 64 x `n` x 16 into `accumulator` (replaced when
/// not `accumulate`), A and B K-major from shared memory (S = Q K^T).
Value multiply(OpBuilder &b, Location loc, Value accumulator, Value descA,
               Value descB, int64_t n, Type element, bool accumulate) {
  MLIRContext *context = b.getContext();
  NVVM::WGMMATypes type =
      element.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  return NVVM::WgmmaMmaAsyncOp::create(
      b, loc, accumulator.getType(), accumulator, descA, descB,
      NVVM::MMAShapeAttr::get(context, 64, n, kMmaK),
      NVVM::WGMMATypesAttr::get(context, type),
      NVVM::WGMMATypesAttr::get(context, type),
      NVVM::WGMMATypesAttr::get(context, NVVM::WGMMATypes::f32),
      NVVM::WGMMAScaleOutAttr::get(context, accumulate
                                                ? NVVM::WGMMAScaleOut::one
                                                : NVVM::WGMMAScaleOut::zero),
      NVVM::WGMMAScaleInAttr::get(context, NVVM::WGMMAScaleIn::one),
      NVVM::WGMMAScaleInAttr::get(context, NVVM::WGMMAScaleIn::one),
      NVVM::MMALayoutAttr::get(context, NVVM::MMALayout::row),
      NVVM::MMALayoutAttr::get(context, NVVM::MMALayout::col),
      NVVM::MMAIntOverflowAttr::get(context, NVVM::MMAIntOverflow::wrapped));
}

/// One wgmma.mma_async of 64 x `n` x 16 accumulating into `accumulator`
/// with A from registers (`a`: the thread's four 32-bit words of the 64 x 16
/// fragment, the layout of an accumulator's 16 columns) and B N-major from
/// shared memory. Inline PTX: NVVM's wgmma.mma_async reads A from a
/// descriptor only.
Value multiplyRegisterA(OpBuilder &b, Location loc, Value accumulator,
                        ValueRange a, Value descB, int64_t n, Type element) {
  assert(a.size() == 4 && "a 64 x 16 A fragment is four words a thread");
  SmallVector<Value> operands(a.begin(), a.end());
  operands.push_back(descB);
  // scale-d, a predicate: 1, accumulate.
  operands.push_back(arith::ConstantIntOp::create(b, loc, 1, 32));
  std::string constraints, outputs;
  for (int64_t i = 0; i < n / 2; ++i) {
    constraints += "=f,";
    outputs += (i ? ", $" : "$") + std::to_string(i);
  }
  constraints += "r,r,r,r,l,r";
  for (int64_t i = 0; i < n / 2; ++i) {
    operands.push_back(LLVM::ExtractValueOp::create(b, loc, accumulator, i));
    constraints += "," + std::to_string(i);
  }
  int64_t first = n / 2;
  auto operand = [&](int64_t i) { return "$" + std::to_string(first + i); };
  std::string type = element.isBF16() ? "bf16" : "f16";
  // scale-a and scale-b 1, B transposed (N-major).
  std::string ptx = "{\n.reg .pred p;\nsetp.ne.b32 p, " + operand(5) +
                    ", 0;\nwgmma.mma_async.sync.aligned.m64n" +
                    std::to_string(n) + "k16.f32." + type + "." + type + " {" +
                    outputs + "}, {" + operand(0) + ", " + operand(1) + ", " +
                    operand(2) + ", " + operand(3) + "}, " + operand(4) +
                    ", p, 1, 1, 1;\n}";
  return LLVM::InlineAsmOp::create(
             b, loc, accumulator.getType(), operands, ptx, constraints,
             /*has_side_effects=*/true, /*is_align_stack=*/false,
             LLVM::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr())
      .getResult(0);
}

Value minusInfinity(OpBuilder &b, Location loc) {
  return f32Constant(b, loc, -std::numeric_limits<double>::infinity(),
                     b.getF32Type());
}

Value shuffleXor(OpBuilder &b, Location loc, Value value, int32_t offset) {
  return gpu::ShuffleOp::create(b, loc, value, offset, /*width=*/32,
                                gpu::ShuffleMode::XOR)
      .getShuffleResult();
}

class AttentionTiles {
public:
  /// With `stageScores`, the inputs read per score come to shared memory
  /// by TMA (canStageScores must hold); else each thread reads its scores'
  /// from global memory.
  AttentionTiles(Location loc, KernelOp kernel, KernelPlanAttr plan,
                 const KernelBuffers &buffers,
                 const AttentionKernelShape &shape, StringRef nameSuffix = "",
                 bool stageScores = false)
      : loc(loc), kernel(kernel), buffers(buffers), shape(shape),
        nameSuffix(nameSuffix), head(shapeOf(shape.queries).back()),
        groups(plan.getThreads() / kGroupThreads - 1),
        blockRows(attentionTilesQueries(plan.getThreads())), layout{head,
                                                                    groups},
        element(getElementTypeOrSelf(shape.queries.getType())),
        stageScores(stageScores) {
    if (stageScores) {
      layout.scoreBytes = scoreBytesOf(scoreInputs);
      sharedAxes = axesScoresShare();
    }
  }

  /// Whether the inputs read per score can be staged: there are some, each
  /// reached from the scores through elementwise math only (so read at the
  /// scores' own row and key), of a type TMA loads (f32, bf16, f16), and
  /// their tiles fit in shared memory beside the others.
  bool canStageScores() const;
  /// On the host: whether every staged input is where TMA can read it (its
  /// start and rows on 16-byte boundaries).
  Value scoresAligned(OpBuilder &b) const;

  /// The launch: persistent (a block per multiprocessor going through the
  /// tiles a grid apart), but under a key limit or with inputs read per
  /// score from global memory.
  LogicalResult emit(OpBuilder &b, Value multiprocessors);
  /// On the host: the launch's blocks, a batch's query rows a block.
  Value blocksOf(OpBuilder &b) const {
    Value queryTiles = arith::CeilDivUIOp::create(
        b, loc, rowsOf(b, shape.queries), indexConst(b, loc, blockRows));
    return arith::MulIOp::create(b, loc, product(b, loc, batchSizes(b)),
                                 queryTiles);
  }

private:
  /// The output's batch axes (all but the last two).
  SmallVector<Value> batchSizes(OpBuilder &b) const {
    SmallVector<Value> sizes = sizesOf(b, loc, buffers.outputs[0]);
    if (shape.outputView)
      sizes = llvm::map_to_vector(outputAxes(),
                                  [&](unsigned d) { return sizes[d]; });
    sizes.resize(sizes.size() - 2);
    return sizes;
  }
  Value inputBuffer(BlockArgument arg) const {
    return buffers.inputs[arg.getArgNumber()];
  }
  /// The output's buffer as the product's result is laid out: through the
  /// inverse of the kernel's transpose where it stores the output
  /// transposed (strides only).
  Value outputBuffer(OpBuilder &b) const {
    Value buffer = buffers.outputs[0];
    if (!shape.outputView)
      return buffer;
    return memref::TransposeOp::create(
        b, loc, buffer,
        AffineMapAttr::get(
            AffineMap::getPermutationMap(outputAxes(), b.getContext())));
  }
  /// The output's axis that each axis of the product is stored along (the
  /// inverse of the kernel's transpose).
  SmallVector<unsigned> outputAxes() const {
    TransposeOp view = shape.outputView;
    ArrayRef<int64_t> permutation = view.getPermutation();
    SmallVector<unsigned> inverse(permutation.size());
    for (auto [i, d] : llvm::enumerate(permutation))
      inverse[d] = i;
    return inverse;
  }
  /// On the host: the output's buffer as the product's result is laid out
  /// (outputBuffer), its batch axes collapsed where it is not a view, as
  /// its tensor map stores it.
  Value outputAsBatches(OpBuilder &b) const {
    return shape.outputView ? outputBuffer(b)
                            : collapseBatches(b, loc, buffers.outputs[0]);
  }
  /// The box of the output's tensor map: `kBox` rows of `kBox` columns, 1
  /// along its batch axes (one where they are collapsed).
  SmallVector<int64_t> outputBox() const {
    MatmulOp product = shape.output;
    int64_t batchAxes =
        shape.outputView ? shapeOf(product.getResult()).size() - 2 : 1;
    SmallVector<int64_t> box(batchAxes, 1);
    box.append({kBox, kBox});
    return box;
  }
  /// The coordinates along the batch axes of the output's tensor map
  /// (innermost first) of the output's batch `batch`.
  SmallVector<Value> outputBatchOf(OpBuilder &b, ArrayRef<Value> batch) const {
    if (shape.outputView)
      return llvm::to_vector(llvm::reverse(batch));
    MatmulOp product = shape.output;
    ArrayRef<int64_t> out = shapeOf(product.getResult()).drop_back(2);
    return {collapsedBatch(b, loc, buffers.outputs[0], out, out, batch)};
  }
  /// Whether the softmax reads inputs per score from global memory (not
  /// staged).
  bool readsScoresFromMemory() const {
    return !scoreInputs.empty() && !stageScores;
  }
  /// On the host: what the tensor map of `operand` (Q, K, V or an input
  /// read per score, `[batch..., rows, columns]`) reads. An input as
  /// `[batches, rows, columns]` (collapseBatches: TMA fills zeros past each
  /// batch's rows); a view of one (getViewedInput) as that view of its
  /// buffer, of the view's rank (its batch axes need not collapse).
  Value asBatches(OpBuilder &b, Value operand) const;
  /// `operand` as the kernel reads it: a view replayed on its input's
  /// buffer (subviews and transposes of memrefs, which only move strides).
  Value viewOf(OpBuilder &b, Value operand) const;
  /// The box of `operand`'s tensor map of `rows` x `columns` elements (1
  /// along its batch axes).
  static SmallVector<int64_t> boxOf(Value operand, int64_t rows,
                                    int64_t columns) {
    int64_t batchAxes =
        isa<BlockArgument>(operand) ? 1 : shapeOf(operand).size() - 2;
    SmallVector<int64_t> box(batchAxes, 1);
    box.append({rows, columns});
    return box;
  }
  /// The coordinates along the batch axes of `operand`'s tensor map
  /// (innermost first) of the batch that the output's batch `batch` (a
  /// multi-index) reads: its broadcast axes at 0; linearized (one) for an
  /// input.
  SmallVector<Value> batchOf(OpBuilder &b, Value operand,
                             ArrayRef<Value> batch) const;
  /// Size `dim` of `operand` (an input or a view of one).
  Value sizeOf(OpBuilder &b, Value operand, int64_t dim) const;
  /// Rows of `operand`'s sequence (its second-to-last size).
  Value rowsOf(OpBuilder &b, Value operand) const {
    return sizeOf(b, operand, shapeOf(operand).size() - 2);
  }
  LogicalResult emitBody(OpBuilder &b, const LaunchIds &ids, Value queryTiles);
  /// The output's batch axes (of more than one batch) that no input read
  /// per score varies along: batches differing only there read the same
  /// tiles of them.
  SmallVector<int64_t> axesScoresShare() const;
  /// Bytes of a warpgroup's rows of `inputs` over a step's keys.
  static int64_t scoreBytesOf(ArrayRef<BlockArgument> inputs) {
    int64_t bytes = 0;
    for (BlockArgument arg : inputs)
      bytes += kGroupRows * kAttentionTilesKeys *
               getElementTypeOrSelf(arg.getType()).getIntOrFloatBitWidth() / 8;
    return bytes;
  }
  /// Elements of an input read per score in a 128-byte swizzled row.
  static int64_t scoreBoxColumns(BlockArgument arg) {
    return 128 * 8 /
           getElementTypeOrSelf(arg.getType()).getIntOrFloatBitWidth();
  }

  Location loc;
  KernelOp kernel;
  const KernelBuffers &buffers;
  AttentionKernelShape shape;
  StringRef nameSuffix;
  int64_t head;
  /// The multiplying warpgroups, and the block's query rows.
  int64_t groups, blockRows;
  /// Whether a block goes through tiles a grid apart (emit sets it).
  bool persistent = false;
  /// Whether each warpgroup stores its output rows through shared memory
  /// (its rows of the tile's Q buffer) by TMA, whole rows at a time, rather
  /// than each thread its fragment's pairs (emit sets it).
  bool storesOutputByTma = false;
  SharedLayout layout;
  Type element;
  /// The inputs read per score (of `shape`).
  ArrayRef<BlockArgument> scoreInputs = shape.scoreInputs;
  bool stageScores;
  /// Staged: axesScoresShare(), which the tiles' order puts innermost.
  SmallVector<int64_t> sharedAxes;
  /// On the host: the tensor maps of Q, K and V, and of the staged inputs.
  Value mapQ, mapK, mapV;
  SmallVector<Value> scoreMaps;
  /// On the host: the output's tensor map, where storesOutputByTma.
  Value mapO;
};

} // namespace

Value AttentionTiles::asBatches(OpBuilder &b, Value operand) const {
  if (auto arg = dyn_cast<BlockArgument>(operand))
    return collapseBatches(b, loc, inputBuffer(arg));
  return viewOf(b, operand);
}

Value AttentionTiles::viewOf(OpBuilder &b, Value operand) const {
  if (auto arg = dyn_cast<BlockArgument>(operand))
    return inputBuffer(arg);
  if (auto transpose = operand.getDefiningOp<TransposeOp>())
    return memref::TransposeOp::create(
        b, loc, viewOf(b, transpose.getX()),
        AffineMapAttr::get(AffineMap::getPermutationMap(
            llvm::map_to_vector(transpose.getPermutation(),
                                [](int64_t d) { return unsigned(d); }),
            b.getContext())));
  auto slice = operand.getDefiningOp<SliceOp>();
  Value source = viewOf(b, slice.getX());
  SmallVector<OpFoldResult> offsets, sizes, strides;
  for (auto [d, size] : llvm::enumerate(shapeOf(slice.getResult()))) {
    offsets.push_back(b.getIndexAttr(slice.getOffsets()[d]));
    sizes.push_back(
        ShapedType::isDynamic(size)
            ? OpFoldResult(memref::DimOp::create(b, loc, source, d).getResult())
            : OpFoldResult(b.getIndexAttr(size)));
    strides.push_back(b.getIndexAttr(1));
  }
  return memref::SubViewOp::create(b, loc, source, offsets, sizes, strides);
}

Value AttentionTiles::sizeOf(OpBuilder &b, Value operand, int64_t dim) const {
  // A view's dynamic sizes are its input's (a slice keeps a dynamic axis
  // whole), found through the transposes.
  while (!isa<BlockArgument>(operand)) {
    if (!ShapedType::isDynamic(shapeOf(operand)[dim]))
      return indexConst(b, loc, shapeOf(operand)[dim]);
    if (auto transpose = operand.getDefiningOp<TransposeOp>())
      dim = transpose.getPermutation()[dim];
    operand = operand.getDefiningOp()->getOperand(0);
  }
  return memref::DimOp::create(b, loc,
                               inputBuffer(cast<BlockArgument>(operand)), dim);
}

SmallVector<Value> AttentionTiles::batchOf(OpBuilder &b, Value operand,
                                           ArrayRef<Value> batch) const {
  MatmulOp product = shape.output;
  ArrayRef<int64_t> out = shapeOf(product.getResult()).drop_back(2);
  ArrayRef<int64_t> axes = shapeOf(operand).drop_back(2);
  if (auto arg = dyn_cast<BlockArgument>(operand))
    return {collapsedBatch(b, loc, inputBuffer(arg), axes, out, batch)};
  SmallVector<Value> coordinates;
  for (std::optional<int64_t> source :
       llvm::reverse(getBroadcastSources(axes, out)))
    coordinates.push_back(source ? batch[*source] : indexConst(b, loc, 0));
  return coordinates;
}

SmallVector<int64_t> AttentionTiles::axesScoresShare() const {
  MatmulOp product = shape.output;
  ArrayRef<int64_t> batch = shapeOf(product.getResult()).drop_back(2);
  SmallVector<bool> varies(batch.size(), false);
  for (BlockArgument arg : scoreInputs)
    for (std::optional<int64_t> source :
         getBroadcastSources(shapeOf(arg).drop_back(2), batch))
      if (source)
        varies[*source] = true;
  SmallVector<int64_t> axes;
  for (auto [d, size] : llvm::enumerate(batch))
    if (!varies[d] && size != 1)
      axes.push_back(d);
  return axes;
}

bool AttentionTiles::canStageScores() const {
  if (scoreInputs.empty())
    return false;
  for (BlockArgument arg : scoreInputs) {
    Type type = getElementTypeOrSelf(arg.getType());
    if (!type.isF32() && !type.isBF16() && !type.isF16())
      return false;
  }
  // Every path from the softmax's operand to them through elementwise math
  // only (else an input might be read elsewhere than at its score's index).
  SoftmaxOp softmaxOp = shape.softmax;
  MatmulOp scoresOp = shape.scores;
  SmallVector<std::pair<Value, bool>> work{{softmaxOp.getX(), true}};
  DenseSet<Value> seen[2];
  while (!work.empty()) {
    auto [value, elementwise] = work.pop_back_val();
    if (value == scoresOp.getResult() ||
        !seen[elementwise].insert(value).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (!elementwise && llvm::is_contained(scoreInputs, arg))
        return false;
      continue;
    }
    Operation *op = value.getDefiningOp();
    for (Value operand : op->getOperands())
      work.push_back({operand, elementwise && isElementwiseMath(op)});
  }
  SharedLayout staged = layout;
  staged.scoreBytes = scoreBytesOf(scoreInputs);
  return staged.total() + kSwizzleAlignment <= kSharedBytes;
}

Value AttentionTiles::scoresAligned(OpBuilder &b) const {
  Value aligned = arith::ConstantIntOp::create(b, loc, 1, 1);
  Value zero = indexConst(b, loc, 0);
  Value sixteen = indexConst(b, loc, 16);
  for (BlockArgument arg : scoreInputs) {
    Value buffer = inputBuffer(arg);
    int64_t bytes =
        getElementTypeOrSelf(arg.getType()).getIntOrFloatBitWidth() / 8;
    auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
    Value start = arith::AddIOp::create(
        b, loc, memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer),
        arith::MulIOp::create(b, loc, metadata.getOffset(),
                              indexConst(b, loc, bytes)));
    Value rowBytes = arith::MulIOp::create(
        b, loc,
        memref::DimOp::create(b, loc, buffer,
                              cast<MemRefType>(buffer.getType()).getRank() - 1),
        indexConst(b, loc, bytes));
    for (Value at : {start, rowBytes})
      aligned = arith::AndIOp::create(
          b, loc, aligned,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                arith::RemUIOp::create(b, loc, at, sixteen),
                                zero));
  }
  return aligned;
}

LogicalResult AttentionTiles::emitBody(OpBuilder &b, const LaunchIds &ids,
                                       Value queryTiles) {
  MLIRContext *context = b.getContext();
  Type f32 = b.getF32Type();
  Value zero = indexConst(b, loc, 0);
  Value one = indexConst(b, loc, 1);
  int64_t boxes = layout.headBoxes();

  Value queries = rowsOf(b, shape.queries);
  Value keys = rowsOf(b, shape.keys);
  Value offset;
  if (shape.keyLimit)
    offset = indexConst(b, loc, shape.keyLimit->offset);
  // Tile `tile` of the launch (blockRows query rows of a batch): its batch,
  // its first query row and the key tiles it goes through. Tiles of a
  // batch side by side (they share its K and V in L2), but for the batches
  // sharing staged inputs, side by side before them. Under a key limit
  // the last rows see the most keys, so the tiles go in groups of batches
  // of about kAttentionTilesGroupBlocks (a wave), the last rows' tiles of
  // the group's batches first: short tiles fill each group's end, and a
  // group's K and V stay few enough for L2; and a tile goes only through
  // the key tiles up to the one of its last row's last key (none if that
  // is before the first key).
  struct Tile {
    SmallVector<Value> batch;
    Value row0, keyTiles;
  };
  auto tileAt = [&](Value tile) {
    Tile t;
    Value batchFlat, queryTile;
    if (shape.keyLimit) {
      Value batches = product(b, loc, batchSizes(b));
      Value perGroup = arith::MaxUIOp::create(
          b, loc, one,
          arith::DivUIOp::create(b, loc,
                                 indexConst(b, loc, kAttentionTilesGroupBlocks),
                                 queryTiles));
      Value groupBlocks = arith::MulIOp::create(b, loc, perGroup, queryTiles);
      Value group = arith::DivUIOp::create(b, loc, tile, groupBlocks);
      Value within = arith::RemUIOp::create(b, loc, tile, groupBlocks);
      Value firstBatch = arith::MulIOp::create(b, loc, group, perGroup);
      Value groupBatches = arith::MinUIOp::create(
          b, loc, perGroup, arith::SubIOp::create(b, loc, batches, firstBatch));
      batchFlat = arith::AddIOp::create(
          b, loc, firstBatch,
          arith::RemUIOp::create(b, loc, within, groupBatches));
      queryTile = arith::SubIOp::create(
          b, loc, arith::SubIOp::create(b, loc, queryTiles, one),
          arith::DivUIOp::create(b, loc, within, groupBatches));
    } else if (sharedAxes.empty()) {
      batchFlat = arith::DivUIOp::create(b, loc, tile, queryTiles);
      queryTile = arith::RemUIOp::create(b, loc, tile, queryTiles);
    } else {
      // The batch axes staged inputs do not vary along innermost, then the
      // query tile, then the others: the batches that read the same staged
      // tiles run side by side, one's loads bringing them to L2 for the
      // others.
      SmallVector<Value> sizes = batchSizes(b), ownSizes, sharedSizes;
      for (auto [d, size] : llvm::enumerate(sizes))
        (llvm::is_contained(sharedAxes, d) ? sharedSizes : ownSizes)
            .push_back(size);
      Value sharing = product(b, loc, sharedSizes);
      Value own = arith::DivUIOp::create(b, loc, tile, sharing);
      queryTile = arith::RemUIOp::create(b, loc, own, queryTiles);
      SmallVector<Value> ownIndex = delinearize(
          b, loc, arith::DivUIOp::create(b, loc, own, queryTiles), ownSizes);
      SmallVector<Value> sharedIndex = delinearize(
          b, loc, arith::RemUIOp::create(b, loc, tile, sharing), sharedSizes);
      for (int64_t d = 0, e = sizes.size(), o = 0, s = 0; d < e; ++d)
        t.batch.push_back(llvm::is_contained(sharedAxes, d) ? sharedIndex[s++]
                                                            : ownIndex[o++]);
    }
    t.row0 =
        arith::MulIOp::create(b, loc, queryTile, indexConst(b, loc, blockRows));
    if (batchFlat)
      t.batch = delinearize(b, loc, batchFlat, batchSizes(b));
    t.keyTiles = arith::CeilDivUIOp::create(
        b, loc, keys, indexConst(b, loc, kAttentionTilesKeys));
    if (shape.keyLimit) {
      Value lastRow = arith::MinUIOp::create(
          b, loc,
          arith::AddIOp::create(b, loc, t.row0,
                                indexConst(b, loc, blockRows - 1)),
          arith::SubIOp::create(b, loc, queries, one));
      Value lastSeen = arith::AddIOp::create(b, loc, lastRow, offset);
      Value seen = arith::AddIOp::create(
          b, loc,
          arith::DivUIOp::create(b, loc, lastSeen,
                                 indexConst(b, loc, kAttentionTilesKeys)),
          one);
      t.keyTiles = arith::SelectOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, lastSeen,
                                zero),
          zero, arith::MinUIOp::create(b, loc, t.keyTiles, seen));
    }
    return t;
  };
  // The block's tiles: from its own, a grid apart, where the launch is
  // persistent (else its own alone). Each role goes through them (a loop
  // whose body the builder is left in), the steps of the tiles before
  // (`done`) numbering the stages' rounds, and the tile's `round` the Q
  // buffer's.
  Value tileCount =
      arith::MulIOp::create(b, loc, product(b, loc, batchSizes(b)), queryTiles);
  struct TileLoop {
    scf::ForOp loop;
    Tile tile;
    Value done, round;
  };
  auto beginTiles = [&]() {
    TileLoop tiles;
    if (!persistent) {
      tiles.tile = tileAt(ids.block);
      tiles.done = tiles.round = zero;
      return tiles;
    }
    tiles.loop = scf::ForOp::create(b, loc, ids.block, tileCount, ids.grid,
                                    ValueRange{zero});
    b.setInsertionPointToStart(tiles.loop.getBody());
    Value tile = tiles.loop.getInductionVar();
    tiles.tile = tileAt(tile);
    tiles.done = tiles.loop.getRegionIterArgs()[0];
    tiles.round = arith::DivUIOp::create(
        b, loc, arith::SubIOp::create(b, loc, tile, ids.block), ids.grid);
    return tiles;
  };
  auto endTiles = [&](const TileLoop &tiles) {
    if (!persistent)
      return;
    scf::YieldOp::create(b, loc,
                         ValueRange{arith::AddIOp::create(
                             b, loc, tiles.done, tiles.tile.keyTiles)});
  };
  // Bit 0 of `round`, a barrier's phase parity.
  auto parityBit = [&](Value round) {
    return arith::IndexCastOp::create(
        b, loc, b.getI1Type(),
        arith::RemUIOp::create(b, loc, round, indexConst(b, loc, 2)));
  };
  // The Q buffer of the block's `round`-th tile, and the parity of its
  // barriers' phase for that tile (the buffers take the tiles in turn).
  auto queryBufferOf = [&](Value round) {
    return arith::RemUIOp::create(b, loc, round,
                                  indexConst(b, loc, layout.queryBuffers));
  };
  auto queryParityOf = [&](Value round) {
    return parityBit(arith::DivUIOp::create(
        b, loc, round, indexConst(b, loc, layout.queryBuffers)));
  };
  // The same for the staged inputs' buffers and a block's `global`-th
  // step, and the index of buffer `buffer`'s barrier of warpgroup `group`
  // (past kScoresLoaded or kScoresReleased); folded where there is one.
  auto scoreBufferOf = [&](Value global) {
    return b.createOrFold<arith::RemUIOp>(
        loc, global, indexConst(b, loc, layout.scoreBuffers));
  };
  auto scoreParityOf = [&](Value global) {
    return parityBit(b.createOrFold<arith::DivUIOp>(
        loc, global, indexConst(b, loc, layout.scoreBuffers)));
  };
  auto scoreBarrierOf = [&](Value buffer, Value group, int64_t first) {
    return b.createOrFold<arith::AddIOp>(
        loc,
        b.createOrFold<arith::AddIOp>(
            loc,
            b.createOrFold<arith::MulIOp>(loc, buffer,
                                          indexConst(b, loc, groups)),
            group),
        indexConst(b, loc, first));
  };

  // Shared memory: the tiles from the first swizzle boundary past the
  // dynamic shared memory's symbol (alignedDynamicShared says why), and the
  // barriers.
  DynamicShared dynamic = alignedDynamicShared(b, loc);
  Value shared = dynamic.memory, symbol = dynamic.symbol, base = dynamic.base;
  // The shared address of byte `offset` of the layout, and a view there.
  auto addressOf = [&](Value offset) {
    return arith::AddIOp::create(
        b, loc, arith::AddIOp::create(b, loc, symbol, base), offset);
  };
  auto view = [&](Value offset, ArrayRef<int64_t> viewShape, Type type) {
    return memref::ViewOp::create(b, loc, sharedTile(viewShape, type), shared,
                                  arith::AddIOp::create(b, loc, base, offset),
                                  ValueRange{});
  };
  auto byteConst = [&](int64_t bytes) { return indexConst(b, loc, bytes); };
  int64_t scoreBarriers = stageScores ? groups * layout.scoreBuffers : 0;
  Value full = nvgpu::MBarrierCreateOp::create(
      b, loc,
      nvgpu::MBarrierGroupType::get(context, workgroupSpace(context),
                                    kFullBarriers + scoreBarriers));
  Value empty = nvgpu::MBarrierCreateOp::create(
      b, loc,
      nvgpu::MBarrierGroupType::get(context, workgroupSpace(context),
                                    kEmptyBarriers + scoreBarriers));
  int64_t consumerWarps = groups * 4;
  emitIf(b, loc, isThreadZero(b, loc, ids.thread), [&] {
    for (int64_t i = 0; i < kFullBarriers + scoreBarriers; ++i)
      nvgpu::MBarrierInitOp::create(b, loc, full, one, indexConst(b, loc, i),
                                    /*predicate=*/Value());
    // The staged scores' barriers are a warpgroup's (4 warps) each; a Q
    // buffer whose output TMA stores is released by one thread of each
    // warpgroup, the one that issued the stores.
    for (int64_t s = 0; s < kEmptyBarriers + scoreBarriers; ++s) {
      int64_t count = s < kEmptyBarriers ? consumerWarps : 4;
      if (storesOutputByTma && s >= kQueriesReleased && s < kEmptyBarriers)
        count = groups;
      nvgpu::MBarrierInitOp::create(b, loc, empty, indexConst(b, loc, count),
                                    indexConst(b, loc, s),
                                    /*predicate=*/Value());
    }
  });
  gpu::BarrierOp::create(b, loc);

  Value warpgroup = uniformWarpgroup(b, loc, ids.thread);
  // Inputs read per score (a bias) from global memory, which a step's
  // softmax waits on, are asked of L2 ahead.
  ArrayRef<BlockArgument> prefetched;
  if (readsScoresFromMemory())
    prefetched = scoreInputs;
  RoleRegisters roles = roleRegisters(
      groups, head,
      scoreInputs.empty()
          ? ScoreReads::none
          : (stageScores ? ScoreReads::staged : ScoreReads::fromMemory));
  auto role = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, warpgroup,
                            indexConst(b, loc, groups)),
      /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  auto stageOf = [&](Value step) {
    return arith::RemUIOp::create(b, loc, step, indexConst(b, loc, kStages));
  };
  // A stage's barriers complete for the (step / kStages)-th time at `step`.
  auto parityOf = [&](Value step) {
    return arith::IndexCastOp::create(
        b, loc, b.getI1Type(),
        arith::RemUIOp::create(
            b, loc,
            arith::DivUIOp::create(b, loc, step, indexConst(b, loc, kStages)),
            indexConst(b, loc, 2)));
  };
  auto stageOffset = [&](Value stage, int64_t first) {
    return arith::AddIOp::create(
        b, loc, byteConst(first),
        arith::MulIOp::create(b, loc, stage, byteConst(layout.stageBytes())));
  };

  // The loads, by the last warpgroup's first thread: Q's rows once, then
  // each step's K and V once the multiplying warps have released the stage
  // (a fresh barrier counts as completed for the round before the first).
  b.setInsertionPoint(role.thenBlock()->getTerminator());
  NVVM::SetMaxRegisterOp::create(b, loc, roles.producer,
                                 NVVM::SetMaxRegisterAction::decrease);
  emitIf(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, ids.thread,
                            indexConst(b, loc, groups * 128)),
      [&] {
        // The tensor maps are fetched ahead of their first loads (the
        // block has a tile, so Q has rows; an empty K or V has no map).
        nvgpu::TmaPrefetchOp::create(b, loc, mapQ, /*predicate=*/Value());
        emitIf(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, keys, zero),
            [&] {
              for (Value map : {mapK, mapV})
                nvgpu::TmaPrefetchOp::create(b, loc, map,
                                             /*predicate=*/Value());
              for (Value map : scoreMaps)
                nvgpu::TmaPrefetchOp::create(b, loc, map,
                                             /*predicate=*/Value());
            });
        TileLoop tiles = beginTiles();
        Value row0 = tiles.tile.row0, keyTiles = tiles.tile.keyTiles;
        SmallVector<Value> batchQ = batchOf(b, shape.queries, tiles.tile.batch);
        SmallVector<Value> batchK = batchOf(b, shape.keys, tiles.tile.batch);
        SmallVector<Value> batchV = batchOf(b, shape.values, tiles.tile.batch);
        SmallVector<SmallVector<Value>> batchScores;
        if (stageScores)
          for (BlockArgument arg : scoreInputs)
            batchScores.push_back(batchOf(b, arg, tiles.tile.batch));
        // The tile's Q buffer, once the multiplying warps have released
        // the tile that used it before (two tiles back with two buffers).
        Value queryBuffer = queryBufferOf(tiles.round);
        Value queryOffset = arith::MulIOp::create(
            b, loc, queryBuffer, byteConst(layout.queryBytes()));
        if (persistent)
          waitForPhase(
              b, loc, empty,
              arith::AddIOp::create(b, loc, queryBuffer,
                                    indexConst(b, loc, kQueriesReleased)),
              arith::XOrIOp::create(
                  b, loc, queryParityOf(tiles.round),
                  arith::ConstantIntOp::create(b, loc, 1, 1)));
        Value loaded = arith::AddIOp::create(
            b, loc, queryBuffer, indexConst(b, loc, kQueriesLoaded));
        nvgpu::MBarrierArriveExpectTxOp::create(
            b, loc, full, byteConst(layout.queryBytes()), loaded,
            /*predicate=*/Value());
        // Coordinates are innermost first.
        auto at = [&](Value column, Value row, ArrayRef<Value> batchAt) {
          SmallVector<Value> coordinates = {column, row};
          llvm::append_range(coordinates, batchAt);
          return coordinates;
        };
        for (int64_t g = 0; g < groups; ++g)
          for (int64_t h = 0; h < boxes; ++h)
            nvgpu::TmaAsyncLoadOp::create(
                b, loc,
                view(arith::AddIOp::create(b, loc, queryOffset,
                                           byteConst(layout.queries(g, h))),
                     boxOf(shape.queries, kBox, kBox), element),
                full, mapQ,
                at(indexConst(b, loc, h * kBox),
                   arith::AddIOp::create(b, loc, row0,
                                         indexConst(b, loc, g * kGroupRows)),
                   batchQ),
                loaded, /*multicastMask=*/Value(), /*predicate=*/Value());
        auto steps = scf::ForOp::create(b, loc, zero, keyTiles, one);
        {
          OpBuilder::InsertionGuard inner(b);
          b.setInsertionPointToStart(steps.getBody());
          Value step = steps.getInductionVar();
          Value global = arith::AddIOp::create(b, loc, tiles.done, step);
          Value stage = stageOf(global);
          Value previousRound =
              arith::XOrIOp::create(b, loc, parityOf(global),
                                    arith::ConstantIntOp::create(b, loc, 1, 1));
          Value key0 = arith::MulIOp::create(
              b, loc, step, indexConst(b, loc, kAttentionTilesKeys));
          Value keysLoaded = arith::AddIOp::create(
              b, loc, stage, indexConst(b, loc, kKeysLoaded));
          Value valuesLoaded = arith::AddIOp::create(
              b, loc, stage, indexConst(b, loc, kValuesLoaded));
          // K's tile, then each warpgroup's rows of the inputs read per
          // score (staged), then V's, each once its buffer is released (the
          // scores' once the step before's softmax has read them).
          auto loadScores = [&] {
            Value buffer = scoreBufferOf(global);
            Value previousUse = arith::XOrIOp::create(
                b, loc, scoreParityOf(global),
                arith::ConstantIntOp::create(b, loc, 1, 1));
            for (int64_t g = 0; g < groups; ++g) {
              Value group = indexConst(b, loc, g);
              waitForPhase(b, loc, empty,
                           scoreBarrierOf(buffer, group, kScoresReleased),
                           previousUse);
              Value loaded = scoreBarrierOf(buffer, group, kScoresLoaded);
              nvgpu::MBarrierArriveExpectTxOp::create(
                  b, loc, full, byteConst(layout.scoreBytes), loaded,
                  /*predicate=*/Value());
              Value row = arith::AddIOp::create(
                  b, loc, row0, indexConst(b, loc, g * kGroupRows));
              Value bufferBase = b.createOrFold<arith::MulIOp>(
                  loc, buffer, byteConst(groups * layout.scoreBytes));
              int64_t offset = layout.scores(g);
              for (auto [arg, map, batchAt] :
                   llvm::zip(scoreInputs, scoreMaps, batchScores)) {
                int64_t columns = scoreBoxColumns(arg);
                Type type = getElementTypeOrSelf(arg.getType());
                for (int64_t key = 0; key < kAttentionTilesKeys;
                     key += columns) {
                  nvgpu::TmaAsyncLoadOp::create(
                      b, loc,
                      view(b.createOrFold<arith::AddIOp>(loc, bufferBase,
                                                         byteConst(offset)),
                           boxOf(arg, kGroupRows, columns), type),
                      full, map,
                      at(arith::AddIOp::create(b, loc, key0,
                                               indexConst(b, loc, key)),
                         row, batchAt),
                      loaded, /*multicastMask=*/Value(),
                      /*predicate=*/Value());
                  offset += kGroupRows * 128;
                }
              }
            }
          };
          for (bool values : {false, true}) {
            if (values && stageScores)
              loadScores();
            Value loaded = values ? valuesLoaded : keysLoaded;
            waitForPhase(
                b, loc, empty,
                arith::AddIOp::create(
                    b, loc, stage,
                    indexConst(b, loc,
                               values ? kValuesReleased : kKeysReleased)),
                previousRound);
            nvgpu::MBarrierArriveExpectTxOp::create(
                b, loc, full, byteConst(layout.keyBytes()), loaded,
                /*predicate=*/Value());
            for (int64_t chunk = 0; chunk < kAttentionTilesKeys / kBox;
                 ++chunk) {
              Value row = arith::AddIOp::create(
                  b, loc, key0, indexConst(b, loc, chunk * kBox));
              for (int64_t h = 0; h < boxes; ++h) {
                int64_t offset =
                    values ? layout.values(0) + layout.valueBox(chunk, h)
                           : layout.keys(0) + layout.keyBox(h, chunk);
                nvgpu::TmaAsyncLoadOp::create(
                    b, loc,
                    view(stageOffset(stage, offset),
                         boxOf(values ? shape.values : shape.keys, kBox, kBox),
                         element),
                    full, values ? mapV : mapK,
                    at(indexConst(b, loc, h * kBox), row,
                       values ? batchV : batchK),
                    loaded, /*multicastMask=*/Value(), /*predicate=*/Value());
              }
            }
          }
        }
        endTiles(tiles);
      });

  // The products and the softmax, by the other warpgroups.
  b.setInsertionPoint(role.elseBlock()->getTerminator());
  NVVM::SetMaxRegisterOp::create(b, loc, roles.consumer,
                                 NVVM::SetMaxRegisterAction::increase);
  // Fragment layout of warpgroup MMA (PTX ISA, "wgmma .m64nNk16" register
  // fragment D): lane l of warp w holds rows 16 w + l / 4 and 8 rows below,
  // and of each 8 columns the pair from 2 (l % 4); float 4 j + 2 h + c is
  // column 8 j + 2 (l % 4) + c of the row 8 h below.
  Value lane =
      arith::RemUIOp::create(b, loc, ids.thread, indexConst(b, loc, 32));
  Value warp = arith::RemUIOp::create(
      b, loc,
      arith::DivUIOp::create(b, loc, ids.thread, indexConst(b, loc, 32)),
      indexConst(b, loc, 4));
  Value quadRow = arith::DivUIOp::create(b, loc, lane, indexConst(b, loc, 4));
  Value quadColumn = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, lane, indexConst(b, loc, 4)),
      indexConst(b, loc, 2));
  // Products in turn (below): the first warpgroup's turn comes first, the
  // last arriving at its barrier (1) once; then each warpgroup's last turn
  // of a tile passes it on to the next tile.
  bool productsInTurn = !readsScoresFromMemory();
  if (productsInTurn)
    emitIf(b, loc,
           arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, warpgroup,
                                 indexConst(b, loc, groups - 1)),
           [&] {
             NVVM::BarrierArriveOp::create(
                 b, loc, arith::ConstantIntOp::create(b, loc, 1, 32),
                 arith::ConstantIntOp::create(b, loc, 2 * kGroupThreads, 32));
           });
  TileLoop tiles = beginTiles();
  Value row0 = tiles.tile.row0, keyTiles = tiles.tile.keyTiles;
  ArrayRef<Value> batch = tiles.tile.batch;
  // The thread's rows in the warpgroup's 64, and in the batch.
  Value groupRow[2], row[2];
  for (int64_t h = 0; h < 2; ++h) {
    groupRow[h] = arith::AddIOp::create(
        b, loc,
        arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, warp, indexConst(b, loc, 16)),
            quadRow),
        indexConst(b, loc, 8 * h));
    row[h] = arith::AddIOp::create(
        b, loc, row0,
        arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(b, loc, warpgroup,
                                  indexConst(b, loc, kGroupRows)),
            groupRow[h]));
  }
  // Descriptors: K-major tiles (Q, K, P) have 8-row groups 1024 bytes
  // apart; V, N-major, its boxes along N 8 KiB apart too.
  auto descriptorAt = [&](Value offset, int64_t leading) {
    return matrixDescriptor(b, loc, addressOf(offset), leading, 1024);
  };
  Value queryBuffer = queryBufferOf(tiles.round);
  Value groupOffset = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, queryBuffer,
                            byteConst(layout.queryBytes())),
      arith::MulIOp::create(b, loc, warpgroup,
                            byteConst(layout.queries(1, 0))));
  Value descQ = descriptorAt(groupOffset, 16);

  waitForPhase(b, loc, full,
               arith::AddIOp::create(b, loc, queryBuffer,
                                     indexConst(b, loc, kQueriesLoaded)),
               queryParityOf(tiles.round));
  auto scoresType = accumulatorType(context, kAttentionTilesKeys);
  auto outputType = accumulatorType(context, head);
  Value minusInf = minusInfinity(b, loc);
  Value zeroF = f32Constant(b, loc, 0.0, f32);
  Value log2e = f32Constant(b, loc, M_LOG2E, f32);
  Value lastQuery = arith::SubIOp::create(b, loc, queries, one);
  Value lastKey = arith::SubIOp::create(b, loc, keys, one);
  Value evalRow[2];
  for (int64_t h = 0; h < 2; ++h)
    evalRow[h] = arith::MinUIOp::create(b, loc, row[h], lastQuery);
  // Under a key limit: each of the thread's rows' last key, and the
  // warpgroup's first row.
  Value rowLimit[2], groupRow0;
  if (shape.keyLimit) {
    for (int64_t h = 0; h < 2; ++h)
      rowLimit[h] = arith::AddIOp::create(b, loc, row[h], offset);
    groupRow0 = arith::AddIOp::create(
        b, loc, row0,
        arith::MulIOp::create(b, loc, warpgroup,
                              indexConst(b, loc, kGroupRows)));
  }
  // The scores' math is evaluated for a fragment's pairs of adjacent keys
  // at once, its roundings to bf16 packed (one conversion per pair, F2FP,
  // instead of a quarter-rate F2F per score, which with ex2 bounded the
  // softmax); inputs read per score (a bias) element by element.
  PointEvaluator evaluator(b, loc, kernel, buffers.inputs, 2);
  evaluator.packedRounding = true;
  evaluator.gatherLoads = true;
  // Each thread asks L2 for its share of the warpgroup's rows of the inputs
  // read per score of tile `tile` ahead (kPrefetchTiles), while the
  // products run.
  Value groupThread = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, warp, indexConst(b, loc, 32)),
      lane);
  ArrayRef<int64_t> scoreShape = codegen::shapeOf(shape.scores.getResult());
  auto prefetchTile = [&](Value tile) {
    Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          tile, keyTiles);
    for (BlockArgument arg : prefetched) {
      Value buffer = buffers.inputs[arg.getArgNumber()];
      int64_t lineElements =
          kL2LineBytes /
          (cast<MemRefType>(buffer.getType()).getElementTypeBitWidth() / 8);
      int64_t rowLines = llvm::divideCeil(kAttentionTilesKeys, lineElements);
      for (int64_t line = 0; line < kGroupRows * rowLines;
           line += kGroupThreads) {
        Value at = arith::AddIOp::create(b, loc, groupThread,
                                         indexConst(b, loc, line));
        Value groupRowAt =
            arith::DivUIOp::create(b, loc, at, indexConst(b, loc, rowLines));
        Value rowAt = arith::MinUIOp::create(
            b, loc,
            arith::AddIOp::create(
                b, loc, row0,
                arith::AddIOp::create(
                    b, loc,
                    arith::MulIOp::create(b, loc, warpgroup,
                                          indexConst(b, loc, kGroupRows)),
                    groupRowAt)),
            lastQuery);
        Value keyAt = arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(b, loc, tile,
                                  indexConst(b, loc, kAttentionTilesKeys)),
            arith::MulIOp::create(b, loc,
                                  arith::RemUIOp::create(
                                      b, loc, at, indexConst(b, loc, rowLines)),
                                  indexConst(b, loc, lineElements)));
        SmallVector<Value> scoreIndex(batch);
        scoreIndex.push_back(rowAt);
        scoreIndex.push_back(keyAt);
        SmallVector<Value> index;
        for (std::optional<int64_t> source :
             getBroadcastSources(codegen::shapeOf(arg), scoreShape))
          index.push_back(source ? scoreIndex[*source] : zero);
        prefetchToL2(b, loc, buffer, index,
                     arith::AndIOp::create(
                         b, loc, inRange,
                         arith::CmpIOp::create(
                             b, loc, arith::CmpIPredicate::ult, keyAt, keys)));
      }
    }
  };
  Type scoreType = getElementTypeOrSelf(shape.scores.getResult().getType());
  Type i32 = b.getI32Type();
  // Products in turn (FlashAttention-3's ping-pong): warpgroup g issues
  // its products after barrier 1 + g (its own 128 threads waiting, the
  // warpgroup before it arriving), then arrives at the next one's, so that
  // one's softmax runs while another's products do. That keeps the
  // warpgroups in step, which costs more than it gives where a softmax
  // waits on memory: not with inputs read per score (H100, 2026-12-06: the
  // bias program 9% slower in turn, the others 3-14% faster).
  Value pairThreads =
      arith::ConstantIntOp::create(b, loc, 2 * kGroupThreads, 32);
  auto turnBarrier = [&](Value group) -> Value {
    return arith::AddIOp::create(
        b, loc, arith::IndexCastUIOp::create(b, loc, i32, group),
        arith::ConstantIntOp::create(b, loc, 1, 32));
  };
  Value ownTurn = turnBarrier(warpgroup);
  Value nextTurn = turnBarrier(arith::RemUIOp::create(
      b, loc, arith::AddIOp::create(b, loc, warpgroup, one),
      indexConst(b, loc, groups)));
  auto awaitTurn = [&] {
    if (productsInTurn)
      NVVM::BarrierOp::create(b, loc, Type(), ownTurn, pairThreads,
                              /*reductionOp=*/nullptr,
                              /*reductionPredicate=*/Value());
  };
  auto passTurn = [&] {
    if (productsInTurn)
      NVVM::BarrierArriveOp::create(b, loc, nextTurn, pairThreads);
  };

  // The running state of the rows' softmax: the output, each row's
  // maximum and (the thread's part of) its sum.
  struct Online {
    Value output, max[2], sum[2];
  };
  // Issues S = Q K^T of step `step` (once its K is in): over the head's
  // boxes and 16 columns an MMA, the first replacing the accumulator.
  auto globalStep = [&](Value step) -> Value {
    return arith::AddIOp::create(b, loc, tiles.done, step);
  };
  auto issueScores = [&](Value step) {
    Value stage = stageOf(globalStep(step));
    waitForPhase(
        b, loc, full,
        arith::AddIOp::create(b, loc, stage, indexConst(b, loc, kKeysLoaded)),
        parityOf(globalStep(step)));
    Value descK = descriptorAt(stageOffset(stage, layout.keys(0)), 16);
    Value scores = LLVM::PoisonOp::create(b, loc, scoresType);
    for (int64_t h = 0; h < boxes; ++h)
      for (int64_t k = 0; k < kBox / kMmaK; ++k)
        scores = multiply(
            b, loc, scores,
            advance(b, loc, descQ, layout.queries(0, h) + k * kMmaK * 2),
            advance(b, loc, descK, layout.keyBox(h, 0) + k * kMmaK * 2),
            kAttentionTilesKeys, element, /*accumulate=*/h + k > 0);
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    return scores;
  };
  // Issues O += P V of step `step` (once its V is in), P from registers
  // (`words`: the thread's probabilities, two to a word, in the order of
  // the scores' fragment, which is A's for each 16 keys): over the keys'
  // 64-row chunks and 16 keys an MMA.
  auto issueOutput = [&](Value step, Value output, ValueRange words) {
    Value stage = stageOf(globalStep(step));
    waitForPhase(
        b, loc, full,
        arith::AddIOp::create(b, loc, stage, indexConst(b, loc, kValuesLoaded)),
        parityOf(globalStep(step)));
    Value descV = descriptorAt(stageOffset(stage, layout.values(0)), kBoxBytes);
    for (int64_t chunk = 0; chunk < kAttentionTilesKeys / kBox; ++chunk)
      for (int64_t k = 0; k < kBox / kMmaK; ++k) {
        int64_t slice = chunk * (kBox / kMmaK) + k;
        output = multiplyRegisterA(
            b, loc, output, words.slice(4 * slice, 4),
            advance(b, loc, descV,
                    layout.valueBox(chunk, 0) + k * kMmaK * kBox * 2),
            head, element);
      }
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    return output;
  };
  // Step `step`'s K (or V) tile is free (a warp's first lane arriving for
  // the warp).
  auto release = [&](Value step, int64_t released) {
    emitIf(b, loc, isThreadZero(b, loc, lane), [&] {
      nvgpu::MBarrierArriveOp::create(
          b, loc, nvgpu::MBarrierTokenType::get(context), empty,
          arith::AddIOp::create(b, loc, stageOf(globalStep(step)),
                                indexConst(b, loc, released)));
    });
  };
  // The tile's Q is no longer read (its last S has completed). Where the
  // output is stored through the buffer, it is released once TMA has read
  // the output out of it (releaseOutputBefore).
  auto releaseQueries = [&] {
    if (!persistent || storesOutputByTma)
      return;
    emitIf(b, loc, isThreadZero(b, loc, lane), [&] {
      nvgpu::MBarrierArriveOp::create(
          b, loc, nvgpu::MBarrierTokenType::get(context), empty,
          arith::AddIOp::create(b, loc, queryBuffer,
                                indexConst(b, loc, kQueriesReleased)));
    });
  };
  // The warpgroup's thread that issues its output's TMA stores, and the
  // named barrier at which its threads have written the output to shared
  // memory (after the products' turns, 1 to groups).
  Value issuesStores = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             groupThread, zero);
  Value outputWritten = arith::IndexCastUIOp::create(
      b, loc, i32,
      arith::AddIOp::create(b, loc, warpgroup, indexConst(b, loc, groups + 1)));
  // The tile before's Q buffer holds its output until TMA has read it; its
  // stores' issuer waits for that (long done by then, a tile's first S
  // issued) and releases the buffer to the loader, which loads the tile
  // after next into it.
  auto releaseOutputBefore = [&] {
    if (!persistent || !storesOutputByTma)
      return;
    Value after = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                        tiles.round, zero);
    emitIf(b, loc, arith::AndIOp::create(b, loc, issuesStores, after), [&] {
      NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, 0, b.getUnitAttr());
      nvgpu::MBarrierArriveOp::create(
          b, loc, nvgpu::MBarrierTokenType::get(context), empty,
          arith::AddIOp::create(
              b, loc,
              queryBufferOf(arith::SubIOp::create(b, loc, tiles.round, one)),
              indexConst(b, loc, kQueriesReleased)));
    });
  };
  auto exp2 = [&](Value x) {
    return math::Exp2Op::create(b, loc, x, arith::FastMathFlags::afn);
  };
  // The warpgroup's rows of each staged input in its buffer of barrier
  // index `barrier` (a step's keys in boxes of 128-byte rows, swizzled: 16-byte
  // unit u of row r at u ^ (r % 8)), and the pair of fragment floats i and
  // i + 1 of one, as f32.
  auto scoreTilesOf = [&](Value barrier) {
    SmallVector<Value> tiles;
    Value groupScores = arith::AddIOp::create(
        b, loc, byteConst(layout.scores(0)),
        arith::MulIOp::create(b, loc, barrier, byteConst(layout.scoreBytes)));
    int64_t offset = 0;
    for (BlockArgument arg : scoreInputs) {
      Type type = getElementTypeOrSelf(arg.getType());
      tiles.push_back(
          view(arith::AddIOp::create(b, loc, groupScores, byteConst(offset)),
               {kGroupRows * kAttentionTilesKeys}, type));
      offset += scoreBytesOf(arg);
    }
    return tiles;
  };
  auto stagedPair = [&](BlockArgument arg, Value tile, int64_t i) -> Value {
    Type type = getElementTypeOrSelf(arg.getType());
    int64_t bytes = type.getIntOrFloatBitWidth() / 8;
    int64_t columns = scoreBoxColumns(arg);
    Value r = groupRow[(i / 2) % 2];
    // Float i's column is 8 (i / 4) + quadColumn: the box is 8 (i / 4)'s.
    int64_t column = 8 * (i / 4);
    Value rowByte = arith::MulIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, indexConst(b, loc, column % columns),
                              quadColumn),
        indexConst(b, loc, bytes));
    Value unit = arith::XOrIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, rowByte, byteConst(16)),
        arith::RemUIOp::create(b, loc, r, indexConst(b, loc, 8)));
    Value at = arith::AddIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc,
                              byteConst(column / columns * kGroupRows * 128),
                              arith::MulIOp::create(b, loc, r, byteConst(128))),
        arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, unit, byteConst(16)),
            arith::RemUIOp::create(b, loc, rowByte, byteConst(16))));
    Value pair =
        vector::LoadOp::create(b, loc, VectorType::get({2}, type), tile,
                               ValueRange{arith::DivUIOp::create(
                                   b, loc, at, indexConst(b, loc, bytes))},
                               /*nontemporal=*/false, vectorAlignment(type, 2));
    return extendToF32(b, loc, pair);
  };
  // The softmax of step `step`'s scores: their math at (row, key) (rows
  // and keys past the ends evaluated at the last ones, then keys past the
  // end masked), each row's new maximum over the quad of lanes sharing it,
  // the probabilities against it as pairs rounded to the operands' type,
  // each pair a 32-bit word (the A operand of P V), and the factor of the
  // rows' previous output and sums (which are rescaled here).
  struct Probabilities {
    SmallVector<Value> words;
    Value scale[2];
  };
  auto softmax = [&](Value scores, Value step,
                     Online &state) -> FailureOr<Probabilities> {
    PointEvaluator::CacheScope scope(evaluator);
    Value key0 = arith::MulIOp::create(b, loc, step,
                                       indexConst(b, loc, kAttentionTilesKeys));
    int64_t count = kAttentionTilesKeys / 2;
    SmallVector<Value> values(count);
    // The staged inputs' buffer of this step (its barriers' index).
    Value scoreBuffer;
    SmallVector<Value> scoreTiles;
    if (stageScores) {
      Value global = globalStep(step);
      scoreBuffer = scoreBarrierOf(scoreBufferOf(global), warpgroup, 0);
      waitForPhase(
          b, loc, full,
          scoreBarrierOf(scoreBufferOf(global), warpgroup, kScoresLoaded),
          scoreParityOf(global));
      scoreTiles = scoreTilesOf(scoreBuffer);
    }
    // Float i's key (its column in the step's 128).
    auto keyOf = [&](int64_t i) {
      return arith::AddIOp::create(
          b, loc, key0,
          arith::AddIOp::create(b, loc, quadColumn,
                                indexConst(b, loc, 8 * (i / 4) + i % 2)));
    };
    auto pairType = VectorType::get({2}, f32);
    for (int64_t i = 0; i < count; i += 2) {
      int64_t h = (i / 2) % 2;
      SmallVector<Value> pair;
      for (int64_t c = 0; c < 2; ++c)
        pair.push_back(LLVM::ExtractValueOp::create(b, loc, scores,
                                                    ArrayRef<int64_t>{i + c}));
      PointEvaluator::CacheScope point(evaluator);
      evaluator.known[shape.scores.getResult()] = evaluator.roundThrough(
          vector::FromElementsOp::create(b, loc, pairType, pair), scoreType);
      if (stageScores)
        for (auto [arg, tile] : llvm::zip(scoreInputs, scoreTiles))
          evaluator.known[arg] = stagedPair(arg, tile, i);
      SmallVector<Value> index(batch);
      index.push_back(evalRow[h]);
      index.push_back(arith::MinUIOp::create(b, loc, keyOf(i), lastKey));
      FailureOr<Value> t = evaluator.eval(
          shape.keyLimit ? shape.keyLimit->unmasked : shape.softmax.getX(),
          index, /*lanes=*/true);
      if (failed(t))
        return failure();
      for (int64_t c = 0; c < 2; ++c)
        values[i + c] =
            vector::ExtractOp::create(b, loc, *t, ArrayRef<int64_t>{c});
    }
    // The staged inputs are read: their buffer is free for the next step's.
    if (stageScores) {
      for (BlockArgument arg : scoreInputs)
        evaluator.known.erase(arg);
      emitIf(b, loc, isThreadZero(b, loc, lane), [&] {
        nvgpu::MBarrierArriveOp::create(
            b, loc, nvgpu::MBarrierTokenType::get(context), empty,
            b.createOrFold<arith::AddIOp>(loc, scoreBuffer,
                                          indexConst(b, loc, kScoresReleased)));
      });
    }
    // Keys past the end (only in the last step, if partial) masked, and
    // under a key limit those past a row's (only in the steps that reach
    // past the warpgroup's first row's).
    Value stepEnd = arith::AddIOp::create(
        b, loc, key0, indexConst(b, loc, kAttentionTilesKeys));
    Value partialStep =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, stepEnd, keys);
    if (shape.keyLimit)
      partialStep = arith::OrIOp::create(
          b, loc, partialStep,
          arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::sgt, stepEnd,
              arith::AddIOp::create(
                  b, loc, arith::AddIOp::create(b, loc, groupRow0, offset),
                  one)));
    auto partial = scf::IfOp::create(b, loc, SmallVector<Type>(count, f32),
                                     partialStep, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(partial.thenBlock());
      SmallVector<Value> masked;
      for (int64_t i = 0; i < count; ++i) {
        Value key = keyOf(i);
        Value seen =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, key, keys);
        if (shape.keyLimit)
          seen = arith::AndIOp::create(
              b, loc, seen,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, key,
                                    rowLimit[(i / 2) % 2]));
        masked.push_back(
            arith::SelectOp::create(b, loc, seen, values[i], minusInf));
      }
      scf::YieldOp::create(b, loc, masked);
      b.setInsertionPointToStart(partial.elseBlock());
      scf::YieldOp::create(b, loc, values);
    }
    values = SmallVector<Value>(partial.getResults());
    // Each row's values (of this thread), combined as a tree (short
    // dependency chains).
    auto rowValues = [&](ArrayRef<Value> all, int64_t h) {
      SmallVector<Value> mine;
      for (int64_t i = 0; i < count; ++i)
        if ((i / 2) % 2 == h)
          mine.push_back(all[i]);
      return mine;
    };
    auto tree = [&](SmallVector<Value> terms, auto combine) {
      while (terms.size() > 1) {
        SmallVector<Value> next;
        for (size_t i = 0; i + 1 < terms.size(); i += 2)
          next.push_back(combine(terms[i], terms[i + 1]));
        if (terms.size() % 2)
          next.push_back(terms.back());
        terms = std::move(next);
      }
      return terms.front();
    };
    auto maximum = [&](Value x, Value y) -> Value {
      return arith::MaximumFOp::create(b, loc, x, y);
    };
    auto add = [&](Value x, Value y) -> Value {
      return arith::AddFOp::create(b, loc, x, y);
    };
    Value rowMax[2];
    for (int64_t h = 0; h < 2; ++h)
      rowMax[h] = tree(rowValues(values, h), maximum);
    Probabilities p;
    Value offset[2];
    for (int64_t h = 0; h < 2; ++h) {
      for (int32_t lanes : {1, 2})
        rowMax[h] = arith::MaximumFOp::create(
            b, loc, rowMax[h], shuffleXor(b, loc, rowMax[h], lanes));
      Value newMax = arith::MaximumFOp::create(b, loc, state.max[h], rowMax[h]);
      // Nothing seen yet (every key masked so far): exponentials against 0,
      // so that -inf - -inf makes no NaN.
      Value used = arith::SelectOp::create(
          b, loc,
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, newMax,
                                minusInf),
          zeroF, newMax);
      offset[h] = arith::MulFOp::create(b, loc, used, log2e);
      p.scale[h] = exp2(arith::SubFOp::create(
          b, loc, arith::MulFOp::create(b, loc, state.max[h], log2e),
          offset[h]));
      state.max[h] = newMax;
      state.sum[h] = arith::MulFOp::create(b, loc, state.sum[h], p.scale[h]);
    }
    // exp(t - max) = 2^(t log2(e) - max log2(e)), one FMA and ex2.
    SmallVector<Value> e(count);
    for (int64_t i = 0; i < count; ++i)
      e[i] = exp2(math::FmaOp::create(
          b, loc, values[i], log2e,
          arith::NegFOp::create(b, loc, offset[(i / 2) % 2])));
    for (int64_t h = 0; h < 2; ++h)
      state.sum[h] = add(state.sum[h], tree(rowValues(e, h), add));
    for (int64_t i = 0; i < count; i += 2) {
      Value pair = roundTo(b, loc,
                           vector::FromElementsOp::create(
                               b, loc, pairType, ValueRange{e[i], e[i + 1]}),
                           element);
      p.words.push_back(vector::ExtractOp::create(
          b, loc,
          vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), pair),
          ArrayRef<int64_t>{0}));
    }
    return p;
  };
  // The output rescaled to the rows' new maxima.
  auto rescale = [&](Value output, const Probabilities &p) {
    for (int64_t i = 0; i < head / 2; ++i) {
      Value o =
          LLVM::ExtractValueOp::create(b, loc, output, ArrayRef<int64_t>{i});
      o = arith::MulFOp::create(b, loc, o, p.scale[(i / 2) % 2]);
      output =
          LLVM::InsertValueOp::create(b, loc, output, o, ArrayRef<int64_t>{i});
    }
    return output;
  };
  // Step j's products overlap the softmax: S of step j is issued with
  // O += P V of step j - 1 (P in registers, carried from the step before),
  // and its softmax comes before the wait for that product (ptxas moves
  // the wait up to the exponentials: results.md); then the output is
  // rescaled. Step 0's S and softmax come before the loop, the last P V
  // after it.
  auto online = scf::IfOp::create(
      b, loc, TypeRange{outputType, f32, f32, f32, f32},
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, keyTiles, zero),
      /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(online.thenBlock());
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    awaitTurn();
    Value first = issueScores(zero);
    passTurn();
    releaseOutputBefore();
    for (int64_t ahead = 0; ahead <= kPrefetchTiles; ++ahead)
      prefetchTile(indexConst(b, loc, ahead));
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    release(zero, kKeysReleased);
    Online state{LLVM::ZeroOp::create(b, loc, outputType),
                 {minusInf, minusInf},
                 {zeroF, zeroF}};
    FailureOr<Probabilities> p = softmax(first, zero, state);
    if (failed(p))
      return failure();
    SmallVector<Value> initial{state.output, state.max[0], state.max[1],
                               state.sum[0], state.sum[1]};
    llvm::append_range(initial, p->words);
    auto loop = scf::ForOp::create(b, loc, one, keyTiles, one, initial);
    {
      OpBuilder::InsertionGuard body(b);
      b.setInsertionPointToStart(loop.getBody());
      ValueRange carried = loop.getRegionIterArgs();
      Value step = loop.getInductionVar();
      Value previous = arith::SubIOp::create(b, loc, step, one);
      NVVM::WgmmaFenceAlignedOp::create(b, loc);
      awaitTurn();
      Value scores = issueScores(step);
      Value output = issueOutput(previous, carried[0], carried.drop_front(5));
      passTurn();
      prefetchTile(arith::AddIOp::create(b, loc, step,
                                         indexConst(b, loc, kPrefetchTiles)));
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1);
      release(step, kKeysReleased);
      Online next{output, {carried[1], carried[2]}, {carried[3], carried[4]}};
      FailureOr<Probabilities> p = softmax(scores, step, next);
      if (failed(p))
        return failure();
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
      release(previous, kValuesReleased);
      next.output = rescale(output, *p);
      SmallVector<Value> yielded{next.output, next.max[0], next.max[1],
                                 next.sum[0], next.sum[1]};
      llvm::append_range(yielded, p->words);
      scf::YieldOp::create(b, loc, yielded);
    }
    releaseQueries();
    Value last = arith::SubIOp::create(b, loc, keyTiles, one);
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    awaitTurn();
    Value output =
        issueOutput(last, loop.getResult(0), loop.getResults().drop_front(5));
    passTurn();
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    release(last, kValuesReleased);
    scf::YieldOp::create(b, loc,
                         ValueRange{output, loop.getResult(1),
                                    loop.getResult(2), loop.getResult(3),
                                    loop.getResult(4)});
    b.setInsertionPointToStart(online.elseBlock());
    releaseOutputBefore();
    releaseQueries();
    scf::YieldOp::create(b, loc,
                         ValueRange{LLVM::ZeroOp::create(b, loc, outputType),
                                    minusInf, minusInf, zeroF, zeroF});
  }

  // The rows' sums over their quads; the output divided by them and
  // rounded in pairs (no keys: the product of empty matrices, zeros; every
  // key masked: 0 / 0, NaN, as the op-by-op softmax gives), and the rows'
  // log-sum-exp where the kernel has it.
  Value output = online.getResult(0);
  Value total[2];
  for (int64_t h = 0; h < 2; ++h) {
    total[h] = online.getResult(3 + h);
    for (int32_t lanes : {1, 2})
      total[h] = arith::AddFOp::create(b, loc, total[h],
                                       shuffleXor(b, loc, total[h], lanes));
  }
  Value noKeys =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, keys, zero);
  // The pair of the thread's row 8 h below of columns 8 j.., as stored.
  auto outputPair = [&](int64_t h, int64_t j) {
    SmallVector<Value, 2> pair;
    for (int64_t c = 0; c < 2; ++c) {
      Value o = LLVM::ExtractValueOp::create(
          b, loc, output, ArrayRef<int64_t>{4 * j + 2 * h + c});
      o = arith::DivFOp::create(b, loc, o, total[h]);
      pair.push_back(arith::SelectOp::create(b, loc, noKeys, zeroF, o));
    }
    return roundTo(
        b, loc,
        vector::FromElementsOp::create(b, loc, VectorType::get({2}, f32), pair),
        element);
  };
  Value inRows[2];
  for (int64_t h = 0; h < 2; ++h)
    inRows[h] = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row[h],
                                      queries);
  if (storesOutputByTma) {
    // Into the warpgroup's rows of the Q buffer, in the layout of its TMA
    // boxes (64 columns each, 128-byte rows swizzled: 16-byte unit u of row
    // r at u ^ (r % 8), so a warp's 8 rows of a unit hit every bank once),
    // rows past the end too (TMA stores none of them).
    Value tile = view(groupOffset, {boxes * kBox * kBox}, element);
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t j = 0; j < head / 8; ++j) {
        Value unit = arith::XOrIOp::create(b, loc, quadRow,
                                           indexConst(b, loc, j % (kBox / 8)));
        Value index = arith::AddIOp::create(
            b, loc, indexConst(b, loc, j / (kBox / 8) * kBox * kBox),
            arith::AddIOp::create(
                b, loc,
                arith::MulIOp::create(b, loc, groupRow[h],
                                      indexConst(b, loc, kBox)),
                arith::AddIOp::create(
                    b, loc,
                    arith::MulIOp::create(b, loc, unit, indexConst(b, loc, 8)),
                    quadColumn)));
        vector::StoreOp::create(b, loc, outputPair(h, j), tile, index,
                                /*nontemporal=*/false,
                                vectorAlignment(element, 2));
      }
    // TMA reads shared memory through the async proxy, once the whole
    // warpgroup has written it.
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(context, NVVM::SharedSpace::shared_cta));
    NVVM::BarrierOp::create(
        b, loc, Type(), outputWritten,
        arith::ConstantIntOp::create(b, loc, kGroupThreads, 32),
        /*reductionOp=*/nullptr, /*reductionPredicate=*/Value());
    emitIf(b, loc, issuesStores, [&] {
      SmallVector<Value> batchO = outputBatchOf(b, batch);
      Value groupRow0 = arith::AddIOp::create(
          b, loc, row0,
          arith::MulIOp::create(b, loc, warpgroup,
                                indexConst(b, loc, kGroupRows)));
      for (int64_t box = 0; box < boxes; ++box) {
        SmallVector<Value> coordinates = {indexConst(b, loc, box * kBox),
                                          groupRow0};
        llvm::append_range(coordinates, batchO);
        nvgpu::TmaAsyncStoreOp::create(
            b, loc,
            view(arith::AddIOp::create(b, loc, groupOffset,
                                       byteConst(box * kBoxBytes)),
                 outputBox(), element),
            mapO, coordinates, /*predicate=*/Value());
      }
      NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
    });
  } else {
    Value outBuffer = outputBuffer(b);
    for (int64_t h = 0; h < 2; ++h)
      emitIf(b, loc, inRows[h], [&] {
        for (int64_t j = 0; j < head / 8; ++j) {
          SmallVector<Value> index(batch);
          index.push_back(row[h]);
          index.push_back(arith::AddIOp::create(b, loc, quadColumn,
                                                indexConst(b, loc, 8 * j)));
          vector::StoreOp::create(b, loc, outputPair(h, j), outBuffer, index,
                                  /*nontemporal=*/false,
                                  vectorAlignment(element, 2));
        }
      });
  }
  // The row's log-sum-exp, max + log(sum), from the quad's first lane
  // (-inf with no key seen: no keys or every key masked).
  if (shape.logSumExp)
    for (int64_t h = 0; h < 2; ++h)
      emitIf(b, loc,
             arith::AndIOp::create(
                 b, loc, inRows[h],
                 arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       quadColumn, zero)),
             [&] {
               Value max = online.getResult(1 + h);
               Value lse = arith::SelectOp::create(
                   b, loc,
                   arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, max,
                                         minusInf),
                   minusInf,
                   arith::AddFOp::create(
                       b, loc, max, math::LogOp::create(b, loc, total[h])));
               SmallVector<Value> index(batch);
               index.push_back(row[h]);
               store(b, loc, lse, buffers.outputs[1], index);
             });
  endTiles(tiles);
  // The block's last output stores complete before it exits (its shared
  // memory goes with it).
  if (storesOutputByTma) {
    if (persistent)
      b.setInsertionPointAfter(tiles.loop);
    Value issuer = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(b, loc, ids.thread,
                               indexConst(b, loc, kGroupThreads)),
        zero);
    emitIf(b, loc, issuer, [&] {
      NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, 0, UnitAttr());
    });
  }
  return success();
}

LogicalResult AttentionTiles::emit(OpBuilder &b, Value multiprocessors) {
  // On the host: the tensor maps (asBatches: TMA fills zeros past each
  // batch's rows) and a block per batch and blockRows query rows.
  for (auto [operand, map] :
       {std::pair(shape.queries, &mapQ), std::pair(shape.keys, &mapK),
        std::pair(shape.values, &mapV)})
    *map = createTensorMap(b, loc, asBatches(b, operand),
                           boxOf(operand, kBox, kBox));
  if (stageScores)
    for (BlockArgument arg : scoreInputs)
      scoreMaps.push_back(
          createTensorMap(b, loc, asBatches(b, arg),
                          boxOf(arg, kGroupRows, scoreBoxColumns(arg))));
  // A block per multiprocessor, each going through the tiles a grid apart,
  // so that a tile's Q and first K and V load while the tile before it
  // ends (the loader runs ahead by the stages and Q's buffer): H100,
  // 2026-12-06, D = 128 2-4% faster, D = 64 within 2%. Under a key limit,
  // whose tiles differ in length, a block per tile: the hardware gives the
  // next to whichever multiprocessor frees first. With a bias read per
  // score from global memory, a block per tile too (persistent, 4-11%
  // slower). At least one block (no rows: it has nothing to do).
  persistent = !shape.keyLimit && !readsScoresFromMemory();
  // A persistent block's next Q loads while a tile runs where a second
  // buffer fits (not beside an f32 bias staged at D = 128). Then staged
  // inputs take two buffers where they still fit, so that a step's load is
  // issued two steps ahead (H100, 2026-12-07: a bf16 bias at D = 64 4%
  // faster at 1024 and 2048 rows, 0.5% at 4096; taking them before the
  // second Q buffer made a bf16 bias per head at D = 128 2-7% slower).
  auto fits = [](const SharedLayout &l) {
    return l.total() + kSwizzleAlignment <= kSharedBytes;
  };
  SharedLayout doubled = layout;
  doubled.queryBuffers = kMaxQueryBuffers;
  if (persistent && fits(doubled))
    layout = doubled;
  SharedLayout moreScores = layout;
  moreScores.scoreBuffers = kMaxScoreBuffers;
  if (stageScores && fits(moreScores))
    layout = moreScores;
  // The output through the tile's Q buffer by TMA: a warp's stores are then
  // whole rows (a thread's fragment pairs are 4 bytes of 8 rows; rows of an
  // output stored transposed lie heads apart). Its buffer is then released
  // once TMA has read it, the next tile begun: a persistent block's next Q
  // loads into the other buffer meanwhile, so where there is only one the
  // output is stored from registers and Q released before its last P V.
  storesOutputByTma = !persistent || layout.queryBuffers == kMaxQueryBuffers;
  if (storesOutputByTma)
    mapO = createTensorMap(b, loc, outputAsBatches(b), outputBox());
  Value grid = blocksOf(b);
  if (persistent)
    grid = arith::MinUIOp::create(b, loc, grid, multiprocessors);
  grid = arith::MaxUIOp::create(b, loc, grid, indexConst(b, loc, 1));
  return emitLaunch(
      b, loc, kernel, grid, (groups + 1) * kGroupThreads,
      [&](OpBuilder &b, const LaunchIds &ids) -> LogicalResult {
        SmallVector<Value> sizes = batchSizes(b);
        Value tiles = arith::CeilDivUIOp::create(
            b, loc, rowsOf(b, shape.queries),
            indexConst(b, loc, blockRows));
        Value blocks =
            arith::MulIOp::create(b, loc, product(b, loc, sizes), tiles);
        LogicalResult body = success();
        emitIf(b, loc,
               arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                     ids.block, blocks),
               [&] { body = emitBody(b, ids, tiles); });
        return body;
      },
      /*shared=*/{}, /*clusterBlocks=*/0, layout.total() + kSwizzleAlignment,
      nameSuffix);
}

/// The launch of `plan`'s kernel, wide or narrow (below), its inputs read
/// per score staged or not; its kernels' names end in `suffix`.
static LogicalResult
emitLaunches(OpBuilder &b, Location loc, KernelOp kernel, KernelPlanAttr plan,
             const KernelBuffers &buffers, const AttentionKernelShape &shape,
             Value multiprocessors, bool stageScores, StringRef suffix) {
  if (plan.getThreads() != kAttentionTilesWideThreads)
    return AttentionTiles(loc, kernel, plan, buffers, shape, suffix,
                          stageScores)
        .emit(b, multiprocessors);
  // Three multiplying warpgroups (wide) where that takes fewer waves of
  // blocks, weighed by a wide block's time; else two (narrow: a launch of
  // few blocks, where the last wave's are what the wide ones cut fewer).
  // Chosen on the host, from the call's rows and multiprocessors.
  std::string narrowSuffix = ("_narrow" + suffix).str();
  AttentionTiles wide(loc, kernel, plan, buffers, shape, suffix, stageScores);
  AttentionTiles narrow(loc, kernel,
                        KernelPlanAttr::get(b.getContext(), plan.getStrategy(),
                                            kAttentionTilesThreads,
                                            plan.getVector(), plan.getRow(),
                                            plan.getCluster(), plan.getPasses(),
                                            plan.getSplit()),
                        buffers, shape, narrowSuffix, stageScores);
  auto weighedWaves = [&](AttentionTiles &tiles, int64_t weight) {
    return arith::MulIOp::create(
        b, loc,
        arith::CeilDivUIOp::create(b, loc, tiles.blocksOf(b), multiprocessors),
        indexConst(b, loc, weight));
  };
  auto ifOp = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ult,
          weighedWaves(wide, kAttentionTilesWideBlockTime.wide),
          weighedWaves(narrow, kAttentionTilesWideBlockTime.narrow)),
      /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  if (failed(wide.emit(b, multiprocessors)))
    return failure();
  b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
  return narrow.emit(b, multiprocessors);
}

LogicalResult codegen::emitAttentionTiles(OpBuilder &b, Location loc,
                                          KernelOp kernel, KernelPlanAttr plan,
                                          const KernelBuffers &buffers) {
  std::string why;
  FailureOr<AttentionKernelShape> shape = getAttentionKernelShape(kernel, why);
  if (failed(shape))
    return kernel.emitOpError("cannot run as attention_tiles: ") << why;
  FailureOr<Value> multiprocessors = multiprocessorCount(b, loc);
  if (failed(multiprocessors))
    return failure();
  // Inputs read per score staged through shared memory by TMA where they
  // can be (and, on the host, where the call's are aligned for TMA);
  // else read per score from global memory.
  AttentionTiles probe(loc, kernel, plan, buffers, *shape);
  if (!probe.canStageScores())
    return emitLaunches(b, loc, kernel, plan, buffers, *shape, *multiprocessors,
                        /*stageScores=*/false, "");
  auto ifOp = scf::IfOp::create(b, loc, probe.scoresAligned(b),
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  if (failed(emitLaunches(b, loc, kernel, plan, buffers, *shape,
                          *multiprocessors, /*stageScores=*/true, "_staged")))
    return failure();
  b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
  return emitLaunches(b, loc, kernel, plan, buffers, *shape, *multiprocessors,
                      /*stageScores=*/false, "");
}
