# Dynamic output sizes come from the input dimension the compiler traced
# each to (fusion-compile records them beside the library): two independent
# dynamic inputs of different lengths give outputs of their own lengths,
# and a transpose's dynamic size moves to its new position. Fused and
# unfused, with poisoned outputs, against numpy.
#
# RUN: %fusion_python %s %fusion_obj_root %t

import os
import sys

import numpy as np

from fusion import cpu, testing

build_dir, work_dir = sys.argv[1:3]
os.makedirs(work_dir, exist_ok=True)
source = os.path.join(work_dir, "sizes.mlir")
with open(source, "w") as f:
    f.write("""
func.func @two(%a: tensor<?x64xf32>, %b: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  %0 = fusion.exp %a : tensor<?x64xf32>
  %1 = fusion.exp %b : tensor<?x64xf32>
  return %0, %1 : tensor<?x64xf32>, tensor<?x64xf32>
}
func.func @second(%a: tensor<?x8xf32>, %b: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = fusion.neg %b : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
func.func @t(%a: tensor<?x4xf32>) -> tensor<4x?xf32> {
  %0 = fusion.transpose %a permutation = [1, 0] : tensor<?x4xf32> -> tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}
""")
rng = testing.fresh_rng()
failures = []
for fuse in (True, False):
    tag = "fused" if fuse else "unfused"
    os.makedirs(os.path.join(work_dir, tag), exist_ok=True)
    module = cpu.compile(source, build_dir, fuse=fuse, debug=True,
                         work_dir=os.path.join(work_dir, tag))
    a = rng.standard_normal((3, 64)).astype(np.float32)
    b = rng.standard_normal((7, 64)).astype(np.float32)
    ya, yb = module.two(a, b)
    print(f"{tag}: two -> {ya.shape} {yb.shape}")
    if ya.shape != (3, 64) or yb.shape != (7, 64):
        failures.append(f"{tag} two shapes")
    else:
        testing.check(f"{tag} two 0", ya, np.exp(a.astype(np.float64)), "f32", failures)
        testing.check(f"{tag} two 1", yb, np.exp(b.astype(np.float64)), "f32", failures)
    a = rng.standard_normal((2, 8)).astype(np.float32)
    b = rng.standard_normal((5, 8)).astype(np.float32)
    (y,) = module.second(a, b)
    if y.shape != (5, 8):
        failures.append(f"{tag} second shape {y.shape}")
    else:
        testing.check(f"{tag} second", y, -b.astype(np.float64), "f32", failures)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    (y,) = module.t(x)
    if y.shape != (4, 5):
        failures.append(f"{tag} transpose shape {y.shape}")
    else:
        testing.check(f"{tag} transpose", y, x.T.astype(np.float64), "f32", failures)

print(f"{len(failures)} failures: {failures}")
sys.exit(1 if failures else 0)
