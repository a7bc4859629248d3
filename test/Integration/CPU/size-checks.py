# Dynamic sizes that must agree are checked by the compiled function before
# it touches memory: dynamic dimensions never broadcast, so two `?` operands
# of an add, a `?` against a static 4, a norm weight and x's rows, a
# matmul's K must be equal; a disagreement raises SizeMismatchError naming
# the function, the arguments and the sizes (even when one side is huge).
# Agreeing sizes of 0 and 1 run and match numpy. Fused and unfused, outputs
# poisoned.
#
# RUN: %fusion_python %s %fusion_obj_root %t

import os
import sys

import numpy as np

from fusion import cpu, testing

build_dir, work_dir = sys.argv[1:3]
os.makedirs(work_dir, exist_ok=True)
source = os.path.join(work_dir, "checks.mlir")
with open(source, "w") as f:
    f.write("""
func.func @add(%a: tensor<?x8xf32>, %b: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = fusion.add %a, %b : tensor<?x8xf32>
  %1 = fusion.exp %0 : tensor<?x8xf32>
  return %1 : tensor<?x8xf32>
}
func.func @against_static(%a: tensor<?x8xf32>, %b: tensor<4x8xf32>, %c: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %0 = fusion.add %a, %b : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = fusion.mul %0, %c : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
func.func @norm(%x: tensor<?x?xf32>, %w: tensor<?xf32>) -> tensor<?x?xf32> {
  %0 = fusion.rms_norm %x, %w epsilon = 1.0e-5 : tensor<?x?xf32>, tensor<?xf32>
  return %0 : tensor<?x?xf32>
}
func.func @mm(%a: tensor<?x?xf32>, %b: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %0 = fusion.matmul %a, %b : (tensor<?x?xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}
func.func @row_sums(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %0 = fusion.reduce_sum %a axes = [1] : tensor<?x?xf32> -> tensor<?xf32>
  %1 = fusion.reduce_sum %b axes = [1] : tensor<?x?xf32> -> tensor<?xf32>
  return %0, %1 : tensor<?xf32>, tensor<?xf32>
}
""")
rng = testing.fresh_rng()


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def rms_norm(x, w):
    x = x.astype(np.float64)
    if x.shape[1] == 0:
        return x
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-5) * w


failures = []
for fuse in (True, False):
    tag = "fused" if fuse else "unfused"
    os.makedirs(os.path.join(work_dir, tag), exist_ok=True)
    module = cpu.compile(source, build_dir, fuse=fuse, debug=True,
                         work_dir=os.path.join(work_dir, tag))

    # Calls the program refuses, with the words the error must contain.
    refused = [
        ("add", (rand(7, 8), rand(3, 8)), ["add:", "argument 1 dimension 0 has size 3", "argument 0 dimension 0 has size 7"]),
        ("add", (rand(5, 8), rand(1, 8)), ["argument 1 dimension 0 has size 1"]),
        ("add", (rand(700000, 8), rand(3, 8)), ["size 700000"]),
        ("against_static", (rand(1, 8), rand(4, 8), rand(1, 8)), ["argument 0 dimension 0 has size 1", "needs 4"]),
        ("norm", (rand(4, 16), rand(15)), ["argument 1 dimension 0 has size 15", "argument 0 dimension 1 has size 16"]),
        ("mm", (rand(4, 32), rand(31, 16)), ["argument 1 dimension 0 has size 31"]),
    ]
    for name, args, words in refused:
        try:
            module.functions[name](*args)
            print(f"FAIL {tag} {name}: the call ran")
            failures.append(f"{tag} {name} ran")
        except cpu.SizeMismatchError as e:
            missing = [w for w in words if w not in str(e)]
            print(f"{'ok  ' if not missing else 'FAIL'} {tag} {name} refused: {e}")
            if missing:
                failures.append(f"{tag} {name} message lacks {missing}")

    # The same functions with agreeing sizes, 0 and 1 included.
    for rows in (0, 1, 5):
        a, b = rand(rows, 8), rand(rows, 8)
        (y,) = module.add(a, b)
        testing.check(f"{tag} add rows={rows}", y, np.exp(a.astype(np.float64) + b), "f32", failures)
        x, w = rand(rows, 16), rand(16)
        (y,) = module.norm(x, w)
        testing.check(f"{tag} norm rows={rows}", y, rms_norm(x, w), "f32", failures)
        a, b = rand(rows, 32), rand(32, 16)
        (y,) = module.mm(a, b)
        testing.check(f"{tag} mm rows={rows}", y, a.astype(np.float64) @ b, "f32", failures)
    for width in (0, 1):
        x, w = rand(3, width), rand(width)
        (y,) = module.norm(x, w)
        testing.check(f"{tag} norm width={width}", y, rms_norm(x, w), "f32", failures)
        a, b = rand(2, width), rand(width, 16)
        (y,) = module.mm(a, b)
        testing.check(f"{tag} mm K={width}", y, a.astype(np.float64) @ b, "f32", failures)
    a, b, c = rand(4, 8), rand(4, 8), rand(1, 8)
    (y,) = module.against_static(a, b, c)
    testing.check(f"{tag} against_static", y, (a.astype(np.float64) + b) * c, "f32", failures)
    # Independent sizes stay independent.
    a, b = rand(3, 5), rand(7, 0)
    ya, yb = module.row_sums(a, b)
    if ya.shape != (3,) or yb.shape != (7,):
        failures.append(f"{tag} row_sums shapes {ya.shape} {yb.shape}")
    else:
        testing.check(f"{tag} row_sums 0", ya, a.astype(np.float64).sum(1), "f32", failures)
        testing.check(f"{tag} row_sums 1", yb, b.astype(np.float64).sum(1), "f32", failures)

print(f"{len(failures)} failures: {failures}")
sys.exit(1 if failures else 0)
