// fusion-reduce shrinks a module to what keeps a script interested: here,
// that the fusion pipeline still refuses an edge as a [cycle] (the script
// exits 1 while it does). The functions that do not matter go, and so do
// the ops that do not feed a result; the exp -> matmul -> mul triangle
// stays.
//
// RUN: env PATH=%fusion_obj_root/bin:$PATH fusion-reduce %s --reduction-tree='traversal-mode=0 test=%S/has-cycle-remark.sh' -o %t.mlir 2> %t.log
// RUN: FileCheck %s < %t.mlir
// RUN: fusion-opt %t.mlir --fusion-pipeline=emit-remarks -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// CHECK-NOT: func.func @softmax
// CHECK-NOT: func.func @chain
// CHECK-LABEL: func.func @block
// CHECK-NOT: fusion.tanh
// CHECK: fusion.exp
// CHECK-NEXT: fusion.matmul
// CHECK-NEXT: fusion.mul
// CHECK-NEXT: return
// CHECK-NOT: func.func
// REMARK: [cycle]

func.func @softmax(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %0 = fusion.softmax %x axis = 1 : tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

func.func @block(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>, %v: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %t = fusion.tanh %v : tensor<64x64xf32>
  %u = fusion.add %t, %v : tensor<64x64xf32>
  %a = fusion.exp %x : tensor<64x64xf32>
  %mm = fusion.matmul %a, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %b = fusion.mul %mm, %a : tensor<64x64xf32>
  return %b : tensor<64x64xf32>
}

func.func @chain(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = fusion.exp %x : tensor<1024xf32>
  %1 = fusion.neg %0 : tensor<1024xf32>
  return %1 : tensor<1024xf32>
}
