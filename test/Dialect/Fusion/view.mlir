// RUN: fusion-opt %s --fusion-pipeline --fusion-view=output=%t.dot -o /dev/null
// RUN: FileCheck %s < %t.dot

// A norm kernel and a matmul boundary: each kernel is a cluster with its
// bytes; the edge into the matmul carries its bytes and the reason.
// CHECK: digraph fusion {
// CHECK: subgraph cluster_f0 {
// CHECK: label="func @norm_matmul";
// CHECK: [[ARG0:f0_arg0]] [shape=ellipse, label="%arg0\n8x256xf32"];
// CHECK: subgraph cluster_{{n[0-9]+}} {
// CHECK-NEXT: label="norm_matmul_k0 (row_reduction)\nreads 9216 B, writes 8192 B";
// CHECK: [[SQ:n[0-9]+]] [label="fusion.square\n8x256xf32"];
// CHECK: [[MEAN:n[0-9]+]] [label="fusion.reduce_mean\n8x1xf32"];
// CHECK: [[SCALE:n[0-9]+]] [label="fusion.mul\n8x256xf32"];
// CHECK: [[OUT:n[0-9]+]] [label="fusion.mul\n8x256xf32"];
// CHECK: label="norm_matmul_k1 (matmul)\nreads 40960 B, writes 1024 B";
// CHECK: [[MM:n[0-9]+]] [label="fusion.matmul\n8x32xf32"];
// CHECK-DAG: [[ARG0]] -> [[SQ]] [label="8192 B"];
// CHECK-DAG: [[SQ]] -> [[MEAN]];
// CHECK-DAG: [[SCALE]] -> [[OUT]];
// CHECK-DAG: f0_arg1 -> [[OUT]] [label="1024 B"];
// CHECK-DAG: [[OUT]] -> [[MM]] [label="8192 B\n[matmul-boundary] matmul is a fusion boundary", style=dashed, color=red, fontcolor=red];
// CHECK-DAG: [[MM]] -> f0_return [label="1024 B"];
func.func @norm_matmul(%x: tensor<8x256xf32>, %g: tensor<256xf32>, %w: tensor<256x32xf32>) -> tensor<8x32xf32> {
  %n = fusion.rms_norm %x, %g epsilon = 1.0e-06 : tensor<8x256xf32>, tensor<256xf32>
  %0 = fusion.matmul %n, %w : (tensor<8x256xf32>, tensor<256x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// A library epilogue: the bias joins the matmul's kernel; the edge into the
// erf gelu carries the reason it did not.
// CHECK: label="func @matmul_bias_erf_gelu";
// CHECK: label="matmul_bias_erf_gelu_k0 (matmul)
// CHECK: [[BMM:n[0-9]+]] [label="fusion.matmul\n8x32xf32"];
// CHECK: [[BIAS:n[0-9]+]] [label="fusion.add\n8x32xf32"];
// CHECK: [[GELU:n[0-9]+]] [label="fusion.gelu\n8x32xf32"];
// CHECK-DAG: [[BMM]] -> [[BIAS]];
// CHECK-DAG: [[BIAS]] -> [[GELU]] [label="1024 B\n[library-epilogue] erf gelu: the library's GELU is the tanh approximation", style=dashed, color=red, fontcolor=red];
func.func @matmul_bias_erf_gelu(%x: tensor<8x256xf32>, %w: tensor<256x32xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %0 = fusion.matmul %x, %w : (tensor<8x256xf32>, tensor<256x32xf32>) -> tensor<8x32xf32>
  %1 = fusion.add %0, %b : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %2 = fusion.gelu %1 : tensor<8x32xf32>
  return %2 : tensor<8x32xf32>
}
