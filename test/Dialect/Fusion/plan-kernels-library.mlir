// With matmul-backend=library, a matmul kernel that is not one library call
// is a located error.
// RUN: fusion-opt %s --fusion-plan-kernels=matmul-backend=library -verify-diagnostics

func.func @plan_matmul_library(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>) -> tensor<64x16xf32> {
  // expected-error @+1 {{is not one library call (matmul-backend=library)}}
  %0 = fusion.kernel matmul (%a, %b) : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32> {
  ^bb0(%x: tensor<64x32xf32>, %y: tensor<32x16xf32>):
    %p = fusion.matmul %x, %y : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
    %e = fusion.exp %p : tensor<64x16xf32>
    fusion.yield %e : tensor<64x16xf32>
  }
  return %0 : tensor<64x16xf32>
}
