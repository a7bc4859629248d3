// RUN: fusion-opt %s --split-input-file --fusion-outline --fusion-to-linalg | FileCheck %s

// A kernel becomes a private destination-passing function; the public
// function gets an output argument and the call writes straight into it.
// Broadcasting is an indexing map; bf16 math runs in f32.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[COL:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func private @broadcast_add_k0
// CHECK-SAME: (%[[X:.+]]: tensor<?x8xbf16>, %[[B:.+]]: tensor<8xbf16>, %[[OUT:.+]]: tensor<?x8xbf16>) -> tensor<?x8xbf16>
// CHECK-SAME: fusion.kernel_id = 0 : i64, fusion.kernel_kind = "elementwise"
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[COL]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[B]] : {{.*}}) outs(%[[OUT]] : tensor<?x8xbf16>)
// CHECK: arith.extf
// CHECK: arith.extf
// CHECK: arith.addf
// CHECK: arith.truncf
// CHECK: return %[[R]]
// CHECK-LABEL: func.func @broadcast_add
// CHECK-SAME: (%[[X2:.+]]: tensor<?x8xbf16>, %[[B2:.+]]: tensor<8xbf16>, %[[OUT2:.+]]: tensor<?x8xbf16>) -> tensor<?x8xbf16> attributes {llvm.emit_c_interface}
// CHECK: %[[C:.+]] = call @broadcast_add_k0(%[[X2]], %[[B2]], %[[OUT2]])
// CHECK: return %[[C]]
func.func @broadcast_add(%x: tensor<?x8xbf16>, %b: tensor<8xbf16>) -> tensor<?x8xbf16> {
  %0 = fusion.add %x, %b : (tensor<?x8xbf16>, tensor<8xbf16>) -> tensor<?x8xbf16>
  return %0 : tensor<?x8xbf16>
}

// -----

// A row reduction accumulates in f32 from its identity, divides for the
// mean, rounds to the element type, and keeps its dims with expand_shape.
// CHECK-LABEL: func.func private @row_mean_k0
// CHECK: %[[INIT:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<4xf32>)
// CHECK: %[[SUM:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.+}} : tensor<4x16xf16>) outs(%[[INIT]] : tensor<4xf32>)
// CHECK: arith.extf
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} ins(%[[SUM]] : tensor<4xf32>) outs(%{{.+}} : tensor<4xf16>)
// CHECK: arith.divf
// CHECK: arith.truncf
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0, 1]] output_shape [4, 1] : tensor<4xf16> into tensor<4x1xf16>
// CHECK: linalg.copy
func.func @row_mean(%x: tensor<4x16xf16>) -> tensor<4x1xf16> {
  %0 = fusion.reduce_mean %x axes = [1] keep_dims : tensor<4x16xf16> -> tensor<4x1xf16>
  return %0 : tensor<4x1xf16>
}

// -----

// A max reduction starts from -inf.
// CHECK-LABEL: func.func private @row_max_k0
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: arith.maximumf
func.func @row_max(%x: tensor<4x16xf32>) -> tensor<4xf32> {
  %0 = fusion.reduce_max %x axes = [1] : tensor<4x16xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Matmul: batch dims broadcast (b has none), f32 accumulation, rounding.
// CHECK-DAG: #[[A:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[B:.+]] = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
// CHECK-DAG: #[[C:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func private @batched_k0
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} {{.*}} outs(%{{.+}} : tensor<?x4x3xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: arith.truncf {{.*}} f32 to bf16
func.func @batched(%a: tensor<?x4x8xbf16>, %b: tensor<8x3xbf16>) -> tensor<?x4x3xbf16> {
  %0 = fusion.matmul %a, %b : (tensor<?x4x8xbf16>, tensor<8x3xbf16>) -> tensor<?x4x3xbf16>
  return %0 : tensor<?x4x3xbf16>
}

// -----

// Slices and transposes; size -1 keeps a dynamic dimension.
// CHECK-LABEL: func.func private @move_k0
// CHECK: tensor.extract_slice %{{.+}}[0, 4] [%{{.+}}, 4] [1, 1] : tensor<?x8xf32> to tensor<?x4xf32>
// CHECK-LABEL: func.func private @move_k1
// CHECK: linalg.transpose ins(%{{.+}} : tensor<?x4xf32>) outs(%{{.+}} : tensor<4x?xf32>) permutation = [1, 0]
func.func @move(%x: tensor<?x8xf32>) -> tensor<4x?xf32> {
  %0 = fusion.slice %x offsets = [0, 4] sizes = [-1, 4] strides = [1, 1] : tensor<?x8xf32> -> tensor<?x4xf32>
  %1 = fusion.transpose %0 permutation = [1, 0] : tensor<?x4xf32> -> tensor<4x?xf32>
  return %1 : tensor<4x?xf32>
}

// -----

// A concatenation is a generic reading each point from the operand it
// lies in, one branch per operand.
// CHECK-LABEL: func.func private @join_k0
// CHECK: linalg.generic
// CHECK: %[[COL:.+]] = linalg.index 1 : index
// CHECK: %[[FIRST:.+]] = arith.cmpi ult, %[[COL]], %c4
// CHECK: scf.if %[[FIRST]] -> (f32)
// CHECK: tensor.extract %{{.+}}[%{{.+}}, %[[COL]]] : tensor<?x4xf32>
// CHECK: } else {
// CHECK: %[[AT:.+]] = arith.subi %[[COL]], %c4
// CHECK: tensor.extract %{{.+}}[%{{.+}}, %[[AT]]] : tensor<?x8xf32>
func.func @join(%x: tensor<?x4xf32>, %y: tensor<?x8xf32>) -> tensor<?x12xf32> {
  %0 = fusion.concat %x, %y axis = 1 : (tensor<?x4xf32>, tensor<?x8xf32>) -> tensor<?x12xf32>
  return %0 : tensor<?x12xf32>
}

// -----

// Splat constants become scalars inside the body; cmp and select.
// CHECK-LABEL: func.func private @clamp_k0
// CHECK-NOT: ins({{.*}}tensor<f32>
// CHECK: arith.constant 0.000000e+00 : f32
// CHECK: arith.cmpf ogt
// CHECK-LABEL: func.func private @clamp_k1
// CHECK: arith.select
func.func @clamp(%x: tensor<16xf32>) -> tensor<16xf32> {
  %zero = fusion.constant dense<0.0> : tensor<f32>
  %m = fusion.cmp gt, %x, %zero : (tensor<16xf32>, tensor<f32>) -> tensor<16xi1>
  %0 = fusion.select %m, %x, %zero : (tensor<16xi1>, tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

// The caller sizes a kernel's dynamic output from the kernel's inputs: the
// logsumexp of [?, 32] rows has ? rows, read from %x.
// CHECK-LABEL: func.func @dynamic_result
// CHECK-SAME: (%[[X:.+]]: tensor<?x32xf32>, %[[OUT:.+]]: tensor<?xf32>)
// CHECK: call @dynamic_result_k0(%[[X]], %[[OUT]])
func.func @dynamic_result(%x: tensor<?x32xf32>) -> tensor<?xf32> {
  %0 = fusion.logsumexp %x axis = 1 : tensor<?x32xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// An iota is a generic with no inputs: each element its index along the
// dimension, as a float rounded to the element type.
// CHECK-LABEL: func.func private @positions_k0
// CHECK: linalg.generic {{.*}} outs(%{{.+}} : tensor<4x8xbf16>)
// CHECK: %[[I:.+]] = linalg.index 1 : index
// CHECK: %[[N:.+]] = arith.index_castui %[[I]] : index to i64
// CHECK: %[[F:.+]] = arith.uitofp %[[N]] : i64 to f32
// CHECK: arith.truncf %[[F]] : f32 to bf16
func.func @positions() -> tensor<4x8xbf16> {
  %0 = fusion.iota dimension = 1 : tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// -----

// A dynamic size comes from the source (the kernel's destination has it):
// the source's elements are not read.
// CHECK-LABEL: func.func private @positions_of_k0
// CHECK-SAME: (%{{.+}}: tensor<?x8xbf16>, %[[OUT:.+]]: tensor<?x1xf32>)
// CHECK-NOT: tensor.extract
// CHECK: linalg.generic
// CHECK-NOT: ins(
// CHECK-SAME: outs(%[[OUT]] : tensor<?x1xf32>)
// CHECK: linalg.index 0 : index
// CHECK-NOT: tensor.extract
// CHECK: return
func.func @positions_of(%x: tensor<?x8xbf16>) -> tensor<?x1xf32> {
  %0 = fusion.iota dimension = 0 size_of %x[0] : tensor<?x8xbf16> -> tensor<?x1xf32>
  return %0 : tensor<?x1xf32>
}
