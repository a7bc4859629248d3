// Columns and split reductions keep their strategy and vector in the
// variants scripts/plan-variants.py writes, and vary threads and `split`
// (numbers, the planned split, or factors of it): here the planned 33
// ranges of a 16384 x 4096 bf16 column sum, twice and half that, and 7.
// A split the planner's checks refuse is left out and listed.
//
// RUN: %fusion_python %fusion_src_root/scripts/plan-variants.py %s -o %t.mlir --threads 256,512 --splits planned,x2,x0.5,7,0 --build %fusion_obj_root | FileCheck %s --check-prefix=LIST
// RUN: fusion-opt %t.mlir --fusion-plan-kernels | FileCheck %s
//
// LIST: 8 variants written to
// LIST-DAG: left out: col_sum_t256_s0: {{.*}}a plan's split is at least 1
// LIST-DAG: left out: col_sum_t512_s0: {{.*}}a plan's split is at least 1
//
// CHECK-LABEL: func.func @col_sum_t256_s33(
// CHECK: fusion.kernel column_reduction "col_sum_t256_s33_k0" {{.*}}plan = #fusion.plan<columns, threads = 256, vector = 8, row = none, cluster = 1, split = 33,
// CHECK-LABEL: func.func @col_sum_t256_s66(
// CHECK: split = 66,
// CHECK-LABEL: func.func @col_sum_t256_s16(
// CHECK: split = 16,
// CHECK-LABEL: func.func @col_sum_t256_s7(
// CHECK: split = 7,
// CHECK-LABEL: func.func @col_sum_t512_s33(
// CHECK: plan = #fusion.plan<columns, threads = 512, vector = 8, row = none, cluster = 1, split = 33,

func.func @col_sum(%x: tensor<16384x4096xbf16>) -> tensor<4096xf32> {
  %xf = fusion.convert %x : tensor<16384x4096xbf16> to tensor<16384x4096xf32>
  %0 = fusion.reduce_sum %xf axes = [0] : tensor<16384x4096xf32> -> tensor<4096xf32>
  return %0 : tensor<4096xf32>
}
