# fusion-compile's in_place pairs (results that may be written into an
# input's buffer): reported exactly where one elementwise kernel is the
# input's only reader and reads it at the result's index, and correct when
# used: each pair run on the CPU with the result written into the input
# (the other results poisoned), against numpy.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %fusion_python %s %fusion_obj_root %t

import os
import sys

import numpy as np

from fusion import cpu, testing

build_dir, work = sys.argv[1:3]
source = os.path.join(work, "in_place.mlir")
with open(source, "w") as f:
    f.write("""
func.func @step(%p: tensor<?xf32>, %g: tensor<?xf32>, %m: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %c = fusion.constant dense<0.9> : tensor<f32>
  %m1 = fusion.mul %m, %c : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
  %m2 = fusion.add %m1, %g : tensor<?xf32>
  %p1 = fusion.sub %p, %m2 : tensor<?xf32>
  return %p1, %m2 : tensor<?xf32>, tensor<?xf32>
}
func.func @norm(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = fusion.rms_norm %x, %w epsilon = 1.0e-6 : tensor<4x8xf32>, tensor<8xf32>
  return %0 : tensor<4x8xf32>
}
func.func @broadcast(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) {
  %0 = fusion.add %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = fusion.exp %b : tensor<8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<8xf32>
}
func.func @transposed(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %t = fusion.transpose %x permutation = [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %0 = fusion.add %x, %t : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
func.func @two_readers(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %0 = fusion.exp %x : tensor<4x8xf32>
  %1 = fusion.reduce_sum %x axes = [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4xf32>
}
func.func @returned(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %0 = fusion.exp %x : tensor<16xf32>
  return %0, %x : tensor<16xf32>, tensor<16xf32>
}
func.func @other_size(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %0 = fusion.exp %y : tensor<?xf32>
  %1 = fusion.reduce_sum %x axes = [0] keep_dims : tensor<?xf32> -> tensor<1xf32>
  return %0 : tensor<?xf32>
}
""")
module = cpu.compile(source, build_dir, work_dir=work, debug=True)
expected_pairs = {
    "step": {(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)},
    "norm": set(),  # a row kernel: reductions
    "broadcast": {(0, 0)},  # b is broadcast into result 0; exp(b) is in that kernel too
    "transposed": set(),  # x is read at the transposed index as well
    "two_readers": set(),  # the reduction kernel reads x too
    "returned": set(),  # x itself is a result
    "other_size": {(1, 0)},  # x's reader is a reduction; y -> exp(y)
}
failures = 0
for name, pairs in expected_pairs.items():
    got = module.functions[name].in_place
    ok = got == pairs
    failures += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {name}: in_place {sorted(got)} (expected {sorted(pairs)})")

rng = testing.fresh_rng()


def reference(name, args):
    if name == "step":
        p, g, m = args
        m2 = m * np.float32(0.9) + g
        return [p - m2, m2]
    if name == "broadcast":
        x, b = args
        return [x + b, np.exp(b)]
    if name == "other_size":
        return [np.exp(args[1])]
    raise KeyError(name)


shapes = {"step": [(1000,)] * 3, "broadcast": [(4, 8), (8,)], "other_size": [(37,), (1000,)]}
for name, arg_shapes in shapes.items():
    function = module.functions[name]
    for i, k in sorted(function.in_place):
        args = [rng.standard_normal(s).astype(np.float32) for s in arg_shapes]
        expected = reference(name, [a.copy() for a in args])
        outputs = [np.full(e.shape, np.nan, np.float32) for e in expected]
        outputs[k] = args[i]  # the result goes into the input's buffer
        results = function(*args, outputs=outputs)
        ok = results[k] is args[i] and all(np.allclose(r, e, rtol=1e-6, atol=1e-6)
                                           for r, e in zip(results, expected))
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}: result {k} written into input {i}")

print(f"{failures} failures")
sys.exit(1 if failures else 0)
