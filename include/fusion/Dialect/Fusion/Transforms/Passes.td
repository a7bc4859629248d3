//===- Passes.td - Transforms of the fusion dialect --------*- tablegen -*-===//

#ifndef FUSION_DIALECT_FUSION_TRANSFORMS_PASSES_TD
#define FUSION_DIALECT_FUSION_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FusionDecompose : Pass<"fusion-decompose"> {
  let summary = "Rewrite composite fusion ops into primitive ops";
  let description = [{
    Rewrites the composite operations users write (`rms_norm`, `layer_norm`,
    `softmax`, `logsumexp`, `gelu`, `silu`, `sigmoid`) into primitive
    elementwise ops and reductions, which the fusion passes group into
    kernels.

    The math of every decomposition runs in f32: an f16 or bf16 input is
    `convert`ed to f32 first, and the result converted back to the input type
    at the end, so reductions accumulate in f32 as the dialect promises.
    Scalars (epsilon, 1, 0.5, ...) become rank-0 `fusion.constant`s.

    Example: `fusion.softmax %x axis = 1 : tensor<?x8192xbf16>` becomes

    ```mlir
    %xf = fusion.convert %x : tensor<?x8192xbf16> to tensor<?x8192xf32>
    %m  = fusion.reduce_max %xf axes = [1] keep_dims : tensor<?x8192xf32> -> tensor<?x1xf32>
    %d  = fusion.sub %xf, %m : (tensor<?x8192xf32>, tensor<?x1xf32>) -> tensor<?x8192xf32>
    %e  = fusion.exp %d : tensor<?x8192xf32>
    %s  = fusion.reduce_sum %e axes = [1] keep_dims : tensor<?x8192xf32> -> tensor<?x1xf32>
    %y  = fusion.div %e, %s : (tensor<?x8192xf32>, tensor<?x1xf32>) -> tensor<?x8192xf32>
    %r  = fusion.convert %y : tensor<?x8192xf32> to tensor<?x8192xbf16>
    ```

    With `elementwise=false`, the elementwise composites (`gelu`, `silu`,
    `sigmoid`) stay whole: they fuse like any elementwise op and each
    lowering expands them inside its kernels, and a library matmul epilogue
    recognizes `gelu` (`fusion-pipeline` does this).

    The pass works on any op that holds fusion ops (a `func.func`, a
    module); it fails only if the rewrite does not converge.
  }];
  let options = [
    Option<"elementwise", "elementwise", "bool", /*default=*/"true",
           "Also decompose gelu, silu and sigmoid">
  ];
  let dependentDialects = ["::mlir::fusion::FusionDialect"];
}

// Budgets shared by the fusion passes (see FusionOptions).
defvar FusionBudgetOptions = [
  Option<"maxOps", "max-ops", "int64_t", /*default=*/"128",
         "Most compute ops in one kernel">,
  Option<"maxParams", "max-params", "int64_t", /*default=*/"32",
         "Most kernel parameters (inputs plus results)">,
  Option<"maxLiveValues", "max-live-values", "int64_t", /*default=*/"64",
         "Most values live at once per thread (a register estimate)">
];
defvar FusionMatmulEpilogueOption =
  Option<"matmulEpilogue", "matmul-epilogue", "::mlir::fusion::MatmulEpilogue",
         /*default=*/"::mlir::fusion::MatmulEpilogue::library",
         "Which elementwise ops join a matmul: its epilogue, and with any "
         "its operands' prologues",
         "::mlir::fusion::matmulEpilogueValues()">;
defvar FusionRemarkOption =
  Option<"emitRemarks", "emit-remarks", "bool", /*default=*/"false",
         "Leave a remark with a [reason] on the producer of every edge left "
         "unfused">;

def FusionRecordSizeChecks
    : Pass<"fusion-record-size-checks", "ModuleOp"> {
  let summary = "Record on each public function the run-time checks its "
                "dynamic sizes need";
  let description = [{
    Dynamic dimensions never broadcast, so every dynamic size of a valid
    call is equal to others the op semantics tie it to (the `rms_norm`
    weight to x's rows, both operands of an `add`, a `matmul`'s K) or to a
    static size. This pass records, on each public function, one check per
    such class of its argument and result dimensions:
    `fusion.size_checks = [array<i64: size, arg, dim, arg, dim, ...>]`, with
    `size` -1 where the first member gives the size and arguments numbered
    inputs first, then results. The lowering pipelines run it first and
    `fusion-guard-sizes` turns the records into code at the entry of the
    lowered function.
  }];
}

def FusionFuseAttention : Pass<"fusion-fuse-attention"> {
  let summary = "Group attention, softmax(f(Q K^T)) V, into one kernel";
  let description = [{
    Attention does not fuse by merging neighbours: the softmax needs whole
    rows of scores, so greedy fusion writes the scores, the program's
    largest tensor, and reads them back. This pass recognizes it whole and
    makes one `attention` kernel of

    - the scores, a `matmul` of Q `[..., Sq, D]` and K^T `[..., D, Sk]`
      (with the `transpose` of K's last two axes when only this product
      reads it); batch axes broadcast as the matmul's do, so grouped-query
      heads (K and V of one head read by a group of query heads) are a size-1
      axis of K and V;
    - the elementwise math on the scores, in order (a scale, an additive
      mask or bias, a `tanh` soft-cap, a `select` by a boolean mask): ops of
      the scores' shape, each used only by the next, whose other operands
      do not depend on the scores;
    - `softmax` over the last axis (the keys), kept whole in the kernel
      (`fusion-decompose` leaves it; the lowerings expand it);
    - the output, a `matmul` of the probabilities by V `[..., Sk, Dv]`, the
      probabilities read by nothing else.

    The kernel fuses nothing else (`[attention]` in the other passes'
    remarks). It runs first in `fusion-pipeline`, before the composites are
    decomposed. With `emit-remarks`, a softmax that is read by a product or
    reads one but is not the middle of an attention says why
    (`[attention] ...`).

    The CPU lowering computes the kernel op by op. On the GPU the
    `attention_rows` strategy runs attention with few query rows (decoding)
    and `attention_tiles` (sm_90) attention with many; with `gpu`, as the
    GPU pipeline runs it, only the attentions one of them runs on `chip`
    become kernels (`whyNoGpuAttention`), the others stay their products
    and softmax (with `emit-remarks`, `[attention] not formed for the GPU:
    ...`).
  }];
  let options = [FusionRemarkOption,
    Option<"gpu", "gpu", "bool", /*default=*/"false",
           "Form only the attentions a GPU strategy runs">,
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "The GPU whose strategies `gpu` asks of">
  ];
  let dependentDialects = ["::mlir::fusion::FusionDialect"];
}

def FusionOutline : Pass<"fusion-outline"> {
  let summary = "Wrap every compute op into a one-op fusion.kernel";
  let description = [{
    The unfused program in kernel form: one kernel, hence one launch, per
    primitive op. The lowering pipelines build the op-by-op program this way
    (`fuse=false`), so fused and unfused programs go through the same code.
  }];
  let dependentDialects = ["::mlir::fusion::FusionDialect"];
}

def FusionHoistReshapes : Pass<"fusion-hoist-reshapes"> {
  let summary = "Move reshapes above the elementwise math that produces "
                "their operands";
  let description = [{
    Only elementwise kernels fuse across a `fusion.reshape`, so a reshape
    between elementwise math and a reduction (a residual add of `[B, S, D]`
    viewed as `[B S, D]` rows of a norm) leaves them in two kernels, the
    first writing what the second reads. Elementwise math commutes with a
    reshape: this pass rewrites `reshape(f(a, b))` as `f(reshape(a), b)`,
    repeatedly, so that each reshape ends on a function argument, a
    constant (folded into the new shape) or an op that is not elementwise
    math, where it is a view between kernels, and the math fuses with its
    reader.

    An op is moved across only where the reshape is the only reader of its
    result, and where every operand has the op's shape (reshaped in turn;
    one must), broadcasts only along trailing dimensions the two shapes
    share (a bias of `[D]` under `[B, S, D]` -> `[B S, D]`, a scalar), or
    is the op's trailing dimensions whole where the new shape ends in a run
    of the same elements (a bias of `[H D]` viewed as `[H, D]` when heads
    are split out); otherwise the reshape stays where it is. Ops inside
    `fusion.kernel` regions are left alone. `fusion-pipeline` runs it after
    `fusion-decompose`, before the fusion passes.

    Example:

    ```mlir
    %s = fusion.add %x, %r : tensor<2x8x64xf32>
    %v = fusion.reshape %s : tensor<2x8x64xf32> -> tensor<16x64xf32>
    ```

    becomes

    ```mlir
    %xv = fusion.reshape %x : tensor<2x8x64xf32> -> tensor<16x64xf32>
    %rv = fusion.reshape %r : tensor<2x8x64xf32> -> tensor<16x64xf32>
    %v = fusion.add %xv, %rv : tensor<16x64xf32>
    ```
  }];
  let dependentDialects = ["::mlir::fusion::FusionDialect"];
}

def FusionFuseProducerConsumer
    : Pass<"fusion-fuse-producer-consumer"> {
  let summary = "Greedy vertical fusion of elementwise and injective ops";
  let description = [{
    Wraps every compute op of the function into a `fusion.kernel` of one op,
    then merges producer kernels into consumer kernels, visiting consumers
    before producers, until nothing changes. Elementwise and injective ops
    (broadcasts, slices, transposes, converts) fuse with each other.

    A producer with several consumers joins one of them, its value written
    once as an extra kernel output for the others, or is recomputed inside
    each consumer (when it has at most `max-recompute-ops` ops), whichever
    moves fewer bytes; when all consumers end up in one kernel it is computed
    once.

    A matmul takes its epilogue first, as `matmul-epilogue` says: with
    `library` (the default), the chain of ops that a library call (cuBLASLt)
    computes on its accumulator, `act(alpha * (A @ B) + C + bias)`: a scale
    by a constant, a residual of the product's shape, a bias broadcast over
    the rows, then `relu` or tanh `gelu`, each optional, in that order, each
    value used only by the next; the first op outside that menu is refused
    with `[library-epilogue]` and the rest of the chain fuses on its own,
    reading the product once. With `any`, every elementwise consumer of the
    product's shape joins (generated matmul kernels run any chain), and so
    does an elementwise producer of an operand that only the matmul reads
    and that computes nothing from a product or a reduction (a prologue:
    `convert`, a scale per row or per column, computed as the operand's
    tiles are loaded); with `none`, matmul is a boundary.

    Refused: a merge that would create a cycle between kernels (`[cycle]`),
    anything into or out of a matmul but its epilogue and, with `any`, its
    prologues (`[matmul-boundary]`, `[library-epilogue]`, `[prologue]`),
    anything over a
    budget (`[budget]`), reductions (`[reduction]`, left to
    `fusion-fuse-reductions`), a multi-output elementwise kernel whose
    outputs differ in shape (`[shape]`). With `emit-remarks`, each refused
    edge leaves a remark on the producing op.
  }];
  let options = FusionBudgetOptions # [FusionRemarkOption,
    Option<"maxRecomputeOps", "max-recompute-ops", "int64_t", /*default=*/"8",
           "Largest producer (in ops) recomputed in each consumer rather "
           "than written once">,
    FusionMatmulEpilogueOption,
    Option<"maxRowElements", "max-row-elements", "int64_t",
           /*default=*/"32768",
           "Longest row a row_reduction kernel keeps on chip (the kind and "
           "split plan of the reduction kernels this pass creates)">
  ];
  let dependentDialects = ["::mlir::fusion::FusionDialect"];
}

def FusionFuseReductions
    : Pass<"fusion-fuse-reductions"> {
  let summary = "Fuse reductions with their producers, consumers and siblings";
  let description = [{
    A reduction over the innermost axis joins its elementwise producers, the
    consumers that broadcast its result back over the row (the normalize
    step), and sibling or dependent reductions over the same rows (mean then
    variance, max then sum) into one `row_reduction` kernel. All values in
    such a kernel live in its rows `[R..., H]`: full rows, one value per row
    (`[R..., 1]` or `[R...]`), or smaller shapes broadcast into the rows
    (weights, scalars); anything else is refused with `[shape]`. Sibling
    row kernels (no edge between them, the same rows, a common input) are
    merged too, and the vertical merges that opens are made.

    A row longer than `max-row-elements` (or of dynamic length) becomes a
    `wide_row` kernel; its plan (`fusion-plan-kernels`) splits it over a
    cluster of blocks or streams it. Reductions over other axes take their
    elementwise producers and become `column_reduction` (the innermost axis
    is kept) or `reduction` kernels.

    Elementwise merges that the reduction merges make possible are done as in
    `fusion-fuse-producer-consumer`.
  }];
  let options = FusionBudgetOptions # [FusionRemarkOption,
    FusionMatmulEpilogueOption,
    Option<"maxRowElements", "max-row-elements", "int64_t",
           /*default=*/"32768",
           "Longest row a row_reduction kernel keeps on chip">,
    Option<"maxRecomputeOps", "max-recompute-ops", "int64_t", /*default=*/"8",
           "Largest producer (in ops) recomputed in each consumer rather "
           "than written once">
  ];
  let dependentDialects = ["::mlir::fusion::FusionDialect"];
}

def FusionFuseHorizontal
    : Pass<"fusion-fuse-horizontal"> {
  let summary = "Share one launch between independent kernels";
  let description = [{
    Merges kernels that do not depend on each other and have the same
    iteration space (elementwise kernels of one output shape, row kernels
    over the same rows) into multi-output kernels: one launch instead of
    several, and inputs they share are read once (the multi-tensor optimizer
    step). Each kernel joins the latest earlier kernel of its iteration space
    (among the last 16) that fits the budget, preferring one that reads a
    common input.
  }];
  let options = FusionBudgetOptions;
  let dependentDialects = ["::mlir::fusion::FusionDialect"];
}

def FusionPlanKernels : Pass<"fusion-plan-kernels"> {
  let summary = "Attach a GPU kernel plan to every fusion.kernel";
  let description = [{
    Gives every `fusion.kernel` without a `plan` the plan `planKernel`
    makes for the target `chip` (KernelPlan.h): strategy, threads per block,
    vector width, where a row lives between passes (registers, or streamed
    and read once per pass), cluster split, and the reads of each input.
    A plan already present (written by hand) is kept and checked against the
    kernel's shapes and the target; one that does not fit is an error.

    Row kernels of a static row count of at least the chip's
    multiprocessors, on the chip the row plan table was measured on (sm_90;
    `RowPlans.def` beside KernelPlan.cpp, written by `measure-row-plans.py`
    from sweeps on the GPU machine), take the table's plan for their class
    (the passes over a row a streamed plan makes: one, two, three or more),
    how their columns may be read (whole vectors, shifted vectors,
    elements, a dynamic length), element size and width, where it covers
    them and the plan fits; `measured-row-plans=false` leaves every row to
    the rule that follows.

    Rule for rows: blocks of 32 to 128 threads giving each thread at least 4
    vectors of 16 bytes (8 elements where no vector divides the row, which
    is then read element by element), the row held in registers: up to 16
    vectors (128 elements) a thread, 8 (64) in blocks of more than 256
    threads and in a full cluster. A row 128 threads cannot hold, or longer than
    `max-row-elements`, is split over a thread-block cluster in parts of
    whole vectors of at most what they hold (and half of
    `max-row-elements`), as many as the target's portable cluster size
    allows (8 on sm_90); the last part may be shorter, and a part the
    cluster cannot split further gets up to 512 threads. Where the blocks
    cannot hold their parts, one block streams the row; so does a block of
    128 threads where streaming reads each input once anyway (reductions
    only, a softmax-like sum online in its max's pass). Held vectors past
    the end of a part are masked. A row of dynamic length is streamed by
    256 threads, in 16-byte vectors where the inputs' static sizes allow
    them (used where the run-time length is a multiple of their width).

    Elementwise kernels get 256 threads and 16-byte vectors (a scalar tail
    when all values have the output's shape; otherwise the widest vector
    that divides every innermost size, none where a trivial reduction
    drops the innermost axis). Matmul kernels are a library call
    where the kernel is one (unless `matmul-backend=generated`; with
    `library` any other matmul kernel is an error), else shared-memory
    tiles. A kernel no strategy takes runs `per_element` (a thread per
    output element, any reduction as a loop); with `emit-remarks` a remark
    says why.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "Target GPU">,
    Option<"matmulBackend", "matmul-backend", "::mlir::fusion::MatmulBackend",
           /*default=*/"::mlir::fusion::MatmulBackend::automatic",
           "How matmul kernels run", "::mlir::fusion::matmulBackendValues()">,
    Option<"maxRowElements", "max-row-elements", "int64_t",
           /*default=*/"32768",
           "Longest row one block holds (as the fusion passes')">,
    Option<"measuredRowPlans", "measured-row-plans", "bool",
           /*default=*/"true",
           "Take row plans from the measured table where it covers them">,
    Option<"emitRemarks", "emit-remarks", "bool", /*default=*/"false",
           "Emit a remark for every kernel that falls back to per_element">
  ];
  let dependentDialects = ["::mlir::fusion::FusionDialect"];
}

def FusionReport : Pass<"fusion-report", "ModuleOp"> {
  let summary = "Report kernels, launches and predicted device-memory bytes";
  let description = [{
    For every function: its kernels (name, kind, ops, bytes read and
    written), the number of launches, and the predicted device-memory traffic
    of the fused program (`bytes`: each kernel reads its external inputs once
    and writes its results once; splat constants cost nothing) against the
    same program run one primitive op per launch (`unfused_bytes`,
    `unfused_launches`). Every kernel is one launch (a split `wide_row` is
    one launch of clusters). A kernel with a plan (`fusion-plan-kernels`)
    reads each input as many times as its plan says (a streamed row once
    per pass), and its entry names the plan (`plan`: strategy, and row
    storage for row plans, e.g. `rows/streamed`; null without a plan).

    Each kernel also gets its FLOPs (2*M*N*K per matmul; elementwise math is
    not counted) and a predicted time on the target: the larger of its bytes
    over `bandwidth` and its FLOPs over the matmul peak (`matmul-tflops` for
    f16/bf16 products, `f32-matmul-tflops` for f32), so the report shows
    where the time goes; the function's predicted time is their sum. The
    defaults are the H200's: 4250 GB/s and 700 TFLOP/s measured (copy and
    cuBLAS bf16), 67 TFLOP/s f32 from the datasheet.

    With dynamic dimensions a count is `null` and a formula is given beside
    it (`bytes_formula`, `flops_formula`), in symbols `d<i>` for a dynamic
    size at dimension i; times are predicted with every dynamic size set to
    `dynamic-size`, or not at all when it is 0 (the default).

    JSON (`format=json`) has one object per function under `functions`,
    with the keys `name`, `kernels`, `launches`, `bytes`, `flops`,
    `predicted_us`, `unfused_launches`, `unfused_bytes` and `kernel_list`;
    each entry of `kernel_list` has `name`, `kind`, `plan`, `ops`,
    `bytes_read`, `bytes_written`, `flops` and `predicted_us` (null when not
    predicted).
    The pass does not change the IR.
  }];
  let options = [
    Option<"format", "format", "std::string", /*default=*/"\"text\"",
           "Output format: text or json">,
    Option<"bandwidth", "bandwidth", "double", /*default=*/"4250.0",
           "Device-memory bandwidth in GB/s (read plus write)">,
    Option<"matmulTflops", "matmul-tflops", "double", /*default=*/"700.0",
           "Matmul peak for f16 and bf16 products, TFLOP/s">,
    Option<"f32MatmulTflops", "f32-matmul-tflops", "double",
           /*default=*/"67.0", "Matmul peak for f32 products, TFLOP/s">,
    Option<"dynamicSize", "dynamic-size", "int64_t", /*default=*/"0",
           "Each dynamic size, for predicted times (0: no prediction for "
           "kernels with dynamic sizes)">,
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the report; - is standard error">
  ];
}

def FusionView : Pass<"fusion-view", "ModuleOp"> {
  let summary = "Write a Graphviz picture of the dataflow and every fusion "
                "decision";
  let description = [{
    Writes a Graphviz `digraph` of each function: every op a node, every
    `fusion.kernel` a cluster (labelled with its name, kind and bytes moved),
    function arguments and results as ellipses. Edges inside a kernel are
    plain; an edge that crosses kernels carries the bytes that go through
    device memory and, between two kernels, the reason they were not merged
    (`[cycle]`, `[budget]`, `[reduction]`, `[cost]`, ..., the reasons of the
    fusion remarks), drawn dashed and red. Reasons are given for the budgets
    the fusion passes ran with (they record them on each function as
    `fusion.budgets`), else for this pass's options. A kernel with a plan
    (`fusion-plan-kernels`) shows it under its name. Run it after the fusion
    passes:

        fusion-opt in.mlir --fusion-pipeline --fusion-view=output=graph.dot
        dot -Tsvg graph.dot -o graph.svg

    The pass does not change the IR.
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the graph; - is standard error">,
    Option<"maxRowElements", "max-row-elements", "int64_t",
           /*default=*/"32768",
           "The fusion budget the reasons are given for where the fusion "
           "passes recorded none">,
    FusionMatmulEpilogueOption
  ];
}

#endif // FUSION_DIALECT_FUSION_TRANSFORMS_PASSES_TD
