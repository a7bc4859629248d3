// fusion-view explains each refusal with the budgets the fusion passes
// decided with (recorded on the function), not with its own defaults, and
// shows each kernel's plan.
// RUN: fusion-opt %s --fusion-pipeline=max-ops=2 --fusion-plan-kernels --fusion-view=output=%t.dot -o /dev/null
// RUN: FileCheck %s < %t.dot

// Four elementwise ops under a budget of two ops a kernel: two kernels,
// the edge between them refused for the budget (with the view's default
// of 128 ops it would have been fused).
// CHECK: label="chain_k0 (elementwise)\nplan: elementwise, 256 threads, vector 4\nreads
// CHECK: label="chain_k1 (elementwise)\nplan: elementwise, 256 threads, vector 4\nreads
// CHECK: [label="4096 B\n[budget] 4 ops > max-ops 2", style=dashed
func.func @chain(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = fusion.exp %x : tensor<1024xf32>
  %1 = fusion.tanh %0 : tensor<1024xf32>
  %2 = fusion.neg %1 : tensor<1024xf32>
  %3 = fusion.abs %2 : tensor<1024xf32>
  return %3 : tensor<1024xf32>
}
