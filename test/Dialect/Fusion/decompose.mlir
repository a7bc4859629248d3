// RUN: fusion-opt %s --fusion-decompose --split-input-file | FileCheck %s

// f32 input: no converts; mean of squares over the last axis, kept for the
// broadcast back over the row.
// CHECK-LABEL: func @rms_norm_f32
// CHECK-SAME: (%[[X:.+]]: tensor<?x64xf32>, %[[W:.+]]: tensor<64xf32>)
// CHECK-NOT: fusion.convert
// CHECK-DAG: %[[EPS:.+]] = fusion.constant dense<9.99999997E-7> : tensor<f32>
// CHECK-DAG: %[[SQ:.+]] = fusion.square %[[X]] : tensor<?x64xf32>
// CHECK: %[[MS:.+]] = fusion.reduce_mean %[[SQ]] axes = [1] keep_dims : tensor<?x64xf32> -> tensor<?x1xf32>
// CHECK: %[[T:.+]] = fusion.add %[[MS]], %[[EPS]]
// CHECK: %[[R:.+]] = fusion.rsqrt %[[T]] : tensor<?x1xf32>
// CHECK: %[[N:.+]] = fusion.mul %[[X]], %[[R]] : (tensor<?x64xf32>, tensor<?x1xf32>) -> tensor<?x64xf32>
// CHECK: %[[Y:.+]] = fusion.mul %[[N]], %[[W]] : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
// CHECK-NOT: fusion.rms_norm
// CHECK: return %[[Y]]
func.func @rms_norm_f32(%x: tensor<?x64xf32>, %w: tensor<64xf32>) -> tensor<?x64xf32> {
  %0 = fusion.rms_norm %x, %w epsilon = 1.0e-06 : tensor<?x64xf32>, tensor<64xf32>
  return %0 : tensor<?x64xf32>
}

// -----

// bf16 input: the math (and the reduction) runs in f32 between converts.
// CHECK-LABEL: func @rms_norm_bf16
// CHECK-SAME: (%[[X:.+]]: tensor<16x64xbf16>, %[[W:.+]]: tensor<64xbf16>)
// CHECK: %[[XF:.+]] = fusion.convert %[[X]] : tensor<16x64xbf16> to tensor<16x64xf32>
// CHECK: fusion.reduce_mean %{{.+}} axes = [1] keep_dims : tensor<16x64xf32> -> tensor<16x1xf32>
// CHECK: %[[WF:.+]] = fusion.convert %[[W]] : tensor<64xbf16> to tensor<64xf32>
// CHECK: %[[Y:.+]] = fusion.mul %{{.+}}, %[[WF]] : (tensor<16x64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
// CHECK: %[[OUT:.+]] = fusion.convert %[[Y]] : tensor<16x64xf32> to tensor<16x64xbf16>
// CHECK: return %[[OUT]]
func.func @rms_norm_bf16(%x: tensor<16x64xbf16>, %w: tensor<64xbf16>) -> tensor<16x64xbf16> {
  %0 = fusion.rms_norm %x, %w epsilon = 1.0e-06 : tensor<16x64xbf16>, tensor<64xbf16>
  return %0 : tensor<16x64xbf16>
}

// -----

// CHECK-LABEL: func @layer_norm
// CHECK-SAME: (%[[X:.+]]: tensor<8x32xf16>, %[[G:.+]]: tensor<32xf16>, %[[B:.+]]: tensor<32xf16>)
// CHECK: %[[XF:.+]] = fusion.convert %[[X]] : tensor<8x32xf16> to tensor<8x32xf32>
// CHECK: %[[MEAN:.+]] = fusion.reduce_mean %[[XF]] axes = [1] keep_dims
// CHECK: %[[D:.+]] = fusion.sub %[[XF]], %[[MEAN]]
// CHECK: %[[D2:.+]] = fusion.square %[[D]]
// CHECK: %[[VAR:.+]] = fusion.reduce_mean %[[D2]] axes = [1] keep_dims
// CHECK: %[[V:.+]] = fusion.add %[[VAR]], %{{.+}}
// CHECK: %[[R:.+]] = fusion.rsqrt %[[V]]
// CHECK: %[[N:.+]] = fusion.mul %[[D]], %[[R]]
// CHECK: %[[GF:.+]] = fusion.convert %[[G]]
// CHECK: %[[S:.+]] = fusion.mul %[[N]], %[[GF]]
// CHECK: %[[BF:.+]] = fusion.convert %[[B]]
// CHECK: %[[Y:.+]] = fusion.add %[[S]], %[[BF]]
// CHECK: fusion.convert %[[Y]] : tensor<8x32xf32> to tensor<8x32xf16>
func.func @layer_norm(%x: tensor<8x32xf16>, %g: tensor<32xf16>, %b: tensor<32xf16>) -> tensor<8x32xf16> {
  %0 = fusion.layer_norm %x, %g, %b epsilon = 1.0e-05 : tensor<8x32xf16>, tensor<32xf16>, tensor<32xf16>
  return %0 : tensor<8x32xf16>
}

// -----

// Softmax along a non-last axis keeps that axis for the broadcast.
// CHECK-LABEL: func @softmax_axis0
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK: %[[M:.+]] = fusion.reduce_max %[[X]] axes = [0] keep_dims : tensor<4x8xf32> -> tensor<1x8xf32>
// CHECK: %[[D:.+]] = fusion.sub %[[X]], %[[M]] : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[E:.+]] = fusion.exp %[[D]]
// CHECK: %[[S:.+]] = fusion.reduce_sum %[[E]] axes = [0] keep_dims
// CHECK: %[[Y:.+]] = fusion.div %[[E]], %[[S]]
// CHECK: return %[[Y]]
func.func @softmax_axis0(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = fusion.softmax %x axis = 0 : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// The row max is reduced once over x; dropping its size-1 axis reads one
// element per row. A row whose max is not finite is shifted by 0 instead
// (+inf and -inf rows give +inf and -inf, not NaN).
// CHECK-LABEL: func @logsumexp
// CHECK-SAME: (%[[X:.+]]: tensor<?x128xbf16>)
// CHECK: %[[XF:.+]] = fusion.convert %[[X]]
// CHECK: %[[M:.+]] = fusion.reduce_max %[[XF]] axes = [1] keep_dims : tensor<?x128xf32> -> tensor<?x1xf32>
// CHECK: %[[A:.+]] = fusion.abs %[[M]]
// CHECK: %[[F:.+]] = fusion.cmp lt, %[[A]], %{{.+}} : (tensor<?x1xf32>, tensor<f32>) -> tensor<?x1xi1>
// CHECK: %[[SH:.+]] = fusion.select %[[F]], %[[M]], %{{.+}} : (tensor<?x1xi1>, tensor<?x1xf32>, tensor<f32>) -> tensor<?x1xf32>
// CHECK: fusion.sub %[[XF]], %[[SH]]
// CHECK: %[[E:.+]] = fusion.exp
// CHECK: %[[S:.+]] = fusion.reduce_sum %[[E]] axes = [1] : tensor<?x128xf32> -> tensor<?xf32>
// CHECK: %[[M1:.+]] = fusion.reduce_max %[[SH]] axes = [1] : tensor<?x1xf32> -> tensor<?xf32>
// CHECK: %[[L:.+]] = fusion.log %[[S]]
// CHECK: %[[Y:.+]] = fusion.add %[[L]], %[[M1]] : tensor<?xf32>
// CHECK: fusion.convert %[[Y]] : tensor<?xf32> to tensor<?xbf16>
func.func @logsumexp(%x: tensor<?x128xbf16>) -> tensor<?xbf16> {
  %0 = fusion.logsumexp %x axis = 1 : tensor<?x128xbf16> -> tensor<?xbf16>
  return %0 : tensor<?xbf16>
}

// -----

// CHECK-LABEL: func @gelu_erf
// CHECK-DAG: fusion.constant dense<0.707106769> : tensor<f32>
// CHECK-DAG: fusion.constant dense<5.000000e-01> : tensor<f32>
// CHECK: fusion.erf
// CHECK-NOT: fusion.tanh
// CHECK-NOT: fusion.gelu
func.func @gelu_erf(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = fusion.gelu %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// x / (1 + exp(-2u)), the same function as 0.5 x (1 + tanh(u)).
// CHECK-LABEL: func @gelu_tanh
// CHECK-DAG: fusion.constant dense<4.471500e-02> : tensor<f32>
// CHECK-DAG: fusion.constant dense<1.59576917> : tensor<f32>
// CHECK: %[[N:.+]] = fusion.neg
// CHECK: %[[E:.+]] = fusion.exp %[[N]]
// CHECK: %[[D:.+]] = fusion.add %[[E]], %{{.+}}
// CHECK: fusion.div %{{.+}}, %[[D]]
// CHECK-NOT: fusion.tanh
// CHECK-NOT: fusion.erf
// CHECK-NOT: fusion.gelu
func.func @gelu_tanh(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = fusion.gelu %x approximation = tanh : tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// CHECK-LABEL: func @silu_and_sigmoid
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: %[[N:.+]] = fusion.neg %[[X]]
// CHECK: %[[E:.+]] = fusion.exp %[[N]]
// CHECK: %[[D:.+]] = fusion.add %[[E]], %{{.+}}
// CHECK: %[[SILU:.+]] = fusion.div %[[X]], %[[D]]
// CHECK: fusion.reciprocal
// CHECK-NOT: fusion.silu
// CHECK-NOT: fusion.sigmoid
func.func @silu_and_sigmoid(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = fusion.silu %x : tensor<4xf32>
  %1 = fusion.sigmoid %x : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Primitive ops are left alone.
// CHECK-LABEL: func @primitives_untouched
// CHECK: fusion.relu
// CHECK: fusion.exp
// CHECK: fusion.reduce_sum
func.func @primitives_untouched(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = fusion.relu %x : tensor<4x8xf32>
  %1 = fusion.exp %0 : tensor<4x8xf32>
  %2 = fusion.reduce_sum %1 axes = [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %2 : tensor<4xf32>
}
