//===- KernelPlan.h - How each fusion.kernel runs on a GPU ------*- C++ -*-===//
//
// The kernel plan (`#fusion.plan`) is the one decision of how a kernel runs
// on a GPU target: strategy, threads per block, vector width, where a row
// lives between passes, cluster split, and how many times each input is
// read. `planKernel` makes it; `fusion-plan-kernels` attaches it;
// `fusion-report` counts bytes by it; `fusion-kernels-to-gpu` carries it
// out and checks hand-written plans with `checkPlan`.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_DIALECT_FUSION_ANALYSIS_KERNELPLAN_H
#define FUSION_DIALECT_FUSION_ANALYSIS_KERNELPLAN_H

#include "fusion/Dialect/Fusion/Analysis/GpuTarget.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"

#include "llvm/Support/CommandLine.h"

#include <string>

namespace mlir::fusion {

/// How matmul kernels run on the GPU.
enum class MatmulBackend {
  /// A library call where the kernel is one (LibraryMatmul.h), else a
  /// generated kernel.
  automatic,
  /// Always a library call (cuBLASLt); an error where the kernel is not one.
  library,
  /// Always a generated kernel.
  generated,
};

/// The values of a `matmul-backend` option.
inline auto matmulBackendValues() {
  return llvm::cl::values(
      clEnumValN(MatmulBackend::automatic, "auto",
                 "a library call where the kernel maps onto one, else a "
                 "generated kernel"),
      clEnumValN(MatmulBackend::library, "library",
                 "cuBLASLt, with its epilogue; an error for other kernels"),
      clEnumValN(MatmulBackend::generated, "generated",
                 "Fusion's own kernel"));
}

struct PlanOptions {
  GpuTarget target;
  MatmulBackend matmulBackend = MatmulBackend::automatic;
  /// Longest row held by one block (the fusion passes' option of the same
  /// name makes longer rows `wide_row` kernels); a longer row is split over
  /// a cluster in parts of at most half of it, or streamed.
  int64_t maxRowElements = 32768;
  /// Row plans from the measured table (RowPlans.def) where it covers the
  /// kernel; false: the planner's rule for every row.
  bool measuredRowPlans = true;
};

/// A row sum of exp(y - c), c a value per row, paired with the row max of
/// the same y (softmax, logsumexp): a pass over the row can compute both,
/// keeping the running max m and the sum of exp(y - m), rescaled when m
/// grows; the sum is then that total times exp(m - c) ("online softmax").
/// y, c and every op between are f32, and c reads no reduction after the
/// max.
struct OnlineSum {
  Operation *max, *sum;
  /// y and c.
  Value shifted, shift;
};

/// The structure a row plan needs: the real reductions in order, all over
/// the innermost axis of values of one row shape; every yielded value a
/// full row or one value per row.
struct RowKernelShape {
  SmallVector<Operation *> reductions;
  /// The first reduction's operand, whose shape is the row shape.
  Value rowInput;
  ArrayRef<int64_t> rowShape;
  /// The sums a streamed row computes in their max's pass.
  SmallVector<OnlineSum> onlineSums;

  /// The online sum paired with `reduction` (its max or its sum), if any.
  const OnlineSum *findOnlineSum(Operation *reduction) const;
};
FailureOr<RowKernelShape> getRowKernelShape(KernelOp kernel,
                                            std::string &reason);

/// The structure the sweep plans (`columns`, `split_reduction`) need: real
/// reductions over one operand shape and one set of axes, none reading
/// another's result, and every yielded value one of their results. The
/// operand's points split into kept dimensions (one output element each)
/// and reduced ones (the elements each output reduces).
struct ReductionKernelShape {
  SmallVector<Operation *> reductions;
  /// The first reduction's operand, whose shape is the iteration space.
  Value input;
  ArrayRef<int64_t> shape;
  SmallVector<int64_t> keptDims, reducedDims;

  /// Whether the innermost axis is reduced (`split_reduction`) rather than
  /// kept (`columns`).
  bool reducesInnermost() const {
    return !reducedDims.empty() &&
           reducedDims.back() == static_cast<int64_t>(shape.size()) - 1;
  }
};
FailureOr<ReductionKernelShape> getReductionKernelShape(KernelOp kernel,
                                                        std::string &reason);

/// Threads of a columns block side by side along the columns of `shape`
/// (the rest of the block goes down the rows): a warp, or fewer when the
/// kernel has fewer column vectors of the plan's width (of a segment's
/// columns, getColumnSegmentRows).
int64_t getColumnLanes(KernelPlanAttr plan, const ReductionKernelShape &shape);

/// Rows a columns plan reads as one row of whole vectors: 1 where the
/// plan's vector divides the kept size K; otherwise (an odd K, say) the
/// fewest rows g with g * K a multiple of it. A segment of g rows starts on
/// a vector boundary of the flat operand, so its g * K elements are read
/// in aligned vectors, each lane's column fixed from segment to segment;
/// the g partial totals of each column are folded afterwards. The planner
/// and verifier allow such plans only where whyNotColumnSegments is empty.
int64_t getColumnSegmentRows(KernelPlanAttr plan,
                             const ReductionKernelShape &shape);

/// Why the operand of a column reduction kernel cannot be read in flat
/// segments of rows with vectors of `vector` ("" where it can): the kept
/// axes must be the innermost ones (a point's flat offset is row * K +
/// column), the sizes static with whole segments, and every value read
/// either of the operand's shape or a single element.
std::string whyNotColumnSegments(KernelOp kernel,
                                 const ReductionKernelShape &shape,
                                 int64_t vector);

/// Whether the row strategies write an output of `shape` in a kernel over
/// rows of `rowShape`: a full row, or one value per row ([R...] or
/// [R..., 1]). The fusion policy asks this before it grows a row kernel.
bool isRowOutput(ArrayRef<int64_t> shape, ArrayRef<int64_t> rowShape);

/// Whether every op of `kernel` is a constant or elementwise math and every
/// value has the output shape or holds one element: then a point is a flat
/// offset, whatever the innermost size.
bool isFlatElementwise(KernelOp kernel);

/// Elements in one `target.vectorBytes` access to the narrowest tensor the
/// kernel reads or writes.
int64_t getVectorLanes(KernelOp kernel, const GpuTarget &target);

/// The widest vector (at most getVectorLanes) that divides `innermost` and
/// the innermost size of every input: 1 when there is none or `innermost`
/// is dynamic.
int64_t getInnermostVectorWidth(KernelOp kernel, const GpuTarget &target,
                                int64_t innermost);

/// The vector width of a row plan over rows of dynamic length: the widest
/// (at most getVectorLanes) that every input's static innermost size
/// allows. The rows strategy reads vectors of it where the length at run
/// time is a multiple of it, else elements.
int64_t getDynamicRowVectorWidth(KernelOp kernel, const GpuTarget &target);

/// The products the tiles of a matmul strategy compute, and where the
/// epilogue reads them: one product, every output of its shape; or a pair of
/// products sharing the left operand, multiplied side by side in each tile so
/// that the epilogue combines them and neither reaches memory (the gated MLP,
/// `silu(x @ Wg) * (x @ Wu)`). A pair is two matmuls of one left operand, or
/// two column slices of one product (the halves of `x @ [Wg Wu]`); every
/// output then has the shape of one of the pair.
struct TiledProducts {
  struct Product {
    MatmulOp matmul;
    /// What the epilogue reads: the matmul's result, or a slice of it.
    Value value;
    /// The value's first column in the matmul's result (and its B).
    int64_t column = 0;
  };
  SmallVector<Product, 2> products;
  /// Every output's shape.
  SmallVector<int64_t> shape;

  bool isPair() const { return products.size() == 2; }
};

/// Whether every use of `value` (transitively, to the kernel's outputs)
/// reads it at the element being computed: ops whose results all have
/// `shape`, no slice, transpose, matmul or reduction. The tile strategies
/// know a product only at the tile's own point.
bool isReadPointwise(Value value, ArrayRef<int64_t> shape);

/// The products of a matmul kernel that a tile strategy computes; failure
/// for a kernel of other structure (a reduction, more matmuls, outputs of
/// other shapes, a pair of unequal or batched products, a product read at
/// other elements), with `why` said.
FailureOr<TiledProducts> getTiledProducts(KernelOp kernel,
                                          std::string *why = nullptr);

/// The two column slices of `product` through which it is read, when it is
/// read only through two (rows whole, columns at stride 1, of one width, not
/// the same columns): the sliced spelling of a pair.
std::optional<std::pair<SliceOp, SliceOp>> getPairSlices(Value product);

/// Whether two matmuls can be a pair in one kernel when their left operands
/// are the same value: 2-D products of one type.
bool canPairProducts(MatmulOp first, MatmulOp second);

/// The tiles of a `matmul_wgmma` kernel: a block of `warpgroups`
/// warpgroups per output tile of `m` x `n`, each warpgroup `m / warpgroups`
/// of its rows, along K in steps of `k` through `stages` shared-memory
/// stages. 64 bf16 or f16 elements are one 128-byte swizzled row, the
/// widest a TMA box with 128-byte swizzling takes. A pair of products
/// (TiledProducts) holds half of a tile's columns of each. Where the loads
/// run on a warpgroup of their own, `clusterBlocks` blocks (a cluster)
/// compute neighbouring tiles of the same rows, each loading a part of A's
/// tile into all of them (TMA multicast).
struct WgmmaTiles {
  int64_t m, n, k, stages, warpgroups, clusterBlocks = 1;
  constexpr int64_t threads() const { return 128 * warpgroups; }
};
/// Many rows: two warpgroups per 256 x 128 tile, 4 stages (192 KiB), in
/// clusters of two: L2 serves a third fewer bytes per tile (A's half of
/// them).
inline constexpr WgmmaTiles kWgmmaTiles{256, 128, 64, 4, 2, 2};
static_assert(kWgmmaTiles.warpgroups % kWgmmaTiles.clusterBlocks == 0,
              "a block loads whole boxes of A's tile (a warpgroup's rows)");
/// Few rows (decoding, small batches), where the weights' bytes bound the
/// time more than the FLOPs: one warpgroup per 64 x 256 tile (B read 512
/// bytes of a row at a time, 256 of each product of a pair), K cut into the
/// plan's `split` ranges, a block each, so that every multiprocessor
/// streams B; 4 stages (160 KiB).
inline constexpr WgmmaTiles kWgmmaFewRowTiles{64, 256, 64, 4, 1};
/// Few rows of a single product whose operands are both kernel inputs
/// (loaded by a warpgroup of their own): 64 x 128 tiles, B read 256 bytes
/// of a row at a time, as each product of a pair is. Twice the tiles of
/// kWgmmaFewRowTiles and so half the K ranges: each last warp of a split
/// sums half as many partials (H100, 2026-12-06, decode's down projection:
/// 16 tiles x 8 ranges 36.4 us, 32 tiles x 4 ranges 33.8). Kernels whose
/// threads write prologues keep the wide tiles (autocast's 16-token linear
/// 0.0447 ms wide, 0.0613 narrow).
inline constexpr WgmmaTiles kWgmmaFewRowNarrowTiles{64, 128, 64, 4, 1};
/// The few-row tiles of a kernel's products `tiled`.
WgmmaTiles getWgmmaFewRowTiles(const TiledProducts &tiled);
/// Most rows the few-row tiles take: up to 256 they beat one 256-row tile
/// (H200, 2026-12-01, the MLP block generated: 65 rows 0.230 -> 0.128 ms,
/// 128 0.216 -> 0.138, 192 0.218 -> 0.154, 256 0.214 -> 0.189).
inline constexpr int64_t kWgmmaFewRows = 4 * kWgmmaFewRowTiles.m;
/// Most K ranges of the few-row kernel (the last block of a tile sums
/// that many partial tiles).
inline constexpr int64_t kMaxWgmmaSplit = 16;

/// Output columns of a `matmul_wgmma` tile of `tiles`: a pair's tile holds
/// half of them of each product.
int64_t getWgmmaTileColumns(const TiledProducts &tiled,
                            const WgmmaTiles &tiles);

/// The kernel inputs (block argument numbers) that evaluating the body
/// values `roots` reads, not looking past the values in `known`.
llvm::SmallDenseSet<unsigned>
getInputsReadBy(ArrayRef<Value> roots, const DenseSet<Value> &known = {});

/// Whether the `matmul_wgmma` tiles take matmul operand `operand` of a
/// kernel body: a kernel input, which TMA loads, or elementwise math on
/// kernel inputs (a prologue: convert, scale by a vector per row or per
/// column, ...), which the threads evaluate into the tile as it is loaded.
bool isWgmmaOperand(Value operand);

/// Why the `matmul_wgmma` strategy cannot run `kernel` on `target`; empty
/// when it can: one 2-D product (or a pair, TiledProducts) of bf16 or f16
/// operands that are kernel inputs or prologues on them (isWgmmaOperand),
/// whose rows are whole 16-byte units (K and N static multiples of 8, as
/// TMA needs), every output of the product's shape, on a chip with
/// warpgroup MMA.
std::string whyNotWgmma(KernelOp kernel, const GpuTarget &target);

/// The structure of an `attention` kernel (fusion-fuse-attention): the
/// scores' product of Q and K^T, the value the softmax reads (the scores
/// after their math), the softmax, the output's product with V.
struct AttentionKernelShape {
  MatmulOp scores, output;
  /// Where the kernel's first result is the output's product transposed
  /// (the heads moved back after the sequence, keeping the last axis last,
  /// as a model does before its output projection): that transpose, which
  /// the output is stored through; null otherwise.
  TransposeOp outputView;
  SoftmaxOp softmax;
  /// Q `[..., Sq, D]` and V `[..., Sk, Dv]`: kernel inputs, or views of
  /// them (getViewedInput: heads sliced out of a projection and moved
  /// before the sequence, read in place).
  Value queries, values;
  /// K `[..., Sk, D]` when the kernel transposes it, else K^T `[..., D,
  /// Sk]` as stored (`keysTransposed`); an input or a view of one.
  Value keys;
  bool keysTransposed = false;
  /// The log-sum-exp over the keys of what the softmax reads, when it is
  /// the kernel's second result (null otherwise).
  LogSumExpOp logSumExp;
  /// Where what the softmax reads is `select(key <= row + offset, x, -inf)`
  /// with the predicate computed from positions (fusion.iota; a causal mask
  /// has offset 0): keys past row + offset add nothing to a row, so a
  /// strategy may skip them and mask only the keys near the limit.
  struct KeyLimit {
    /// The scores before the mask (the select's other operand).
    Value unmasked;
    int64_t offset;
  };
  std::optional<KeyLimit> keyLimit;
  /// The inputs other than Q, K and V that what the softmax reads depends
  /// on and that vary along both the rows and the keys (a bias, a mask):
  /// read once per score.
  SmallVector<BlockArgument> scoreInputs;
};

/// Whether `op` is a view an attention kernel reads in place: a slice of
/// unit strides or a transpose, either keeping the last axis whole and last
/// (so each row of the view is a contiguous row of its operand, where TMA
/// reads it).
bool isInPlaceView(Operation *op);

/// The kernel input that `operand` (a value of a kernel body) is, or is a
/// view of through isInPlaceView ops; null otherwise.
BlockArgument getViewedInput(Value operand);

/// The attention structure of `kernel`, or why it has none (`why`).
FailureOr<AttentionKernelShape> getAttentionKernelShape(KernelOp kernel,
                                                        std::string &why);

/// Most query rows per batch (Sq) the `attention_rows` strategy takes: it
/// reads K and V once per query row, so it is for decoding.
constexpr int64_t kAttentionRowsMaxQueries = 16;
/// Its blocks: sixteen warps, whose lane groups go through adjacent keys of
/// a range together (a block's step reads 64 KB of K and of V, each
/// contiguous: measured faster than more blocks of fewer warps).
constexpr int64_t kAttentionRowsThreads = 512;
/// Elements of a row of Q, K or V a lane holds: a key's row is shared by
/// D / 16 lanes, so a warp works on 32 / (D / 16) keys at once.
constexpr int64_t kAttentionRowsLaneElements = 16;
/// Its blocks resident on a multiprocessor at once (at most 128 registers
/// a thread: one block of kAttentionRowsThreads), by which the planner
/// sizes ranges. Staged plans keep it although two of their blocks fit:
/// with 32 rows, 4 ranges measured faster than 8 or 16 (H200, 2026-12-02).
constexpr int64_t kAttentionRowsBlocksPerMultiprocessor = 1;
/// Most ranges the keys of a query row are cut into (`split`).
constexpr int64_t kAttentionRowsMaxRanges = 256;
/// Most keys a query row has for its ranges to be the blocks of a cluster
/// in a plan with both a `cluster` and a `split` (a longer row's ranges
/// fold through the workspace). Clusters save the workspace's fixed costs
/// (15.1 against 17.3 us at 1024 keys, one sequence of 32 heads) but their
/// blocks are placed two to a multiprocessor where they fit, which the
/// longest rows pay for: faster up to 8192 keys (49.6 against 50.4 us),
/// even at 12288, slower at 16384 (82.5 against 80.4; H200, 2026-12-03).
constexpr int64_t kAttentionRowsClusterKeys = 8192;
/// Staged plans (`row = staged`): TMA copies each step's rows of K and V
/// into one of a ring of shared-memory stages, at most this many, and the
/// lanes read their rows there. The ring takes at most
/// kAttentionRowsStagedBytes where two or more steps fit (two blocks share
/// a multiprocessor), else at most kAttentionRowsStagedBytesAlone (one
/// block a multiprocessor).
constexpr int64_t kAttentionRowsMaxStages = 4;
constexpr int64_t kAttentionRowsStagedBytes = 96 * 1024;
constexpr int64_t kAttentionRowsStagedBytesAlone = 200 * 1024;
/// A staged plan's blocks: 4 warps, each step 64 keys (32 KB of K and V
/// at D = 128 in bf16, 3 stages).
constexpr int64_t kAttentionRowsStagedThreads = 128;
/// Keys of one step of an attention_rows block of `threads` threads with
/// head size `head`: a group of head / 16 lanes takes a few adjacent keys a
/// step (loaded before the first is used, the group's state rescaled once
/// for them).
int64_t getAttentionRowsStepKeys(int64_t threads, int64_t head);
/// Consecutive query rows of attention kernel `kernel` (rows of its output
/// in order) that read the same rows of K and V: its queries (Sq) times its
/// innermost batch axes, of static sizes, that K and V broadcast over (the
/// query heads of a group); 1 where it has no attention structure.
int64_t getAttentionSharedRows(KernelOp kernel);
/// The query rows a block of a staged attention_rows `plan` takes, each
/// with the plan's `threads` and all reading the block's stages: the most
/// of the rows sharing K and V (a divisor of their count) that fit 1024
/// threads; 1 for other plans.
int64_t getAttentionRowsBlockRows(KernelOp kernel, KernelPlanAttr plan);
/// The stages of a staged attention_rows `plan` for `kernel`: as many steps
/// of K's and V's rows as fit the ring's bytes (above), at most
/// kAttentionRowsMaxStages; 0 where `kernel` is no attention kernel.
int64_t getAttentionRowsStages(KernelOp kernel, KernelPlanAttr plan);

/// Why the `attention_rows` strategy cannot run `kernel`; empty when it
/// can: an attention kernel whose K is stored `[..., Sk, D]` (transposed in
/// the kernel) and whose one result is the output, at most
/// kAttentionRowsMaxQueries static query rows, one
/// head size D = Dv of 32, 64, 128 or 256 (a row in vectors of 16 over
/// D / 16 lanes), the output's batch axes the scores'.
std::string whyNotAttentionRows(KernelOp kernel);

/// The `attention_tiles` strategy (sm_90): a block of warpgroups per
/// batch and 64 query rows per multiplying warpgroup, each multiplying its
/// rows on the tensor cores, and one more loading K and V, 128 keys a
/// step. The plan's threads say how many: 384 (two multiplying) or 512
/// (three, whose registers hold the accumulators of D = 64 only, and only
/// without inputs read per score).
constexpr int64_t kAttentionTilesGroupRows = 64;
constexpr int64_t kAttentionTilesKeys = 128;
constexpr int64_t kAttentionTilesThreads = 384;
constexpr int64_t kAttentionTilesWideThreads = 512;
constexpr int64_t kAttentionTilesWideMaxHead = 64;
/// The query rows of an attention_tiles block of `threads`.
constexpr int64_t attentionTilesQueries(int64_t threads) {
  return (threads / 128 - 1) * kAttentionTilesGroupRows;
}
/// Under a key limit, its blocks are ordered in groups of batches of about
/// this many blocks (one block per SM: about a wave of an H200's 132), the
/// longest first within a group.
constexpr int64_t kAttentionTilesGroupBlocks = 128;

/// Why the `attention_tiles` strategy cannot run `kernel` on `target`;
/// empty when it can: an attention kernel on a chip with warpgroup MMA, K
/// stored `[..., Sk, D]`, Q, K and V of one type (bf16 or f16), one head
/// size D = Dv of 64 or 128, the output's batch axes the scores' (the
/// log-sum-exp of the rows as a second result, if any, is written too).
std::string whyNotAttentionTiles(KernelOp kernel, const GpuTarget &target);

/// Why no GPU strategy runs attention kernel `kernel` on `target` (what
/// attention_rows and attention_tiles say); empty when one does.
std::string whyNoGpuAttention(KernelOp kernel, const GpuTarget &target);

/// The plan of `kernel`. Never fails: a kernel that no specialised strategy
/// takes gets `per_element` (which runs any kernel), and `fallbackReason`,
/// when given, says why.
KernelPlanAttr planKernel(KernelOp kernel, const PlanOptions &options,
                          std::string *fallbackReason = nullptr);

/// Empty when `plan` can run `kernel` on `target`, else what does not fit
/// (for hand-written plans).
std::string checkPlan(KernelOp kernel, KernelPlanAttr plan,
                      const GpuTarget &target);

/// Whether a row plan reads rows of `rowLength` in shifted vectors: a
/// static length that the plan's vectors do not divide. A row's vectors
/// then start on the first vector boundary of the flat buffer in the row
/// (`lag` columns in), so that reads of values of the row shape stay
/// aligned; the columns before it and the last ones that no whole vector
/// holds (fewer than three vectors' worth) are read element by element,
/// one a thread. Such rows are at least kMinShiftedRowVectors vectors
/// long, held or streamed by at least as many vectors' worth of threads.
bool hasShiftedRowVectors(KernelPlanAttr plan, int64_t rowLength);
constexpr int64_t kMinShiftedRowVectors = 3;

/// Why a row kernel cannot be read in shifted vectors; empty when it can:
/// every op a constant, elementwise math, one of its reductions or a trivial
/// reduction of values per row (their lanes are columns of the row,
/// wherever the vector starts).
std::string whyNotShiftedRows(KernelOp kernel, const RowKernelShape &row);

/// The elements of a row of `rowLength` each block of a row plan's cluster
/// owns: whole vectors, the last block's part shorter when they do not
/// divide the row (dynamic for a dynamic length). With shifted vectors the
/// parts cover the row's whole vectors (at most rowLength / vector).
int64_t getRowPart(KernelPlanAttr plan, int64_t rowLength);

/// Vectors of the row each thread holds in registers under a row plan (0
/// when the row is streamed); the row part of a block is `rowPart`. The
/// last vectors of a part that the block's threads do not divide are
/// masked.
int64_t getHeldVectorsPerThread(KernelPlanAttr plan, int64_t rowPart);

/// The inputs a staged row plan (`row = staged`) copies into shared memory:
/// those of the row shape, by their argument numbers. A block's part of
/// each lands there by one bulk copy (cp.async.bulk, completing on an
/// mbarrier) and every pass reads it from there, so that the row is read
/// from global memory once without holding registers while the copy is
/// under way.
SmallVector<unsigned> getStagedRowInputs(KernelOp kernel,
                                         const RowKernelShape &row);

/// Bytes of shared memory a block of a staged row plan copies its parts of
/// the staged inputs into, one after another (in getStagedRowInputs' order,
/// each starting on a 16-byte boundary); with `offsets`, where each starts.
int64_t getStagedRowBytes(KernelOp kernel, const RowKernelShape &row,
                          KernelPlanAttr plan,
                          SmallVectorImpl<int64_t> *offsets = nullptr);

/// The most bytes a staged row plan copies into a block's shared memory
/// (sm_90 gives a block up to 227 KiB; the rest is for the launch's slack
/// and slots).
constexpr int64_t kMaxStagedRowBytes = 200 * 1024;

} // namespace mlir::fusion

#endif // FUSION_DIALECT_FUSION_ANALYSIS_KERNELPLAN_H
