# fusion.concat: a rotary embedding's rotate_half fused with the math
# around it (dynamic rows, 0 of them included), three f16 operands along
# the innermost axis of a 3-D tensor with a dynamic middle size, rows
# joined along axis 0 before a softmax over them (a row kernel, which the
# concatenation's operands cannot join), and an input joined to a value
# computed from it and returned, two concatenations of one shape in a
# kernel. Fused and unfused, outputs poisoned,
# against numpy in float64; the fused kernels' counted traffic against the
# report's.
#
# RUN: %fusion_python %s %fusion_obj_root %t

import os
import sys

import numpy as np

from fusion import cpu, testing

build_dir, work_dir = sys.argv[1:3]
os.makedirs(work_dir, exist_ok=True)
source = os.path.join(work_dir, "concat.mlir")
with open(source, "w") as f:
    f.write("""
func.func @rotary(%x: tensor<?x64xf32>, %cos: tensor<?x64xf32>, %sin: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %lo = fusion.slice %x offsets = [0, 0] sizes = [-1, 32] strides = [1, 1] : tensor<?x64xf32> -> tensor<?x32xf32>
  %hi = fusion.slice %x offsets = [0, 32] sizes = [-1, 32] strides = [1, 1] : tensor<?x64xf32> -> tensor<?x32xf32>
  %n = fusion.neg %hi : tensor<?x32xf32>
  %r = fusion.concat %n, %lo axis = 1 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x64xf32>
  %a = fusion.mul %x, %cos : tensor<?x64xf32>
  %b = fusion.mul %r, %sin : tensor<?x64xf32>
  %y = fusion.add %a, %b : tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
func.func @three(%a: tensor<2x?x3xf16>, %b: tensor<2x?x5xf16>, %c: tensor<2x?x1xf16>) -> tensor<2x?x9xf16> {
  %e = fusion.exp %b : tensor<2x?x5xf16>
  %j = fusion.concat %a, %e, %c axis = 2 : (tensor<2x?x3xf16>, tensor<2x?x5xf16>, tensor<2x?x1xf16>) -> tensor<2x?x9xf16>
  %t = fusion.tanh %j : tensor<2x?x9xf16>
  return %t : tensor<2x?x9xf16>
}
func.func @rows(%a: tensor<3x8xf32>, %b: tensor<5x8xf32>) -> tensor<8x8xf32> {
  %s = fusion.mul %b, %b : tensor<5x8xf32>
  %j = fusion.concat %a, %s axis = 0 : (tensor<3x8xf32>, tensor<5x8xf32>) -> tensor<8x8xf32>
  %p = fusion.softmax %j axis = 1 : tensor<8x8xf32>
  return %p : tensor<8x8xf32>
}
func.func @two(%a: tensor<2x8x1xf32>, %b: tensor<2x8x1xf32>, %c: tensor<2x8x1xf32>) -> (tensor<2x8x2xf32>, tensor<2x8x2xf32>) {
  %n = fusion.neg %b : tensor<2x8x1xf32>
  %j = fusion.concat %a, %n axis = 2 : (tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> tensor<2x8x2xf32>
  %k = fusion.concat %c, %a axis = 2 : (tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> tensor<2x8x2xf32>
  return %j, %k : tensor<2x8x2xf32>, tensor<2x8x2xf32>
}
func.func @with_input(%x: tensor<4x6xf32>) -> (tensor<8x6xf32>, tensor<4x6xf32>) {
  %s = fusion.sigmoid %x : tensor<4x6xf32>
  %j = fusion.concat %x, %s axis = 0 : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  return %j, %s : tensor<8x6xf32>, tensor<4x6xf32>
}
""")
failures = []
rng = testing.fresh_rng()


def softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


for fuse in (True, False):
    tag = "fused" if fuse else "unfused"
    os.makedirs(os.path.join(work_dir, tag), exist_ok=True)
    module = cpu.compile(source, build_dir, fuse=fuse, debug=True,
                         work_dir=os.path.join(work_dir, tag))

    for rows in (5, 1, 0):
        x, cos, sin = (rng.standard_normal((rows, 64)).astype(np.float32) for _ in range(3))
        (y,) = module.rotary(x, cos, sin)
        x64 = x.astype(np.float64)
        rotated = np.concatenate([-x64[:, 32:], x64[:, :32]], axis=1)
        testing.check(f"{tag} rotary, {rows} rows", y, x64 * cos + rotated * sin, "f32", failures)

    for middle in (4, 1):
        a = rng.standard_normal((2, middle, 3)).astype(np.float16)
        b = rng.standard_normal((2, middle, 5)).astype(np.float16)
        c = rng.standard_normal((2, middle, 1)).astype(np.float16)
        (t,) = module.three(a, b, c)
        # exp's result is rounded to f16 before the concatenation reads it.
        e = np.exp(b.astype(np.float64)).astype(np.float16).astype(np.float64)
        expected = np.tanh(np.concatenate([a.astype(np.float64), e, c.astype(np.float64)], axis=2))
        testing.check(f"{tag} three f16 operands, middle {middle}", t, expected, "f16", failures)

    a = rng.standard_normal((3, 8)).astype(np.float32)
    b = rng.standard_normal((5, 8)).astype(np.float32)
    (p,) = module.rows(a, b)
    b64 = b.astype(np.float64)
    testing.check(f"{tag} rows joined, then their softmax", p,
                  softmax(np.concatenate([a.astype(np.float64), b64 * b64]), 1), "f32", failures)

    a, b, c = (rng.standard_normal((2, 8, 1)).astype(np.float32) for _ in range(3))
    j, k = module.two(a, b, c)
    a64, b64, c64 = (t.astype(np.float64) for t in (a, b, c))
    testing.check(f"{tag} two concatenations of one shape in a kernel: first", j,
                  np.concatenate([a64, -b64], axis=2), "f32", failures)
    testing.check(f"{tag} ... second", k, np.concatenate([c64, a64], axis=2), "f32", failures)

    x = rng.standard_normal((4, 6)).astype(np.float32)
    j, s = module.with_input(x)
    x64 = x.astype(np.float64)
    testing.check(f"{tag} an input joined to its sigmoid", j,
                  np.concatenate([x64, sigmoid(x64)]), "f32", failures)
    testing.check(f"{tag} ... and the sigmoid returned", s, sigmoid(x64), "f32", failures)

# The bytes the fused kernels move, counted as they run, are the report's.
traffic_dir = os.path.join(work_dir, "traffic")
os.makedirs(traffic_dir, exist_ok=True)
counting = cpu.compile(source, build_dir, count_traffic=True, work_dir=traffic_dir)
report = cpu.report(source, build_dir)["functions"]
kernel_ids = {}
for function in report:
    for kernel in function["kernel_list"]:
        kernel_ids[kernel["name"]] = len(kernel_ids)
for name, inputs in (("rows", (rng.standard_normal((3, 8)).astype(np.float32),
                               rng.standard_normal((5, 8)).astype(np.float32))),
                     ("with_input", (rng.standard_normal((4, 6)).astype(np.float32),))):
    function = next(f for f in report if f["name"] == name)
    counting.reset_traffic()
    counting.functions[name](*inputs)
    counted = sum(sum(counting.traffic(kernel_ids[k["name"]])) for k in function["kernel_list"])
    ok = counted == function["bytes"]
    print(f"{'ok  ' if ok else 'FAIL'} {name}: counted {counted} bytes, predicted "
          f"{function['bytes']}")
    if not ok:
        failures.append(f"{name} traffic")

print(f"{len(failures)} failures: {failures}")
sys.exit(1 if failures else 0)
