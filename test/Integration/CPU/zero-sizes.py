# Tensors with a dimension of size 0, static or at run time, compile and
# run: a row reduction over empty rows (logsumexp gives -inf, a sum 0, a
# max -inf: each reduction's identity), a slice of an empty dimension, an
# elementwise op over an empty inner dimension. Fused and unfused, outputs
# poisoned, against numpy.
#
# RUN: %fusion_python %s %fusion_obj_root %t

import os
import sys

import numpy as np

from fusion import cpu, testing

build_dir, work_dir = sys.argv[1:3]
os.makedirs(work_dir, exist_ok=True)
source = os.path.join(work_dir, "zeros.mlir")
with open(source, "w") as f:
    f.write("""
func.func @lse_empty_rows(%x: tensor<?x0xf32>) -> tensor<?xf32> {
  %0 = fusion.logsumexp %x axis = 1 : tensor<?x0xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
func.func @reduce_empty_rows(%x: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %0 = fusion.reduce_sum %x axes = [1] : tensor<?x?xf32> -> tensor<?xf32>
  %1 = fusion.reduce_max %x axes = [1] : tensor<?x?xf32> -> tensor<?xf32>
  return %0, %1 : tensor<?xf32>, tensor<?xf32>
}
func.func @slice_empty(%x: tensor<0x8xf32>) -> tensor<4x0xf32> {
  %0 = fusion.slice %x offsets = [0, 4] sizes = [-1, 4] strides = [1, 1] : tensor<0x8xf32> -> tensor<0x4xf32>
  %1 = fusion.transpose %0 permutation = [1, 0] : tensor<0x4xf32> -> tensor<4x0xf32>
  return %1 : tensor<4x0xf32>
}
func.func @add_empty_inner(%x: tensor<?x0xf32>, %y: tensor<?x0xf32>) -> tensor<?x0xf32> {
  %0 = fusion.add %x, %y : tensor<?x0xf32>
  return %0 : tensor<?x0xf32>
}
""")
failures = []


def same(name, got, expected):
    ok = got.shape == expected.shape and np.array_equal(got, expected.astype(np.float32))
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {got.shape} {got.ravel()[:4]}")
    if not ok:
        failures.append(name)


for fuse in (True, False):
    tag = "fused" if fuse else "unfused"
    os.makedirs(os.path.join(work_dir, tag), exist_ok=True)
    module = cpu.compile(source, build_dir, fuse=fuse, debug=True,
                         work_dir=os.path.join(work_dir, tag))
    (y,) = module.lse_empty_rows(np.zeros((3, 0), np.float32))
    same(f"{tag} logsumexp of empty rows", y, np.full(3, -np.inf))
    x = np.zeros((5, 0), np.float32)
    s, m = module.reduce_empty_rows(x)
    same(f"{tag} sum of empty rows", s, np.zeros(5))
    same(f"{tag} max of empty rows", m, np.full(5, -np.inf))
    s, m = module.reduce_empty_rows(np.zeros((0, 7), np.float32))
    same(f"{tag} reductions of no rows", s, np.zeros(0))
    (y,) = module.slice_empty(np.zeros((0, 8), np.float32))
    same(f"{tag} slice of an empty dimension", y, np.zeros((4, 0)))
    (y,) = module.add_empty_inner(np.zeros((6, 0), np.float32), np.zeros((6, 0), np.float32))
    same(f"{tag} add over an empty inner dimension", y, np.zeros((6, 0)))
    x = testing.fresh_rng().standard_normal((4, 3)).astype(np.float32)
    s, m = module.reduce_empty_rows(x)
    testing.check(f"{tag} sum of 4x3", s, x.astype(np.float64).sum(1), "f32", failures)

print(f"{len(failures)} failures: {failures}")
sys.exit(1 if failures else 0)
