// Every verifier and parser message of the fusion dialect, pinned.
// RUN: fusion-opt %s -split-input-file -verify-diagnostics
// Bad input is a located error and a non-zero exit, never a crash:
// RUN: not fusion-opt %s -split-input-file 2>&1 | FileCheck %s --check-prefix=EXIT
// EXIT: invalid.mlir:{{[0-9]+}}:{{[0-9]+}}: error:

func.func @add_1(%a: tensor<3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{operand shapes are not broadcast-compatible: 'tensor<3xf32>', 'tensor<4xf32>'}}
  %0 = fusion.add %a, %b : (tensor<3xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}
// -----

func.func @add_2(%a: tensor<4xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{result type 'tensor<4xf32>' does not match the broadcast of the operands; expected 'tensor<2x4xf32>'}}
  %0 = fusion.add %a, %b : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<4xf32>
  return
}
// -----

func.func @mul_1(%a: tensor<4xf32>, %b: tensor<4xbf16>) {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = fusion.mul %a, %b : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  return
}
// -----

func.func @exp_1(%a: tensor<4xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4xi32>'}}
  %0 = fusion.exp %a : tensor<4xi32>
  return
}
// -----

func.func @exp_2(%a: tensor<*xf32>) {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
  %0 = fusion.exp %a : tensor<*xf32>
  return
}
// -----

func.func @exp_3(%a: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "fusion.exp"(%a) : (tensor<4xf32>) -> tensor<4xf16>
  return
}
// -----

func.func @add_3(%a: tensor<4xf32>) {
  // expected-error @+1 {{expected 2 operands, but found 1}}
  %0 = "fusion.add"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
// -----

func.func @cmp_1(%a: tensor<4xf32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of 1-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = "fusion.cmp"(%a, %a) {predicate = #fusion<cmp_predicate lt>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}
// -----

func.func @cmp_2(%a: tensor<4xf32>) {
  // expected-error @+1 {{result type 'tensor<5xi1>' does not match the broadcast of the operands; expected 'tensor<4xi1>'}}
  %0 = "fusion.cmp"(%a, %a) {predicate = #fusion<cmp_predicate lt>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<5xi1>
  return
}
// -----

func.func @cmp_3(%a: tensor<4xf32>) {
  // expected-error @+1 {{requires attribute 'predicate'}}
  %0 = "fusion.cmp"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return
}
// -----

func.func @cmp_4(%a: tensor<4xf32>) {
  // expected-error @+2 {{expected ::mlir::fusion::CmpPredicate to be one of: eq, ne, lt, le, gt, ge}}
  // expected-error @+1 {{failed to parse Fusion_CmpPredicateAttr parameter 'value' which is to be a `::mlir::fusion::CmpPredicate`}}
  %0 = fusion.cmp bogus, %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return
}
// -----

func.func @gelu_1(%a: tensor<4xf32>) {
  // expected-error @+2 {{expected ::mlir::fusion::GeluApproximation to be one of: none, tanh}}
  // expected-error @+1 {{failed to parse Fusion_GeluApproximationAttr parameter 'value' which is to be a `::mlir::fusion::GeluApproximation`}}
  %0 = fusion.gelu %a approximation = sigmoid : tensor<4xf32>
  return
}
// -----

func.func @select_1(%c: tensor<3xi1>, %a: tensor<4xf32>) {
  // expected-error @+1 {{operand shapes are not broadcast-compatible: 'tensor<3xi1>', 'tensor<4xf32>', 'tensor<4xf32>'}}
  %0 = fusion.select %c, %a, %a : (tensor<3xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}
// -----

func.func @select_2(%c: tensor<4xf32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 1-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = fusion.select %c, %a, %a : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}
// -----

func.func @convert_1(%a: tensor<4xf32>) {
  // expected-error @+1 {{result shape must equal the operand shape: got 'tensor<5xf16>' for an operand of type 'tensor<4xf32>'}}
  %0 = fusion.convert %a : tensor<4xf32> to tensor<5xf16>
  return
}
// -----

func.func @convert_2(%a: tensor<4xf32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4xi8>'}}
  %0 = fusion.convert %a : tensor<4xf32> to tensor<4xi8>
  return
}
// -----

func.func @constant_1() {
  // expected-error @+1 {{failed to verify that all of {value, result} have same type}}
  %0 = "fusion.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f16>
  return
}
// -----

func.func @constant_2() {
  // expected-error @+1 {{result #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 1-bit signless integer values, but got 'tensor<i32>'}}
  %0 = fusion.constant dense<1> : tensor<i32>
  return
}
// -----

func.func @reduce_sum_1(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{axes must not be empty}}
  %0 = fusion.reduce_sum %a axes = [] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}
// -----

func.func @reduce_sum_2(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{axis 2 is out of range for a rank-2 operand (expected 0 <= axis < 2)}}
  %0 = fusion.reduce_sum %a axes = [2] : tensor<4x8xf32> -> tensor<4xf32>
  return
}
// -----

func.func @reduce_max_1(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{axes must be sorted and unique, got [1, 1]}}
  %0 = fusion.reduce_max %a axes = [1, 1] : tensor<4x8xf32> -> tensor<4xf32>
  return
}
// -----

func.func @reduce_min_1(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{axes must be sorted and unique, got [1, 0]}}
  %0 = fusion.reduce_min %a axes = [1, 0] : tensor<4x8xf32> -> tensor<f32>
  return
}
// -----

func.func @reduce_mean_1(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{result type 'tensor<4x1xf32>' is wrong; expected 'tensor<4xf32>'}}
  %0 = fusion.reduce_mean %a axes = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  return
}
// -----

func.func @reduce_mean_2(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{axis -1 is out of range for a rank-2 operand (expected 0 <= axis < 2)}}
  %0 = fusion.reduce_mean %a axes = [-1] : tensor<4x8xf32> -> tensor<4xf32>
  return
}
// -----

func.func @rms_norm_1(%x: tensor<4x8xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{weight must be a 1-D tensor of x's last dimension (8), got 'tensor<4xf32>'}}
  %0 = fusion.rms_norm %x, %w epsilon = 1.0e-06 : tensor<4x8xf32>, tensor<4xf32>
  return
}
// -----

func.func @rms_norm_2(%x: tensor<4x8xf32>, %w: tensor<1x8xf32>) {
  // expected-error @+1 {{weight must be a 1-D tensor of x's last dimension (8), got 'tensor<1x8xf32>'}}
  %0 = fusion.rms_norm %x, %w epsilon = 1.0e-06 : tensor<4x8xf32>, tensor<1x8xf32>
  return
}
// -----

func.func @rms_norm_3(%x: tensor<4x8xf32>, %w: tensor<8xbf16>) {
  // expected-error @+1 {{weight element type 'bf16' differs from x's 'f32'}}
  %0 = fusion.rms_norm %x, %w epsilon = 1.0e-06 : tensor<4x8xf32>, tensor<8xbf16>
  return
}
// -----

func.func @rms_norm_4(%x: tensor<4x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{epsilon must be a finite non-negative number}}
  %0 = fusion.rms_norm %x, %w epsilon = -1.0 : tensor<4x8xf32>, tensor<8xf32>
  return
}
// -----

func.func @rms_norm_5(%x: tensor<f32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{x must have at least one dimension}}
  %0 = fusion.rms_norm %x, %w epsilon = 1.0 : tensor<f32>, tensor<8xf32>
  return
}
// -----

func.func @rms_norm_6(%x: tensor<4x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{failed to verify that all of {x, result} have same type}}
  %0 = "fusion.rms_norm"(%x, %w) {epsilon = 1.0e-06 : f32} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xbf16>
  return
}
// -----

func.func @rms_norm_7(%x: tensor<4x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{requires attribute 'epsilon'}}
  %0 = "fusion.rms_norm"(%x, %w) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}
// -----

// The result keeps x's type, so a static weight cannot refine a dynamic row.
func.func @rms_norm_8(%x: tensor<?x?xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{weight must be a 1-D tensor of dynamic size, as x's last dimension is dynamic, got 'tensor<8xf32>'}}
  %0 = fusion.rms_norm %x, %w epsilon = 1.0e-06 : tensor<?x?xf32>, tensor<8xf32>
  return
}

// -----

func.func @layer_norm_1(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<7xf32>) {
  // expected-error @+1 {{beta must be a 1-D tensor of x's last dimension (8), got 'tensor<7xf32>'}}
  %0 = fusion.layer_norm %x, %g, %b epsilon = 1.0e-05 : tensor<4x8xf32>, tensor<8xf32>, tensor<7xf32>
  return
}
// -----

func.func @softmax_1(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axis 2 is out of range for a rank-2 operand (expected 0 <= axis < 2)}}
  %0 = fusion.softmax %x axis = 2 : tensor<4x8xf32>
  return
}
// -----

func.func @logsumexp_1(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result type 'tensor<4x1xf32>' is wrong; expected 'tensor<4xf32>'}}
  %0 = fusion.logsumexp %x axis = 1 : tensor<4x8xf32> -> tensor<4x1xf32>
  return
}
// -----

func.func @concat_axis(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axis 2 is out of range for a rank-2 operand}}
  %0 = fusion.concat %x, %x axis = 2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  return
}
// -----

func.func @concat_sizes(%x: tensor<4x8xf32>, %y: tensor<3x8xf32>) {
  // expected-error @+1 {{operand 1 has type 'tensor<3x8xf32>': every operand needs operand 0's sizes 'tensor<4x8xf32>' but along axis 1}}
  %0 = fusion.concat %x, %y axis = 1 : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x16xf32>
  return
}
// -----

func.func @concat_dynamic_axis(%x: tensor<4x?xf32>) {
  // expected-error @+1 {{operand 0 is dynamic along axis 1: concatenation needs static sizes there}}
  %0 = fusion.concat %x, %x axis = 1 : (tensor<4x?xf32>, tensor<4x?xf32>) -> tensor<4x?xf32>
  return
}
// -----

func.func @concat_dynamic_mismatch(%x: tensor<?x8xf32>, %y: tensor<4x8xf32>) {
  // expected-error @+1 {{operand 1 has type 'tensor<4x8xf32>': every operand needs operand 0's sizes 'tensor<?x8xf32>' but along axis 1}}
  %0 = fusion.concat %x, %y axis = 1 : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x16xf32>
  return
}
// -----

func.func @concat_result(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result type 'tensor<4x8xf32>' is wrong; expected 'tensor<8x8xf32>'}}
  %0 = fusion.concat %x, %x axis = 0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}
// -----

func.func @slice_1(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{offsets, sizes and strides must each have one entry per dimension (2), got 1, 2 and 2}}
  %0 = fusion.slice %x offsets = [0] sizes = [4, 4] strides = [1, 1] : tensor<4x8xf32> -> tensor<4x4xf32>
  return
}
// -----

func.func @slice_2(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{dimension 1: slice [offset 6, size 4, stride 1] is out of bounds for size 8}}
  %0 = fusion.slice %x offsets = [0, 6] sizes = [4, 4] strides = [1, 1] : tensor<4x8xf32> -> tensor<4x4xf32>
  return
}
// -----

// A stride whose product with the size overflows int64 is still out of
// bounds (the check divides instead of multiplying).
func.func @slice_stride_overflow(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{dimension 1: slice [offset 0, size 3, stride 9223372036854775807] is out of bounds for size 8}}
  %0 = fusion.slice %x offsets = [0, 0] sizes = [4, 3] strides = [1, 9223372036854775807] : tensor<4x8xf32> -> tensor<4x3xf32>
  return
}

// -----

// The last index may be exactly the last element.
func.func @slice_last_element(%x: tensor<4x8xf32>) -> tensor<4x2xf32> {
  %0 = fusion.slice %x offsets = [0, 1] sizes = [4, 2] strides = [1, 6] : tensor<4x8xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
// -----

func.func @slice_3(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{dimension 1: stride must be at least 1, got 0}}
  %0 = fusion.slice %x offsets = [0, 0] sizes = [4, 4] strides = [1, 0] : tensor<4x8xf32> -> tensor<4x4xf32>
  return
}
// -----

func.func @slice_4(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{dimension 0 is dynamic and can only be kept whole (offset 0, size -1, stride 1)}}
  %0 = fusion.slice %x offsets = [0, 0] sizes = [2, 4] strides = [1, 1] : tensor<?x8xf32> -> tensor<2x4xf32>
  return
}
// -----

func.func @slice_5(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{dimension 0: size -1 keeps the whole dimension and needs offset 0 and stride 1}}
  %0 = fusion.slice %x offsets = [1, 0] sizes = [-1, 4] strides = [1, 1] : tensor<4x8xf32> -> tensor<4x4xf32>
  return
}
// -----

func.func @slice_6(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result type 'tensor<4x8xf32>' is wrong; expected 'tensor<4x4xf32>'}}
  %0 = fusion.slice %x offsets = [0, 0] sizes = [4, 4] strides = [1, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}
// -----

func.func @transpose_1(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{permutation [0, 0] is not a permutation of the 2 dimensions of 'tensor<4x8xf32>'}}
  %0 = fusion.transpose %x permutation = [0, 0] : tensor<4x8xf32> -> tensor<4x4xf32>
  return
}
// -----

func.func @transpose_2(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{permutation [1, 0, 2] is not a permutation of the 2 dimensions of 'tensor<4x8xf32>'}}
  %0 = fusion.transpose %x permutation = [1, 0, 2] : tensor<4x8xf32> -> tensor<8x4xf32>
  return
}
// -----

func.func @transpose_3(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result type 'tensor<4x8xf32>' is wrong; expected 'tensor<8x4xf32>'}}
  %0 = fusion.transpose %x permutation = [1, 0] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}
// -----

func.func @reshape_1(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{changes the number of elements: 'tensor<4x8xf32>' has 32, 'tensor<4x7xf32>' has 28}}
  %0 = fusion.reshape %x : tensor<4x8xf32> -> tensor<4x7xf32>
  return
}
// -----

func.func @reshape_2(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{must keep each dynamic size, in order, with the same product of static sizes between them: 'tensor<?x8xf32>' -> 'tensor<8x?xf32>'}}
  %0 = fusion.reshape %x : tensor<?x8xf32> -> tensor<8x?xf32>
  return
}
// -----

func.func @reshape_2b(%x: tensor<?x?xf32>) {
  // expected-error @+1 {{must keep each dynamic size, in order, with the same product of static sizes between them: 'tensor<?x?xf32>' -> 'tensor<?xf32>'}}
  %0 = fusion.reshape %x : tensor<?x?xf32> -> tensor<?xf32>
  return
}
// -----

func.func @reshape_3(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = fusion.reshape %x : tensor<4x8xf32> -> tensor<32xbf16>
  return
}
// -----

func.func @reshape_4(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = fusion.kernel reduction (%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    // expected-error @+1 {{is evaluated inside elementwise kernels only, not in a reduction kernel}}
    %1 = fusion.reshape %a : tensor<4x8xf32> -> tensor<4x2x4xf32>
    %2 = fusion.reduce_sum %1 axes = [1, 2] : tensor<4x2x4xf32> -> tensor<4xf32>
    fusion.yield %2 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
// -----

func.func @matmul_1(%a: tensor<4x8xf32>, %b: tensor<7x3xf32>) {
  // expected-error @+1 {{inner dimensions differ: lhs has K = 8, rhs has K = 7}}
  %0 = fusion.matmul %a, %b : (tensor<4x8xf32>, tensor<7x3xf32>) -> tensor<4x3xf32>
  return
}
// -----

func.func @matmul_2(%a: tensor<8xf32>, %b: tensor<8x3xf32>) {
  // expected-error @+1 {{operands must have rank 2 or more ([..., M, K] and [..., K, N]), got 'tensor<8xf32>' and 'tensor<8x3xf32>'}}
  %0 = fusion.matmul %a, %b : (tensor<8xf32>, tensor<8x3xf32>) -> tensor<3xf32>
  return
}
// -----

func.func @matmul_3(%a: tensor<2x4x8xf32>, %b: tensor<3x8x3xf32>) {
  // expected-error @+1 {{batch dimensions are not broadcast-compatible: 'tensor<2x4x8xf32>' and 'tensor<3x8x3xf32>'}}
  %0 = fusion.matmul %a, %b : (tensor<2x4x8xf32>, tensor<3x8x3xf32>) -> tensor<2x4x3xf32>
  return
}
// -----

func.func @matmul_4(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) {
  // expected-error @+1 {{result type 'tensor<4x8xf32>' is wrong; expected 'tensor<4x3xf32>'}}
  %0 = fusion.matmul %a, %b : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x8xf32>
  return
}
// -----

func.func @bogus_1(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{is unknown}}
  %0 = fusion.bogus %a : tensor<4x8xf32>
  return
}
// -----

func.func @add_4(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{expected SSA operand}}
  %0 = fusion.add %a, : tensor<4x8xf32>
  return
}

// -----

func.func @kernel_1(%x: tensor<4xf32>) {
  // expected-error @+1 {{body arguments must match the inputs one to one, got ('tensor<8xf32>') for inputs ('tensor<4xf32>')}}
  %0 = fusion.kernel elementwise (%x) : (tensor<4xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8xf32>):
    fusion.yield %a : tensor<8xf32>
  }
  return
}

// -----

func.func @kernel_2(%x: tensor<4xf32>) {
  // expected-error @+1 {{yielded types ('tensor<4xf32>') must match the kernel's result types ('tensor<4xf16>')}}
  %0 = fusion.kernel elementwise (%x) : (tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%a: tensor<4xf32>):
    fusion.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @kernel_3(%x: tensor<4xf32>) {
  %0 = fusion.kernel elementwise (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{cannot be inside a fusion.kernel: a kernel holds fusion ops other than fusion.kernel}}
    %c = arith.constant 1.0 : f32
    fusion.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @kernel_4(%x: tensor<4xf32>) {
  // expected-error @+1 {{a rows plan needs a row_reduction or wide_row kernel}}
  %0 = fusion.kernel elementwise (%x) {plan = #fusion.plan<rows, threads = 32, vector = 1, row = streamed, cluster = 1, passes = [1]>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    fusion.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @kernel_plan_inputs(%x: tensor<4xf32>) {
  // expected-error @+1 {{plan reads 2 inputs, the kernel has 1}}
  %0 = fusion.kernel elementwise (%x) {plan = #fusion.plan<elementwise, threads = 256, vector = 4, row = none, cluster = 1, passes = [1, 1]>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    fusion.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @kernel_plan_cluster(%x: tensor<4xf32>) {
  // expected-error @+1 {{a plan's cluster is 2 to 16 for cluster_rows, 1 to 16 for attention_rows and 1 otherwise, got 4 for rows}}
  %0 = fusion.kernel row_reduction (%x) {plan = #fusion.plan<rows, threads = 32, vector = 1, row = streamed, cluster = 4, passes = [1]>} : (tensor<4xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<4xf32>):
    %s = fusion.reduce_sum %a axes = [0] : tensor<4xf32> -> tensor<f32>
    fusion.yield %s : tensor<f32>
  }
  return
}

// -----

func.func @kernel_plan_split(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{a plan's split is at least 1, and 1 for every strategy but columns, split_reduction, matmul_wgmma and attention_rows, got 4 for rows}}
  %0 = fusion.kernel row_reduction (%x) {plan = #fusion.plan<rows, threads = 32, vector = 1, row = streamed, cluster = 1, split = 4, passes = [1]>} : (tensor<8x4xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    %s = fusion.reduce_sum %a axes = [1] : tensor<8x4xf32> -> tensor<8xf32>
    fusion.yield %s : tensor<8xf32>
  }
  return
}

// -----

func.func @kernel_plan_attention_rows(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{an attention plan needs an attention kernel}}
  %0 = fusion.kernel row_reduction (%x) {plan = #fusion.plan<attention_rows, threads = 128, vector = 16, row = none, cluster = 1, passes = [1]>} : (tensor<8x4xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    %s = fusion.reduce_sum %a axes = [1] : tensor<8x4xf32> -> tensor<8xf32>
    fusion.yield %s : tensor<8xf32>
  }
  return
}

// -----

func.func @kernel_plan_attention_tiles(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{an attention plan needs an attention kernel}}
  %0 = fusion.kernel row_reduction (%x) {plan = #fusion.plan<attention_tiles, threads = 384, vector = 2, row = none, cluster = 1, passes = [1]>} : (tensor<8x4xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    %s = fusion.reduce_sum %a axes = [1] : tensor<8x4xf32> -> tensor<8xf32>
    fusion.yield %s : tensor<8xf32>
  }
  return
}

// -----

func.func @kernel_plan_columns(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{a columns plan needs a column_reduction kernel}}
  %0 = fusion.kernel row_reduction (%x) {plan = #fusion.plan<columns, threads = 256, vector = 1, row = none, cluster = 1, passes = [1]>} : (tensor<8x4xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    %s = fusion.reduce_sum %a axes = [1] : tensor<8x4xf32> -> tensor<8xf32>
    fusion.yield %s : tensor<8xf32>
  }
  return
}

// -----

func.func @kernel_plan_vector(%x: tensor<4xf32>) {
  // expected-error @+1 {{a plan's vector must be 1, 2, 4, 8 or 16, got 3}}
  %0 = fusion.kernel elementwise (%x) {plan = #fusion.plan<elementwise, threads = 256, vector = 3, row = none, cluster = 1, passes = [1]>} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    fusion.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @kernel_5(%x: tensor<4xf32>) {
  // expected-note @+1 {{required by region isolation constraints}}
  %0 = fusion.kernel elementwise (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{using value defined outside the region}}
    fusion.yield %x : tensor<4xf32>
  }
  return
}

// -----

func.func @yield_1(%x: tensor<4xf32>) {
  // expected-error @+1 {{expects parent op 'fusion.kernel'}}
  fusion.yield %x : tensor<4xf32>
}

// -----

func.func @iota_1() {
  // expected-error @+1 {{dimension 2 is out of range for a result of rank 2}}
  %0 = fusion.iota dimension = 2 : tensor<4x8xf32>
  return
}
// -----

func.func @iota_2() {
  // expected-error @+1 {{needs a static shape, or dimension 1 alone dynamic with a source giving its size: got 'tensor<?x8xf32>'}}
  %0 = fusion.iota dimension = 1 : tensor<?x8xf32>
  return
}
// -----

func.func @iota_other_dimension_dynamic(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{needs a static shape, or dimension 1 alone dynamic with a source giving its size: got 'tensor<?x?xf32>'}}
  %0 = fusion.iota dimension = 1 size_of %x[0] : tensor<?x8xf32> -> tensor<?x?xf32>
  return
}
// -----

func.func @iota_source_dimension_out_of_range(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{source dimension 2 is out of range for a source of rank 2}}
  %0 = fusion.iota dimension = 0 size_of %x[2] : tensor<?x8xf32> -> tensor<?x1xf32>
  return
}
// -----

func.func @iota_size_differs_from_source(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{dimension 0 of the result must have the size of dimension 1 of the source: got 'tensor<?x1xf32>' and 'tensor<?x8xf32>'}}
  %0 = fusion.iota dimension = 0 size_of %x[1] : tensor<?x8xf32> -> tensor<?x1xf32>
  return
}
// -----

func.func @iota_dynamic_bf16(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{positions of a dynamic size must be f32 (exact up to 2^24): got 'bf16'}}
  %0 = fusion.iota dimension = 0 size_of %x[0] : tensor<?x8xf32> -> tensor<?x1xbf16>
  return
}
// -----

func.func @iota_source_dimension_alone(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{takes a source and its dimension together}}
  %0 = "fusion.iota"() {dimension = 0 : i64, source_dimension = 0 : i64} : () -> tensor<4x1xf32>
  return
}
// -----

func.func @iota_3() {
  // expected-error @+1 {{positions along dimension 0 (300) are not all exact in 'bf16' (at most 256)}}
  %0 = fusion.iota dimension = 0 : tensor<300x1xbf16>
  return
}
