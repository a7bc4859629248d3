// RUN: fusion-opt %s --split-input-file --fusion-pipeline --fusion-kernels-to-gpu | FileCheck %s

// Elementwise: a destination-passing function on device buffers, one
// launch named after the kernel, 16-byte vector loads and stores along the
// innermost dimension, a broadcast operand loaded once per vector.
// CHECK-LABEL: func.func @bias_relu
// CHECK-SAME: (%[[X:.+]]: memref<?x256xbf16>, %[[B:.+]]: memref<256xbf16>, %[[OUT:.+]]: memref<?x256xbf16>) attributes {llvm.emit_c_interface}
// CHECK: gpu.launch
// CHECK-SAME: module(@bias_relu_k0_module) function(@bias_relu_k0)
// CHECK: scf.for
// CHECK: vector.load %[[X]][%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<?x256xbf16>, vector<8xbf16>
// CHECK: vector.load %[[B]][%{{.+}}] {alignment = 16 : i64} : memref<256xbf16>, vector<8xbf16>
// CHECK: arith.maximumf {{.*}} : vector<8xf32>
// CHECK: vector.store %{{.+}}, %[[OUT]][%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<?x256xbf16>, vector<8xbf16>
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @bias_relu(%x: tensor<?x256xbf16>, %b: tensor<256xbf16>) -> tensor<?x256xbf16> {
  %0 = fusion.add %x, %b : (tensor<?x256xbf16>, tensor<256xbf16>) -> tensor<?x256xbf16>
  %1 = fusion.relu %0 : tensor<?x256xbf16>
  return %1 : tensor<?x256xbf16>
}

// -----

// An innermost size that is not a multiple of the vector width: buffers of
// the output's shape are seen as 1-D, whole 16-byte vectors first, then the
// last 3003 % 8 elements one by one; a one-element operand is loaded as a
// scalar and splatted.
// CHECK-LABEL: func.func @odd_size
// CHECK: gpu.launch
// CHECK: %[[X:.+]] = memref.collapse_shape %{{.+}} {{\[\[}}0, 1]] : memref<3x1001xbf16> into memref<3003xbf16>
// CHECK: %[[OUT:.+]] = memref.collapse_shape %{{.+}} {{\[\[}}0, 1]] : memref<3x1001xbf16> into memref<3003xbf16>
// CHECK: %[[SIZE:.+]] = memref.dim %[[OUT]]
// CHECK: %[[WHOLE:.+]] = arith.divui %[[SIZE]], %c8
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[WHOLE]]
// CHECK: vector.load %[[X]][%{{.+}}] {alignment = 16 : i64} : memref<3003xbf16>, vector<8xbf16>
// CHECK: memref.load %{{.+}}[%{{.+}}, %{{.+}}] : memref<1x1xbf16>
// CHECK: vector.broadcast
// CHECK: vector.store %{{.+}}, %[[OUT]][%{{.+}}] {alignment = 16 : i64} : memref<3003xbf16>, vector<8xbf16>
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[SIZE]]
// CHECK: memref.load %[[X]][%{{.+}}] : memref<3003xbf16>
// CHECK: memref.store %{{.+}}, %[[OUT]][%{{.+}}] : memref<3003xbf16>
func.func @odd_size(%x: tensor<3x1001xbf16>, %s: tensor<1x1xbf16>) -> tensor<3x1001xbf16> {
  %0 = fusion.mul %x, %s : (tensor<3x1001xbf16>, tensor<1x1xbf16>) -> tensor<3x1001xbf16>
  %1 = fusion.exp %0 : tensor<3x1001xbf16>
  return %1 : tensor<3x1001xbf16>
}

// -----

// A row kernel: a block per row, the row in registers, a block-wide
// reduction per reduce op, full-row outputs as vectors.
// CHECK-LABEL: func.func @softmax
// CHECK: gpu.launch
// CHECK-SAME: function(@softmax_k0)
// CHECK: vector.load {{.*}} vector<4xf32>
// CHECK: vector.reduction <maximumf>
// CHECK: gpu.all_reduce maximumf
// CHECK: vector.reduction <add>
// The division by the row's sum: its IEEE reciprocal once (of the sum
// scaled by a power of two), then two products per vector.
// CHECK: %[[SUM:.+]] = gpu.all_reduce add
// CHECK: %[[MAGNITUDE:.+]] = math.absf %[[SUM]]
// CHECK: arith.select
// CHECK: %[[SCALE:.+]] = arith.select
// CHECK: %[[SCALED:.+]] = arith.mulf %[[SUM]], %[[SCALE]]
// CHECK: %[[RECIPROCAL:.+]] = arith.divf %{{.+}}, %[[SCALED]] : f32
// CHECK-NOT: llvm.nvvm.div.full
// CHECK: %[[XK:.+]] = arith.mulf %{{.+}}, %{{.+}} : vector<4xf32>
// CHECK: %[[Q:.+]] = arith.mulf %[[XK]], %{{.+}} : vector<4xf32>
// CHECK: vector.store %[[Q]]
// CHECK-NOT: arith.divf
// CHECK-NOT: llvm.nvvm.div.full
// CHECK: gpu.barrier
func.func @softmax(%x: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %0 = fusion.softmax %x axis = 1 : tensor<64x1024xf32>
  return %0 : tensor<64x1024xf32>
}

// -----

// A wide row (planned as cluster = 8 for 131072 bf16 elements) is split over a
// cluster of 8 blocks, each holding 16384 elements in registers; each
// block's total goes to a shared slot (two a reduction: rows alternate),
// and every block combines the eight slots of its cluster (mapa to each
// block's slot); the last cluster barrier is the kernel's exit.
// CHECK-LABEL: func.func @wide
// CHECK: gpu.launch clusters({{.*}}) in ({{.*}} = %c8{{.*}}, {{.*}}) blocks
// CHECK-SAME: dynamic_shared_memory_size %c16_i32
// CHECK: gpu.dynamic_shared_memory
// CHECK: gpu.cluster_block_id x
// CHECK: gpu.all_reduce maximumf
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-COUNT-8: nvvm.mapa
// CHECK: gpu.all_reduce add
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-COUNT-8: nvvm.mapa
// CHECK: vector.store
// CHECK: gpu.barrier
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-NEXT: gpu.terminator
func.func @wide(%x: tensor<4x131072xbf16>) -> tensor<4x131072xbf16> {
  %0 = fusion.softmax %x axis = 1 : tensor<4x131072xbf16>
  return %0 : tensor<4x131072xbf16>
}

// -----

// A row that would need more than 8 blocks (a portable cluster's limit; 32
// here) is planned streamed: one block, one pass over the row for the max
// and the sum together (rows.mlir, @online), one that writes.
// CHECK-LABEL: func.func @wide_unsplit
// CHECK: gpu.launch blocks
// CHECK: scf.for {{.*}} iter_args{{.*}} -> (f32, f32)
// CHECK: gpu.all_reduce maximumf
// CHECK-NEXT: }
// CHECK-NOT: scf.for
// CHECK: gpu.all_reduce add
// CHECK: scf.for
// CHECK: vector.store
func.func @wide_unsplit(%x: tensor<4x524288xf32>) -> tensor<4x524288xf32> {
  %0 = fusion.softmax %x axis = 1 : tensor<4x524288xf32>
  return %0 : tensor<4x524288xf32>
}

// -----

// A column reduction: blocks of column vectors going down the rows
// (columns.mlir has the details).
// Intermediates live in device buffers allocated and freed around the
// launches; a kernel result returned by the function is written in place.
// CHECK-LABEL: func.func @column_then_scale
// CHECK: gpu.launch
// CHECK-SAME: function(@column_then_scale_k0)
// CHECK: scf.for
// CHECK: scf.for {{.*}} iter_args
// CHECK: vector.store {{.*}} : memref<32xf32>, vector<4xf32>
func.func @column_then_scale(%x: tensor<64x32xf32>) -> tensor<32xf32> {
  %e = fusion.exp %x : tensor<64x32xf32>
  %0 = fusion.reduce_sum %e axes = [0] : tensor<64x32xf32> -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

// CHECK-LABEL: func.func @two_kernels
// CHECK-SAME: %[[OUT:[^:]+]]: memref<64x64xf32>)
// CHECK: %[[TMP:.+]], %{{.+}} = gpu.alloc async
// CHECK: gpu.launch
// CHECK-SAME: function(@two_kernels_k0)
// CHECK: call @fusion_cuda_matmul_f32
// CHECK: gpu.launch
// CHECK-SAME: function(@two_kernels_k2)
// CHECK: gpu.dealloc async [%{{.+}}] %[[TMP]]
func.func @two_kernels(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %a = fusion.exp %x : tensor<64x64xf32>
  %m = fusion.matmul %a, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %b = fusion.tanh %m : tensor<64x64xf32>
  return %b : tensor<64x64xf32>
}

// -----

// Ops outside kernels cannot run on the GPU.
func.func @no_kernel(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// A constant that is not a splat reaches the kernel as a device buffer,
// copied from a host global; a returned constant is copied into the output.
// CHECK-DAG: memref.global "private" constant @[[TABLE:__fusion_constant_[0-9]+]] : memref<2x3xf32> = dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]>
// CHECK-DAG: memref.global "private" constant @[[SEVEN:__fusion_constant_[0-9]+]] : memref<2x1xf32> = dense<7.000000e+00>
// CHECK-LABEL: func.func @constants(
// CHECK-SAME: %[[X:.+]]: memref<2x3xf32>, %[[OUT0:.+]]: memref<2x3xf32>, %[[OUT1:.+]]: memref<2x1xf32>)
// CHECK: %[[HOST7:.+]] = memref.get_global @[[SEVEN]]
// CHECK: %[[DEV7:.+]], %{{.+}} = gpu.alloc async
// CHECK: gpu.memcpy async [%{{.+}}] %[[DEV7]], %[[HOST7]]
// CHECK: %[[HOST:.+]] = memref.get_global @[[TABLE]]
// CHECK: %[[DEV:.+]], %{{.+}} = gpu.alloc async
// CHECK: gpu.memcpy async [%{{.+}}] %[[DEV]], %[[HOST]]
// CHECK: gpu.launch
// CHECK: gpu.memcpy async [%{{.+}}] %[[OUT1]], %[[DEV7]]
// CHECK: gpu.dealloc async [%{{.+}}] %[[DEV7]]
// CHECK: gpu.dealloc async [%{{.+}}] %[[DEV]]
func.func @constants(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x1xf32>) {
  %c = fusion.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %0 = fusion.add %x, %c : tensor<2x3xf32>
  %seven = fusion.constant dense<7.0> : tensor<2x1xf32>
  return %0, %seven : tensor<2x3xf32>, tensor<2x1xf32>
}

// -----

// A reshape launches nothing: the next kernel reads the previous kernel's
// buffer (or an argument) through a view of the new shape; a kernel's
// result returned through a reshape is written straight into its output,
// viewed in the kernel's shape (no buffer, no copy). (The add's per-row
// operand keeps the reshape after it: fusion-hoist-reshapes.)
// CHECK-LABEL: func.func @heads
// CHECK-SAME: (%[[X:.+]]: memref<2x64x256xbf16>, %[[B:.+]]: memref<2x64x1xbf16>, %[[OUT:.+]]: memref<2x8x64x32xbf16>, %[[VIEW_OUT:.+]]: memref<2x64x8x32xbf16>)
// CHECK: %[[E:.+]] = memref.reinterpret_cast %[[VIEW_OUT]] to offset: [0], sizes: [2, 64, 256], strides: [16384, 256, 1] : memref<2x64x8x32xbf16> to memref<2x64x256xbf16>
// CHECK-NOT: gpu.alloc
// CHECK: gpu.launch
// CHECK-SAME: function(@heads_k0)
// CHECK: vector.store %{{.+}}, %[[E]]
// CHECK: %[[H:.+]] = memref.reinterpret_cast %[[E]] to offset: [0], sizes: [2, 64, 8, 32], strides: [16384, 256, 32, 1] : memref<2x64x256xbf16> to memref<2x64x8x32xbf16>
// CHECK: gpu.launch
// CHECK-SAME: function(@heads_k1)
// CHECK: vector.load %[[H]]
// CHECK-NOT: gpu.memcpy
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @heads(%x: tensor<2x64x256xbf16>, %b: tensor<2x64x1xbf16>) -> (tensor<2x8x64x32xbf16>, tensor<2x64x8x32xbf16>) {
  %e = fusion.add %x, %b : (tensor<2x64x256xbf16>, tensor<2x64x1xbf16>) -> tensor<2x64x256xbf16>
  %h = fusion.reshape %e : tensor<2x64x256xbf16> -> tensor<2x64x8x32xbf16>
  %t = fusion.transpose %h permutation = [0, 2, 1, 3] : tensor<2x64x8x32xbf16> -> tensor<2x8x64x32xbf16>
  return %t, %h : tensor<2x8x64x32xbf16>, tensor<2x64x8x32xbf16>
}

// -----

// A result returned reshaped and as it is (dynamic sizes): its first return
// takes the kernel's stores, viewed in its shape (the k-th dynamic size the
// buffer's k-th); the second is copied from there.
// CHECK-LABEL: func.func @reshaped_and_returned
// CHECK-SAME: (%{{.+}}: memref<4x?xf32>, %[[VIEW_OUT:.+]]: memref<4x?x1xf32>, %[[OUT:.+]]: memref<4x?xf32>)
// CHECK: %[[S:.+]] = memref.dim %[[VIEW_OUT]], %c1
// CHECK: %[[E:.+]] = memref.reinterpret_cast %[[VIEW_OUT]] to offset: [0], sizes: [4, %[[S]]], strides: [%{{.+}}, 1] : memref<4x?x1xf32> to memref<4x?xf32>
// CHECK-NOT: gpu.alloc
// CHECK: gpu.launch
// CHECK: memref.collapse_shape %[[E]]
// CHECK: gpu.memcpy async [%{{.+}}] %[[OUT]], %[[E]] : memref<4x?xf32>, memref<4x?xf32>
// CHECK-NOT: gpu.memcpy
// CHECK: return
func.func @reshaped_and_returned(%x: tensor<4x?xf32>) -> (tensor<4x?x1xf32>, tensor<4x?xf32>) {
  %e = fusion.exp %x : tensor<4x?xf32>
  %h = fusion.reshape %e : tensor<4x?xf32> -> tensor<4x?x1xf32>
  return %h, %e : tensor<4x?x1xf32>, tensor<4x?xf32>
}

// -----

// A reshape of dynamic sizes between kernels (a row kernel does not fuse
// across it, and the add's per-row operand keeps it there): the k-th dynamic size of the view is the buffer's k-th, its
// strides row-major products of the sizes.
// CHECK-LABEL: func.func @dynamic_heads
// CHECK-SAME: (%[[X:.+]]: memref<2x?x64xf32>,
// CHECK: %[[E:[^ ,]+]], %{{.+}} = gpu.alloc
// CHECK: gpu.launch
// CHECK: gpu.terminator
// CHECK: %[[S:.+]] = memref.dim %[[E]], %{{.+}} : memref<2x?x64xf32>
// CHECK: %[[STRIDE:.+]] = arith.muli %{{.+}}, %[[S]] : index
// CHECK: memref.reinterpret_cast %[[E]] to offset: [0], sizes: [2, %[[S]], 4, 16], strides: [%[[STRIDE]], 64, 16, 1] : memref<2x?x64xf32> to memref<2x?x4x16xf32>
// CHECK: gpu.launch
func.func @dynamic_heads(%x: tensor<2x?x64xf32>, %b: tensor<2x?x1xf32>) -> tensor<2x?x4x16xf32> {
  %e = fusion.add %x, %b : (tensor<2x?x64xf32>, tensor<2x?x1xf32>) -> tensor<2x?x64xf32>
  %h = fusion.reshape %e : tensor<2x?x64xf32> -> tensor<2x?x4x16xf32>
  %s = fusion.softmax %h axis = 3 : tensor<2x?x4x16xf32>
  return %s : tensor<2x?x4x16xf32>
}
