// Attention through the pipelines: fusion-pipeline forms one attention
// kernel (softmax whole) and fuses nothing into it, the Q projection before
// it and the residual after it staying kernels of their own; with
// attention=none, and in fusion-to-nvvm (attention=gpu: attention_rows
// reads rows of K, and K^T is what is stored here), attention runs as its products and softmax
// (there the residual joins the last product as a library epilogue);
// fusion-to-cpu lowers the kernel op by op. A decode attention (one query
// row) is one attention kernel on the GPU too, one launch.
// RUN: fusion-opt %s --fusion-pipeline | FileCheck %s
// RUN: fusion-opt %s --fusion-pipeline=emit-remarks -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: fusion-opt %s --fusion-pipeline=attention=none | FileCheck %s --check-prefix=NONE
// RUN: fusion-opt %s --fusion-to-cpu | FileCheck %s --check-prefix=CPU
// RUN: fusion-opt %s --fusion-to-nvvm=format=isa | FileCheck %s --check-prefix=GPU
// RUN: fusion-opt %s --fusion-pipeline="attention=gpu emit-remarks" -o /dev/null 2>&1 | FileCheck %s --check-prefix=GPU-REMARK

// CHECK-LABEL: func @block
// CHECK: fusion.kernel matmul
// CHECK: fusion.kernel attention
// CHECK: fusion.softmax
// CHECK-NOT: fusion.reduce
// CHECK: fusion.yield
// CHECK: fusion.kernel elementwise
// NONE-LABEL: func @block
// NONE-NOT: fusion.kernel attention
// NONE: fusion.kernel row_reduction
// CPU: llvm.func @block_k1(
// CPU: llvm.func @block(
// GPU-LABEL: llvm.func @block(
// GPU-COUNT-2: llvm.call @fusion_cuda_matmul_f32
// GPU: gpu.launch_func @block_k2_module
// GPU: llvm.call @fusion_cuda_matmul_f32
// GPU-NOT: gpu.launch_func
// REMARK: attention.mlir:[[# @LINE + 3]]:8: remark: not fused with 'fusion.matmul' {{.*}}: [attention] an attention kernel is a fusion boundary
// REMARK: attention.mlir:[[# @LINE + 5]]:8: remark: not fused with 'fusion.add' {{.*}}: [attention] an attention kernel is a fusion boundary
func.func @block(%x: tensor<128x64xf32>, %wq: tensor<64x64xf32>, %kt: tensor<64x128xf32>, %v: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %q = fusion.matmul %x, %wq : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
  %s = fusion.matmul %q, %kt : (tensor<128x64xf32>, tensor<64x128xf32>) -> tensor<128x128xf32>
  %p = fusion.softmax %s axis = 1 : tensor<128x128xf32>
  %o = fusion.matmul %p, %v : (tensor<128x128xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
  %r = fusion.add %o, %x : tensor<128x64xf32>
  return %r : tensor<128x64xf32>
}

// GPU-REMARK: remark: [attention] not formed for the {{GPU}}: K^T is stored as it is
// GPU-LABEL: llvm.func @decode(
// GPU-NOT: fusion_cuda_matmul
// GPU: gpu.launch_func @decode_k0_module::@decode_k0
// GPU-NOT: gpu.launch_func
// GPU: llvm.return
func.func @decode(%q: tensor<4x1x64xbf16>, %k: tensor<4x?x64xbf16>, %v: tensor<4x?x64xbf16>) -> tensor<4x1x64xbf16> {
  %kt = fusion.transpose %k permutation = [0, 2, 1] : tensor<4x?x64xbf16> -> tensor<4x64x?xbf16>
  %s = fusion.matmul %q, %kt : (tensor<4x1x64xbf16>, tensor<4x64x?xbf16>) -> tensor<4x1x?xbf16>
  %p = fusion.softmax %s axis = 2 : tensor<4x1x?xbf16>
  %o = fusion.matmul %p, %v : (tensor<4x1x?xbf16>, tensor<4x?x64xbf16>) -> tensor<4x1x64xbf16>
  return %o : tensor<4x1x64xbf16>
}
