// RUN: fusion-opt %s --split-input-file --fusion-hoist-reshapes | FileCheck %s
// RUN: fusion-opt %s --split-input-file --fusion-pipeline | FileCheck %s --check-prefix=FUSED

// A residual add viewed as rows of a norm: the reshape moves above the add
// (both operands viewed), so the add runs on the rows and the norm's
// pipeline makes one row kernel reading the two views.
// CHECK-LABEL: func @residual_rows
// CHECK-SAME: (%[[X:.+]]: tensor<2x8x64xbf16>, %[[R:.+]]: tensor<2x8x64xbf16>, %[[G:.+]]: tensor<64xbf16>)
// CHECK-DAG: %[[XV:.+]] = fusion.reshape %[[X]] : tensor<2x8x64xbf16> -> tensor<16x64xbf16>
// CHECK-DAG: %[[RV:.+]] = fusion.reshape %[[R]] : tensor<2x8x64xbf16> -> tensor<16x64xbf16>
// CHECK: %[[S:.+]] = fusion.add %[[XV]], %[[RV]] : tensor<16x64xbf16>
// CHECK-NEXT: fusion.rms_norm %[[S]], %[[G]]
// CHECK-NOT: fusion.reshape
// FUSED-LABEL: func @residual_rows
// FUSED-COUNT-2: fusion.reshape
// FUSED: fusion.kernel row_reduction "residual_rows_k0"
// FUSED-NOT: fusion.kernel
func.func @residual_rows(%x: tensor<2x8x64xbf16>, %r: tensor<2x8x64xbf16>, %g: tensor<64xbf16>) -> tensor<16x64xbf16> {
  %s = fusion.add %x, %r : tensor<2x8x64xbf16>
  %v = fusion.reshape %s : tensor<2x8x64xbf16> -> tensor<16x64xbf16>
  %n = fusion.rms_norm %v, %g epsilon = 1.0e-05 : tensor<16x64xbf16>, tensor<64xbf16>
  return %n : tensor<16x64xbf16>
}

// -----

// Through a chain, to the argument: a bias broadcast along the trailing
// dimension both shapes share stays as it is, a scalar too, and a constant
// of the whole shape is folded into the new shape.
// CHECK-LABEL: func @chain
// CHECK-SAME: (%[[X:.+]]: tensor<4x6x32xf32>, %[[B:.+]]: tensor<32xf32>)
// CHECK-DAG: %[[K:.+]] = fusion.constant dense<{{.+}}> : tensor<24x32xf32>
// CHECK-DAG: %[[XV:.+]] = fusion.reshape %[[X]] : tensor<4x6x32xf32> -> tensor<24x32xf32>
// CHECK: %[[E:.+]] = fusion.exp %[[XV]] : tensor<24x32xf32>
// CHECK: %[[A:.+]] = fusion.add %[[E]], %[[B]] : (tensor<24x32xf32>, tensor<32xf32>) -> tensor<24x32xf32>
// CHECK: %[[M:.+]] = fusion.mul %[[A]], %{{.+}} : (tensor<24x32xf32>, tensor<f32>) -> tensor<24x32xf32>
// CHECK: %[[C:.+]] = fusion.sub %[[M]], %[[K]] : tensor<24x32xf32>
// CHECK: fusion.reduce_sum %[[C]]
// CHECK-NOT: fusion.reshape
// FUSED-LABEL: func @chain
// FUSED: fusion.reshape
// FUSED: fusion.kernel row_reduction "chain_k0"
// FUSED-NOT: fusion.kernel
// FUSED: return
func.func @chain(%x: tensor<4x6x32xf32>, %b: tensor<32xf32>) -> tensor<24xf32> {
  %two = fusion.constant dense<2.0> : tensor<f32>
  %k = fusion.constant dense<1.0> : tensor<4x6x32xf32>
  %e = fusion.exp %x : tensor<4x6x32xf32>
  %a = fusion.add %e, %b : (tensor<4x6x32xf32>, tensor<32xf32>) -> tensor<4x6x32xf32>
  %m = fusion.mul %a, %two : (tensor<4x6x32xf32>, tensor<f32>) -> tensor<4x6x32xf32>
  %c = fusion.sub %m, %k : tensor<4x6x32xf32>
  %v = fusion.reshape %c : tensor<4x6x32xf32> -> tensor<24x32xf32>
  %s = fusion.reduce_sum %v axes = [1] : tensor<24x32xf32> -> tensor<24xf32>
  return %s : tensor<24xf32>
}

// -----

// Stays: an operand broadcast along an axis the reshape merges (it would
// need repeating), a result also read elsewhere (both shapes would be
// computed), and an op that is not elementwise math.
// CHECK-LABEL: func @stays
// CHECK: %[[A:.+]] = fusion.add %{{.+}}, %{{.+}} : (tensor<4x6x32xf32>, tensor<6x32xf32>) -> tensor<4x6x32xf32>
// CHECK-NEXT: fusion.reshape %[[A]] : tensor<4x6x32xf32> -> tensor<24x32xf32>
// CHECK: %[[E:.+]] = fusion.exp %{{.+}} : tensor<4x6x32xf32>
// CHECK-NEXT: fusion.reshape %[[E]] : tensor<4x6x32xf32> -> tensor<24x32xf32>
// CHECK: %[[T:.+]] = fusion.transpose
// CHECK-NEXT: fusion.reshape %[[T]] : tensor<4x32x6xf32> -> tensor<128x6xf32>
func.func @stays(%x: tensor<4x6x32xf32>, %y: tensor<6x32xf32>) -> (tensor<24x32xf32>, tensor<24x32xf32>, tensor<4x6x32xf32>, tensor<128x6xf32>) {
  %a = fusion.add %x, %y : (tensor<4x6x32xf32>, tensor<6x32xf32>) -> tensor<4x6x32xf32>
  %av = fusion.reshape %a : tensor<4x6x32xf32> -> tensor<24x32xf32>
  %e = fusion.exp %x : tensor<4x6x32xf32>
  %ev = fusion.reshape %e : tensor<4x6x32xf32> -> tensor<24x32xf32>
  %t = fusion.transpose %x permutation = [0, 2, 1] : tensor<4x6x32xf32> -> tensor<4x32x6xf32>
  %tv = fusion.reshape %t : tensor<4x32x6xf32> -> tensor<128x6xf32>
  return %av, %ev, %e, %tv : tensor<24x32xf32>, tensor<24x32xf32>, tensor<4x6x32xf32>, tensor<128x6xf32>
}

// -----

// Dynamic sizes keep their place; a comparison's i1 result and a select
// move as any math does; a per-row operand (`2x?x1`) where the reshape
// splits the last axis keeps the reshape below the op that reads it.
// CHECK-LABEL: func @dynamic
// CHECK-SAME: (%[[X:.+]]: tensor<2x?x16xf32>, %[[Y:.+]]: tensor<2x?x16xf32>, %[[W:.+]]: tensor<2x?x1xf32>)
// CHECK-DAG: %[[XV:.+]] = fusion.reshape %[[X]] : tensor<2x?x16xf32> -> tensor<2x?x4x4xf32>
// CHECK-DAG: %[[YV:.+]] = fusion.reshape %[[Y]] : tensor<2x?x16xf32> -> tensor<2x?x4x4xf32>
// CHECK: %[[P:.+]] = fusion.cmp gt, %[[XV]], %[[YV]] : (tensor<2x?x4x4xf32>, tensor<2x?x4x4xf32>) -> tensor<2x?x4x4xi1>
// CHECK: fusion.select %[[P]], %[[XV]], %[[YV]] : (tensor<2x?x4x4xi1>, tensor<2x?x4x4xf32>, tensor<2x?x4x4xf32>) -> tensor<2x?x4x4xf32>
// CHECK: %[[M:.+]] = fusion.mul %[[X]], %[[W]]
// CHECK-NEXT: fusion.reshape %[[M]] : tensor<2x?x16xf32> -> tensor<2x?x2x8xf32>
func.func @dynamic(%x: tensor<2x?x16xf32>, %y: tensor<2x?x16xf32>, %w: tensor<2x?x1xf32>) -> (tensor<2x?x4x4xf32>, tensor<2x?x2x8xf32>) {
  %p = fusion.cmp gt, %x, %y : (tensor<2x?x16xf32>, tensor<2x?x16xf32>) -> tensor<2x?x16xi1>
  %s = fusion.select %p, %x, %y : (tensor<2x?x16xi1>, tensor<2x?x16xf32>, tensor<2x?x16xf32>) -> tensor<2x?x16xf32>
  %v = fusion.reshape %s : tensor<2x?x16xf32> -> tensor<2x?x4x4xf32>
  %m = fusion.mul %x, %w : (tensor<2x?x16xf32>, tensor<2x?x1xf32>) -> tensor<2x?x16xf32>
  %mv = fusion.reshape %m : tensor<2x?x16xf32> -> tensor<2x?x2x8xf32>
  return %v, %mv : tensor<2x?x4x4xf32>, tensor<2x?x2x8xf32>
}

// -----

// Heads split out of a biased activation: the bias of the whole last axis
// is viewed as the heads' run of dimensions, and the softmax over each
// head's values is one row kernel with the add and the gelu.
// CHECK-LABEL: func @bias_heads
// CHECK-SAME: (%[[X:.+]]: tensor<16x256xbf16>, %[[B:.+]]: tensor<256xbf16>)
// CHECK-DAG: %[[BV:.+]] = fusion.reshape %[[B]] : tensor<256xbf16> -> tensor<8x32xbf16>
// CHECK-DAG: %[[XV:.+]] = fusion.reshape %[[X]] : tensor<16x256xbf16> -> tensor<16x8x32xbf16>
// CHECK: %[[A:.+]] = fusion.add %[[XV]], %[[BV]] : (tensor<16x8x32xbf16>, tensor<8x32xbf16>) -> tensor<16x8x32xbf16>
// CHECK: fusion.gelu %[[A]]
// CHECK-NOT: fusion.reshape
// FUSED-LABEL: func @bias_heads
// FUSED-COUNT-2: fusion.reshape
// FUSED: fusion.kernel row_reduction "bias_heads_k0"
// FUSED-NOT: fusion.kernel
// FUSED: return
func.func @bias_heads(%x: tensor<16x256xbf16>, %b: tensor<256xbf16>) -> tensor<16x8x32xbf16> {
  %a = fusion.add %x, %b : (tensor<16x256xbf16>, tensor<256xbf16>) -> tensor<16x256xbf16>
  %g = fusion.gelu %a : tensor<16x256xbf16>
  %h = fusion.reshape %g : tensor<16x256xbf16> -> tensor<16x8x32xbf16>
  %s = fusion.softmax %h axis = 2 : tensor<16x8x32xbf16>
  return %s : tensor<16x8x32xbf16>
}

// -----

// A value two hoisted ops read is viewed once, and its producer moves once
// both have moved (then the view is its only reader).
// CHECK-LABEL: func @shared_operand
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[Y:.+]]: tensor<4x8xf32>)
// CHECK-DAG: %[[XV:.+]] = fusion.reshape %[[X]] : tensor<4x8xf32> -> tensor<32xf32>
// CHECK-DAG: %[[YV:.+]] = fusion.reshape %[[Y]] : tensor<4x8xf32> -> tensor<32xf32>
// CHECK-NOT: fusion.reshape
// CHECK: %[[E:.+]] = fusion.exp %[[XV]] : tensor<32xf32>
// CHECK: fusion.add %[[E]], %[[YV]] : tensor<32xf32>
// CHECK: fusion.mul %[[E]], %[[YV]] : tensor<32xf32>
func.func @shared_operand(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<32xf32>, tensor<32xf32>) {
  %e = fusion.exp %x : tensor<4x8xf32>
  %a = fusion.add %e, %y : tensor<4x8xf32>
  %m = fusion.mul %e, %y : tensor<4x8xf32>
  %av = fusion.reshape %a : tensor<4x8xf32> -> tensor<32xf32>
  %mv = fusion.reshape %m : tensor<4x8xf32> -> tensor<32xf32>
  return %av, %mv : tensor<32xf32>, tensor<32xf32>
}
