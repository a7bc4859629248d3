// Matmul kernels that are one library call become host calls of the CUDA
// runtime's fusion_cuda_matmul_<type> (cuBLASLt), given the buffers as
// unranked memrefs: A, B, the residual, the bias, D, then the flags
// (residual 1, bias 2, relu 4, gelu 8, tf32 16) and alpha.
// RUN: fusion-opt %s --split-input-file --fusion-pipeline --fusion-kernels-to-gpu | FileCheck %s
// RUN: fusion-opt %s --split-input-file --fusion-pipeline --fusion-kernels-to-gpu=matmul-tf32 | FileCheck %s --check-prefix=TF32
// RUN: fusion-opt %s --split-input-file --fusion-pipeline="matmul-epilogue=any" --fusion-kernels-to-gpu | FileCheck %s --check-prefix=ANY
// RUN: not fusion-opt %s --split-input-file --fusion-pipeline="matmul-epilogue=any" --fusion-kernels-to-gpu=matmul-backend=library 2>&1 | FileCheck %s --check-prefix=LIBRARY
// RUN: fusion-opt %s --split-input-file --fusion-pipeline --fusion-kernels-to-gpu=matmul-backend=generated | FileCheck %s --check-prefix=GENERATED
// RUN: fusion-opt %s --split-input-file --fusion-to-nvvm=format=isa | FileCheck %s --check-prefix=LLVM

// CHECK: func.func private @fusion_cuda_matmul_bf16(memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, i32, f32)
// CHECK-LABEL: func.func @scale_residual_bias_gelu
// CHECK-SAME: (%[[A:[^:]+]]: memref<?x64xbf16>, %[[B:[^:]+]]: memref<64x32xbf16>, %[[R:[^:]+]]: memref<?x32xbf16>, %[[BIAS:[^:]+]]: memref<32xbf16>, %[[D:[^:]+]]: memref<?x32xbf16>)
// CHECK-NOT: gpu.launch
// CHECK-DAG: %[[UD:.+]] = memref.cast %[[D]] : memref<?x32xbf16> to memref<*xbf16>
// CHECK-DAG: %[[UR:.+]] = memref.cast %[[R]] : memref<?x32xbf16> to memref<*xbf16>
// CHECK-DAG: %[[UBIAS:.+]] = memref.cast %[[BIAS]] : memref<32xbf16> to memref<*xbf16>
// CHECK-DAG: %[[UA:.+]] = memref.cast %[[A]] : memref<?x64xbf16> to memref<*xbf16>
// CHECK-DAG: %[[UB:.+]] = memref.cast %[[B]] : memref<64x32xbf16> to memref<*xbf16>
// CHECK-DAG: %[[FLAGS:.+]] = arith.constant 11 : i32
// CHECK-DAG: %[[ALPHA:.+]] = arith.constant 5.000000e-01 : f32
// CHECK: call @fusion_cuda_matmul_bf16(%[[UA]], %[[UB]], %[[UR]], %[[UBIAS]], %[[UD]], %[[FLAGS]], %[[ALPHA]])
// CHECK-NOT: gpu.launch
// CHECK: return
// TF32-LABEL: func.func @scale_residual_bias_gelu
// TF32: arith.constant 27 : i32
// ANY-LABEL: func.func @scale_residual_bias_gelu
// ANY: call @fusion_cuda_matmul_bf16
// GENERATED-LABEL: func.func @scale_residual_bias_gelu
// GENERATED-NOT: call @fusion_cuda_matmul
// GENERATED: gpu.launch
// LLVM: llvm.func @fusion_cuda_matmul_bf16(i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i32, f32)
// LLVM-LABEL: llvm.func @scale_residual_bias_gelu
// LLVM: llvm.call @fusion_cuda_matmul_bf16
func.func @scale_residual_bias_gelu(%a: tensor<?x64xbf16>, %b: tensor<64x32xbf16>, %r: tensor<?x32xbf16>, %bias: tensor<32xbf16>) -> tensor<?x32xbf16> {
  %half = fusion.constant dense<0.5> : tensor<bf16>
  %0 = fusion.matmul %a, %b : (tensor<?x64xbf16>, tensor<64x32xbf16>) -> tensor<?x32xbf16>
  %1 = fusion.mul %0, %half : (tensor<?x32xbf16>, tensor<bf16>) -> tensor<?x32xbf16>
  %2 = fusion.add %1, %r : tensor<?x32xbf16>
  %3 = fusion.add %2, %bias : (tensor<?x32xbf16>, tensor<32xbf16>) -> tensor<?x32xbf16>
  %4 = fusion.gelu %3 approximation = tanh : tensor<?x32xbf16>
  return %4 : tensor<?x32xbf16>
}

// -----

// A batched f32 product with relu into an intermediate buffer; the exp after
// it is a launch that reads the product once. Absent operands are passed as
// D (flags say they are absent).
// CHECK-LABEL: func.func @batched_relu_then_exp
// CHECK: %[[TMP:.+]], %{{.+}} = gpu.alloc async
// CHECK: %[[UT:.+]] = memref.cast %[[TMP]] : memref<3x16x8xf32> to memref<*xf32>
// CHECK: %[[FLAGS:.+]] = arith.constant 4 : i32
// CHECK: call @fusion_cuda_matmul_f32(%{{.+}}, %{{.+}}, %[[UT]], %[[UT]], %[[UT]], %[[FLAGS]], %{{.+}})
// CHECK: gpu.launch
// CHECK-SAME: function(@batched_relu_then_exp_k1)
// CHECK: gpu.dealloc async [%{{.+}}] %[[TMP]]
// TF32-LABEL: func.func @batched_relu_then_exp
// TF32: arith.constant 20 : i32
// ANY-LABEL: func.func @batched_relu_then_exp
// ANY-NOT: call @fusion_cuda_matmul
// ANY: gpu.launch
// ANY-SAME: function(@batched_relu_then_exp_k0)
// LIBRARY: error: 'fusion.kernel' op is not one library call (matmul-backend=library): [library-epilogue] 'fusion.exp' is not a library epilogue; matmul-backend=auto runs it as a generated kernel
func.func @batched_relu_then_exp(%a: tensor<3x16x32xf32>, %b: tensor<32x8xf32>) -> tensor<3x16x8xf32> {
  %0 = fusion.matmul %a, %b : (tensor<3x16x32xf32>, tensor<32x8xf32>) -> tensor<3x16x8xf32>
  %1 = fusion.relu %0 : tensor<3x16x8xf32>
  %2 = fusion.exp %1 : tensor<3x16x8xf32>
  return %2 : tensor<3x16x8xf32>
}

// -----

// Operands read transposed (x @ w^T of a Linear layer, batched q @ k^T):
// the stored buffer is passed as its transposed view, a strided memref the
// runtime reads with op = T; no launch writes the transpose.
// CHECK-LABEL: func.func @transposed_operands
// CHECK-SAME: (%[[X:[^:]+]]: memref<?x64xbf16>, %[[W:[^:]+]]: memref<32x64xbf16>, %[[BIAS:[^:]+]]: memref<32xbf16>, %[[Q:[^:]+]]: memref<4x?x16xf32>, %[[K:[^:]+]]: memref<4x?x16xf32>
// CHECK-NOT: gpu.launch
// CHECK: %[[WT:.+]] = memref.transpose %[[W]] (d0, d1) -> (d1, d0) : memref<32x64xbf16> to memref<64x32xbf16, strided<[1, 64]>>
// CHECK: %[[UWT:.+]] = memref.cast %[[WT]] : memref<64x32xbf16, strided<[1, 64]>> to memref<*xbf16>
// CHECK: call @fusion_cuda_matmul_bf16(%{{.+}}, %[[UWT]],
// CHECK: %[[KT:.+]] = memref.transpose %[[K]] (d0, d1, d2) -> (d0, d2, d1)
// CHECK: %[[UKT:.+]] = memref.cast %[[KT]]
// CHECK: call @fusion_cuda_matmul_f32(%{{.+}}, %[[UKT]],
// CHECK-NOT: gpu.launch
// CHECK: return
// GENERATED-LABEL: func.func @transposed_operands
// GENERATED-NOT: call @fusion_cuda_matmul
// GENERATED: gpu.launch
// LLVM-LABEL: llvm.func @transposed_operands
// LLVM: llvm.call @fusion_cuda_matmul_bf16
// LLVM: llvm.call @fusion_cuda_matmul_f32
func.func @transposed_operands(%x: tensor<?x64xbf16>, %w: tensor<32x64xbf16>, %bias: tensor<32xbf16>, %q: tensor<4x?x16xf32>, %k: tensor<4x?x16xf32>) -> (tensor<?x32xbf16>, tensor<4x?x?xf32>) {
  %wt = fusion.transpose %w permutation = [1, 0] : tensor<32x64xbf16> -> tensor<64x32xbf16>
  %0 = fusion.matmul %x, %wt : (tensor<?x64xbf16>, tensor<64x32xbf16>) -> tensor<?x32xbf16>
  %1 = fusion.add %0, %bias : (tensor<?x32xbf16>, tensor<32xbf16>) -> tensor<?x32xbf16>
  %kt = fusion.transpose %k permutation = [0, 2, 1] : tensor<4x?x16xf32> -> tensor<4x16x?xf32>
  %2 = fusion.matmul %q, %kt : (tensor<4x?x16xf32>, tensor<4x16x?xf32>) -> tensor<4x?x?xf32>
  return %1, %2 : tensor<?x32xbf16>, tensor<4x?x?xf32>
}
