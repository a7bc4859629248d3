"""Shapes that exercise each GPU codegen path beyond the benchmark
workloads: elementwise sizes that are not a multiple of the vector width
(vector body and scalar tail), wide rows split over a cluster (a per-row
output, mean reductions) and one too wide to split (streamed), tiled
matmul with an epilogue and ragged edges, column reductions (odd width,
read over segments of rows where whole segments fit, element by element
where they do not; several and middle axes, dynamic rows, two in one
hand-written kernel),
reductions split over blocks (over all axes, outer and inner axes, a few
rows too long for a cluster); rows of
dynamic length (streamed, sizes 0 and 1 included) and a row reduction fed
by a slice; constants that are not splats, and constants returned;
positions (fusion.iota) in a row kernel's causal mask, returned alone (a
kernel with no inputs) and in elementwise math; decode attention
(attention_rows) at the head sizes, types and masks the benchmark's
decode programs do not have (K and V staged through shared memory on
sm_90: D = 32 in f32, 64 in f16 with an additive mask, 256 in bf16, few
rows so that keys are cut into ranges), and with 4 query rows a sequence
(rows sharing K and V: the register plan); fusion.reshape between
kernels, of static sizes (a returned view included) and of a dynamic
length (sizes 0 and 1 included), and inside elementwise kernels (heads
split between two steps in vectors, GPT-J's interleaved rotary in bf16
at dynamic lengths, rows of a width no vector divides), and elementwise
math before a reshape moved after it (fusion-hoist-reshapes) into a norm's
rows (a residual add viewed as rows; heads added and merged, dynamic
length 0, 1, 777), a biased gelu split into heads before their softmax
(the bias viewed as the heads' dimensions) and a column sum; fusion.concat (a rotary embedding's
rotate_half in bf16, three f16 operands along the innermost axis,
operands starting off a vector, rows joined before a softmax, a column
sum of a concatenation).

`module()` gives the MLIR text (compile it with matmul-epilogue);
`reference(name, *tensors)` the float64 result; `SHAPES[name]` the input
shapes to run a case with dynamic dimensions at (each entry one call);
`MISMATCHES[name]` input shapes whose sizes disagree, which must be refused.
"""

MODULE = """
func.func @ew_odd_f32(%x: tensor<1000003xf32>, %w: tensor<1000003xf32>) -> tensor<1000003xf32> {
  %two = fusion.constant dense<2.0> : tensor<f32>
  %zero = fusion.constant dense<0.0> : tensor<f32>
  %0 = fusion.mul %x, %two : (tensor<1000003xf32>, tensor<f32>) -> tensor<1000003xf32>
  %1 = fusion.max %0, %zero : (tensor<1000003xf32>, tensor<f32>) -> tensor<1000003xf32>
  %2 = fusion.mul %1, %w : tensor<1000003xf32>
  return %2 : tensor<1000003xf32>
}
func.func @ew_odd_bf16(%x: tensor<3x1001xbf16>, %s: tensor<1x1xbf16>) -> tensor<3x1001xbf16> {
  %0 = fusion.mul %x, %s : (tensor<3x1001xbf16>, tensor<1x1xbf16>) -> tensor<3x1001xbf16>
  %1 = fusion.exp %0 : tensor<3x1001xbf16>
  return %1 : tensor<3x1001xbf16>
}
func.func @softmax_split_f32(%x: tensor<3x131072xf32>) -> tensor<3x131072xf32> {
  %0 = fusion.softmax %x axis = 1 : tensor<3x131072xf32>
  return %0 : tensor<3x131072xf32>
}
func.func @logsumexp_split(%x: tensor<5x131072xbf16>) -> tensor<5xf32> {
  %xf = fusion.convert %x : tensor<5x131072xbf16> to tensor<5x131072xf32>
  %0 = fusion.logsumexp %xf axis = 1 : tensor<5x131072xf32> -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
func.func @softmax_unsplit(%x: tensor<2x524288xf32>) -> tensor<2x524288xf32> {
  %0 = fusion.softmax %x axis = 1 : tensor<2x524288xf32>
  return %0 : tensor<2x524288xf32>
}
func.func @layernorm_split(%x: tensor<7x65536xbf16>, %g: tensor<65536xbf16>, %b: tensor<65536xbf16>) -> tensor<7x65536xbf16> {
  %0 = fusion.layer_norm %x, %g, %b epsilon = 1.0e-05 : tensor<7x65536xbf16>, tensor<65536xbf16>, tensor<65536xbf16>
  return %0 : tensor<7x65536xbf16>
}
func.func @matmul_bias_relu(%a: tensor<2x100x70xbf16>, %b: tensor<70x50xbf16>, %bias: tensor<50xbf16>) -> tensor<2x100x50xbf16> {
  %0 = fusion.matmul %a, %b : (tensor<2x100x70xbf16>, tensor<70x50xbf16>) -> tensor<2x100x50xbf16>
  %1 = fusion.add %0, %bias : (tensor<2x100x50xbf16>, tensor<50xbf16>) -> tensor<2x100x50xbf16>
  %2 = fusion.relu %1 : tensor<2x100x50xbf16>
  return %2 : tensor<2x100x50xbf16>
}
func.func @matmul_f32(%a: tensor<257x384xf32>, %b: tensor<384x203xf32>) -> tensor<257x203xf32> {
  %0 = fusion.matmul %a, %b : (tensor<257x384xf32>, tensor<384x203xf32>) -> tensor<257x203xf32>
  return %0 : tensor<257x203xf32>
}
func.func @softmax_dynamic(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = fusion.softmax %x axis = 1 : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
func.func @rmsnorm_dynamic_bf16(%x: tensor<?x?xbf16>, %w: tensor<?xbf16>) -> tensor<?x?xbf16> {
  %0 = fusion.rms_norm %x, %w epsilon = 1.0e-06 : tensor<?x?xbf16>, tensor<?xbf16>
  return %0 : tensor<?x?xbf16>
}
func.func @mean_dynamic(%x: tensor<?x?xf32>) -> tensor<?x1xf32> {
  %0 = fusion.reduce_mean %x axes = [1] keep_dims : tensor<?x?xf32> -> tensor<?x1xf32>
  return %0 : tensor<?x1xf32>
}
func.func @slice_row_sum(%x: tensor<8x96xf32>) -> tensor<8xf32> {
  %s = fusion.slice %x offsets = [0, 32] sizes = [8, 64] strides = [1, 1] : tensor<8x96xf32> -> tensor<8x64xf32>
  %e = fusion.exp %s : tensor<8x64xf32>
  %0 = fusion.reduce_sum %e axes = [1] : tensor<8x64xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func @constants(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x1xf32>, tensor<3xf32>) {
  %table = fusion.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %0 = fusion.add %x, %table : tensor<2x3xf32>
  %seven = fusion.constant dense<7.0> : tensor<2x1xf32>
  %row = fusion.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  return %0, %seven, %row : tensor<2x3xf32>, tensor<2x1xf32>, tensor<3xf32>
}
func.func @lse_empty_rows(%x: tensor<?x0xf32>) -> tensor<?xf32> {
  %0 = fusion.logsumexp %x axis = 1 : tensor<?x0xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
func.func @reduce_rows_dynamic(%x: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %0 = fusion.reduce_sum %x axes = [1] : tensor<?x?xf32> -> tensor<?xf32>
  %1 = fusion.reduce_max %x axes = [1] : tensor<?x?xf32> -> tensor<?xf32>
  return %0, %1 : tensor<?xf32>, tensor<?xf32>
}
func.func @add_empty_inner(%x: tensor<?x0xf32>, %y: tensor<?x0xf32>) -> tensor<?x0xf32> {
  %0 = fusion.add %x, %y : tensor<?x0xf32>
  return %0 : tensor<?x0xf32>
}
func.func @mean_all(%x: tensor<?x77xf32>) -> tensor<f32> {
  %0 = fusion.reduce_mean %x axes = [0, 1] : tensor<?x77xf32> -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @column_sum(%x: tensor<300x77xf32>) -> tensor<77xf32> {
  %e = fusion.exp %x : tensor<300x77xf32>
  %0 = fusion.reduce_sum %e axes = [0] : tensor<300x77xf32> -> tensor<77xf32>
  return %0 : tensor<77xf32>
}
func.func @column_mean_3d(%x: tensor<3x50x24xbf16>) -> tensor<1x1x24xbf16> {
  %0 = fusion.reduce_mean %x axes = [0, 1] keep_dims : tensor<3x50x24xbf16> -> tensor<1x1x24xbf16>
  return %0 : tensor<1x1x24xbf16>
}
func.func @column_max_middle(%x: tensor<6x1000x16xf32>) -> tensor<6x16xf32> {
  %0 = fusion.reduce_max %x axes = [1] : tensor<6x1000x16xf32> -> tensor<6x16xf32>
  return %0 : tensor<6x16xf32>
}
func.func @column_dynamic(%x: tensor<?x33xf32>, %w: tensor<33xf32>) -> tensor<33xf32> {
  %0 = fusion.mul %x, %w : (tensor<?x33xf32>, tensor<33xf32>) -> tensor<?x33xf32>
  %1 = fusion.reduce_sum %0 axes = [0] : tensor<?x33xf32> -> tensor<33xf32>
  return %1 : tensor<33xf32>
}
func.func @column_mean_odd(%x: tensor<8x5x33xbf16>) -> tensor<1x1x33xbf16> {
  %0 = fusion.reduce_mean %x axes = [0, 1] keep_dims : tensor<8x5x33xbf16> -> tensor<1x1x33xbf16>
  return %0 : tensor<1x1x33xbf16>
}
func.func @column_max_odd(%x: tensor<24x1023xbf16>) -> tensor<1023xbf16> {
  %0 = fusion.reduce_max %x axes = [0] : tensor<24x1023xbf16> -> tensor<1023xbf16>
  return %0 : tensor<1023xbf16>
}
func.func @column_scaled_odd(%x: tensor<4096x999xf32>, %s: tensor<1x1xf32>) -> tensor<999xf32> {
  %0 = fusion.mul %x, %s : (tensor<4096x999xf32>, tensor<1x1xf32>) -> tensor<4096x999xf32>
  %1 = fusion.reduce_sum %0 axes = [0] : tensor<4096x999xf32> -> tensor<999xf32>
  return %1 : tensor<999xf32>
}
func.func @column_rows_unsegmented(%x: tensor<7x4095xbf16>) -> tensor<4095xbf16> {
  %0 = fusion.reduce_sum %x axes = [0] : tensor<7x4095xbf16> -> tensor<4095xbf16>
  return %0 : tensor<4095xbf16>
}
func.func @max_outer_inner(%x: tensor<5x300x24xbf16>) -> tensor<300xbf16> {
  %0 = fusion.reduce_max %x axes = [0, 2] : tensor<5x300x24xbf16> -> tensor<300xbf16>
  return %0 : tensor<300xbf16>
}
func.func @sum_long_rows(%x: tensor<3x300001xf32>) -> tensor<3x1xf32> {
  %0 = fusion.reduce_sum %x axes = [1] keep_dims : tensor<3x300001xf32> -> tensor<3x1xf32>
  return %0 : tensor<3x1xf32>
}
func.func @causal_softmax(%x: tensor<4x300x300xbf16>) -> tensor<4x300x300xbf16> {
  %row = fusion.iota dimension = 0 : tensor<300x1xf32>
  %key = fusion.iota dimension = 1 : tensor<1x300xf32>
  %seen = fusion.cmp le, %key, %row : (tensor<1x300xf32>, tensor<300x1xf32>) -> tensor<300x300xi1>
  %ninf = fusion.constant dense<0xFF80> : tensor<bf16>
  %m = fusion.select %seen, %x, %ninf : (tensor<300x300xi1>, tensor<4x300x300xbf16>, tensor<bf16>) -> tensor<4x300x300xbf16>
  %p = fusion.softmax %m axis = 2 : tensor<4x300x300xbf16>
  return %p : tensor<4x300x300xbf16>
}
func.func @positions() -> tensor<3x1001xf32> {
  %0 = fusion.iota dimension = 1 : tensor<3x1001xf32>
  return %0 : tensor<3x1001xf32>
}
func.func @ramp(%x: tensor<3x200xbf16>) -> tensor<3x200xbf16> {
  %k = fusion.iota dimension = 1 : tensor<3x200xbf16>
  %r = fusion.iota dimension = 0 : tensor<3x200xbf16>
  %0 = fusion.add %x, %k : tensor<3x200xbf16>
  %1 = fusion.sub %0, %r : tensor<3x200xbf16>
  return %1 : tensor<3x200xbf16>
}
func.func @column_sum_max(%x: tensor<2000x64xbf16>) -> (tensor<64xf32>, tensor<64xf32>) {
  %0:2 = fusion.kernel column_reduction "column_sum_max_k0" (%x) : (tensor<2000x64xbf16>) -> (tensor<64xf32>, tensor<64xf32>) {
  ^bb0(%a: tensor<2000x64xbf16>):
    %f = fusion.convert %a : tensor<2000x64xbf16> to tensor<2000x64xf32>
    %s = fusion.reduce_sum %f axes = [0] : tensor<2000x64xf32> -> tensor<64xf32>
    %m = fusion.reduce_max %f axes = [0] : tensor<2000x64xf32> -> tensor<64xf32>
    fusion.yield %s, %m : tensor<64xf32>, tensor<64xf32>
  }
  return %0#0, %0#1 : tensor<64xf32>, tensor<64xf32>
}
func.func @column_sum_max_odd(%x: tensor<2000x63xbf16>) -> (tensor<63xf32>, tensor<63xf32>) {
  %0:2 = fusion.kernel column_reduction "column_sum_max_odd_k0" (%x) : (tensor<2000x63xbf16>) -> (tensor<63xf32>, tensor<63xf32>) {
  ^bb0(%a: tensor<2000x63xbf16>):
    %f = fusion.convert %a : tensor<2000x63xbf16> to tensor<2000x63xf32>
    %s = fusion.reduce_sum %f axes = [0] : tensor<2000x63xf32> -> tensor<63xf32>
    %m = fusion.reduce_max %f axes = [0] : tensor<2000x63xf32> -> tensor<63xf32>
    fusion.yield %s, %m : tensor<63xf32>, tensor<63xf32>
  }
  return %0#0, %0#1 : tensor<63xf32>, tensor<63xf32>
}
func.func @reshape_heads(%x: tensor<2x64x256xbf16>) -> (tensor<2x8x64x32xbf16>, tensor<2x64x8x32xbf16>) {
  %e = fusion.exp %x : tensor<2x64x256xbf16>
  %h = fusion.reshape %e : tensor<2x64x256xbf16> -> tensor<2x64x8x32xbf16>
  %t = fusion.transpose %h permutation = [0, 2, 1, 3] : tensor<2x64x8x32xbf16> -> tensor<2x8x64x32xbf16>
  return %t, %h : tensor<2x8x64x32xbf16>, tensor<2x64x8x32xbf16>
}
func.func @concat_rotary_bf16(%x: tensor<?x128xbf16>, %cos: tensor<?x128xbf16>, %sin: tensor<?x128xbf16>) -> tensor<?x128xbf16> {
  %lo = fusion.slice %x offsets = [0, 0] sizes = [-1, 64] strides = [1, 1] : tensor<?x128xbf16> -> tensor<?x64xbf16>
  %hi = fusion.slice %x offsets = [0, 64] sizes = [-1, 64] strides = [1, 1] : tensor<?x128xbf16> -> tensor<?x64xbf16>
  %n = fusion.neg %hi : tensor<?x64xbf16>
  %r = fusion.concat %n, %lo axis = 1 : (tensor<?x64xbf16>, tensor<?x64xbf16>) -> tensor<?x128xbf16>
  %a = fusion.mul %x, %cos : tensor<?x128xbf16>
  %b = fusion.mul %r, %sin : tensor<?x128xbf16>
  %y = fusion.add %a, %b : tensor<?x128xbf16>
  return %y : tensor<?x128xbf16>
}
func.func @concat_three_f16(%a: tensor<2x?x3xf16>, %b: tensor<2x?x5xf16>, %c: tensor<2x?x1xf16>) -> tensor<2x?x9xf16> {
  %e = fusion.exp %b : tensor<2x?x5xf16>
  %j = fusion.concat %a, %e, %c axis = 2 : (tensor<2x?x3xf16>, tensor<2x?x5xf16>, tensor<2x?x1xf16>) -> tensor<2x?x9xf16>
  %t = fusion.tanh %j : tensor<2x?x9xf16>
  return %t : tensor<2x?x9xf16>
}
func.func @concat_unaligned(%x: tensor<?x64xf32>, %y: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %head = fusion.slice %x offsets = [0, 0] sizes = [-1, 21] strides = [1, 1] : tensor<?x64xf32> -> tensor<?x21xf32>
  %tail = fusion.slice %y offsets = [0, 21] sizes = [-1, 43] strides = [1, 1] : tensor<?x64xf32> -> tensor<?x43xf32>
  %e = fusion.exp %tail : tensor<?x43xf32>
  %r = fusion.concat %head, %e axis = 1 : (tensor<?x21xf32>, tensor<?x43xf32>) -> tensor<?x64xf32>
  %s = fusion.mul %r, %x : tensor<?x64xf32>
  return %s : tensor<?x64xf32>
}
func.func @concat_rows(%a: tensor<3x4096xf32>, %b: tensor<5x4096xf32>) -> tensor<8x4096xf32> {
  %s = fusion.mul %b, %b : tensor<5x4096xf32>
  %j = fusion.concat %a, %s axis = 0 : (tensor<3x4096xf32>, tensor<5x4096xf32>) -> tensor<8x4096xf32>
  %p = fusion.softmax %j axis = 1 : tensor<8x4096xf32>
  return %p : tensor<8x4096xf32>
}
func.func @concat_column_sum(%a: tensor<?x8xf32>, %b: tensor<?x20xf32>) -> tensor<28xf32> {
  %e = fusion.exp %b : tensor<?x20xf32>
  %j = fusion.concat %a, %e axis = 1 : (tensor<?x8xf32>, tensor<?x20xf32>) -> tensor<?x28xf32>
  %s = fusion.reduce_sum %j axes = [0] : tensor<?x28xf32> -> tensor<28xf32>
  return %s : tensor<28xf32>
}
func.func @positions_causal_softmax(%x: tensor<2x?x?xf32>) -> tensor<2x?x?xf32> {
  %row = fusion.iota dimension = 0 size_of %x[1] : tensor<2x?x?xf32> -> tensor<?x1xf32>
  %key = fusion.iota dimension = 1 size_of %x[2] : tensor<2x?x?xf32> -> tensor<1x?xf32>
  %seen = fusion.cmp le, %key, %row : (tensor<1x?xf32>, tensor<?x1xf32>) -> tensor<?x?xi1>
  %ninf = fusion.constant dense<0xFF800000> : tensor<f32>
  %m = fusion.select %seen, %x, %ninf : (tensor<?x?xi1>, tensor<2x?x?xf32>, tensor<f32>) -> tensor<2x?x?xf32>
  %p = fusion.softmax %m axis = 2 : tensor<2x?x?xf32>
  return %p : tensor<2x?x?xf32>
}
func.func @positions_of(%x: tensor<?x8xbf16>, %y: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %row = fusion.iota dimension = 0 size_of %x[0] : tensor<?x8xbf16> -> tensor<?x1xf32>
  %s = fusion.add %y, %row : (tensor<?x64xf32>, tensor<?x1xf32>) -> tensor<?x64xf32>
  return %s : tensor<?x64xf32>
}
func.func @reshape_dynamic(%x: tensor<2x?x64xf32>) -> tensor<2x?x64xf32> {
  %h = fusion.reshape %x : tensor<2x?x64xf32> -> tensor<2x?x4x16xf32>
  %s = fusion.softmax %h axis = 3 : tensor<2x?x4x16xf32>
  %b = fusion.reshape %s : tensor<2x?x4x16xf32> -> tensor<2x?x64xf32>
  %n = fusion.neg %b : tensor<2x?x64xf32>
  return %n : tensor<2x?x64xf32>
}
func.func @reshape_fused_heads_bf16(%x: tensor<64x1024xbf16>, %w: tensor<8x128xbf16>) -> tensor<64x8x128xbf16> {
  %g = fusion.gelu %x : tensor<64x1024xbf16>
  %h = fusion.reshape %g : tensor<64x1024xbf16> -> tensor<64x8x128xbf16>
  %y = fusion.mul %h, %w : (tensor<64x8x128xbf16>, tensor<8x128xbf16>) -> tensor<64x8x128xbf16>
  return %y : tensor<64x8x128xbf16>
}
func.func @reshape_interleaved_rotary_bf16(%x: tensor<2x?x128xbf16>, %cos: tensor<?x128xbf16>, %sin: tensor<?x128xbf16>) -> tensor<2x?x128xbf16> {
  %odd = fusion.slice %x offsets = [0, 0, 1] sizes = [2, -1, 64] strides = [1, 1, 2] : tensor<2x?x128xbf16> -> tensor<2x?x64xbf16>
  %neg = fusion.neg %odd : tensor<2x?x64xbf16>
  %even = fusion.slice %x offsets = [0, 0, 0] sizes = [2, -1, 64] strides = [1, 1, 2] : tensor<2x?x128xbf16> -> tensor<2x?x64xbf16>
  %a = fusion.reshape %neg : tensor<2x?x64xbf16> -> tensor<2x?x64x1xbf16>
  %b = fusion.reshape %even : tensor<2x?x64xbf16> -> tensor<2x?x64x1xbf16>
  %pairs = fusion.concat %a, %b axis = 3 : (tensor<2x?x64x1xbf16>, tensor<2x?x64x1xbf16>) -> tensor<2x?x64x2xbf16>
  %rotated = fusion.reshape %pairs : tensor<2x?x64x2xbf16> -> tensor<2x?x128xbf16>
  %c = fusion.mul %x, %cos : (tensor<2x?x128xbf16>, tensor<?x128xbf16>) -> tensor<2x?x128xbf16>
  %s = fusion.mul %rotated, %sin : (tensor<2x?x128xbf16>, tensor<?x128xbf16>) -> tensor<2x?x128xbf16>
  %y = fusion.add %c, %s : tensor<2x?x128xbf16>
  return %y : tensor<2x?x128xbf16>
}
func.func @reshape_odd_rows(%x: tensor<5x12xf32>, %w: tensor<15xf32>) -> tensor<4x15xf32> {
  %t = fusion.tanh %x : tensor<5x12xf32>
  %r = fusion.reshape %t : tensor<5x12xf32> -> tensor<4x15xf32>
  %y = fusion.add %r, %w : (tensor<4x15xf32>, tensor<15xf32>) -> tensor<4x15xf32>
  return %y : tensor<4x15xf32>
}
func.func @reshape_residual_rows_bf16(%x: tensor<2x300x1024xbf16>, %r: tensor<2x300x1024xbf16>, %g: tensor<1024xbf16>) -> tensor<600x1024xbf16> {
  %s = fusion.add %x, %r : tensor<2x300x1024xbf16>
  %v = fusion.reshape %s : tensor<2x300x1024xbf16> -> tensor<600x1024xbf16>
  %n = fusion.rms_norm %v, %g epsilon = 1.0e-05 : tensor<600x1024xbf16>, tensor<1024xbf16>
  return %n : tensor<600x1024xbf16>
}
func.func @reshape_merged_heads_rows_bf16(%x: tensor<?x8x128xbf16>, %r: tensor<?x8x128xbf16>, %g: tensor<1024xbf16>) -> tensor<?x1024xbf16> {
  %s = fusion.add %x, %r : tensor<?x8x128xbf16>
  %v = fusion.reshape %s : tensor<?x8x128xbf16> -> tensor<?x1024xbf16>
  %n = fusion.rms_norm %v, %g epsilon = 1.0e-05 : tensor<?x1024xbf16>, tensor<1024xbf16>
  return %n : tensor<?x1024xbf16>
}
func.func @reshape_bias_heads_bf16(%x: tensor<300x1024xbf16>, %b: tensor<1024xbf16>) -> tensor<300x8x128xbf16> {
  %a = fusion.add %x, %b : (tensor<300x1024xbf16>, tensor<1024xbf16>) -> tensor<300x1024xbf16>
  %g = fusion.gelu %a : tensor<300x1024xbf16>
  %h = fusion.reshape %g : tensor<300x1024xbf16> -> tensor<300x8x128xbf16>
  %s = fusion.softmax %h axis = 2 : tensor<300x8x128xbf16>
  return %s : tensor<300x8x128xbf16>
}
func.func @reshape_biased_columns(%x: tensor<8x250x96xf32>, %b: tensor<96xf32>) -> tensor<96xf32> {
  %two = fusion.constant dense<2.0> : tensor<f32>
  %e = fusion.tanh %x : tensor<8x250x96xf32>
  %a = fusion.add %e, %b : (tensor<8x250x96xf32>, tensor<96xf32>) -> tensor<8x250x96xf32>
  %m = fusion.mul %a, %two : (tensor<8x250x96xf32>, tensor<f32>) -> tensor<8x250x96xf32>
  %v = fusion.reshape %m : tensor<8x250x96xf32> -> tensor<2000x96xf32>
  %s = fusion.reduce_sum %v axes = [0] : tensor<2000x96xf32> -> tensor<96xf32>
  return %s : tensor<96xf32>
}
"""


# Rows of dynamic length: one element, short, long, longer than one block
# holds (70001 is past max-row-elements; prime, so no vector divides it).
SHAPES = {
    "softmax_dynamic": [[(5, 1)], [(7, 3)], [(9, 5000)], [(3, 70001)], [(0, 5)], [(4, 0)]],
    "rmsnorm_dynamic_bf16": [[(4, 33), (33,)], [(16, 4096), (4096,)], [(1, 1), (1,)],
                             [(0, 64), (64,)]],
    "mean_dynamic": [[(6, 1)], [(5, 777)], [(2, 40000)], [(0, 9)]],
    "lse_empty_rows": [[(3, 0)], [(0, 0)]],
    "reduce_rows_dynamic": [[(5, 0)], [(0, 7)], [(3, 1000)], [(2, 70001)]],
    "add_empty_inner": [[(6, 0), (6, 0)]],
    "mean_all": [[(300, 77)], [(1, 77)]],
    "column_dynamic": [[(0, 33), (33,)], [(1, 33), (33,)], [(5000, 33), (33,)]],
    # Keys: one, fewer than a step, a stage's worth and a bit, several
    # ranges of several steps.
    "decode_d32_f32": [[(2, 3, 1, 32), (2, 3, n, 32), (2, 3, n, 32)] for n in (1, 5, 257, 3001)],
    "decode_d64_f16_mask": [[(3, 5, 1, 64), (3, 5, n, 64), (3, 5, n, 64), (3, 1, 1, n)]
                            for n in (1, 7, 129, 5000)],
    "decode_d256_bf16": [[(2, 2, 1, 256), (2, 2, n, 256), (2, 2, n, 256)] for n in (1, 33, 1000)],
    "decode_queries4": [[(2, 3, 4, 64), (2, 3, n, 64), (2, 3, n, 64)] for n in (1, 300)],
    "reshape_dynamic": [[(2, n, 64)] for n in (0, 1, 1000)],
    "reshape_merged_heads_rows_bf16": [[(n, 8, 128), (n, 8, 128), (1024,)] for n in (0, 1, 777)],
    "reshape_interleaved_rotary_bf16": [[(2, n, 128), (n, 128), (n, 128)]
                                        for n in (0, 1, 7, 1000)],
    "concat_rotary_bf16": [[(n, 128)] * 3 for n in (0, 1, 7, 1000)],
    "concat_three_f16": [[(2, n, 3), (2, n, 5), (2, n, 1)] for n in (1, 9, 333)],
    "concat_unaligned": [[(n, 64)] * 2 for n in (5, 4097)],
    "concat_column_sum": [[(n, 8), (n, 20)] for n in (1, 3000)],
    # Positions of dynamic sizes (fusion.iota sized by a tensor): rows and
    # keys ragged, and a tensor that only gives the size.
    "positions_causal_softmax": [[(2, n, m)] for n, m in ((1, 1), (7, 3), (33, 100), (300, 5000))],
    "positions_of": [[(n, 8), (n, 64)] for n in (1, 77, 5000)],
}

# Calls whose dynamic sizes disagree: the compiled function must refuse
# them (SizeMismatchError) before it launches anything.
MISMATCHES = {
    "rmsnorm_dynamic_bf16": [[(4, 33), (32,)], [(16, 4096), (1,)]],
}


def _decode(name, batch, heads, queries, head, element, mask=False):
    """Decode attention `softmax(q k^T [+ mask]) v` with a dynamic number of
    keys (the mask, when asked, additive and broadcast over heads)."""
    q = f"tensor<{batch}x{heads}x{queries}x{head}x{element}>"
    kv = f"tensor<{batch}x{heads}x?x{head}x{element}>"
    kt = f"tensor<{batch}x{heads}x{head}x?x{element}>"
    s = f"tensor<{batch}x{heads}x{queries}x?x{element}>"
    m = f"tensor<{batch}x1x1x?x{element}>"
    masked = (f"  %sm = fusion.add %s, %m : ({s}, {m}) -> {s}\n" if mask else "")
    return f"""func.func @{name}(%q: {q}, %k: {kv}, %v: {kv}{f", %m: {m}" if mask else ""}) -> {q} {{
  %kt = fusion.transpose %k permutation = [0, 1, 3, 2] : {kv} -> {kt}
  %s = fusion.matmul %q, %kt : ({q}, {kt}) -> {s}
{masked}  %p = fusion.softmax {"%sm" if mask else "%s"} axis = 3 : {s}
  %o = fusion.matmul %p, %v : ({s}, {kv}) -> {q}
  return %o : {q}
}}
"""


def module():
    return (MODULE + _decode("decode_d32_f32", 2, 3, 1, 32, "f32")
            + _decode("decode_d64_f16_mask", 3, 5, 1, 64, "f16", mask=True)
            + _decode("decode_d256_bf16", 2, 2, 1, 256, "bf16")
            + _decode("decode_queries4", 2, 3, 4, 64, "bf16"))


def reference(name, *xs):
    """float64 reference outputs of case `name` (torch tensors in)."""
    import torch
    x = [t.double() for t in xs]
    if name == "ew_odd_f32":
        return (torch.clamp(x[0] * 2, min=0) * x[1],)
    if name == "ew_odd_bf16":
        return (torch.exp(x[0] * x[1]),)
    if name in ("softmax_split_f32", "softmax_unsplit"):
        return (torch.softmax(x[0], -1),)
    if name == "logsumexp_split":
        return (torch.logsumexp(x[0], -1),)
    if name == "layernorm_split":
        return (torch.nn.functional.layer_norm(x[0], x[0].shape[-1:], x[1], x[2], 1e-5),)
    if name == "matmul_bias_relu":
        return (torch.relu(x[0] @ x[1] + x[2]),)
    if name == "matmul_f32":
        return (x[0] @ x[1],)
    if name == "column_sum":
        return (torch.exp(x[0]).sum(0),)
    if name == "column_mean_3d":
        return (x[0].mean((0, 1), keepdim=True),)
    if name == "column_max_middle":
        return (x[0].amax(1),)
    if name == "column_dynamic":
        return ((x[0] * x[1]).sum(0),)
    if name == "max_outer_inner":
        return (x[0].amax((0, 2)),)
    if name == "sum_long_rows":
        return (x[0].sum(1, keepdim=True),)
    if name in ("column_sum_max", "column_sum_max_odd"):
        return (x[0].sum(0), x[0].amax(0))
    if name == "column_mean_odd":
        return (x[0].mean((0, 1), keepdim=True),)
    if name == "column_max_odd":
        return (x[0].amax(0),)
    if name == "column_scaled_odd":
        return ((x[0] * x[1]).sum(0),)
    if name == "column_rows_unsegmented":
        return (x[0].sum(0),)
    if name == "softmax_dynamic":
        return (torch.softmax(x[0], -1),)
    if name == "concat_rotary_bf16":
        half = x[0].shape[-1] // 2
        rotated = torch.cat((-x[0][:, half:], x[0][:, :half]), dim=1)
        return (x[0] * x[1] + rotated * x[2],)
    if name == "concat_three_f16":
        return (torch.tanh(torch.cat((x[0], torch.exp(x[1]), x[2]), dim=2)),)
    if name == "concat_unaligned":
        return (torch.cat((x[0][:, :21], torch.exp(x[1][:, 21:])), dim=1) * x[0],)
    if name == "concat_column_sum":
        return (torch.cat((x[0], torch.exp(x[1])), dim=1).sum(0),)
    if name == "positions_causal_softmax":
        rows, keys = x[0].shape[1:]
        seen = torch.arange(keys)[None, :] <= torch.arange(rows)[:, None]
        return (torch.softmax(x[0].masked_fill(~seen.to(x[0].device), float("-inf")), -1),)
    if name == "positions_of":
        return (x[1] + torch.arange(x[1].shape[0], device=x[1].device,
                                    dtype=torch.float64)[:, None],)
    if name == "concat_rows":
        return (torch.softmax(torch.cat((x[0], x[1] * x[1])), -1),)
    if name.startswith("decode_"):
        s = x[0] @ x[1].transpose(-1, -2) + (x[3] if len(x) > 3 else 0)
        return (torch.softmax(s, -1) @ x[2],)
    if name == "rmsnorm_dynamic_bf16":
        return (x[0] * torch.rsqrt(x[0].pow(2).mean(-1, keepdim=True) + 1e-6) * x[1],)
    if name == "mean_dynamic":
        return (x[0].mean(-1, keepdim=True),)
    if name == "mean_all":
        return (x[0].mean(),)
    if name == "lse_empty_rows":
        return (torch.full(x[0].shape[:1], -float("inf"), dtype=torch.float64,
                           device=x[0].device),)
    if name == "reduce_rows_dynamic":
        empty = x[0].shape[1] == 0
        return (x[0].sum(-1), torch.full(x[0].shape[:1], -float("inf"), dtype=torch.float64,
                                         device=x[0].device) if empty else x[0].amax(-1))
    if name == "add_empty_inner":
        return (x[0] + x[1],)
    if name == "constants":
        table = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64,
                             device=x[0].device)
        return (x[0] + table, torch.full((2, 1), 7.0, dtype=torch.float64, device=x[0].device),
                torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, device=x[0].device))
    if name in ("causal_softmax", "positions", "ramp"):
        i = torch.arange(300 if name == "causal_softmax" else 3, device="cuda")[:, None]
        j = torch.arange(300 if name == "causal_softmax" else x[0].shape[-1] if x else 1001,
                         device="cuda")[None, :]
        if name == "causal_softmax":
            return (torch.softmax(x[0].masked_fill(j > i, float("-inf")), -1),)
        if name == "positions":
            return ((j + 0 * i).double(),)
        # bf16 rounding after each op: x + j (j < 256 exact), then - i.
        return (((x[0] + j).bfloat16().double() - i).bfloat16().double(),)
    if name == "reshape_heads":
        h = torch.exp(x[0]).reshape(2, 64, 8, 32)
        return (h.transpose(1, 2), h)
    if name == "reshape_dynamic":
        s = torch.softmax(x[0].reshape(2, -1, 4, 16), -1)
        return (-s.reshape(x[0].shape),)
    if name == "reshape_fused_heads_bf16":
        g = torch.nn.functional.gelu(x[0])
        return (g.reshape(64, 8, 128) * x[1],)
    if name == "reshape_interleaved_rotary_bf16":
        rotated = torch.stack((-x[0][..., 1::2], x[0][..., ::2]), dim=-1).flatten(-2)
        return (x[0] * x[1] + rotated * x[2],)
    if name == "reshape_odd_rows":
        return (torch.tanh(x[0]).reshape(4, 15) + x[1],)
    if name in ("reshape_residual_rows_bf16", "reshape_merged_heads_rows_bf16"):
        h = (x[0] + x[1]).reshape(-1, 1024)
        return (h * torch.rsqrt((h * h).mean(-1, keepdim=True) + 1e-5) * x[2],)
    if name == "reshape_bias_heads_bf16":
        g = torch.nn.functional.gelu(x[0] + x[1])
        return (torch.softmax(g.reshape(300, 8, 128), -1),)
    if name == "reshape_biased_columns":
        return ((2 * (torch.tanh(x[0]) + x[1])).reshape(2000, 96).sum(0),)
    if name == "slice_row_sum":
        return (torch.exp(x[0][:, 32:96]).sum(-1),)
    raise KeyError(name)
