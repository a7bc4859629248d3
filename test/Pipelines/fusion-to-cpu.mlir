// The CPU pipeline reaches the LLVM dialect with a destination-passing C
// interface; with count-traffic, kernel accesses call the runtime counter.
// RUN: fusion-opt %s --fusion-to-cpu | FileCheck %s
// RUN: fusion-opt %s --fusion-to-cpu="fuse=false count-traffic=true" | FileCheck %s --check-prefix=COUNT

// CHECK: llvm.func @softmax_k0(
// CHECK: llvm.func @softmax(
// CHECK: llvm.call @softmax_k0
// CHECK: llvm.func @_mlir_ciface_softmax(%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr)
// CHECK-NOT: fusion.
// CHECK-NOT: memref.

// COUNT: llvm.func @fusion_traffic_record(i64, i64, i64, i32)
// COUNT: llvm.func @softmax_k0(
// COUNT: llvm.call @fusion_traffic_record
// COUNT: llvm.func @softmax_k6(
func.func @softmax(%x: tensor<?x64xbf16>) -> tensor<?x64xbf16> {
  %0 = fusion.softmax %x axis = 1 : tensor<?x64xbf16>
  return %0 : tensor<?x64xbf16>
}
