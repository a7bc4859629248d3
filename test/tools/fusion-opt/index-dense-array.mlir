// MLIR 22's parser crashes on dense arrays of index (llvm/llvm-project#179045);
// fusion-opt and fusion-compile diagnose them instead.
// RUN: not fusion-opt %s 2>&1 | FileCheck %s
// RUN: not fusion-compile %s --target=cpu -o %t.so 2>&1 | FileCheck %s

// CHECK: index-dense-array.mlir:[[@LINE+2]]:40: error: dense arrays of 'index' are not supported
func.func @f(%x: tensor<4x8xf32>) -> tensor<f32> {
  %0 = "fusion.reduce_min"(%x) {axes = array<index: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
