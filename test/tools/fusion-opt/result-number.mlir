// MLIR 22's parser makes room for every result number up to the one a use
// names before it checks it, so a huge one runs it out of memory; fusion-opt
// and fusion-compile diagnose it instead (found by scripts/fuzz.py mutate).
// The same number in a comment, as here, is not a use: %0#2147483648.
// RUN: not fusion-opt %s 2>&1 | FileCheck %s
// RUN: not fusion-compile %s --target=cpu -o %t.so 2>&1 | FileCheck %s

// CHECK-NOT: result-number.mlir:4:
// CHECK: result-number.mlir:[[@LINE+4]]:10: error: reference to invalid result number (MLIR 22's parser cannot read one this large)
// CHECK-NOT: error
func.func @huge(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0:2 = "fusion.split_test"(%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %0#2147483648 : tensor<4xf32>
}
