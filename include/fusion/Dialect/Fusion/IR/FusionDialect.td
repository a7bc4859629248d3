//===- FusionDialect.td - The fusion dialect ---------------*- tablegen -*-===//
//
// Dialect, type constraints and attributes shared by every fusion op.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_DIALECT_FUSION_IR_FUSIONDIALECT_TD
#define FUSION_DIALECT_FUSION_IR_FUSIONDIALECT_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"

def Fusion_Dialect : Dialect {
  let name = "fusion";
  let cppNamespace = "::mlir::fusion";
  let summary = "Tensor operations for memory-bound kernel fusion";
  let description = [{
    The `fusion` dialect holds the tensor operations that memory-bound GPU
    programs are made of: elementwise math with numpy-style broadcasting,
    reductions, normalisations, softmax, slices and transposes, with `matmul`
    as a fusion boundary. Operands are ranked tensors (static or dynamic
    dimensions) of `f32`, `f16` or `bf16`, or of `i1` for masks.

    Reductions and normalisations accumulate in `f32` whatever their input
    type; their results keep the input type. Composite operations
    (`rms_norm`, `layer_norm`, `softmax`, `logsumexp`, `gelu`, `silu`,
    `sigmoid`) are what users write; `fusion-decompose` rewrites them into
    primitive operations with explicit `convert`s, which the fusion passes
    then group into kernels.

    Broadcasting follows numpy: shapes are aligned at their trailing
    dimensions; a missing or size-1 dimension is stretched to the other
    operand's size. A dynamic dimension against a static size `n > 1` takes
    size `n` (the program is wrong at run time unless the dynamic size is 1
    or `n`); against another dynamic dimension or against `1` it stays
    dynamic.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Fusion_Float : AnyTypeOf<[F32, F16, BF16], "f32, f16 or bf16">;
def Fusion_FloatTensor : RankedTensorOf<[F32, F16, BF16]>;
def Fusion_BoolTensor : RankedTensorOf<[I1]>;
def Fusion_AnyTensor : RankedTensorOf<[F32, F16, BF16, I1]>;

//===----------------------------------------------------------------------===//
// Enumerations
//===----------------------------------------------------------------------===//

def Fusion_CmpPredicate : I32EnumAttr<"CmpPredicate",
    "comparison predicate", [
      I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
      I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
      I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::mlir::fusion";
  let genSpecializedAttr = 0;
}
def Fusion_CmpPredicateAttr
    : EnumAttr<Fusion_Dialect, Fusion_CmpPredicate, "cmp_predicate">;

def Fusion_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "how gelu is evaluated", [
      I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"tanh", 1>]> {
  let cppNamespace = "::mlir::fusion";
  let genSpecializedAttr = 0;
}
def Fusion_GeluApproximationAttr
    : EnumAttr<Fusion_Dialect, Fusion_GeluApproximation, "gelu_approximation">;

def Fusion_KernelKind : I32EnumAttr<"KernelKind",
    "how a fused kernel runs on the device", [
      I32EnumAttrCase<"elementwise", 0>,
      I32EnumAttrCase<"row_reduction", 1>,
      I32EnumAttrCase<"wide_row", 2>,
      I32EnumAttrCase<"column_reduction", 3>,
      I32EnumAttrCase<"reduction", 4>,
      I32EnumAttrCase<"matmul", 5>,
      I32EnumAttrCase<"attention", 6>]> {
  let cppNamespace = "::mlir::fusion";
  let genSpecializedAttr = 0;
}
def Fusion_KernelKindAttr
    : EnumAttr<Fusion_Dialect, Fusion_KernelKind, "kernel_kind">;

def Fusion_KernelStrategy : I32EnumAttr<"KernelStrategy",
    "how a kernel's plan runs it on the GPU", [
      I32EnumAttrCase<"elementwise", 0>,
      I32EnumAttrCase<"rows", 1>,
      I32EnumAttrCase<"cluster_rows", 2>,
      I32EnumAttrCase<"per_element", 3>,
      I32EnumAttrCase<"matmul_tiles", 4>,
      I32EnumAttrCase<"library_matmul", 5>,
      I32EnumAttrCase<"columns", 6>,
      I32EnumAttrCase<"split_reduction", 7>,
      I32EnumAttrCase<"matmul_wgmma", 8>,
      I32EnumAttrCase<"attention_rows", 9>,
      I32EnumAttrCase<"attention_tiles", 10>]> {
  let cppNamespace = "::mlir::fusion";
  let genSpecializedAttr = 0;
}

def Fusion_RowStorage : I32EnumAttr<"RowStorage",
    "where a kernel keeps the rows it reads", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"registers", 1>,
      I32EnumAttrCase<"streamed", 2>,
      I32EnumAttrCase<"staged", 3>]> {
  let cppNamespace = "::mlir::fusion";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def Fusion_KernelPlanAttr : AttrDef<Fusion_Dialect, "KernelPlan"> {
  let mnemonic = "plan";
  let summary = "how a fusion.kernel runs on a GPU target";
  let description = [{
    The kernel plan: the one decision of how a kernel runs, made by
    `fusion-plan-kernels` for a target and read by `fusion-report` (bytes as
    the plan moves them) and `fusion-kernels-to-gpu` (which carries it out).
    Written by hand, it overrides the planner; the lowering checks that it
    fits the kernel's shapes.

    - `strategy`: `elementwise` (a grid-stride loop over vectors),
      `rows` (a block per row), `cluster_rows` (a row split over the blocks
      of a thread-block cluster), `per_element` (a thread per output
      element, reductions as loops), `matmul_tiles` (shared-memory tiles
      of the product), `matmul_wgmma` (Hopper tensor cores: TMA loads
      into swizzled shared memory, an mbarrier pipeline, warpgroup MMA,
      the epilogue on the accumulator; tiles of 256 x 128 x 64, 4 stages,
      two warpgroups, and for at most 256 rows tiles of 64 x 256 x 64 (64 x
      128 x 64 for a single product of kernel inputs), one warpgroup, K
      split over blocks), `library_matmul` (a cuBLASLt call), `columns`
      (reductions that keep the innermost axis: blocks of vector columns,
      their threads spread over the reduced rows), `split_reduction`
      (reductions over the innermost axis with few outputs: blocks per
      output and range of its elements), `attention_rows` (an `attention`
      kernel with few query rows, as in decoding: a block per query row and
      range of keys, the softmax online, a row's ranges combined through
      a cluster or by its last block), `attention_tiles` (an `attention` kernel with many query
      rows, on sm_90 tensor cores: a block per 64 query rows of each
      multiplying warpgroup, K and V tiles of 128 keys through TMA, the
      scores and the online softmax in registers).
    - `threads`: threads per block (for a staged `attention_rows` plan, per
      query row: a block takes as many of the rows reading the same K and V
      as fit 1024 threads; for `attention_tiles`, 384 or 512: two or three
      multiplying warpgroups and one loading).
    - `vector`: elements per vector access along the innermost dimension
      (for a row of dynamic length: where its length is a multiple of it
      at run time, else single elements; for `attention_rows`, the elements
      of a row of Q, K or V each lane holds, 16; for `attention_tiles`, 2:
      the pairs of scores a lane holds).
    - `row`: where a row kernel keeps its row between passes (`registers`:
      loaded once; `streamed`: every pass reads it again; `staged`: each
      block's part copied into shared memory once by bulk copies, sm_90 and
      later, whole or shifted vectors of a static width); for
      `attention_rows`, how the rows of K and V reach the lanes (`staged`:
      TMA copies each step's rows into a pipeline of shared-memory stages,
      sm_90 and later; `none`: each lane loads its share from global
      memory); `none` otherwise.
    - `cluster`: blocks per row (`cluster_rows`); for `attention_rows`,
      the blocks of a thread-block cluster a query row's keys are cut into,
      the first folding every block's state through distributed shared
      memory (with a `split` too: for rows of at most 8192 keys, the split
      for longer ones); else 1.
    - `split`: blocks sharing each output's reduction (`columns`,
      `split_reduction`), each over its own range of elements, the last
      block of each output to finish folding their partials; for
      `matmul_wgmma`, the K ranges of the kernel for at most 256 rows, the
      last block of each tile summing their products and running the
      epilogue; for `attention_rows`, the most ranges a query row's keys
      are cut into (fewer where there are few keys), folded through a
      workspace by the last block of the row; 1 (the default, not printed)
      otherwise.
    - `passes`: how many times the kernel reads each input (1 unless the
      row is streamed: then once per pass that reaches it, a pass per
      reduction but an online softmax-like sum, which shares its max's,
      and one for the full-row outputs).

    Example:

    ```mlir
    #fusion.plan<rows, threads = 128, vector = 8, row = registers, cluster = 1, passes = [1]>
    ```
  }];
  let parameters = (ins
      EnumParameter<Fusion_KernelStrategy>:$strategy,
      "int64_t":$threads,
      "int64_t":$vector,
      EnumParameter<Fusion_RowStorage>:$row,
      "int64_t":$cluster,
      OptionalArrayRefParameter<"int64_t">:$passes,
      DefaultValuedParameter<"int64_t", "1">:$split);
  let assemblyFormat = [{
    `<` $strategy `,` `threads` `=` $threads `,` `vector` `=` $vector `,`
    `row` `=` $row `,` `cluster` `=` $cluster
    `` custom<PlanTail>($split, $passes) `>`
  }];
  let genVerifyDecl = 1;
}

#endif // FUSION_DIALECT_FUSION_IR_FUSIONDIALECT_TD
