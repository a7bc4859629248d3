// RUN: fusion-opt %s --split-input-file --fusion-guard-sizes --verify-diagnostics | FileCheck %s

// Each member is compared with the first (or the static size); a mismatch
// is reported to the runtime, and the body runs only if all agree.
// CHECK-LABEL: func.func @add(
// CHECK-SAME: %[[A:.+]]: memref<?x8xf32>, %[[B:.+]]: memref<?x8xf32>, %[[OUT:.+]]: memref<?x8xf32>)
// CHECK-NOT: fusion.size_checks
// CHECK: %[[DA:.+]] = memref.dim %[[A]], %{{.+}}
// CHECK: %[[SA:.+]] = arith.index_cast %[[DA]] : index to i64
// CHECK: %[[DB:.+]] = memref.dim %[[B]], %{{.+}}
// CHECK: %[[SB:.+]] = arith.index_cast %[[DB]] : index to i64
// CHECK: %[[NE:.+]] = arith.cmpi ne, %[[SB]], %[[SA]] : i64
// CHECK: scf.if %[[NE]] {
// CHECK:   func.call @fusion_size_mismatch(%{{.+}}, %{{.+}}, %[[SB]], %{{.+}}, %{{.+}}, %[[SA]], %{{.+}})
// CHECK: memref.dim %[[OUT]]
// CHECK: func.call @fusion_size_mismatch
// CHECK: %[[OK:.+]] = arith.andi
// CHECK-NEXT: scf.if %[[OK]] {
// CHECK-NEXT: memref.copy %[[A]], %[[OUT]]
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK: func.func private @fusion_size_mismatch(i64, i64, i64, i64, i64, i64, i64)
func.func @add(%a: memref<?x8xf32>, %b: memref<?x8xf32>, %out: memref<?x8xf32>) attributes {fusion.size_checks = {checks = [array<i64: -1, 0, 0, 1, 0, 2, 0>], inputs = 2 : i64}} {
  memref.copy %a, %out : memref<?x8xf32> to memref<?x8xf32>
  return
}

// -----

// A static size is compared as a constant.
// CHECK-LABEL: func.func @against_static(
// CHECK: %[[FOUR:.+]] = arith.constant 4 : i64
// CHECK: %[[D:.+]] = memref.dim %arg0
// CHECK: %[[S:.+]] = arith.index_cast %[[D]]
// CHECK: arith.cmpi ne, %[[S]], %[[FOUR]] : i64
func.func @against_static(%a: memref<?x8xf32>, %out: memref<4x8xf32>) attributes {fusion.size_checks = {checks = [array<i64: 4, 0, 0>], inputs = 1 : i64}} {
  return
}

// -----

// expected-error @+1 {{has a malformed fusion.size_checks}}
func.func @malformed(%a: memref<?xf32>) attributes {fusion.size_checks = [1, 2]} {
  return
}
