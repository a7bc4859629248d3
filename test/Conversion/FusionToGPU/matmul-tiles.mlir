// RUN: fusion-opt %s --fusion-pipeline="matmul-epilogue=any" --fusion-kernels-to-gpu=matmul-backend=generated | FileCheck %s

// The generated matmul (with its epilogue): a block per 16x16
// output tile; per step along K both operand tiles are staged in shared
// memory, zero past the edges; the epilogue runs on the accumulator.
// CHECK-LABEL: func.func @matmul_bias_relu
// CHECK: gpu.launch
// CHECK-SAME: function(@matmul_bias_relu_k0) workgroup(%[[A:.+]] : memref<16x17xf32, #gpu.address_space<workgroup>>, %[[B:.+]] : memref<16x17xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for {{.*}} iter_args
// CHECK: scf.if
// CHECK: memref.store %{{.+}}, %[[A]]
// CHECK: scf.if
// CHECK: memref.store %{{.+}}, %[[B]]
// CHECK: gpu.barrier
// CHECK-COUNT-16: math.fma
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: memref.store
func.func @matmul_bias_relu(%a: tensor<2x100x70xbf16>, %b: tensor<70x50xbf16>, %bias: tensor<50xbf16>) -> tensor<2x100x50xbf16> {
  %0 = fusion.matmul %a, %b : (tensor<2x100x70xbf16>, tensor<70x50xbf16>) -> tensor<2x100x50xbf16>
  %1 = fusion.add %0, %bias : (tensor<2x100x50xbf16>, tensor<50xbf16>) -> tensor<2x100x50xbf16>
  %2 = fusion.relu %1 : tensor<2x100x50xbf16>
  return %2 : tensor<2x100x50xbf16>
}
