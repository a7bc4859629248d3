// The variants scripts/plan-variants.py writes for the plan sweep: one copy of
// the function per threads x cluster combination, its kernel carrying that
// plan, each accepted by the planner's checks; combinations that do not fit
// (a part more than a thread may hold, a cluster too large for the target)
// are left out and listed. The planner holds these rows of 16383 bf16 in
// shifted vectors (8 lanes); the variants keep its vector width.
//
// RUN: %fusion_python %fusion_src_root/scripts/plan-variants.py %s -o %t.mlir --threads 32,128 --clusters 1,2,16 --build %fusion_obj_root | FileCheck %s --check-prefix=LIST
// RUN: fusion-opt %t.mlir --fusion-plan-kernels | FileCheck %s
//
// LIST: 2 variants written to
// LIST-DAG: left out: softmax_c1_t32: {{.*}}a part of 2047 vectors is held by 32 threads in 64 vectors each, more than 16
// LIST-DAG: left out: softmax_c2_t32: {{.*}}held by 32 threads in 32 vectors each, more than 16
// LIST-DAG: left out: softmax_c16_t32: {{.*}}asks for clusters of 16 blocks, sm_90 allows at most 8
// LIST-DAG: left out: softmax_c16_t128: {{.*}}asks for clusters of 16 blocks
//
// CHECK-LABEL: func.func @softmax_c1_t128(
// CHECK: fusion.kernel row_reduction "softmax_c1_t128_k0" {{.*}}plan = #fusion.plan<rows, threads = 128, vector = 8, row = registers, cluster = 1
// CHECK-LABEL: func.func @softmax_c2_t128(
// CHECK: plan = #fusion.plan<cluster_rows, threads = 128, vector = 8, row = registers, cluster = 2

func.func @softmax(%x: tensor<16x16383xbf16>) -> tensor<16x16383xbf16> {
  %0 = fusion.softmax %x axis = 1 : tensor<16x16383xbf16>
  return %0 : tensor<16x16383xbf16>
}
