// Attention, softmax(f(Q K^T)) V, becomes one attention kernel: the
// transpose of K, both products, the math on the scores (and the math on
// its other inputs that nothing else reads) and the softmax (kept whole); what is not an attention says why with emit-remarks, and a
// softmax that neither reads nor feeds a product says nothing.
// RUN: fusion-opt %s --split-input-file --fusion-fuse-attention="emit-remarks" --verify-diagnostics | FileCheck %s

// Scaled dot-product attention, K transposed in the program.
// CHECK-LABEL: func @scaled
// CHECK: %[[O:.+]] = fusion.kernel attention (%arg0, %arg1, %arg2)
// CHECK-NEXT: ^bb0(%[[Q:.+]]: tensor<2x4x128x64xbf16>, %[[K:.+]]: tensor<2x4x128x64xbf16>, %[[V:.+]]: tensor<2x4x128x64xbf16>):
// CHECK: %[[KT:.+]] = fusion.transpose %[[K]] permutation = [0, 1, 3, 2]
// CHECK: %[[S:.+]] = fusion.matmul %[[Q]], %[[KT]]
// CHECK: %[[C:.+]] = fusion.constant dense<1.250000e-01>
// CHECK: %[[T:.+]] = fusion.mul %[[S]], %[[C]]
// CHECK: %[[P:.+]] = fusion.softmax %[[T]] axis = 3
// CHECK: %[[R:.+]] = fusion.matmul %[[P]], %[[V]]
// CHECK: fusion.yield %[[R]]
// CHECK: return %[[O]]
func.func @scaled(%q: tensor<2x4x128x64xbf16>, %k: tensor<2x4x128x64xbf16>, %v: tensor<2x4x128x64xbf16>) -> tensor<2x4x128x64xbf16> {
  %kt = fusion.transpose %k permutation = [0, 1, 3, 2] : tensor<2x4x128x64xbf16> -> tensor<2x4x64x128xbf16>
  %s = fusion.matmul %q, %kt : (tensor<2x4x128x64xbf16>, tensor<2x4x64x128xbf16>) -> tensor<2x4x128x128xbf16>
  %c = fusion.constant dense<0.125> : tensor<bf16>
  %t = fusion.mul %s, %c : (tensor<2x4x128x128xbf16>, tensor<bf16>) -> tensor<2x4x128x128xbf16>
  %p = fusion.softmax %t axis = 3 : tensor<2x4x128x128xbf16>
  %o = fusion.matmul %p, %v : (tensor<2x4x128x128xbf16>, tensor<2x4x128x64xbf16>) -> tensor<2x4x128x64xbf16>
  return %o : tensor<2x4x128x64xbf16>
}

// -----

// A causal mask computed from positions is computed in the kernel, not
// read: the iotas and the comparison join it (no mask input), and where the
// mask is read elsewhere too the original stays for that reader.
// CHECK-LABEL: func @causal_positions
// CHECK: %[[O:.+]] = fusion.kernel attention (%arg0, %arg1, %arg2) :
// CHECK: %[[S:.+]] = fusion.matmul
// CHECK-DAG: %[[KEY:.+]] = fusion.iota dimension = 1 : tensor<1x128xf32>
// CHECK-DAG: %[[ROW:.+]] = fusion.iota dimension = 0 : tensor<128x1xf32>
// CHECK: %[[SEEN:.+]] = fusion.cmp le, %[[KEY]], %[[ROW]]
// CHECK: %[[M:.+]] = fusion.select %[[SEEN]], %[[S]],
// CHECK: fusion.softmax %[[M]] axis = 3
// CHECK: fusion.yield
// CHECK-NOT: fusion.iota
// CHECK: return %[[O]]
// CHECK-LABEL: func @causal_mask_read_elsewhere
// CHECK: %[[ROW2:.+]] = fusion.iota dimension = 0
// CHECK: %[[KEY2:.+]] = fusion.iota dimension = 1
// CHECK: %[[SEEN2:.+]] = fusion.cmp le, %[[KEY2]], %[[ROW2]]
// CHECK: fusion.kernel attention (%arg0, %arg1, %arg2) :
// CHECK: fusion.iota dimension = 1
// CHECK: return %{{.+}}, %[[SEEN2]]
func.func @causal_positions(%q: tensor<2x4x128x64xbf16>, %k: tensor<2x4x128x64xbf16>, %v: tensor<2x4x128x64xbf16>) -> tensor<2x4x128x64xbf16> {
  %kt = fusion.transpose %k permutation = [0, 1, 3, 2] : tensor<2x4x128x64xbf16> -> tensor<2x4x64x128xbf16>
  %s = fusion.matmul %q, %kt : (tensor<2x4x128x64xbf16>, tensor<2x4x64x128xbf16>) -> tensor<2x4x128x128xbf16>
  %row = fusion.iota dimension = 0 : tensor<128x1xf32>
  %key = fusion.iota dimension = 1 : tensor<1x128xf32>
  %seen = fusion.cmp le, %key, %row : (tensor<1x128xf32>, tensor<128x1xf32>) -> tensor<128x128xi1>
  %ninf = fusion.constant dense<0xFF80> : tensor<bf16>
  %m = fusion.select %seen, %s, %ninf : (tensor<128x128xi1>, tensor<2x4x128x128xbf16>, tensor<bf16>) -> tensor<2x4x128x128xbf16>
  %p = fusion.softmax %m axis = 3 : tensor<2x4x128x128xbf16>
  %o = fusion.matmul %p, %v : (tensor<2x4x128x128xbf16>, tensor<2x4x128x64xbf16>) -> tensor<2x4x128x64xbf16>
  return %o : tensor<2x4x128x64xbf16>
}
func.func @causal_mask_read_elsewhere(%q: tensor<2x4x128x64xbf16>, %k: tensor<2x4x128x64xbf16>, %v: tensor<2x4x128x64xbf16>) -> (tensor<2x4x128x64xbf16>, tensor<128x128xi1>) {
  %kt = fusion.transpose %k permutation = [0, 1, 3, 2] : tensor<2x4x128x64xbf16> -> tensor<2x4x64x128xbf16>
  %s = fusion.matmul %q, %kt : (tensor<2x4x128x64xbf16>, tensor<2x4x64x128xbf16>) -> tensor<2x4x128x128xbf16>
  %row = fusion.iota dimension = 0 : tensor<128x1xf32>
  %key = fusion.iota dimension = 1 : tensor<1x128xf32>
  %seen = fusion.cmp le, %key, %row : (tensor<1x128xf32>, tensor<128x1xf32>) -> tensor<128x128xi1>
  %ninf = fusion.constant dense<0xFF80> : tensor<bf16>
  %m = fusion.select %seen, %s, %ninf : (tensor<128x128xi1>, tensor<2x4x128x128xbf16>, tensor<bf16>) -> tensor<2x4x128x128xbf16>
  %p = fusion.softmax %m axis = 3 : tensor<2x4x128x128xbf16>
  %o = fusion.matmul %p, %v : (tensor<2x4x128x128xbf16>, tensor<2x4x128x64xbf16>) -> tensor<2x4x128x64xbf16>
  return %o, %seen : tensor<2x4x128x64xbf16>, tensor<128x128xi1>
}

// -----

// The softmax over f32 scores, its probabilities converted to V's type for
// the product (fx's spelling of scaled_dot_product_attention): the convert
// joins the kernel.
// CHECK-LABEL: func @f32_softmax
// CHECK: %[[O:.+]] = fusion.kernel attention (%arg0, %arg1, %arg2) :
// CHECK: %[[P:.+]] = fusion.softmax %{{.+}} axis = 3 : tensor<2x4x128x128xf32>
// CHECK: %[[PB:.+]] = fusion.convert %[[P]] : tensor<2x4x128x128xf32> to tensor<2x4x128x128xbf16>
// CHECK: %[[OUT:.+]] = fusion.matmul %[[PB]], %{{.+}}
// CHECK: fusion.yield %[[OUT]]
// CHECK-NOT: fusion.convert
// CHECK: return %[[O]]
func.func @f32_softmax(%q: tensor<2x4x128x64xbf16>, %k: tensor<2x4x128x64xbf16>, %v: tensor<2x4x128x64xbf16>) -> tensor<2x4x128x64xbf16> {
  %kt = fusion.transpose %k permutation = [0, 1, 3, 2] : tensor<2x4x128x64xbf16> -> tensor<2x4x64x128xbf16>
  %s = fusion.matmul %q, %kt : (tensor<2x4x128x64xbf16>, tensor<2x4x64x128xbf16>) -> tensor<2x4x128x128xbf16>
  %sf = fusion.convert %s : tensor<2x4x128x128xbf16> to tensor<2x4x128x128xf32>
  %c = fusion.constant dense<0.088388> : tensor<f32>
  %t = fusion.mul %sf, %c : (tensor<2x4x128x128xf32>, tensor<f32>) -> tensor<2x4x128x128xf32>
  %p = fusion.softmax %t axis = 3 : tensor<2x4x128x128xf32>
  %pb = fusion.convert %p : tensor<2x4x128x128xf32> to tensor<2x4x128x128xbf16>
  %o = fusion.matmul %pb, %v : (tensor<2x4x128x128xbf16>, tensor<2x4x128x64xbf16>) -> tensor<2x4x128x64xbf16>
  return %o : tensor<2x4x128x64xbf16>
}

// -----

// Positions of dynamic sizes: each iota is cloned in with the input it
// takes its size from (Q's and K's sequence lengths), and a tensor that
// only gives a size joins the kernel's inputs.
// CHECK-LABEL: func @causal_dynamic_lengths
// CHECK: fusion.kernel attention (%arg0, %arg1, %arg2) :
// CHECK-NEXT: ^bb0(%[[Q:.+]]: tensor<2x4x?x64xbf16>, %[[K:.+]]: tensor<2x4x?x64xbf16>, %{{.+}}: tensor<2x4x?x64xbf16>):
// CHECK-DAG: fusion.iota dimension = 1 size_of %[[K]][2] : tensor<2x4x?x64xbf16> -> tensor<1x?xf32>
// CHECK-DAG: fusion.iota dimension = 0 size_of %[[Q]][2] : tensor<2x4x?x64xbf16> -> tensor<?x1xf32>
// CHECK: fusion.yield
// CHECK-NOT: fusion.iota
// CHECK-LABEL: func @causal_rows_sized_by_another
// CHECK: fusion.kernel attention (%arg1, %arg2, %arg3, %arg0) :
// CHECK-NEXT: ^bb0({{.+}}, %[[N:.+]]: tensor<?xf32>):
// CHECK: fusion.iota dimension = 0 size_of %[[N]][0] : tensor<?xf32> -> tensor<?x1xf32>
func.func @causal_dynamic_lengths(%q: tensor<2x4x?x64xbf16>, %k: tensor<2x4x?x64xbf16>, %v: tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16> {
  %kt = fusion.transpose %k permutation = [0, 1, 3, 2] : tensor<2x4x?x64xbf16> -> tensor<2x4x64x?xbf16>
  %s = fusion.matmul %q, %kt : (tensor<2x4x?x64xbf16>, tensor<2x4x64x?xbf16>) -> tensor<2x4x?x?xbf16>
  %row = fusion.iota dimension = 0 size_of %q[2] : tensor<2x4x?x64xbf16> -> tensor<?x1xf32>
  %key = fusion.iota dimension = 1 size_of %k[2] : tensor<2x4x?x64xbf16> -> tensor<1x?xf32>
  %seen = fusion.cmp le, %key, %row : (tensor<1x?xf32>, tensor<?x1xf32>) -> tensor<?x?xi1>
  %ninf = fusion.constant dense<0xFF80> : tensor<bf16>
  %m = fusion.select %seen, %s, %ninf : (tensor<?x?xi1>, tensor<2x4x?x?xbf16>, tensor<bf16>) -> tensor<2x4x?x?xbf16>
  %p = fusion.softmax %m axis = 3 : tensor<2x4x?x?xbf16>
  %o = fusion.matmul %p, %v : (tensor<2x4x?x?xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16>
  return %o : tensor<2x4x?x64xbf16>
}
func.func @causal_rows_sized_by_another(%n: tensor<?xf32>, %q: tensor<2x4x?x64xbf16>, %k: tensor<2x4x?x64xbf16>, %v: tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16> {
  %kt = fusion.transpose %k permutation = [0, 1, 3, 2] : tensor<2x4x?x64xbf16> -> tensor<2x4x64x?xbf16>
  %s = fusion.matmul %q, %kt : (tensor<2x4x?x64xbf16>, tensor<2x4x64x?xbf16>) -> tensor<2x4x?x?xbf16>
  %row = fusion.iota dimension = 0 size_of %n[0] : tensor<?xf32> -> tensor<?x1xf32>
  %key = fusion.iota dimension = 1 size_of %k[2] : tensor<2x4x?x64xbf16> -> tensor<1x?xf32>
  %seen = fusion.cmp le, %key, %row : (tensor<1x?xf32>, tensor<?x1xf32>) -> tensor<?x?xi1>
  %ninf = fusion.constant dense<0xFF80> : tensor<bf16>
  %m = fusion.select %seen, %s, %ninf : (tensor<?x?xi1>, tensor<2x4x?x?xbf16>, tensor<bf16>) -> tensor<2x4x?x?xbf16>
  %p = fusion.softmax %m axis = 3 : tensor<2x4x?x?xbf16>
  %o = fusion.matmul %p, %v : (tensor<2x4x?x?xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16>
  return %o : tensor<2x4x?x64xbf16>
}

// -----

// Grouped-query heads (K and V of a head broadcast over a group of 4 query
// heads), a dynamic sequence length, an additive mask, a tanh soft-cap and
// a boolean mask applied by select; K^T given as it is.
// CHECK-LABEL: func @grouped_softcap
// CHECK: fusion.kernel attention (%arg0, %arg1, %arg2, %arg3, %arg4)
// CHECK-NOT: fusion.transpose
// CHECK: fusion.matmul
// CHECK: fusion.add
// CHECK: fusion.div
// CHECK: fusion.tanh
// CHECK: fusion.mul
// CHECK: fusion.select
// CHECK: fusion.softmax
// CHECK: fusion.matmul
// CHECK: fusion.yield
func.func @grouped_softcap(%q: tensor<2x2x4x?x64xf32>, %kt: tensor<2x2x1x64x?xf32>, %v: tensor<2x2x1x?x64xf32>, %mask: tensor<?x?xf32>, %keep: tensor<?x?xi1>) -> tensor<2x2x4x?x64xf32> {
  %s = fusion.matmul %q, %kt : (tensor<2x2x4x?x64xf32>, tensor<2x2x1x64x?xf32>) -> tensor<2x2x4x?x?xf32>
  %m = fusion.add %s, %mask : (tensor<2x2x4x?x?xf32>, tensor<?x?xf32>) -> tensor<2x2x4x?x?xf32>
  %cap = fusion.constant dense<30.0> : tensor<f32>
  %d = fusion.div %m, %cap : (tensor<2x2x4x?x?xf32>, tensor<f32>) -> tensor<2x2x4x?x?xf32>
  %th = fusion.tanh %d : tensor<2x2x4x?x?xf32>
  %c = fusion.mul %th, %cap : (tensor<2x2x4x?x?xf32>, tensor<f32>) -> tensor<2x2x4x?x?xf32>
  %ninf = fusion.constant dense<0xFF800000> : tensor<f32>
  %sel = fusion.select %keep, %c, %ninf : (tensor<?x?xi1>, tensor<2x2x4x?x?xf32>, tensor<f32>) -> tensor<2x2x4x?x?xf32>
  %p = fusion.softmax %sel axis = 4 : tensor<2x2x4x?x?xf32>
  %o = fusion.matmul %p, %v : (tensor<2x2x4x?x?xf32>, tensor<2x2x1x?x64xf32>) -> tensor<2x2x4x?x64xf32>
  return %o : tensor<2x2x4x?x64xf32>
}

// -----

// The math computing the score math's other inputs (a bf16 bias converted
// and scaled) joins the kernel where nothing else reads it: the kernel reads
// the bias as stored. Where the converted bias is read elsewhere too, it is
// computed outside and read.
// CHECK-LABEL: func @bias_math
// CHECK: %[[O:.+]] = fusion.kernel attention (%arg0, %arg1, %arg2, %arg3) :
// CHECK-SAME: tensor<2x4x?x?xbf16>)
// CHECK-NEXT: ^bb0({{.*}}, %[[BIAS:.+]]: tensor<2x4x?x?xbf16>):
// CHECK: %[[S:.+]] = fusion.matmul
// CHECK: %[[BF:.+]] = fusion.convert %[[BIAS]] : tensor<2x4x?x?xbf16> to tensor<2x4x?x?xf32>
// CHECK: %[[BS:.+]] = fusion.mul %[[BF]],
// CHECK: fusion.add %{{.+}}, %[[BS]]
// CHECK: fusion.softmax
// CHECK: fusion.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[O]]
// CHECK-LABEL: func @bias_math_read_elsewhere
// CHECK: %[[BF2:.+]] = fusion.convert %arg3
// CHECK: %[[BS2:.+]] = fusion.mul %[[BF2]],
// CHECK: fusion.kernel attention (%arg0, %arg1, %arg2, %[[BS2]]) :
// CHECK-NOT: fusion.mul
// CHECK: fusion.yield
// CHECK: return %{{.+}}, %[[BS2]]
func.func @bias_math(%q: tensor<2x4x?x64xbf16>, %kt: tensor<2x4x64x?xbf16>, %v: tensor<2x4x?x64xbf16>, %bias: tensor<2x4x?x?xbf16>) -> tensor<2x4x?x64xbf16> {
  %sb = fusion.matmul %q, %kt : (tensor<2x4x?x64xbf16>, tensor<2x4x64x?xbf16>) -> tensor<2x4x?x?xbf16>
  %s = fusion.convert %sb : tensor<2x4x?x?xbf16> to tensor<2x4x?x?xf32>
  %bf = fusion.convert %bias : tensor<2x4x?x?xbf16> to tensor<2x4x?x?xf32>
  %c = fusion.constant dense<0.5> : tensor<f32>
  %bs = fusion.mul %bf, %c : (tensor<2x4x?x?xf32>, tensor<f32>) -> tensor<2x4x?x?xf32>
  %t = fusion.add %s, %bs : (tensor<2x4x?x?xf32>, tensor<2x4x?x?xf32>) -> tensor<2x4x?x?xf32>
  %tb = fusion.convert %t : tensor<2x4x?x?xf32> to tensor<2x4x?x?xbf16>
  %p = fusion.softmax %tb axis = 3 : tensor<2x4x?x?xbf16>
  %o = fusion.matmul %p, %v : (tensor<2x4x?x?xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16>
  return %o : tensor<2x4x?x64xbf16>
}
func.func @bias_math_read_elsewhere(%q: tensor<2x4x?x64xbf16>, %kt: tensor<2x4x64x?xbf16>, %v: tensor<2x4x?x64xbf16>, %bias: tensor<2x4x?x?xbf16>) -> (tensor<2x4x?x64xbf16>, tensor<2x4x?x?xf32>) {
  %sb = fusion.matmul %q, %kt : (tensor<2x4x?x64xbf16>, tensor<2x4x64x?xbf16>) -> tensor<2x4x?x?xbf16>
  %s = fusion.convert %sb : tensor<2x4x?x?xbf16> to tensor<2x4x?x?xf32>
  %bf = fusion.convert %bias : tensor<2x4x?x?xbf16> to tensor<2x4x?x?xf32>
  %c = fusion.constant dense<0.5> : tensor<f32>
  %bs = fusion.mul %bf, %c : (tensor<2x4x?x?xf32>, tensor<f32>) -> tensor<2x4x?x?xf32>
  %t = fusion.add %s, %bs : (tensor<2x4x?x?xf32>, tensor<2x4x?x?xf32>) -> tensor<2x4x?x?xf32>
  %tb = fusion.convert %t : tensor<2x4x?x?xf32> to tensor<2x4x?x?xbf16>
  %p = fusion.softmax %tb axis = 3 : tensor<2x4x?x?xbf16>
  %o = fusion.matmul %p, %v : (tensor<2x4x?x?xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16>
  return %o, %bs : tensor<2x4x?x64xbf16>, tensor<2x4x?x?xf32>
}

// -----

// The scores are returned too: they are written anyway.
// CHECK-LABEL: func @scores_escape
// CHECK-NOT: fusion.kernel
func.func @scores_escape(%q: tensor<128x64xf32>, %kt: tensor<64x128xf32>, %v: tensor<128x64xf32>) -> (tensor<128x64xf32>, tensor<128x128xf32>) {
  %s = fusion.matmul %q, %kt : (tensor<128x64xf32>, tensor<64x128xf32>) -> tensor<128x128xf32>
  // expected-remark @+1 {{[attention] not an attention: the scores (the product) are read elsewhere too}}
  %p = fusion.softmax %s axis = 1 : tensor<128x128xf32>
  %o = fusion.matmul %p, %v : (tensor<128x128xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
  return %o, %s : tensor<128x64xf32>, tensor<128x128xf32>
}

// -----

// A value of the math on the scores is returned.
// CHECK-LABEL: func @math_escapes
// CHECK-NOT: fusion.kernel
func.func @math_escapes(%q: tensor<128x64xf32>, %kt: tensor<64x128xf32>, %v: tensor<128x64xf32>) -> (tensor<128x64xf32>, tensor<128x128xf32>) {
  %s = fusion.matmul %q, %kt : (tensor<128x64xf32>, tensor<64x128xf32>) -> tensor<128x128xf32>
  %e = fusion.exp %s : tensor<128x128xf32>
  %t = fusion.tanh %e : tensor<128x128xf32>
  // expected-remark @+1 {{[attention] not an attention: a value of the math on the scores ('fusion.tanh') is read elsewhere too}}
  %p = fusion.softmax %t axis = 1 : tensor<128x128xf32>
  %o = fusion.matmul %p, %v : (tensor<128x128xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
  return %o, %t : tensor<128x64xf32>, tensor<128x128xf32>
}

// -----

// The probabilities are returned too.
// CHECK-LABEL: func @probabilities_escape
// CHECK-NOT: fusion.kernel
func.func @probabilities_escape(%q: tensor<128x64xf32>, %kt: tensor<64x128xf32>, %v: tensor<128x64xf32>) -> (tensor<128x64xf32>, tensor<128x128xf32>) {
  %s = fusion.matmul %q, %kt : (tensor<128x64xf32>, tensor<64x128xf32>) -> tensor<128x128xf32>
  // expected-remark @+1 {{[attention] not an attention: the probabilities are read by something other than one product}}
  %p = fusion.softmax %s axis = 1 : tensor<128x128xf32>
  %o = fusion.matmul %p, %v : (tensor<128x128xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
  return %o, %p : tensor<128x64xf32>, tensor<128x128xf32>
}

// -----

// The probabilities on the right of the product, and a softmax over the
// queries.
// CHECK-LABEL: func @not_attention
// CHECK-NOT: fusion.kernel
func.func @not_attention(%q: tensor<128x64xf32>, %kt: tensor<64x128xf32>, %w: tensor<64x128xf32>) -> (tensor<64x128xf32>, tensor<128x128xf32>) {
  %s = fusion.matmul %q, %kt : (tensor<128x64xf32>, tensor<64x128xf32>) -> tensor<128x128xf32>
  // expected-remark @+1 {{[attention] not an attention: the probabilities are not the left operand of the product}}
  %p = fusion.softmax %s axis = 1 : tensor<128x128xf32>
  %o = fusion.matmul %w, %p : (tensor<64x128xf32>, tensor<128x128xf32>) -> tensor<64x128xf32>
  %s2 = fusion.matmul %q, %kt : (tensor<128x64xf32>, tensor<64x128xf32>) -> tensor<128x128xf32>
  // expected-remark @+1 {{[attention] not an attention: the softmax is not over the last axis (the keys)}}
  %p2 = fusion.softmax %s2 axis = 0 : tensor<128x128xf32>
  return %o, %p2 : tensor<64x128xf32>, tensor<128x128xf32>
}

// -----

// A softmax that neither reads nor feeds a product is no candidate (no
// remark); a softmax read by a product but computed from inputs only says
// why it is not one.
// CHECK-LABEL: func @plain
// CHECK-NOT: fusion.kernel
func.func @plain(%x: tensor<128x128xf32>, %v: tensor<128x64xf32>) -> (tensor<128x128xf32>, tensor<128x64xf32>) {
  %p = fusion.softmax %x axis = 1 : tensor<128x128xf32>
  %e = fusion.exp %x : tensor<128x128xf32>
  // expected-remark @+1 {{[attention] not an attention: the softmax does not read a product through elementwise math}}
  %p2 = fusion.softmax %e axis = 1 : tensor<128x128xf32>
  %o = fusion.matmul %p2, %v : (tensor<128x128xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
  return %p, %o : tensor<128x128xf32>, tensor<128x64xf32>
}

// -----

// The log-sum-exp of the scores' rows (over the keys, what training keeps
// for the backward pass) joins the kernel as its second result, wherever
// the program computes it, when what reads it comes after the output.
// CHECK-LABEL: func @with_logsumexp
// CHECK: %[[K:.+]]:2 = fusion.kernel attention (%arg0, %arg1, %arg2) : {{.+}} -> (tensor<2x128x64xf32>, tensor<2x128xf32>)
// CHECK: %[[T:.+]] = fusion.mul
// CHECK: %[[P:.+]] = fusion.softmax %[[T]] axis = 2
// CHECK: %[[L:.+]] = fusion.logsumexp %[[T]] axis = 2
// CHECK: %[[R:.+]] = fusion.matmul %[[P]], %{{.+}}
// CHECK: fusion.yield %[[R]], %[[L]]
// CHECK: %[[LOG2:.+]] = fusion.mul %[[K]]#1
// CHECK: return %[[K]]#0, %[[LOG2]]
func.func @with_logsumexp(%q: tensor<2x128x64xf32>, %kt: tensor<2x64x128xf32>, %v: tensor<2x128x64xf32>) -> (tensor<2x128x64xf32>, tensor<2x128xf32>) {
  %s = fusion.matmul %q, %kt : (tensor<2x128x64xf32>, tensor<2x64x128xf32>) -> tensor<2x128x128xf32>
  %c = fusion.constant dense<0.125> : tensor<f32>
  %t = fusion.mul %s, %c : (tensor<2x128x128xf32>, tensor<f32>) -> tensor<2x128x128xf32>
  %l = fusion.logsumexp %t axis = 2 : tensor<2x128x128xf32> -> tensor<2x128xf32>
  %p = fusion.softmax %t axis = 2 : tensor<2x128x128xf32>
  %o = fusion.matmul %p, %v : (tensor<2x128x128xf32>, tensor<2x128x64xf32>) -> tensor<2x128x64xf32>
  %log2e = fusion.constant dense<1.442695> : tensor<f32>
  %l2 = fusion.mul %l, %log2e : (tensor<2x128xf32>, tensor<f32>) -> tensor<2x128xf32>
  return %o, %l2 : tensor<2x128x64xf32>, tensor<2x128xf32>
}

// -----

// A log-sum-exp read before the output (the kernel takes the output's
// place), and one over the queries (not the softmax's rows: the scores
// are read elsewhere too).
// CHECK-LABEL: func @logsumexp_refused
// CHECK-NOT: fusion.kernel
func.func @logsumexp_refused(%q: tensor<128x64xf32>, %kt: tensor<64x128xf32>, %v: tensor<128x64xf32>) -> (tensor<128x64xf32>, tensor<128xf32>, tensor<128x64xf32>, tensor<128xf32>) {
  %s = fusion.matmul %q, %kt : (tensor<128x64xf32>, tensor<64x128xf32>) -> tensor<128x128xf32>
  %l = fusion.logsumexp %s axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
  %e = fusion.exp %l : tensor<128xf32>
  // expected-remark @+1 {{[attention] not an attention: the log-sum-exp of the scores is read before the output's product}}
  %p = fusion.softmax %s axis = 1 : tensor<128x128xf32>
  %o = fusion.matmul %p, %v : (tensor<128x128xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
  %s2 = fusion.matmul %q, %kt : (tensor<128x64xf32>, tensor<64x128xf32>) -> tensor<128x128xf32>
  %l2 = fusion.logsumexp %s2 axis = 0 : tensor<128x128xf32> -> tensor<128xf32>
  // expected-remark @+1 {{[attention] not an attention: the scores (the product) are read elsewhere too}}
  %p2 = fusion.softmax %s2 axis = 1 : tensor<128x128xf32>
  %o2 = fusion.matmul %p2, %v : (tensor<128x128xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
  return %o, %e, %o2, %l2 : tensor<128x64xf32>, tensor<128xf32>, tensor<128x64xf32>, tensor<128xf32>
}

// -----

// Q, K and V as heads sliced out of one projection and moved before the
// sequence (GPT-2's split, view, transpose): each reshape of a slice becomes
// a slice of one reshape of the projection (a view between kernels), and
// the slices and transposes join the kernel, which reads the projection in
// place; the causal positions sized by Q take the size from the projection.
// CHECK-LABEL: func @heads_of_a_projection
// CHECK: %[[X:.+]] = fusion.reshape %arg0 : tensor<2x?x768xbf16> -> tensor<2x?x6x128xbf16>
// CHECK-NOT: fusion.reshape
// CHECK: %[[O:.+]] = fusion.kernel attention (%[[X]])
// CHECK-NEXT: ^bb0(%[[P:.+]]: tensor<2x?x6x128xbf16>):
// CHECK-DAG: %[[QS:.+]] = fusion.slice %[[P]] offsets = [0, 0, 0, 0] sizes = [2, -1, 2, 128] strides = [1, 1, 1, 1]
// CHECK-DAG: %[[KS:.+]] = fusion.slice %[[P]] offsets = [0, 0, 2, 0]
// CHECK-DAG: %[[VS:.+]] = fusion.slice %[[P]] offsets = [0, 0, 4, 0]
// CHECK-DAG: %[[Q:.+]] = fusion.transpose %[[QS]] permutation = [0, 2, 1, 3]
// CHECK-DAG: %[[K:.+]] = fusion.transpose %[[KS]] permutation = [0, 2, 1, 3]
// CHECK-DAG: %[[V:.+]] = fusion.transpose %[[VS]] permutation = [0, 2, 1, 3]
// CHECK: %[[KT:.+]] = fusion.transpose %[[K]] permutation = [0, 1, 3, 2]
// CHECK: fusion.matmul %[[Q]], %[[KT]]
// CHECK-DAG: fusion.iota dimension = 1 size_of %[[P]][1]
// CHECK-DAG: fusion.iota dimension = 0 size_of %[[P]][1]
// CHECK: fusion.softmax
// CHECK: fusion.matmul %{{.+}}, %[[V]]
// CHECK: fusion.yield
// CHECK: return %[[O]]
func.func @heads_of_a_projection(%x: tensor<2x?x768xbf16>) -> tensor<2x2x?x128xbf16> {
  %q0 = fusion.slice %x offsets = [0, 0, 0] sizes = [2, -1, 256] strides = [1, 1, 1] : tensor<2x?x768xbf16> -> tensor<2x?x256xbf16>
  %k0 = fusion.slice %x offsets = [0, 0, 256] sizes = [2, -1, 256] strides = [1, 1, 1] : tensor<2x?x768xbf16> -> tensor<2x?x256xbf16>
  %v0 = fusion.slice %x offsets = [0, 0, 512] sizes = [2, -1, 256] strides = [1, 1, 1] : tensor<2x?x768xbf16> -> tensor<2x?x256xbf16>
  %q1 = fusion.reshape %q0 : tensor<2x?x256xbf16> -> tensor<2x?x2x128xbf16>
  %k1 = fusion.reshape %k0 : tensor<2x?x256xbf16> -> tensor<2x?x2x128xbf16>
  %v1 = fusion.reshape %v0 : tensor<2x?x256xbf16> -> tensor<2x?x2x128xbf16>
  %q = fusion.transpose %q1 permutation = [0, 2, 1, 3] : tensor<2x?x2x128xbf16> -> tensor<2x2x?x128xbf16>
  %k = fusion.transpose %k1 permutation = [0, 2, 1, 3] : tensor<2x?x2x128xbf16> -> tensor<2x2x?x128xbf16>
  %v = fusion.transpose %v1 permutation = [0, 2, 1, 3] : tensor<2x?x2x128xbf16> -> tensor<2x2x?x128xbf16>
  %kt = fusion.transpose %k permutation = [0, 1, 3, 2] : tensor<2x2x?x128xbf16> -> tensor<2x2x128x?xbf16>
  %s = fusion.matmul %q, %kt : (tensor<2x2x?x128xbf16>, tensor<2x2x128x?xbf16>) -> tensor<2x2x?x?xbf16>
  %row = fusion.iota dimension = 0 size_of %q[2] : tensor<2x2x?x128xbf16> -> tensor<?x1xf32>
  %key = fusion.iota dimension = 1 size_of %q[2] : tensor<2x2x?x128xbf16> -> tensor<1x?xf32>
  %seen = fusion.cmp le, %key, %row : (tensor<1x?xf32>, tensor<?x1xf32>) -> tensor<?x?xi1>
  %ninf = fusion.constant dense<0xFF80> : tensor<bf16>
  %m = fusion.select %seen, %s, %ninf : (tensor<?x?xi1>, tensor<2x2x?x?xbf16>, tensor<bf16>) -> tensor<2x2x?x?xbf16>
  %p = fusion.softmax %m axis = 3 : tensor<2x2x?x?xbf16>
  %o = fusion.matmul %p, %v : (tensor<2x2x?x?xbf16>, tensor<2x2x?x128xbf16>) -> tensor<2x2x?x128xbf16>
  return %o : tensor<2x2x?x128xbf16>
}

// -----

// The output's heads moved back after the sequence (as before an output
// projection): the transpose joins the kernel, which stores its output
// through it; the reshape merging the heads stays a view between kernels.
// CHECK-LABEL: func @heads_moved_back
// CHECK: %[[O:.+]] = fusion.kernel attention (%arg0, %arg1, %arg2) : {{.+}} -> tensor<2x?x4x64xbf16>
// CHECK: fusion.softmax
// CHECK: %[[R:.+]] = fusion.matmul
// CHECK: %[[T:.+]] = fusion.transpose %[[R]] permutation = [0, 2, 1, 3]
// CHECK: fusion.yield %[[T]]
// CHECK: %[[M:.+]] = fusion.reshape %[[O]]
// CHECK: return %[[M]]
func.func @heads_moved_back(%q: tensor<2x4x?x64xbf16>, %k: tensor<2x4x?x64xbf16>, %v: tensor<2x4x?x64xbf16>) -> tensor<2x?x256xbf16> {
  %kt = fusion.transpose %k permutation = [0, 1, 3, 2] : tensor<2x4x?x64xbf16> -> tensor<2x4x64x?xbf16>
  %s = fusion.matmul %q, %kt : (tensor<2x4x?x64xbf16>, tensor<2x4x64x?xbf16>) -> tensor<2x4x?x?xbf16>
  %p = fusion.softmax %s axis = 3 : tensor<2x4x?x?xbf16>
  %o = fusion.matmul %p, %v : (tensor<2x4x?x?xbf16>, tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16>
  %t = fusion.transpose %o permutation = [0, 2, 1, 3] : tensor<2x4x?x64xbf16> -> tensor<2x?x4x64xbf16>
  %m = fusion.reshape %t : tensor<2x?x4x64xbf16> -> tensor<2x?x256xbf16>
  return %m : tensor<2x?x256xbf16>
}

// -----

// Grouped-query heads of projections viewed [B, S, H, D] and moved before
// the sequence: the reshape splitting the query heads into groups (and the
// one giving K and V a size-1 group axis, inserted before the sequence)
// becomes a reshape of the projection (a view between kernels) under a
// transpose that joins the kernel; the output's groups, joined back into
// heads by a reshape before the transpose, are transposed first and joined
// after (the transpose joins the kernel).
// CHECK-LABEL: func @grouped_heads_of_projections
// CHECK-DAG: %[[Q5:.+]] = fusion.reshape %arg0 : tensor<2x?x4x64xbf16> -> tensor<2x?x2x2x64xbf16>
// CHECK-DAG: %[[K5:.+]] = fusion.reshape %arg1 : tensor<2x?x2x64xbf16> -> tensor<2x1x?x2x64xbf16>
// CHECK: fusion.kernel attention (%[[Q5]], %[[K5]], %{{.+}})
// CHECK-DAG: fusion.transpose %{{.+}} permutation = [0, 2, 3, 1, 4] : tensor<2x?x2x2x64xbf16> -> tensor<2x2x2x?x64xbf16>
// CHECK-DAG: fusion.transpose %{{.+}} permutation = [0, 3, 1, 2, 4] : tensor<2x1x?x2x64xbf16> -> tensor<2x2x1x?x64xbf16>
// CHECK: fusion.softmax
// CHECK: %[[R:.+]] = fusion.matmul
// CHECK: %[[T:.+]] = fusion.transpose %[[R]] permutation = [0, 3, 1, 2, 4] : tensor<2x2x2x?x64xbf16> -> tensor<2x?x2x2x64xbf16>
// CHECK: fusion.yield %[[T]]
// CHECK: fusion.reshape %{{.+}} : tensor<2x?x2x2x64xbf16> -> tensor<2x?x4x64xbf16>
func.func @grouped_heads_of_projections(%x: tensor<2x?x4x64xbf16>, %y: tensor<2x?x2x64xbf16>, %z: tensor<2x?x2x64xbf16>) -> tensor<2x?x256xbf16> {
  %q4 = fusion.transpose %x permutation = [0, 2, 1, 3] : tensor<2x?x4x64xbf16> -> tensor<2x4x?x64xbf16>
  %q = fusion.reshape %q4 : tensor<2x4x?x64xbf16> -> tensor<2x2x2x?x64xbf16>
  %k4 = fusion.transpose %y permutation = [0, 2, 1, 3] : tensor<2x?x2x64xbf16> -> tensor<2x2x?x64xbf16>
  %k = fusion.reshape %k4 : tensor<2x2x?x64xbf16> -> tensor<2x2x1x?x64xbf16>
  %v4 = fusion.transpose %z permutation = [0, 2, 1, 3] : tensor<2x?x2x64xbf16> -> tensor<2x2x?x64xbf16>
  %v = fusion.reshape %v4 : tensor<2x2x?x64xbf16> -> tensor<2x2x1x?x64xbf16>
  %kt = fusion.transpose %k permutation = [0, 1, 2, 4, 3] : tensor<2x2x1x?x64xbf16> -> tensor<2x2x1x64x?xbf16>
  %s = fusion.matmul %q, %kt : (tensor<2x2x2x?x64xbf16>, tensor<2x2x1x64x?xbf16>) -> tensor<2x2x2x?x?xbf16>
  %p = fusion.softmax %s axis = 4 : tensor<2x2x2x?x?xbf16>
  %o = fusion.matmul %p, %v : (tensor<2x2x2x?x?xbf16>, tensor<2x2x1x?x64xbf16>) -> tensor<2x2x2x?x64xbf16>
  %o4 = fusion.reshape %o : tensor<2x2x2x?x64xbf16> -> tensor<2x4x?x64xbf16>
  %ot = fusion.transpose %o4 permutation = [0, 2, 1, 3] : tensor<2x4x?x64xbf16> -> tensor<2x?x4x64xbf16>
  %om = fusion.reshape %ot : tensor<2x?x4x64xbf16> -> tensor<2x?x256xbf16>
  return %om : tensor<2x?x256xbf16>
}

// -----

// A view read elsewhere too stays out (the kernel reads what it computes),
// and so do views of a decode step's few query rows (the rows strategy
// reads whole inputs).
// CHECK-LABEL: func @views_kept_out
// CHECK: %[[Q:.+]] = fusion.transpose %arg0 permutation = [0, 2, 1, 3]
// CHECK: fusion.kernel attention (%[[Q]], %arg1)
// CHECK: return %{{.+}}, %[[Q]]
// CHECK-LABEL: func @decode_views
// CHECK: %[[Q:.+]] = fusion.transpose %arg0 permutation = [0, 2, 1, 3]
// CHECK: %[[K:.+]] = fusion.transpose %arg1 permutation = [0, 2, 1, 3]
// CHECK: fusion.kernel attention (%[[Q]], %[[K]])
func.func @views_kept_out(%x: tensor<2x?x2x64xbf16>, %y: tensor<2x?x2x64xbf16>) -> (tensor<2x2x?x64xbf16>, tensor<2x2x?x64xbf16>) {
  %q = fusion.transpose %x permutation = [0, 2, 1, 3] : tensor<2x?x2x64xbf16> -> tensor<2x2x?x64xbf16>
  %k = fusion.transpose %y permutation = [0, 2, 1, 3] : tensor<2x?x2x64xbf16> -> tensor<2x2x?x64xbf16>
  %kt = fusion.transpose %k permutation = [0, 1, 3, 2] : tensor<2x2x?x64xbf16> -> tensor<2x2x64x?xbf16>
  %s = fusion.matmul %q, %kt : (tensor<2x2x?x64xbf16>, tensor<2x2x64x?xbf16>) -> tensor<2x2x?x?xbf16>
  %p = fusion.softmax %s axis = 3 : tensor<2x2x?x?xbf16>
  %o = fusion.matmul %p, %k : (tensor<2x2x?x?xbf16>, tensor<2x2x?x64xbf16>) -> tensor<2x2x?x64xbf16>
  return %o, %q : tensor<2x2x?x64xbf16>, tensor<2x2x?x64xbf16>
}
func.func @decode_views(%x: tensor<2x1x2x64xbf16>, %y: tensor<2x?x2x64xbf16>) -> tensor<2x2x1x64xbf16> {
  %q = fusion.transpose %x permutation = [0, 2, 1, 3] : tensor<2x1x2x64xbf16> -> tensor<2x2x1x64xbf16>
  %k = fusion.transpose %y permutation = [0, 2, 1, 3] : tensor<2x?x2x64xbf16> -> tensor<2x2x?x64xbf16>
  %kt = fusion.transpose %k permutation = [0, 1, 3, 2] : tensor<2x2x?x64xbf16> -> tensor<2x2x64x?xbf16>
  %s = fusion.matmul %q, %kt : (tensor<2x2x1x64xbf16>, tensor<2x2x64x?xbf16>) -> tensor<2x2x1x?xbf16>
  %p = fusion.softmax %s axis = 3 : tensor<2x2x1x?xbf16>
  %o = fusion.matmul %p, %k : (tensor<2x2x1x?xbf16>, tensor<2x2x?x64xbf16>) -> tensor<2x2x1x64xbf16>
  return %o : tensor<2x2x1x64xbf16>
}
