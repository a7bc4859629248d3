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

    The pass works on any op that holds fusion ops (a `func.func`, a
    module); it fails only if the rewrite does not converge.
  }];
  let dependentDialects = ["::mlir::fusion::FusionDialect"];
}

#endif // FUSION_DIALECT_FUSION_TRANSFORMS_PASSES_TD
