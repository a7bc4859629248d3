// RUN: fusion-opt %s --split-input-file --convert-tosa-to-fusion --verify-diagnostics | FileCheck %s

// Elementwise float ops map one to one; a float mul's shift and a negate's
// zero points (constants) go away with it; clamp is max then min.
// CHECK-LABEL: func.func @elementwise
// CHECK-NOT: tosa.
// CHECK: %[[M:.+]] = fusion.mul %arg0, %arg1 : tensor<4x8xf32>
// CHECK: %[[N:.+]] = fusion.neg %[[M]] : tensor<4x8xf32>
// CHECK: %[[LO:.+]] = fusion.constant dense<-1.000000e+00> : tensor<f32>
// CHECK: %[[C1:.+]] = fusion.max %[[N]], %[[LO]]
// CHECK: %[[HI:.+]] = fusion.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[C2:.+]] = fusion.min %[[C1]], %[[HI]]
// CHECK: %[[T:.+]] = fusion.sigmoid %[[C2]]
// CHECK: %[[G:.+]] = fusion.cmp gt, %[[T]], %arg1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
// CHECK: %[[S:.+]] = fusion.select %[[G]], %[[T]], %arg1
// CHECK: %[[B:.+]] = fusion.convert %[[S]] : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK: return %[[B]]
func.func @elementwise(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xbf16> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %m = tosa.mul %x, %y, %shift : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<1xi8>) -> tensor<4x8xf32>
  %n = tosa.negate %m, %zp, %zp : (tensor<4x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x8xf32>
  %c = tosa.clamp %n {min_val = -1.0 : f32, max_val = 1.0 : f32} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = tosa.sigmoid %c : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %g = tosa.greater %t, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  %s = tosa.select %g, %t, %y : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = tosa.cast %s : (tensor<4x8xf32>) -> tensor<4x8xbf16>
  return %b : tensor<4x8xbf16>
}

// -----

// Reductions keep the axis; slice sizes come from tosa.const_shape; a
// bf16 matmul accumulating into f32 converts its operands first.
// CHECK-LABEL: func.func @structured
// CHECK: fusion.reduce_sum %arg0 axes = [2] keep_dims : tensor<1x8x64xbf16> -> tensor<1x8x1xbf16>
// CHECK: fusion.slice %arg0 offsets = [0, 2, 0] sizes = [1, 4, 64] strides = [1, 1, 1]
// CHECK: fusion.transpose %{{.+}} permutation = [0, 2, 1]
// CHECK: %[[A:.+]] = fusion.convert %arg0 : tensor<1x8x64xbf16> to tensor<1x8x64xf32>
// CHECK: %[[B:.+]] = fusion.convert %arg1 : tensor<1x64x16xbf16> to tensor<1x64x16xf32>
// CHECK: fusion.matmul %[[A]], %[[B]] : (tensor<1x8x64xf32>, tensor<1x64x16xf32>) -> tensor<1x8x16xf32>
// CHECK-NOT: tosa.const_shape
func.func @structured(%x: tensor<1x8x64xbf16>, %w: tensor<1x64x16xbf16>)
    -> (tensor<1x8x1xbf16>, tensor<1x64x4xbf16>, tensor<1x8x16xf32>) {
  %s = tosa.reduce_sum %x {axis = 2 : i32} : (tensor<1x8x64xbf16>) -> tensor<1x8x1xbf16>
  %start = tosa.const_shape {values = dense<[0, 2, 0]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %size = tosa.const_shape {values = dense<[1, 4, -1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %sl = tosa.slice %x, %start, %size : (tensor<1x8x64xbf16>, !tosa.shape<3>, !tosa.shape<3>) -> tensor<1x4x64xbf16>
  %t = tosa.transpose %sl {perms = array<i32: 0, 2, 1>} : (tensor<1x4x64xbf16>) -> tensor<1x64x4xbf16>
  %azp = "tosa.const"() <{values = dense<0.0> : tensor<1xbf16>}> : () -> tensor<1xbf16>
  %m = tosa.matmul %x, %w, %azp, %azp : (tensor<1x8x64xbf16>, tensor<1x64x16xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<1x8x16xf32>
  return %s, %t, %m : tensor<1x8x1xbf16>, tensor<1x64x4xbf16>, tensor<1x8x16xf32>
}

// -----

// tosa.concat joins along its axis; along a dynamic size it stays, with a
// remark.
// CHECK-LABEL: func.func @joined
// CHECK: fusion.concat %arg0, %arg1 axis = 1 : (tensor<?x8xf32>, tensor<?x24xf32>) -> tensor<?x32xf32>
// CHECK: tosa.concat %arg2, %arg2
func.func @joined(%x: tensor<?x8xf32>, %y: tensor<?x24xf32>, %z: tensor<4x?xf32>)
    -> (tensor<?x32xf32>, tensor<4x?xf32>) {
  %j = tosa.concat %x, %y {axis = 1 : i32} : (tensor<?x8xf32>, tensor<?x24xf32>) -> tensor<?x32xf32>
  // expected-remark @+1 {{not converted to fusion: 'tosa.concat' joins operands of dynamic sizes along the axis, or of sizes that differ elsewhere}}
  %k = tosa.concat %z, %z {axis = 1 : i32} : (tensor<4x?xf32>, tensor<4x?xf32>) -> tensor<4x?xf32>
  return %j, %k : tensor<?x32xf32>, tensor<4x?xf32>
}

// -----

// What has no counterpart (floor) or is not floating point (integer add)
// stays, with a remark; the float ops around it are converted, a static
// reshape among them (its shape operand erased).
// CHECK-LABEL: func.func @mixed
// CHECK: fusion.exp
// CHECK: fusion.reshape %{{.*}} : tensor<2x8xf32> -> tensor<4x4xf32>
// CHECK-NOT: tosa.const_shape
// CHECK: tosa.floor
// CHECK: tosa.add
func.func @mixed(%x: tensor<2x8xf32>, %i: tensor<4xi32>) -> (tensor<4x4xf32>, tensor<4xi32>) {
  %e = tosa.exp %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %shape = tosa.const_shape {values = dense<[4, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %r = tosa.reshape %e, %shape : (tensor<2x8xf32>, !tosa.shape<2>) -> tensor<4x4xf32>
  // expected-remark @+1 {{not converted to fusion: 'tosa.floor' has no fusion counterpart}}
  %f = tosa.floor %r : (tensor<4x4xf32>) -> tensor<4x4xf32>
  // expected-remark @+1 {{not converted to fusion: 'tosa.add' operates on integer or unranked tensors}}
  %a = tosa.add %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %f, %a : tensor<4x4xf32>, tensor<4xi32>
}

// -----

// A reshape of a dynamic shape stays TOSA.
// CHECK-LABEL: func.func @dynamic_reshape
// CHECK: tosa.reshape
func.func @dynamic_reshape(%x: tensor<?x8xf32>) -> tensor<?x4x2xf32> {
  %shape = tosa.const_shape {values = dense<[-1, 4, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  // expected-remark @+1 {{not converted to fusion: 'tosa.reshape' reshapes a dynamic shape (fusion.reshape is static)}}
  %r = tosa.reshape %x, %shape : (tensor<?x8xf32>, !tosa.shape<3>) -> tensor<?x4x2xf32>
  return %r : tensor<?x4x2xf32>
}
