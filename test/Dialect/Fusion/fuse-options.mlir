// Options of the fusion passes, each against its default.
// RUN: fusion-opt %s --split-input-file --fusion-fuse-producer-consumer | FileCheck %s --check-prefix=DEFAULT
// RUN: fusion-opt %s --split-input-file --fusion-fuse-producer-consumer=matmul-epilogue=none | FileCheck %s --check-prefix=NONE
// RUN: fusion-opt %s --split-input-file --fusion-fuse-producer-consumer=matmul-epilogue=any | FileCheck %s --check-prefix=ANY
// RUN: fusion-opt %s --split-input-file --fusion-fuse-producer-consumer="max-ops=2 emit-remarks" --verify-diagnostics | FileCheck %s --check-prefix=BUDGET

// matmul-epilogue: library (the default) takes the bias and relu a library
// call computes, not the exp after them; any takes the whole chain; none
// leaves the matmul alone.
// DEFAULT-LABEL: func @matmul_bias_relu
// DEFAULT: fusion.kernel matmul "matmul_bias_relu_k0"
// DEFAULT: fusion.matmul
// DEFAULT: fusion.add
// DEFAULT: fusion.relu
// DEFAULT: fusion.kernel elementwise "matmul_bias_relu_k1"
// DEFAULT: fusion.exp
// ANY-LABEL: func @matmul_bias_relu
// ANY: fusion.kernel matmul "matmul_bias_relu_k0"
// ANY: fusion.matmul
// ANY: fusion.add
// ANY: fusion.relu
// ANY: fusion.exp
// ANY-NOT: fusion.kernel
// NONE-LABEL: func @matmul_bias_relu
// NONE: fusion.kernel matmul "matmul_bias_relu_k0"
// NONE-NEXT: ^bb0
// NONE-NEXT: fusion.matmul
// NONE-NEXT: fusion.yield
// NONE: fusion.kernel elementwise "matmul_bias_relu_k1"
// BUDGET-LABEL: func @matmul_bias_relu
func.func @matmul_bias_relu(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>, %bias: tensor<16xf32>) -> tensor<64x16xf32> {
  %m = fusion.matmul %a, %b : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  %0 = fusion.add %m, %bias : (tensor<64x16xf32>, tensor<16xf32>) -> tensor<64x16xf32>
  // expected-remark @+1 {{[library-epilogue] 'fusion.exp' is not a library epilogue}}
  %1 = fusion.relu %0 : tensor<64x16xf32>
  %2 = fusion.exp %1 : tensor<64x16xf32>
  return %2 : tensor<64x16xf32>
}

// -----

// With max-ops=2 a four-op chain needs two kernels.
// DEFAULT-LABEL: func @budget
// DEFAULT-COUNT-1: fusion.kernel
// BUDGET-LABEL: func @budget
// ANY-LABEL: func @budget
// BUDGET-COUNT-2: fusion.kernel elementwise
func.func @budget(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = fusion.exp %x : tensor<1024xf32>
  // expected-remark @+1 {{[budget] 4 ops > max-ops 2}}
  %1 = fusion.tanh %0 : tensor<1024xf32>
  %2 = fusion.neg %1 : tensor<1024xf32>
  %3 = fusion.abs %2 : tensor<1024xf32>
  return %3 : tensor<1024xf32>
}

// -----

// A value returned in its own shape cannot be a second output of a kernel
// that writes another shape: its kernel writes it once, the consumer reads
// it.
// DEFAULT-LABEL: func @outputs_of_two_shapes
// DEFAULT: fusion.kernel elementwise "outputs_of_two_shapes_k0" (%{{.+}}) : (tensor<64xf32>) -> tensor<64xf32>
// DEFAULT: fusion.kernel elementwise "outputs_of_two_shapes_k1" (%{{.+}}, %{{.+}}) : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
// BUDGET-LABEL: func @outputs_of_two_shapes
func.func @outputs_of_two_shapes(%w: tensor<64xf32>, %x: tensor<8x64xf32>) -> (tensor<64xf32>, tensor<8x64xf32>) {
  // expected-remark @+1 {{[shape] the value is also needed elsewhere, and an elementwise kernel writes outputs of one shape ([64] vs [8x64])}}
  %e = fusion.exp %w : tensor<64xf32>
  %y = fusion.mul %x, %e : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return %e, %y : tensor<64xf32>, tensor<8x64xf32>
}
