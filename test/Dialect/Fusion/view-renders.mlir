// The graph of a transformer MLP block is valid DOT: Graphviz renders it.
// REQUIRES: graphviz
// RUN: fusion-opt %fusion_src_root/examples/transformer_mlp_block.mlir --fusion-pipeline --fusion-view=output=%t.dot -o /dev/null
// RUN: dot -Tsvg %t.dot | FileCheck %s
// CHECK: <svg
// CHECK: mlp_block_k0 (row_reduction)
// CHECK: [matmul&#45;boundary]
// CHECK: </svg>
