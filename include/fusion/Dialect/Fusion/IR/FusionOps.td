//===- FusionOps.td - Operations of the fusion dialect -----*- tablegen -*-===//
//
// The operand order and attribute names here are a public contract: other
// tools write these ops in generic form.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_DIALECT_FUSION_IR_FUSIONOPS_TD
#define FUSION_DIALECT_FUSION_IR_FUSIONOPS_TD

include "fusion/Dialect/Fusion/IR/FusionDialect.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Fusion_Op<string mnemonic, list<Trait> traits = []>
    : Op<Fusion_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Elementwise operations
//===----------------------------------------------------------------------===//

// Binary float ops with numpy broadcasting. The type list prints as one type
// when operands and result agree, and as a function type otherwise.
class Fusion_BinaryOp<string mnemonic, string summaryText,
                      list<Trait> traits = []>
    : Fusion_Op<mnemonic, traits # [Pure, SameOperandsAndResultElementType]> {
  let summary = summaryText;
  let description = [{
    Elementwise }] # summaryText # [{ with numpy broadcasting of the two
    operand shapes. Operands and result share one float element type.

    Example:

    ```mlir
    %0 = fusion.}] # mnemonic # [{ %a, %b : tensor<4x8xf32>
    %1 = fusion.}] # mnemonic # [{ %x, %bias : (tensor<?x8xbf16>, tensor<8xbf16>) -> tensor<?x8xbf16>
    ```
  }];
  let arguments = (ins Fusion_FloatTensor:$lhs, Fusion_FloatTensor:$rhs);
  let results = (outs Fusion_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:`
    custom<ElementwiseTypes>(type($lhs), type($rhs), type($result))
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs), [{
      build($_builder, $_state,
            getBroadcastResultType({lhs.getType(), rhs.getType()},
                                   getElementTypeOrSelf(lhs.getType())),
            lhs, rhs);
    }]>
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Fusion_AddOp : Fusion_BinaryOp<"add", "addition", [Commutative]>;
def Fusion_SubOp : Fusion_BinaryOp<"sub", "subtraction">;
def Fusion_MulOp : Fusion_BinaryOp<"mul", "multiplication", [Commutative]>;
def Fusion_DivOp : Fusion_BinaryOp<"div", "division">;
def Fusion_MaxOp : Fusion_BinaryOp<"max", "maximum (NaN-propagating)", [Commutative]>;
def Fusion_MinOp : Fusion_BinaryOp<"min", "minimum (NaN-propagating)", [Commutative]>;
def Fusion_PowOp : Fusion_BinaryOp<"pow", "power (lhs raised to rhs)">;

// Unary float ops: result type equals operand type.
class Fusion_UnaryOp<string mnemonic, string summaryText,
                     list<Trait> traits = []>
    : Fusion_Op<mnemonic, traits # [Pure, SameOperandsAndResultType]> {
  let summary = summaryText;
  let description = [{
    Elementwise }] # summaryText # [{; the result has the operand's type.

    Example:

    ```mlir
    %0 = fusion.}] # mnemonic # [{ %x : tensor<?x4096xbf16>
    ```
  }];
  let arguments = (ins Fusion_FloatTensor:$x);
  let results = (outs Fusion_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
  let hasFolder = 1;
}

def Fusion_NegOp : Fusion_UnaryOp<"neg", "negation">;
def Fusion_AbsOp : Fusion_UnaryOp<"abs", "absolute value">;
def Fusion_ExpOp : Fusion_UnaryOp<"exp", "exponential">;
def Fusion_LogOp : Fusion_UnaryOp<"log", "natural logarithm">;
def Fusion_TanhOp : Fusion_UnaryOp<"tanh", "hyperbolic tangent">;
def Fusion_ErfOp : Fusion_UnaryOp<"erf", "error function">;
def Fusion_SigmoidOp : Fusion_UnaryOp<"sigmoid", "logistic sigmoid 1 / (1 + exp(-x))">;
def Fusion_ReluOp : Fusion_UnaryOp<"relu", "rectifier max(x, 0)">;
def Fusion_SiluOp : Fusion_UnaryOp<"silu", "x * sigmoid(x)">;
def Fusion_SqrtOp : Fusion_UnaryOp<"sqrt", "square root">;
def Fusion_RsqrtOp : Fusion_UnaryOp<"rsqrt", "reciprocal square root">;
def Fusion_ReciprocalOp : Fusion_UnaryOp<"reciprocal", "reciprocal 1 / x">;
def Fusion_SquareOp : Fusion_UnaryOp<"square", "square x * x">;

def Fusion_GeluOp : Fusion_Op<"gelu", [Pure, SameOperandsAndResultType]> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `x * Phi(x)` with `Phi` the standard normal CDF. With
    `approximation = tanh` it is
    `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`, evaluated
    as `x / (1 + exp(-2 * sqrt(2 / pi) * (x + 0.044715 * x^3)))` (the same
    function: `0.5 * (1 + tanh(u)) = sigmoid(2u)`, without the cancellation
    of `1 + tanh` for negative `x`); with `none` (the default, elided when
    printed) as `0.5 * x * (1 + erf(x / sqrt(2)))`.

    Example:

    ```mlir
    %0 = fusion.gelu %x : tensor<16x8192xbf16>
    %1 = fusion.gelu %x approximation = tanh : tensor<16x8192xbf16>
    ```
  }];
  let arguments = (ins
    Fusion_FloatTensor:$x,
    DefaultValuedAttr<Fusion_GeluApproximationAttr,
                      "::mlir::fusion::GeluApproximation::none">:$approximation);
  let results = (outs Fusion_FloatTensor:$result);
  let assemblyFormat = [{
    $x (`approximation` `=` `` $approximation^)? attr-dict `:` type($x)
  }];
}

def Fusion_CmpOp : Fusion_Op<"cmp", [Pure, AllElementTypesMatch<["lhs", "rhs"]>]> {
  let summary = "elementwise comparison producing a mask";
  let description = [{
    Compares `lhs` and `rhs` elementwise with `predicate` (`eq`, `ne`, `lt`,
    `le`, `gt`, `ge`; ordered: any comparison with NaN is false, except
    `ne`, which is true). Shapes broadcast like the binary ops; the result is
    an `i1` tensor of the broadcast shape.

    Example:

    ```mlir
    %m = fusion.cmp gt, %x, %zero : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xi1>
    ```
  }];
  let arguments = (ins Fusion_CmpPredicateAttr:$predicate,
                       Fusion_FloatTensor:$lhs, Fusion_FloatTensor:$rhs);
  let results = (outs Fusion_BoolTensor:$result);
  let assemblyFormat = [{
    `` $predicate `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::fusion::CmpPredicate":$predicate,
                   "::mlir::Value":$lhs, "::mlir::Value":$rhs), [{
      build($_builder, $_state,
            getBroadcastResultType({lhs.getType(), rhs.getType()},
                                   $_builder.getI1Type()),
            predicate, lhs, rhs);
    }]>
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Fusion_SelectOp : Fusion_Op<"select",
    [Pure, AllElementTypesMatch<["a", "b", "result"]>]> {
  let summary = "elementwise choice by a mask";
  let description = [{
    `cond ? a : b` elementwise; the three operand shapes broadcast together.

    Example:

    ```mlir
    %0 = fusion.select %m, %x, %zero : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Fusion_BoolTensor:$cond, Fusion_FloatTensor:$a,
                       Fusion_FloatTensor:$b);
  let results = (outs Fusion_FloatTensor:$result);
  let assemblyFormat = "$cond `,` $a `,` $b attr-dict `:` functional-type(operands, results)";
  let builders = [
    OpBuilder<(ins "::mlir::Value":$cond, "::mlir::Value":$a, "::mlir::Value":$b), [{
      build($_builder, $_state,
            getBroadcastResultType({cond.getType(), a.getType(), b.getType()},
                                   getElementTypeOrSelf(a.getType())),
            cond, a, b);
    }]>
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Fusion_ConvertOp : Fusion_Op<"convert", [Pure]> {
  let summary = "elementwise float type conversion";
  let description = [{
    Converts each element to the result's float type (round to nearest
    even when narrowing). The shape does not change.

    Example:

    ```mlir
    %0 = fusion.convert %x : tensor<?x4096xbf16> to tensor<?x4096xf32>
    ```
  }];
  let arguments = (ins Fusion_FloatTensor:$x);
  let results = (outs Fusion_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `to` type($result)";
  let builders = [
    OpBuilder<(ins "::mlir::Value":$x, "::mlir::Type":$elementType), [{
      build($_builder, $_state,
            ::llvm::cast<::mlir::RankedTensorType>(x.getType())
                .clone(elementType), x);
    }]>
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Fusion_ConstantOp : Fusion_Op<"constant",
    [ConstantLike, Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "tensor constant";
  let description = [{
    A constant tensor given by a dense elements attribute. A rank-0 splat is
    the usual way to write a scalar; it broadcasts against any shape and
    costs no memory traffic in a fused kernel.

    Example:

    ```mlir
    %eps = fusion.constant dense<1.0e-06> : tensor<f32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Fusion_AnyTensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def Fusion_IotaOp : Fusion_Op<"iota", [Pure]> {
  let summary = "each element's position along one dimension";
  let description = [{
    A tensor whose elements are their own index along `dimension`, as
    floats. It reads no memory: fused kernels compute it where it is used,
    so masks built from positions (a causal mask: key <= query) cost no
    traffic, and an attention kernel sees its mask as a predicate of the
    indices (blocks it empties are skipped). Every index is exact in the
    element type (at most 2^24 positions in f32, 2^11 in f16, 2^8 in bf16);
    shapes of 1 broadcast as usual.

    The shape is static, or `dimension` alone is dynamic and has the size
    of dimension `source_dimension` of `source` (a sequence length taken
    from the queries or keys): only that size is read, never the elements.
    A dynamic iota is f32, its positions exact up to 2^24.

    Example (the causal mask of 128 queries and 128 keys, then of any
    number of each):

    ```mlir
    %q = fusion.iota dimension = 0 : tensor<128x1xf32>
    %k = fusion.iota dimension = 1 : tensor<1x128xf32>
    %m = fusion.cmp le, %k, %q : (tensor<1x128xf32>, tensor<128x1xf32>) -> tensor<128x128xi1>

    %row = fusion.iota dimension = 0 size_of %queries[2] : tensor<2x16x?x64xbf16> -> tensor<?x1xf32>
    %key = fusion.iota dimension = 1 size_of %keys[2] : tensor<2x16x?x64xbf16> -> tensor<1x?xf32>
    ```
  }];
  let arguments = (ins Optional<Fusion_AnyTensor>:$source,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dimension,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntNonNegative]>>:$source_dimension);
  let results = (outs Fusion_FloatTensor:$result);
  let assemblyFormat = [{
    `dimension` `=` $dimension (`size_of` $source^ `[` $source_dimension `]`)?
    attr-dict `:` custom<IotaTypes>(ref($source), type($source), type($result))
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Fusion_ReduceOp<string mnemonic, string summaryText>
    : Fusion_Op<mnemonic, [Pure, SameOperandsAndResultElementType]> {
  let summary = summaryText;
  let description = [{
    Reduces `x` over `axes` (sorted, unique, in range) with the }] #
    summaryText # [{, accumulating in f32. Without `keep_dims` the reduced
    dimensions are removed; with it they stay as size 1, which makes the
    result broadcast back against `x`.

    Example:

    ```mlir
    %0 = fusion.}] # mnemonic # [{ %x axes = [1] keep_dims : tensor<?x4096xf32> -> tensor<?x1xf32>
    %1 = fusion.}] # mnemonic # [{ %x axes = [0, 1] : tensor<8x4xf32> -> tensor<f32>
    ```
  }];
  let arguments = (ins Fusion_FloatTensor:$x, DenseI64ArrayAttr:$axes,
                       UnitAttr:$keep_dims);
  let results = (outs Fusion_FloatTensor:$result);
  let assemblyFormat = [{
    $x `axes` `=` $axes (`keep_dims` $keep_dims^)? attr-dict `:`
    type($x) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$x, "::llvm::ArrayRef<int64_t>":$axes,
                   "bool":$keepDims), [{
      build($_builder, $_state,
            getReducedType(::llvm::cast<::mlir::RankedTensorType>(x.getType()),
                           axes, keepDims),
            x, axes, keepDims);
    }]>
  ];
  let hasVerifier = 1;
}

def Fusion_ReduceSumOp : Fusion_ReduceOp<"reduce_sum", "sum">;
def Fusion_ReduceMaxOp : Fusion_ReduceOp<"reduce_max", "maximum">;
def Fusion_ReduceMinOp : Fusion_ReduceOp<"reduce_min", "minimum">;
def Fusion_ReduceMeanOp : Fusion_ReduceOp<"reduce_mean", "arithmetic mean">;

//===----------------------------------------------------------------------===//
// Normalisations and softmax (composites, see fusion-decompose)
//===----------------------------------------------------------------------===//

def Fusion_RmsNormOp : Fusion_Op<"rms_norm",
    [Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "root-mean-square normalisation over the last axis";
  let description = [{
    `x * rsqrt(mean(x^2, last axis) + epsilon) * weight`, computed in f32;
    `weight` is a 1-D tensor of the last dimension's size and `x`'s element
    type.

    Example:

    ```mlir
    %0 = fusion.rms_norm %x, %w epsilon = 1.0e-06 : tensor<?x4096xbf16>, tensor<4096xbf16>
    ```
  }];
  let arguments = (ins Fusion_FloatTensor:$x, Fusion_FloatTensor:$weight,
                       F32Attr:$epsilon);
  let results = (outs Fusion_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $weight `epsilon` `=` $epsilon attr-dict `:` type($x) `,` type($weight)
  }];
  let hasVerifier = 1;
}

def Fusion_LayerNormOp : Fusion_Op<"layer_norm",
    [Pure, AllTypesMatch<["x", "result"]>]> {
  let summary = "layer normalisation over the last axis";
  let description = [{
    `(x - mean) * rsqrt(var + epsilon) * gamma + beta` over the last axis,
    computed in f32 (biased variance). `gamma` and `beta` are 1-D tensors of
    the last dimension's size and `x`'s element type.

    Example:

    ```mlir
    %0 = fusion.layer_norm %x, %g, %b epsilon = 1.0e-05 : tensor<16x4096xbf16>, tensor<4096xbf16>, tensor<4096xbf16>
    ```
  }];
  let arguments = (ins Fusion_FloatTensor:$x, Fusion_FloatTensor:$gamma,
                       Fusion_FloatTensor:$beta, F32Attr:$epsilon);
  let results = (outs Fusion_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $gamma `,` $beta `epsilon` `=` $epsilon attr-dict `:`
    type($x) `,` type($gamma) `,` type($beta)
  }];
  let hasVerifier = 1;
}

def Fusion_SoftmaxOp : Fusion_Op<"softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "softmax along one axis";
  let description = [{
    `exp(x - max) / sum(exp(x - max))` along `axis`, computed in f32.

    Example:

    ```mlir
    %0 = fusion.softmax %x axis = 1 : tensor<8192x8192xbf16>
    ```
  }];
  let arguments = (ins Fusion_FloatTensor:$x, I64Attr:$axis);
  let results = (outs Fusion_FloatTensor:$result);
  let assemblyFormat = "$x `axis` `=` $axis attr-dict `:` type($x)";
  let hasVerifier = 1;
}

def Fusion_LogSumExpOp : Fusion_Op<"logsumexp",
    [Pure, SameOperandsAndResultElementType]> {
  let summary = "log of the sum of exponentials along one axis";
  let description = [{
    `max + log(sum(exp(x - max)))` along `axis`, computed in f32; the result
    drops that axis.

    Example:

    ```mlir
    %0 = fusion.logsumexp %x axis = 1 : tensor<8192x32768xf32> -> tensor<8192xf32>
    ```
  }];
  let arguments = (ins Fusion_FloatTensor:$x, I64Attr:$axis);
  let results = (outs Fusion_FloatTensor:$result);
  let assemblyFormat = "$x `axis` `=` $axis attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Fusion_SliceOp : Fusion_Op<"slice", [Pure, SameOperandsAndResultElementType]> {
  let summary = "static strided slice";
  let description = [{
    Takes `sizes[d]` elements of dimension `d` starting at `offsets[d]`,
    `strides[d]` apart. Every slice must lie inside a static dimension. A
    dynamic dimension can only be kept whole: offset 0, size -1, stride 1
    (size -1 means "the whole dimension" on static dimensions too).

    Example:

    ```mlir
    %g = fusion.slice %x offsets = [0, 0] sizes = [-1, 8192] strides = [1, 1] : tensor<?x16384xbf16> -> tensor<?x8192xbf16>
    ```
  }];
  let arguments = (ins Fusion_AnyTensor:$x, DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$sizes, DenseI64ArrayAttr:$strides);
  let results = (outs Fusion_AnyTensor:$result);
  let assemblyFormat = [{
    $x `offsets` `=` $offsets `sizes` `=` $sizes `strides` `=` $strides
    attr-dict `:` type($x) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Fusion_TransposeOp : Fusion_Op<"transpose",
    [Pure, SameOperandsAndResultElementType]> {
  let summary = "permutation of dimensions";
  let description = [{
    Result dimension `i` is operand dimension `permutation[i]`.

    Example:

    ```mlir
    %0 = fusion.transpose %x permutation = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
    ```
  }];
  let arguments = (ins Fusion_AnyTensor:$x, DenseI64ArrayAttr:$permutation);
  let results = (outs Fusion_AnyTensor:$result);
  let assemblyFormat = [{
    $x `permutation` `=` $permutation attr-dict `:` type($x) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Fusion_ConcatOp : Fusion_Op<"concat", [Pure, SameOperandsAndResultElementType]> {
  let summary = "operands joined end to end along one dimension";
  let description = [{
    The operands in order along `axis`: result element `i` of that
    dimension is element `i - o` of the operand that starts at offset `o`.
    Every operand has the result's rank and its sizes on the other
    dimensions (dynamic ones included, checked at run time); the joined
    dimension is static in every operand. Fused kernels read each element
    from the operand it lies in (`torch.cat`, a rotary embedding's
    `rotate_half`).

    Example:

    ```mlir
    %r = fusion.concat %a, %b axis = 1 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Variadic<Fusion_AnyTensor>:$inputs,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$axis);
  let results = (outs Fusion_AnyTensor:$result);
  let assemblyFormat = [{
    $inputs `axis` `=` $axis attr-dict `:` `(` type($inputs) `)` `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// Where each operand starts along the axis.
    SmallVector<int64_t> getOffsets();
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Fusion_ReshapeOp : Fusion_Op<"reshape",
    [Pure, SameOperandsAndResultElementType]> {
  let summary = "the same elements, in row-major order, under another shape";
  let description = [{
    Static shapes have the same number of elements; dynamic sizes stay
    whole and in order (the k-th dynamic dimension of the result is the
    operand's k-th), with the same product of static sizes between them on
    both sides (`?x256` -> `?x8x32`, `2x?x64` -> `2x?x4x16`). It moves no data:
    between kernels the lowerings make it a view of its operand's buffer.
    Inside a kernel, which only an `elementwise` one may hold (the fusion
    passes fuse two elementwise kernels across it), each element is read
    at the operand's index of the same row-major position.

    Example (heads split out of a projection):

    ```mlir
    %q = fusion.reshape %x : tensor<2x64x256xbf16> -> tensor<2x64x8x32xbf16>
    ```
  }];
  let arguments = (ins Fusion_AnyTensor:$x);
  let results = (outs Fusion_AnyTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

def Fusion_MatmulOp : Fusion_Op<"matmul",
    [Pure, SameOperandsAndResultElementType]> {
  let summary = "batched matrix product";
  let description = [{
    `[..., M, K] x [..., K, N] -> [..., M, N]`, accumulating in f32; batch
    dimensions broadcast like the elementwise ops. Nothing fuses into a
    matmul's kernel but its epilogue: the elementwise consumers that
    `matmul-epilogue` allows (by default what a library call computes on its
    accumulator: a scale, a residual, a row bias, relu or tanh gelu).

    Example:

    ```mlir
    %0 = fusion.matmul %a, %b : (tensor<?x64x128xbf16>, tensor<128x32xbf16>) -> tensor<?x64x32xbf16>
    ```
  }];
  let arguments = (ins Fusion_FloatTensor:$a, Fusion_FloatTensor:$b);
  let results = (outs Fusion_FloatTensor:$result);
  let assemblyFormat = "$a `,` $b attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Fused kernels
//===----------------------------------------------------------------------===//

def Fusion_KernelOp : Fusion_Op<"kernel", [
    IsolatedFromAbove, RecursiveMemoryEffects,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "a group of fusion ops that runs as one device kernel";
  let description = [{
    The fusion passes group ops into kernels. Operands are the kernel's
    external inputs, bound in order to the body's block arguments; the values
    given to `fusion.yield` leave the kernel as its results. Everything in
    between stays on chip: a kernel reads each input once and writes each
    result once. Rank-0 splat constants are cloned into the body and cost no
    memory traffic.

    `kind` is the contract with the lowering: it says how the kernel runs
    (`elementwise`: one flat index space; `row_reduction`: a block or warp
    per row of the innermost axis, the row kept on chip between reduction and
    normalisation; `wide_row`: a row longer than the fusion passes'
    `max-row-elements` (or of dynamic length), split over a cluster of
    blocks or streamed; `column_reduction`: reductions over outer axes;
    `reduction`: any other reduction; `matmul`: a matrix product with its
    epilogue; `attention`: `softmax(f(Q K^T)) V`, two products with
    elementwise math on the scores and a softmax over their last axis
    between them, the scores never written). `name` says which function and
    which kernel it is. `plan`
    (a `#fusion.plan`, from `fusion-plan-kernels` or written by hand) says
    how the GPU runs it: the kind says what the kernel is, the plan how.

    Example:

    ```mlir
    %out = fusion.kernel elementwise "chain_k0" (%x, %w) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
    ^bb0(%a: tensor<?xf32>, %b: tensor<?xf32>):
      %two = fusion.constant dense<2.0> : tensor<f32>
      %0 = fusion.mul %a, %two : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
      %1 = fusion.mul %0, %b : tensor<?xf32>
      fusion.yield %1 : tensor<?xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<Fusion_AnyTensor>:$inputs,
                       Fusion_KernelKindAttr:$kind,
                       OptionalAttr<StrAttr>:$name,
                       OptionalAttr<Fusion_KernelPlanAttr>:$plan);
  let results = (outs Variadic<Fusion_AnyTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `` $kind ($name^)? ` ` `(` $inputs `)` attr-dict `:`
    functional-type($inputs, results) $body
  }];
  let skipDefaultBuilders = 1;
  let builders = [
    // Creates the body block with one argument per input; the caller fills
    // it and ends it with a fusion.yield.
    OpBuilder<(ins "::mlir::TypeRange":$resultTypes,
                   "::mlir::fusion::KernelKind":$kind,
                   "::mlir::ValueRange":$inputs)>
  ];
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    YieldOp getYield();
  }];
  let hasRegionVerifier = 1;
}

def Fusion_YieldOp : Fusion_Op<"yield", [
    Pure, HasParent<"KernelOp">, Terminator, ReturnLike]> {
  let summary = "the values that leave a fusion.kernel";
  let arguments = (ins Variadic<Fusion_AnyTensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, {}); }]>];
}

#endif // FUSION_DIALECT_FUSION_IR_FUSIONOPS_TD
