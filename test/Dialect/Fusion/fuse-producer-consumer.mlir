// RUN: fusion-opt %s --split-input-file --fusion-fuse-producer-consumer | FileCheck %s
// RUN: fusion-opt %s --split-input-file --fusion-fuse-producer-consumer="emit-remarks" --verify-diagnostics -o /dev/null

// The seed chain: four elementwise ops, one kernel reading x and w.
// CHECK-LABEL: func @chain
// CHECK-SAME: (%[[X:.+]]: tensor<1024xf32>, %[[W:.+]]: tensor<1024xf32>)
// CHECK: %[[K:.+]] = fusion.kernel elementwise "chain_k0" (%[[X]], %[[W]])
// CHECK: fusion.mul
// CHECK: fusion.add
// CHECK: fusion.max
// CHECK: fusion.mul
// CHECK: fusion.yield
// CHECK-NOT: fusion.kernel
// CHECK: return %[[K]]
func.func @chain(%x: tensor<1024xf32>, %w: tensor<1024xf32>) -> tensor<1024xf32> {
  %two = fusion.constant dense<2.0> : tensor<f32>
  %one = fusion.constant dense<1.0> : tensor<f32>
  %zero = fusion.constant dense<0.0> : tensor<f32>
  %0 = fusion.mul %x, %two : (tensor<1024xf32>, tensor<f32>) -> tensor<1024xf32>
  %1 = fusion.add %0, %one : (tensor<1024xf32>, tensor<f32>) -> tensor<1024xf32>
  %2 = fusion.max %1, %zero : (tensor<1024xf32>, tensor<f32>) -> tensor<1024xf32>
  %3 = fusion.mul %2, %w : tensor<1024xf32>
  return %3 : tensor<1024xf32>
}

// -----

// Splat constants are cloned into the kernel, never passed in.
// CHECK-LABEL: func @constants_inside
// CHECK-NOT: fusion.constant
// CHECK: fusion.kernel elementwise "constants_inside_k0" (%{{.+}}) : (tensor<8xf32>) -> tensor<8xf32>
// CHECK: fusion.constant dense<3.000000e+00>
func.func @constants_inside(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = fusion.constant dense<3.0> : tensor<f32>
  %0 = fusion.mul %x, %c : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// A diamond: a's two consumers end up in one kernel, so a is computed once.
// CHECK-LABEL: func @diamond
// CHECK: fusion.kernel elementwise "diamond_k0"
// CHECK-COUNT-1: fusion.exp
// CHECK-NOT: fusion.kernel
func.func @diamond(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %a = fusion.exp %x : tensor<1024xf32>
  %b = fusion.tanh %a : tensor<1024xf32>
  %c = fusion.neg %a : tensor<1024xf32>
  %d = fusion.add %b, %c : tensor<1024xf32>
  return %d : tensor<1024xf32>
}

// -----

// A value also returned from the function is fused and written once, as a
// second output of the kernel.
// CHECK-LABEL: func @returned_intermediate
// CHECK: %[[K:.+]]:2 = fusion.kernel elementwise "returned_intermediate_k0" (%{{.+}}, %{{.+}}) : (tensor<256xf32>, tensor<256xf32>) -> (tensor<256xf32>, tensor<256xf32>)
// CHECK: %[[S:.+]] = fusion.add
// CHECK: %[[E:.+]] = fusion.exp %[[S]]
// CHECK: fusion.yield %[[E]], %[[S]]
// CHECK: return %[[K]]#1, %[[K]]#0
func.func @returned_intermediate(%x: tensor<256xf32>, %y: tensor<256xf32>) -> (tensor<256xf32>, tensor<256xf32>) {
  %s = fusion.add %x, %y : tensor<256xf32>
  %e = fusion.exp %s : tensor<256xf32>
  return %s, %e : tensor<256xf32>, tensor<256xf32>
}

// -----

// A cheap producer whose consumers cannot share a kernel (a matmul sits
// between them) is recomputed in each one instead of being written: each
// consumer already reads x, so the copy costs no bytes.
// CHECK-LABEL: func @recompute
// CHECK: fusion.kernel elementwise "recompute_k0"
// CHECK: fusion.exp
// CHECK: fusion.matmul
// CHECK: fusion.kernel elementwise "recompute_k2"
// CHECK: fusion.exp
func.func @recompute(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %a = fusion.exp %x : tensor<64x64xf32>
  // expected-remark @+1 {{[matmul-boundary]}}
  %b = fusion.mul %a, %x : tensor<64x64xf32>
  %mm = fusion.matmul %b, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %c = fusion.add %a, %x : tensor<64x64xf32>
  return %mm, %c : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// The cycle case: a -> matmul -> b with b also using a. Putting a and b
// together would make the matmul both consume and feed that kernel (and a
// product times a computed value is no library epilogue).
// CHECK-LABEL: func @cycle
// CHECK: %[[A:.+]] = fusion.kernel elementwise "cycle_k0"
// CHECK: %[[M:.+]] = fusion.kernel matmul "cycle_k1" (%[[A]], %{{.+}})
// CHECK: fusion.kernel elementwise "cycle_k2" (%[[M]], %[[A]])
func.func @cycle(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-remark @+2 {{[matmul-boundary] matmul is a fusion boundary}}
  // expected-remark @+1 {{not fused with 'fusion.mul'}}
  %a = fusion.exp %x : tensor<64x64xf32>
  // expected-remark @+1 {{[library-epilogue] only a scale by a constant multiplies the product}}
  %mm = fusion.matmul %a, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %b = fusion.mul %mm, %a : tensor<64x64xf32>
  return %b : tensor<64x64xf32>
}

// -----

// Reductions are left to fusion-fuse-reductions.
// CHECK-LABEL: func @reduction_left_alone
// CHECK: fusion.kernel elementwise
// CHECK: fusion.kernel row_reduction
func.func @reduction_left_alone(%x: tensor<8x128xf32>) -> tensor<8xf32> {
  // expected-remark @+1 {{[reduction] reductions are fused by fusion-fuse-reductions}}
  %e = fusion.exp %x : tensor<8x128xf32>
  %s = fusion.reduce_sum %e axes = [1] : tensor<8x128xf32> -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

// Two elementwise kernels fuse across a reshape: the reshape joins the
// kernel, which reads each element at the operand's index of the same
// row-major position.
// CHECK-LABEL: func.func @across_reshape
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK: %[[K:.+]] = fusion.kernel elementwise "across_reshape_k0" (%[[X]])
// CHECK: %[[E:.+]] = fusion.exp
// CHECK: %[[R:.+]] = fusion.reshape %[[E]] : tensor<4x8xf32> -> tensor<32xf32>
// CHECK: fusion.neg %[[R]]
// CHECK-NOT: fusion.kernel
// CHECK: return %[[K]]
func.func @across_reshape(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %0 = fusion.exp %x : tensor<4x8xf32>
  %1 = fusion.reshape %0 : tensor<4x8xf32> -> tensor<32xf32>
  %2 = fusion.neg %1 : tensor<32xf32>
  return %2 : tensor<32xf32>
}

// -----

// GPT-J's interleaved rotation, stack((-x[..., 1::2], x[..., ::2]), -1)
// flattened, with dynamic rows: the strided slices, the unit axes the
// reshapes add, the concat and the flattening reshape are one kernel with
// the rotary combination.
// CHECK-LABEL: func.func @interleaved_rotation
// CHECK: %[[K:.+]] = fusion.kernel elementwise "interleaved_rotation_k0"
// CHECK-COUNT-2: fusion.reshape {{.*}} : tensor<2x?x4xbf16> -> tensor<2x?x4x1xbf16>
// CHECK: fusion.concat
// CHECK: fusion.reshape {{.*}} : tensor<2x?x4x2xbf16> -> tensor<2x?x8xbf16>
// CHECK: fusion.add
// CHECK-NOT: fusion.kernel
// CHECK: return %[[K]]
func.func @interleaved_rotation(%x: tensor<2x?x8xbf16>, %cos: tensor<?x8xbf16>, %sin: tensor<?x8xbf16>) -> tensor<2x?x8xbf16> {
  %odd = fusion.slice %x offsets = [0, 0, 1] sizes = [2, -1, 4] strides = [1, 1, 2] : tensor<2x?x8xbf16> -> tensor<2x?x4xbf16>
  %neg = fusion.neg %odd : tensor<2x?x4xbf16>
  %even = fusion.slice %x offsets = [0, 0, 0] sizes = [2, -1, 4] strides = [1, 1, 2] : tensor<2x?x8xbf16> -> tensor<2x?x4xbf16>
  %a = fusion.reshape %neg : tensor<2x?x4xbf16> -> tensor<2x?x4x1xbf16>
  %b = fusion.reshape %even : tensor<2x?x4xbf16> -> tensor<2x?x4x1xbf16>
  %pairs = fusion.concat %a, %b axis = 3 : (tensor<2x?x4x1xbf16>, tensor<2x?x4x1xbf16>) -> tensor<2x?x4x2xbf16>
  %rotated = fusion.reshape %pairs : tensor<2x?x4x2xbf16> -> tensor<2x?x8xbf16>
  %c = fusion.mul %x, %cos : (tensor<2x?x8xbf16>, tensor<?x8xbf16>) -> tensor<2x?x8xbf16>
  %s = fusion.mul %rotated, %sin : (tensor<2x?x8xbf16>, tensor<?x8xbf16>) -> tensor<2x?x8xbf16>
  %y = fusion.add %c, %s : tensor<2x?x8xbf16>
  return %y : tensor<2x?x8xbf16>
}

// -----

// A value also read elsewhere is written by the merged kernel, whose
// outputs have one shape: here through the reshape the consumer reads
// (the kernel writes the reshaped value, the view outside is gone) ...
// CHECK-LABEL: func.func @reshape_also_returned
// CHECK: %[[K:.+]]:2 = fusion.kernel elementwise "reshape_also_returned_k0"
// CHECK: %[[R:.+]] = fusion.reshape
// CHECK: %[[N:.+]] = fusion.neg %[[R]]
// CHECK: fusion.yield %[[N]], %[[R]] : tensor<4x2x4xf32>, tensor<4x2x4xf32>
// CHECK-NOT: fusion.reshape
// CHECK: return %[[K]]#0, %[[K]]#1
func.func @reshape_also_returned(%x: tensor<4x8xf32>) -> (tensor<4x2x4xf32>, tensor<4x2x4xf32>) {
  %0 = fusion.exp %x : tensor<4x8xf32>
  %1 = fusion.reshape %0 : tensor<4x8xf32> -> tensor<4x2x4xf32>
  %2 = fusion.neg %1 : tensor<4x2x4xf32>
  return %2, %1 : tensor<4x2x4xf32>, tensor<4x2x4xf32>
}

// -----

// ... but not where it is also read in its own shape.
// CHECK-LABEL: func.func @unreshaped_also_returned
// CHECK: %[[K:.+]] = fusion.kernel elementwise "unreshaped_also_returned_k0"
// CHECK: %[[R:.+]] = fusion.reshape %[[K]] : tensor<4x8xf32> -> tensor<4x2x4xf32>
// CHECK: %[[N:.+]] = fusion.kernel elementwise "unreshaped_also_returned_k1" (%[[R]])
// CHECK: return %[[N]], %[[K]]
func.func @unreshaped_also_returned(%x: tensor<4x8xf32>) -> (tensor<4x2x4xf32>, tensor<4x8xf32>) {
  // expected-remark @+1 {{[shape] the value is also needed elsewhere, and an elementwise kernel writes outputs of one shape ([4x8] vs [4x2x4])}}
  %0 = fusion.exp %x : tensor<4x8xf32>
  %1 = fusion.reshape %0 : tensor<4x8xf32> -> tensor<4x2x4xf32>
  %2 = fusion.neg %1 : tensor<4x2x4xf32>
  return %2, %0 : tensor<4x2x4xf32>, tensor<4x8xf32>
}

// -----

// Only elementwise kernels evaluate a reshape: a product stays a kernel of
// its own, read under the new shape as a view.
// CHECK-LABEL: func.func @reshape_of_product
// CHECK: %[[M:.+]] = fusion.kernel matmul
// CHECK: %[[R:.+]] = fusion.reshape %[[M]]
// CHECK: fusion.kernel elementwise {{.*}}(%[[R]])
func.func @reshape_of_product(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x2x4xf32> {
  // expected-remark @+1 {{[reshape] only elementwise kernels fuse across a reshape (here matmul -> elementwise)}}
  %0 = fusion.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = fusion.reshape %0 : tensor<4x8xf32> -> tensor<4x2x4xf32>
  %2 = fusion.tanh %1 : tensor<4x2x4xf32>
  return %2 : tensor<4x2x4xf32>
}

// -----

// A reshape nothing reads is dropped with the splat constants (a merge
// erases the kernel it would read).
// CHECK-LABEL: func @unread_reshape
// CHECK-NOT: fusion.reshape
// CHECK: fusion.kernel elementwise "unread_reshape_k0"
// CHECK: fusion.tanh
// CHECK: fusion.exp
// CHECK-NOT: fusion.kernel
func.func @unread_reshape(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = fusion.tanh %x : tensor<4x8xf32>
  %d = fusion.reshape %a : tensor<4x8xf32> -> tensor<32xf32>
  %b = fusion.exp %a : tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}
