# fusion.reshape between kernels: a view of the producer's buffer (a
# kernel result, a function argument, a constant), read by the next kernel
# under the new shape, and returned itself (copied into the output). Heads
# split out of a product and transposed, a softmax over an axis the reshape
# made, rank 0 on either side, two reshapes in a row, f32 and f16, and
# dynamic sizes (kept whole and in order, at run-time sizes 0 and up).
# Fused, elementwise kernels on both sides of a reshape are one kernel that
# holds it: heads split between two elementwise steps, and GPT-J's
# interleaved rotation (strided slices, unit axes added, a concat and a
# flattening reshape), and a reshape returned as well (written by the
# kernel in its shape). Elementwise math before a reshape read by a
# reduction moves after it (fusion-hoist-reshapes), so that it fuses into the
# reduction's kernel: a residual add of [B, S, D] viewed as rows of an
# RMSNorm, heads added and merged into norm rows (dynamic sizes), a biased
# gelu split into heads before their softmax (the bias viewed as the heads'
# dimensions), and a biased chain before a column sum. Fused
# and unfused, outputs poisoned, against numpy in float64.
#
# RUN: %fusion_python %s %fusion_obj_root %t

import math
import os
import sys

import numpy as np

from fusion import cpu, testing

build_dir, work_dir = sys.argv[1:3]
os.makedirs(work_dir, exist_ok=True)
source = os.path.join(work_dir, "reshapes.mlir")
with open(source, "w") as f:
    f.write("""
func.func @heads(%x: tensor<2x4x16xf32>, %w: tensor<16x16xf32>) -> (tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>) {
  %p = fusion.matmul %x, %w : (tensor<2x4x16xf32>, tensor<16x16xf32>) -> tensor<2x4x16xf32>
  %e = fusion.tanh %p : tensor<2x4x16xf32>
  %h = fusion.reshape %e : tensor<2x4x16xf32> -> tensor<2x4x4x4xf32>
  %t = fusion.transpose %h permutation = [0, 2, 1, 3] : tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
  %n = fusion.neg %t : tensor<2x4x4x4xf32>
  return %n, %h : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>
}
func.func @softmax_of_groups(%x: tensor<6x12xf16>) -> (tensor<6x3x4xf16>, tensor<6x3x4xf16>) {
  %g = fusion.reshape %x : tensor<6x12xf16> -> tensor<6x3x4xf16>
  %s = fusion.softmax %g axis = 2 : tensor<6x3x4xf16>
  return %s, %g : tensor<6x3x4xf16>, tensor<6x3x4xf16>
}
func.func @ranks(%x: tensor<1x1xf32>, %y: tensor<f32>) -> (tensor<f32>, tensor<1x1x1xf32>) {
  %a = fusion.reshape %x : tensor<1x1xf32> -> tensor<f32>
  %b = fusion.exp %a : tensor<f32>
  %c = fusion.reshape %y : tensor<f32> -> tensor<1x1x1xf32>
  %d = fusion.add %c, %c : tensor<1x1x1xf32>
  return %b, %d : tensor<f32>, tensor<1x1x1xf32>
}
func.func @twice(%x: tensor<8x6xf32>) -> tensor<4x12xf32> {
  %a = fusion.reshape %x : tensor<8x6xf32> -> tensor<48xf32>
  %b = fusion.sigmoid %a : tensor<48xf32>
  %c = fusion.reshape %b : tensor<48xf32> -> tensor<2x24xf32>
  %d = fusion.reshape %c : tensor<2x24xf32> -> tensor<4x12xf32>
  %k = fusion.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %m = fusion.reshape %k : tensor<4xf32> -> tensor<4x1xf32>
  %e = fusion.mul %d, %m : (tensor<4x12xf32>, tensor<4x1xf32>) -> tensor<4x12xf32>
  return %e : tensor<4x12xf32>
}
func.func @dynamic_heads(%x: tensor<?x?x64xf32>) -> (tensor<?x4x?x16xf32>, tensor<?x?x64xf32>) {
  %e = fusion.exp %x : tensor<?x?x64xf32>
  %h = fusion.reshape %e : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  %t = fusion.transpose %h permutation = [0, 2, 1, 3] : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
  %m = fusion.reduce_max %h axes = [3] keep_dims : tensor<?x?x4x16xf32> -> tensor<?x?x4x1xf32>
  %s = fusion.sub %h, %m : (tensor<?x?x4x16xf32>, tensor<?x?x4x1xf32>) -> tensor<?x?x4x16xf32>
  %back = fusion.reshape %s : tensor<?x?x4x16xf32> -> tensor<?x?x64xf32>
  return %t, %back : tensor<?x4x?x16xf32>, tensor<?x?x64xf32>
}
func.func @dynamic_middle(%x: tensor<2x?x6xf32>) -> tensor<12x?xf32> {
  %r = fusion.reshape %x : tensor<2x?x6xf32> -> tensor<2x?x3x2xf32>
  %s = fusion.sigmoid %r : tensor<2x?x3x2xf32>
  %t = fusion.reshape %s : tensor<2x?x3x2xf32> -> tensor<2x?x6xf32>
  %u = fusion.transpose %t permutation = [0, 2, 1] : tensor<2x?x6xf32> -> tensor<2x6x?xf32>
  %v = fusion.reshape %u : tensor<2x6x?xf32> -> tensor<12x?xf32>
  return %v : tensor<12x?xf32>
}
func.func @split_heads(%x: tensor<3x32xf32>, %w: tensor<4x8xf32>) -> tensor<3x4x8xf32> {
  %g = fusion.tanh %x : tensor<3x32xf32>
  %h = fusion.reshape %g : tensor<3x32xf32> -> tensor<3x4x8xf32>
  %y = fusion.mul %h, %w : (tensor<3x4x8xf32>, tensor<4x8xf32>) -> tensor<3x4x8xf32>
  return %y : tensor<3x4x8xf32>
}
func.func @returned_view(%x: tensor<6x8xf32>) -> (tensor<6x2x4xf32>, tensor<6x2x4xf32>) {
  %e = fusion.exp %x : tensor<6x8xf32>
  %r = fusion.reshape %e : tensor<6x8xf32> -> tensor<6x2x4xf32>
  %n = fusion.neg %r : tensor<6x2x4xf32>
  return %n, %r : tensor<6x2x4xf32>, tensor<6x2x4xf32>
}
func.func @interleaved_rotation(%x: tensor<2x?x8xf32>, %cos: tensor<?x8xf32>, %sin: tensor<?x8xf32>) -> tensor<2x?x8xf32> {
  %odd = fusion.slice %x offsets = [0, 0, 1] sizes = [2, -1, 4] strides = [1, 1, 2] : tensor<2x?x8xf32> -> tensor<2x?x4xf32>
  %neg = fusion.neg %odd : tensor<2x?x4xf32>
  %even = fusion.slice %x offsets = [0, 0, 0] sizes = [2, -1, 4] strides = [1, 1, 2] : tensor<2x?x8xf32> -> tensor<2x?x4xf32>
  %a = fusion.reshape %neg : tensor<2x?x4xf32> -> tensor<2x?x4x1xf32>
  %b = fusion.reshape %even : tensor<2x?x4xf32> -> tensor<2x?x4x1xf32>
  %pairs = fusion.concat %a, %b axis = 3 : (tensor<2x?x4x1xf32>, tensor<2x?x4x1xf32>) -> tensor<2x?x4x2xf32>
  %rotated = fusion.reshape %pairs : tensor<2x?x4x2xf32> -> tensor<2x?x8xf32>
  %c = fusion.mul %x, %cos : (tensor<2x?x8xf32>, tensor<?x8xf32>) -> tensor<2x?x8xf32>
  %s = fusion.mul %rotated, %sin : (tensor<2x?x8xf32>, tensor<?x8xf32>) -> tensor<2x?x8xf32>
  %y = fusion.add %c, %s : tensor<2x?x8xf32>
  return %y : tensor<2x?x8xf32>
}
func.func @residual_rows(%x: tensor<2x5x64xbf16>, %r: tensor<2x5x64xbf16>, %g: tensor<64xbf16>) -> tensor<10x64xbf16> {
  %s = fusion.add %x, %r : tensor<2x5x64xbf16>
  %v = fusion.reshape %s : tensor<2x5x64xbf16> -> tensor<10x64xbf16>
  %n = fusion.rms_norm %v, %g epsilon = 1.0e-05 : tensor<10x64xbf16>, tensor<64xbf16>
  return %n : tensor<10x64xbf16>
}
func.func @merged_heads_rows(%x: tensor<?x4x16xbf16>, %r: tensor<?x4x16xbf16>, %g: tensor<64xbf16>) -> tensor<?x64xbf16> {
  %s = fusion.add %x, %r : tensor<?x4x16xbf16>
  %v = fusion.reshape %s : tensor<?x4x16xbf16> -> tensor<?x64xbf16>
  %n = fusion.rms_norm %v, %g epsilon = 1.0e-05 : tensor<?x64xbf16>, tensor<64xbf16>
  return %n : tensor<?x64xbf16>
}
func.func @bias_heads(%x: tensor<6x64xf32>, %b: tensor<64xf32>) -> tensor<6x4x16xf32> {
  %a = fusion.add %x, %b : (tensor<6x64xf32>, tensor<64xf32>) -> tensor<6x64xf32>
  %g = fusion.gelu %a : tensor<6x64xf32>
  %h = fusion.reshape %g : tensor<6x64xf32> -> tensor<6x4x16xf32>
  %s = fusion.softmax %h axis = 2 : tensor<6x4x16xf32>
  return %s : tensor<6x4x16xf32>
}
func.func @biased_columns(%x: tensor<4x6x32xf32>, %b: tensor<32xf32>) -> tensor<32xf32> {
  %two = fusion.constant dense<2.0> : tensor<f32>
  %e = fusion.tanh %x : tensor<4x6x32xf32>
  %a = fusion.add %e, %b : (tensor<4x6x32xf32>, tensor<32xf32>) -> tensor<4x6x32xf32>
  %m = fusion.mul %a, %two : (tensor<4x6x32xf32>, tensor<f32>) -> tensor<4x6x32xf32>
  %v = fusion.reshape %m : tensor<4x6x32xf32> -> tensor<24x32xf32>
  %s = fusion.reduce_sum %v axes = [0] : tensor<24x32xf32> -> tensor<32xf32>
  return %s : tensor<32xf32>
}
""")
failures = []
rng = testing.fresh_rng()


def softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


for fuse in (True, False):
    tag = "fused" if fuse else "unfused"
    os.makedirs(os.path.join(work_dir, tag), exist_ok=True)
    module = cpu.compile(source, build_dir, fuse=fuse, debug=True,
                         work_dir=os.path.join(work_dir, tag))

    x = rng.standard_normal((2, 4, 16)).astype(np.float32)
    w = (rng.standard_normal((16, 16)) / 4).astype(np.float32)
    n, h = module.heads(x, w)
    heads = np.tanh(x.astype(np.float64) @ w).reshape(2, 4, 4, 4)
    testing.check(f"{tag} heads: the reshaped product", h, heads, "f32", failures)
    testing.check(f"{tag} heads: transposed and negated", n,
                  -heads.transpose(0, 2, 1, 3), "f32", failures)

    x = rng.standard_normal((6, 12)).astype(np.float16)
    s, g = module.softmax_of_groups(x)
    groups = x.astype(np.float64).reshape(6, 3, 4)
    testing.check(f"{tag} softmax over a reshaped axis", s, softmax(groups, 2), "f16", failures)
    testing.check(f"{tag} an input reshaped and returned", g, groups, "f16", failures)

    x = rng.standard_normal((1, 1)).astype(np.float32)
    y = rng.standard_normal(()).astype(np.float32)
    b, d = module.ranks(x, y)
    testing.check(f"{tag} rank 2 -> 0", b, np.exp(x.astype(np.float64)).reshape(()), "f32",
                  failures)
    testing.check(f"{tag} rank 0 -> 3", d, 2 * y.astype(np.float64).reshape(1, 1, 1), "f32",
                  failures)

    x = rng.standard_normal((8, 6)).astype(np.float32)
    (e,) = module.twice(x)
    expected = (1 / (1 + np.exp(-x.astype(np.float64)))).reshape(4, 12) * \
        np.array([1.0, 2.0, 3.0, 4.0]).reshape(4, 1)
    testing.check(f"{tag} two reshapes and a reshaped constant", e, expected, "f32", failures)

    for shape in ((3, 5, 64), (1, 1, 64), (2, 0, 64)):
        x = rng.standard_normal(shape).astype(np.float32)
        t, back = module.dynamic_heads(x)
        h = np.exp(x.astype(np.float64)).reshape(shape[0], shape[1], 4, 16)
        testing.check(f"{tag} dynamic heads {shape}: transposed", t, h.transpose(0, 2, 1, 3),
                      "f32", failures)
        testing.check(f"{tag} dynamic heads {shape}: back", back,
                      (h - h.max(3, keepdims=True)).reshape(shape), "f32", failures)
    for rows in (7, 1):
        x = rng.standard_normal((2, rows, 6)).astype(np.float32)
        (v,) = module.dynamic_middle(x)
        s = 1 / (1 + np.exp(-x.astype(np.float64)))
        testing.check(f"{tag} dynamic middle size {rows}", v,
                      s.transpose(0, 2, 1).reshape(12, rows), "f32", failures)

    x = rng.standard_normal((3, 32)).astype(np.float32)
    w = rng.standard_normal((4, 8)).astype(np.float32)
    (y,) = module.split_heads(x, w)
    testing.check(f"{tag} heads split between two elementwise steps", y,
                  np.tanh(x.astype(np.float64)).reshape(3, 4, 8) * w, "f32", failures)

    x = rng.standard_normal((6, 8)).astype(np.float32)
    n, r = module.returned_view(x)
    e = np.exp(x.astype(np.float64)).reshape(6, 2, 4)
    testing.check(f"{tag} a reshape in the kernel, returned: the view", r, e, "f32", failures)
    testing.check(f"{tag} a reshape in the kernel, returned: negated", n, -e, "f32", failures)

    for rows in (5, 1, 0):
        x = rng.standard_normal((2, rows, 8)).astype(np.float32)
        cos = rng.standard_normal((rows, 8)).astype(np.float32)
        sin = rng.standard_normal((rows, 8)).astype(np.float32)
        (y,) = module.interleaved_rotation(x, cos, sin)
        x64 = x.astype(np.float64)
        rotated = np.stack((-x64[..., 1::2], x64[..., ::2]), axis=-1).reshape(x.shape)
        testing.check(f"{tag} interleaved rotation, {rows} rows", y, x64 * cos + rotated * sin,
                      "f32", failures)

    def rms_norm(h, g):
        return h / np.sqrt((h * h).mean(1, keepdims=True) + 1e-5) * g.astype(np.float64)

    x, r = (rng.standard_normal((2, 5, 64)).astype(cpu.BFLOAT16) for _ in range(2))
    g = rng.standard_normal(64).astype(cpu.BFLOAT16)
    (n,) = module.residual_rows(x, r, g)
    h = (x.astype(np.float64) + r.astype(np.float64)).reshape(10, 64)
    testing.check(f"{tag} a residual add viewed as norm rows", n, rms_norm(h, g), "bf16",
                  failures)
    for rows in (7, 1, 0):
        x, r = (rng.standard_normal((rows, 4, 16)).astype(cpu.BFLOAT16) for _ in range(2))
        (n,) = module.merged_heads_rows(x, r, g)
        h = (x.astype(np.float64) + r.astype(np.float64)).reshape(rows, 64)
        testing.check(f"{tag} heads added and merged into norm rows, {rows} rows", n,
                      rms_norm(h, g), "bf16", failures)

    x = rng.standard_normal((6, 64)).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    (s,) = module.bias_heads(x, b)
    a = x.astype(np.float64) + b
    g = 0.5 * a * (1 + np.vectorize(math.erf)(a / np.sqrt(2)))
    testing.check(f"{tag} a biased gelu split into heads' softmax", s,
                  softmax(g.reshape(6, 4, 16), 2), "f32", failures)

    x = rng.standard_normal((4, 6, 32)).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)
    (s,) = module.biased_columns(x, b)
    expected = (2 * (np.tanh(x.astype(np.float64)) + b)).reshape(24, 32).sum(0)
    testing.check(f"{tag} a biased chain viewed as columns", s, expected, "f32", failures)

print(f"{len(failures)} failures: {failures}")
sys.exit(1 if failures else 0)
