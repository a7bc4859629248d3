# Attention through the CPU target: one attention kernel per function
# (fusion-report), computed op by op, against numpy in float64 on fresh
# random inputs, outputs poisoned first; fused and unfused agree bit for bit
# (the CPU rounds at every op whatever the grouping), and the traffic the
# kernel moved is the report's prediction: each input read once, the output
# written once, the scores never. Variants: scaled dot-product with K
# transposed in the program, at dynamic sequence lengths (1, 7, 33, 64);
# grouped-query heads with an additive causal mask and a tanh soft-cap;
# bf16 with a boolean padding mask over ragged key lengths; the log-sum-exp
# of the scores' rows as a second output (dynamic and static lengths); a
# causal mask computed from positions (fusion.iota, no mask in memory),
# queries the last rows of a longer key sequence, with its log-sum-exp, and
# at dynamic lengths (the positions sized by Q and K, the softmax in f32 and
# the probabilities converted for the product, as fx spells it); a
# bf16 bias converted and scaled in the program (that math joins the
# kernel: the bias is read once as bf16); Q, K and V as heads sliced out of
# one projection and moved before the sequence (GPT-2's split, view and
# transpose), which the kernel reads in place, its output stored with the
# heads moved back after the sequence and merged (as before an output
# projection): the projection read once, no copies.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %fusion_python %s %fusion_obj_root %t

import os
import sys

import numpy as np

from fusion import cpu, testing

build_dir, work_dir = sys.argv[1:3]
rng = testing.fresh_rng()

source = os.path.join(work_dir, "attention.mlir")
with open(source, "w") as f:
    f.write("""
func.func @sdpa(%q: tensor<2x3x?x32xf32>, %k: tensor<2x3x?x32xf32>, %v: tensor<2x3x?x16xf32>) -> tensor<2x3x?x16xf32> {
  %kt = fusion.transpose %k permutation = [0, 1, 3, 2] : tensor<2x3x?x32xf32> -> tensor<2x3x32x?xf32>
  %s = fusion.matmul %q, %kt : (tensor<2x3x?x32xf32>, tensor<2x3x32x?xf32>) -> tensor<2x3x?x?xf32>
  %c = fusion.constant dense<0.1767767> : tensor<f32>
  %t = fusion.mul %s, %c : (tensor<2x3x?x?xf32>, tensor<f32>) -> tensor<2x3x?x?xf32>
  %p = fusion.softmax %t axis = 3 : tensor<2x3x?x?xf32>
  %o = fusion.matmul %p, %v : (tensor<2x3x?x?xf32>, tensor<2x3x?x16xf32>) -> tensor<2x3x?x16xf32>
  return %o : tensor<2x3x?x16xf32>
}
func.func @grouped_softcap(%q: tensor<2x2x4x24x16xf32>, %kt: tensor<2x2x1x16x24xf32>, %v: tensor<2x2x1x24x16xf32>, %mask: tensor<24x24xf32>) -> tensor<2x2x4x24x16xf32> {
  %s = fusion.matmul %q, %kt : (tensor<2x2x4x24x16xf32>, tensor<2x2x1x16x24xf32>) -> tensor<2x2x4x24x24xf32>
  %cap = fusion.constant dense<5.0> : tensor<f32>
  %d = fusion.div %s, %cap : (tensor<2x2x4x24x24xf32>, tensor<f32>) -> tensor<2x2x4x24x24xf32>
  %th = fusion.tanh %d : tensor<2x2x4x24x24xf32>
  %c = fusion.mul %th, %cap : (tensor<2x2x4x24x24xf32>, tensor<f32>) -> tensor<2x2x4x24x24xf32>
  %m = fusion.add %c, %mask : (tensor<2x2x4x24x24xf32>, tensor<24x24xf32>) -> tensor<2x2x4x24x24xf32>
  %p = fusion.softmax %m axis = 4 : tensor<2x2x4x24x24xf32>
  %o = fusion.matmul %p, %v : (tensor<2x2x4x24x24xf32>, tensor<2x2x1x24x16xf32>) -> tensor<2x2x4x24x16xf32>
  return %o : tensor<2x2x4x24x16xf32>
}
func.func @padded_bf16(%q: tensor<3x4x20x32xbf16>, %kt: tensor<3x4x32x40xbf16>, %v: tensor<3x4x40x32xbf16>, %keep: tensor<3x1x1x40xi1>) -> tensor<3x4x20x32xbf16> {
  %s = fusion.matmul %q, %kt : (tensor<3x4x20x32xbf16>, tensor<3x4x32x40xbf16>) -> tensor<3x4x20x40xbf16>
  %ninf = fusion.constant dense<0xFF80> : tensor<bf16>
  %m = fusion.select %keep, %s, %ninf : (tensor<3x1x1x40xi1>, tensor<3x4x20x40xbf16>, tensor<bf16>) -> tensor<3x4x20x40xbf16>
  %p = fusion.softmax %m axis = 3 : tensor<3x4x20x40xbf16>
  %o = fusion.matmul %p, %v : (tensor<3x4x20x40xbf16>, tensor<3x4x40x32xbf16>) -> tensor<3x4x20x32xbf16>
  return %o : tensor<3x4x20x32xbf16>
}
func.func @with_lse(%q: tensor<2x3x?x32xf32>, %k: tensor<2x3x?x32xf32>, %v: tensor<2x3x?x16xf32>) -> (tensor<2x3x?x16xf32>, tensor<2x3x?xf32>) {
  %kt = fusion.transpose %k permutation = [0, 1, 3, 2] : tensor<2x3x?x32xf32> -> tensor<2x3x32x?xf32>
  %s = fusion.matmul %q, %kt : (tensor<2x3x?x32xf32>, tensor<2x3x32x?xf32>) -> tensor<2x3x?x?xf32>
  %c = fusion.constant dense<0.1767767> : tensor<f32>
  %t = fusion.mul %s, %c : (tensor<2x3x?x?xf32>, tensor<f32>) -> tensor<2x3x?x?xf32>
  %l = fusion.logsumexp %t axis = 3 : tensor<2x3x?x?xf32> -> tensor<2x3x?xf32>
  %p = fusion.softmax %t axis = 3 : tensor<2x3x?x?xf32>
  %o = fusion.matmul %p, %v : (tensor<2x3x?x?xf32>, tensor<2x3x?x16xf32>) -> tensor<2x3x?x16xf32>
  return %o, %l : tensor<2x3x?x16xf32>, tensor<2x3x?xf32>
}
func.func @with_lse_static(%q: tensor<2x3x24x32xf32>, %k: tensor<2x3x24x32xf32>, %v: tensor<2x3x24x16xf32>) -> (tensor<2x3x24x16xf32>, tensor<2x3x24xf32>) {
  %kt = fusion.transpose %k permutation = [0, 1, 3, 2] : tensor<2x3x24x32xf32> -> tensor<2x3x32x24xf32>
  %s = fusion.matmul %q, %kt : (tensor<2x3x24x32xf32>, tensor<2x3x32x24xf32>) -> tensor<2x3x24x24xf32>
  %c = fusion.constant dense<0.1767767> : tensor<f32>
  %t = fusion.mul %s, %c : (tensor<2x3x24x24xf32>, tensor<f32>) -> tensor<2x3x24x24xf32>
  %l = fusion.logsumexp %t axis = 3 : tensor<2x3x24x24xf32> -> tensor<2x3x24xf32>
  %p = fusion.softmax %t axis = 3 : tensor<2x3x24x24xf32>
  %o = fusion.matmul %p, %v : (tensor<2x3x24x24xf32>, tensor<2x3x24x16xf32>) -> tensor<2x3x24x16xf32>
  return %o, %l : tensor<2x3x24x16xf32>, tensor<2x3x24xf32>
}
func.func @causal_positions(%q: tensor<2x2x24x32xbf16>, %k: tensor<2x2x40x32xbf16>, %v: tensor<2x2x40x16xbf16>) -> (tensor<2x2x24x16xbf16>, tensor<2x2x24xbf16>) {
  %kt = fusion.transpose %k permutation = [0, 1, 3, 2] : tensor<2x2x40x32xbf16> -> tensor<2x2x32x40xbf16>
  %s = fusion.matmul %q, %kt : (tensor<2x2x24x32xbf16>, tensor<2x2x32x40xbf16>) -> tensor<2x2x24x40xbf16>
  %row = fusion.iota dimension = 0 : tensor<24x1xf32>
  %key = fusion.iota dimension = 1 : tensor<1x40xf32>
  %shift = fusion.constant dense<16.0> : tensor<f32>
  %last = fusion.add %row, %shift : (tensor<24x1xf32>, tensor<f32>) -> tensor<24x1xf32>
  %seen = fusion.cmp le, %key, %last : (tensor<1x40xf32>, tensor<24x1xf32>) -> tensor<24x40xi1>
  %ninf = fusion.constant dense<0xFF80> : tensor<bf16>
  %m = fusion.select %seen, %s, %ninf : (tensor<24x40xi1>, tensor<2x2x24x40xbf16>, tensor<bf16>) -> tensor<2x2x24x40xbf16>
  %l = fusion.logsumexp %m axis = 3 : tensor<2x2x24x40xbf16> -> tensor<2x2x24xbf16>
  %p = fusion.softmax %m axis = 3 : tensor<2x2x24x40xbf16>
  %o = fusion.matmul %p, %v : (tensor<2x2x24x40xbf16>, tensor<2x2x40x16xbf16>) -> tensor<2x2x24x16xbf16>
  return %o, %l : tensor<2x2x24x16xbf16>, tensor<2x2x24xbf16>
}
func.func @causal_dynamic(%q: tensor<2x2x?x32xbf16>, %k: tensor<2x2x?x32xbf16>, %v: tensor<2x2x?x16xbf16>) -> (tensor<2x2x?x16xbf16>, tensor<2x2x?xf32>) {
  %kt = fusion.transpose %k permutation = [0, 1, 3, 2] : tensor<2x2x?x32xbf16> -> tensor<2x2x32x?xbf16>
  %s = fusion.matmul %q, %kt : (tensor<2x2x?x32xbf16>, tensor<2x2x32x?xbf16>) -> tensor<2x2x?x?xbf16>
  %row = fusion.iota dimension = 0 size_of %q[2] : tensor<2x2x?x32xbf16> -> tensor<?x1xf32>
  %key = fusion.iota dimension = 1 size_of %k[2] : tensor<2x2x?x32xbf16> -> tensor<1x?xf32>
  %seen = fusion.cmp le, %key, %row : (tensor<1x?xf32>, tensor<?x1xf32>) -> tensor<?x?xi1>
  %sf = fusion.convert %s : tensor<2x2x?x?xbf16> to tensor<2x2x?x?xf32>
  %ninf = fusion.constant dense<0xFF800000> : tensor<f32>
  %m = fusion.select %seen, %sf, %ninf : (tensor<?x?xi1>, tensor<2x2x?x?xf32>, tensor<f32>) -> tensor<2x2x?x?xf32>
  %l = fusion.logsumexp %m axis = 3 : tensor<2x2x?x?xf32> -> tensor<2x2x?xf32>
  %pf = fusion.softmax %m axis = 3 : tensor<2x2x?x?xf32>
  %p = fusion.convert %pf : tensor<2x2x?x?xf32> to tensor<2x2x?x?xbf16>
  %o = fusion.matmul %p, %v : (tensor<2x2x?x?xbf16>, tensor<2x2x?x16xbf16>) -> tensor<2x2x?x16xbf16>
  return %o, %l : tensor<2x2x?x16xbf16>, tensor<2x2x?xf32>
}
func.func @bias_bf16(%q: tensor<2x2x24x32xbf16>, %kt: tensor<2x2x32x40xbf16>, %v: tensor<2x2x40x16xbf16>, %bias: tensor<2x2x24x40xbf16>) -> tensor<2x2x24x16xbf16> {
  %sb = fusion.matmul %q, %kt : (tensor<2x2x24x32xbf16>, tensor<2x2x32x40xbf16>) -> tensor<2x2x24x40xbf16>
  %s = fusion.convert %sb : tensor<2x2x24x40xbf16> to tensor<2x2x24x40xf32>
  %bf = fusion.convert %bias : tensor<2x2x24x40xbf16> to tensor<2x2x24x40xf32>
  %half = fusion.constant dense<0.5> : tensor<f32>
  %bs = fusion.mul %bf, %half : (tensor<2x2x24x40xf32>, tensor<f32>) -> tensor<2x2x24x40xf32>
  %t = fusion.add %s, %bs : (tensor<2x2x24x40xf32>, tensor<2x2x24x40xf32>) -> tensor<2x2x24x40xf32>
  %tb = fusion.convert %t : tensor<2x2x24x40xf32> to tensor<2x2x24x40xbf16>
  %p = fusion.softmax %tb axis = 3 : tensor<2x2x24x40xbf16>
  %o = fusion.matmul %p, %v : (tensor<2x2x24x40xbf16>, tensor<2x2x40x16xbf16>) -> tensor<2x2x24x16xbf16>
  return %o : tensor<2x2x24x16xbf16>
}
"""
    # Q, K and V read in place from one projection, the output stored
    # transposed, at dynamic and static lengths (the static one's traffic
    # counted).
    + "".join("""
func.func @heads_view{suffix}(%x: tensor<2x{n}x96xf32>) -> tensor<2x{n}x32xf32> {{
  %q0 = fusion.slice %x offsets = [0, 0, 0] sizes = [2, -1, 32] strides = [1, 1, 1] : tensor<2x{n}x96xf32> -> tensor<2x{n}x32xf32>
  %k0 = fusion.slice %x offsets = [0, 0, 32] sizes = [2, -1, 32] strides = [1, 1, 1] : tensor<2x{n}x96xf32> -> tensor<2x{n}x32xf32>
  %v0 = fusion.slice %x offsets = [0, 0, 64] sizes = [2, -1, 32] strides = [1, 1, 1] : tensor<2x{n}x96xf32> -> tensor<2x{n}x32xf32>
  %q1 = fusion.reshape %q0 : tensor<2x{n}x32xf32> -> tensor<2x{n}x2x16xf32>
  %k1 = fusion.reshape %k0 : tensor<2x{n}x32xf32> -> tensor<2x{n}x2x16xf32>
  %v1 = fusion.reshape %v0 : tensor<2x{n}x32xf32> -> tensor<2x{n}x2x16xf32>
  %q = fusion.transpose %q1 permutation = [0, 2, 1, 3] : tensor<2x{n}x2x16xf32> -> tensor<2x2x{n}x16xf32>
  %k = fusion.transpose %k1 permutation = [0, 2, 1, 3] : tensor<2x{n}x2x16xf32> -> tensor<2x2x{n}x16xf32>
  %v = fusion.transpose %v1 permutation = [0, 2, 1, 3] : tensor<2x{n}x2x16xf32> -> tensor<2x2x{n}x16xf32>
  %kt = fusion.transpose %k permutation = [0, 1, 3, 2] : tensor<2x2x{n}x16xf32> -> tensor<2x2x16x{n}xf32>
  %s = fusion.matmul %q, %kt : (tensor<2x2x{n}x16xf32>, tensor<2x2x16x{n}xf32>) -> tensor<2x2x{n}x{n}xf32>
  %c = fusion.constant dense<0.25> : tensor<f32>
  %t = fusion.mul %s, %c : (tensor<2x2x{n}x{n}xf32>, tensor<f32>) -> tensor<2x2x{n}x{n}xf32>
  %p = fusion.softmax %t axis = 3 : tensor<2x2x{n}x{n}xf32>
  %o = fusion.matmul %p, %v : (tensor<2x2x{n}x{n}xf32>, tensor<2x2x{n}x16xf32>) -> tensor<2x2x{n}x16xf32>
  %ot = fusion.transpose %o permutation = [0, 2, 1, 3] : tensor<2x2x{n}x16xf32> -> tensor<2x{n}x2x16xf32>
  %om = fusion.reshape %ot : tensor<2x{n}x2x16xf32> -> tensor<2x{n}x32xf32>
  return %om : tensor<2x{n}x32xf32>
}}
""".format(suffix=suffix, n=n) for suffix, n in (("", "?"), ("_static", "24"))))

fused_dir, unfused_dir = os.path.join(work_dir, "fused"), os.path.join(work_dir, "unfused")
os.makedirs(fused_dir), os.makedirs(unfused_dir)
fused = cpu.compile(source, build_dir, work_dir=fused_dir, count_traffic=True, debug=True)
unfused = cpu.compile(source, build_dir, fuse=False, work_dir=unfused_dir, debug=True)
report = {f["name"]: f for f in cpu.report(source, build_dir, True)["functions"]}
failures = []


def expect(name, ok, detail=""):
    print(f"{'ok' if ok else 'FAIL'}: {name} {detail}")
    if not ok:
        failures.append(name)


def softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


def f64(x):
    return np.asarray(x, np.float64)


def sdpa(q, k, v):
    s = f64(q) @ np.swapaxes(f64(k), -1, -2) * 0.1767767
    return softmax(s) @ f64(v)


def with_lse(q, k, v):
    s = f64(q) @ np.swapaxes(f64(k), -1, -2) * 0.1767767
    top = s.max(axis=-1)
    return [softmax(s) @ f64(v), top + np.log(np.exp(s - top[..., None]).sum(axis=-1))]


def grouped_softcap(q, kt, v, mask):
    s = f64(q) @ f64(kt)
    s = np.tanh(s / 5.0) * 5.0 + f64(mask)
    return softmax(s) @ f64(v)


def causal_positions(q, k, v):
    # Each query row sees the keys up to its own position + 16 (the rows are
    # the last 24 of the 40 keys' sequence).
    seen = np.arange(40)[None, :] <= np.arange(24)[:, None] + 16
    s = np.where(seen, f64(q) @ np.swapaxes(f64(k), -1, -2), -np.inf)
    top = s.max(axis=-1, keepdims=True)
    return [softmax(s) @ f64(v), (top + np.log(np.exp(s - top).sum(-1, keepdims=True)))[..., 0]]


def causal_dynamic(q, k, v):
    # PyTorch's is_causal: each query row sees the keys up to its own
    # position, whatever the two lengths.
    seen = np.arange(k.shape[2])[None, :] <= np.arange(q.shape[2])[:, None]
    s = np.where(seen, f64(q) @ np.swapaxes(f64(k), -1, -2), -np.inf)
    top = s.max(axis=-1, keepdims=True)
    return [softmax(s) @ f64(v), (top + np.log(np.exp(s - top).sum(-1, keepdims=True)))[..., 0]]


def bias_bf16(q, kt, v, bias):
    s = f64(q) @ f64(kt) + 0.5 * f64(bias)
    return softmax(s) @ f64(v)


def heads_view(x):
    heads = f64(x).reshape(x.shape[0], x.shape[1], 3, 2, 16).transpose(2, 0, 3, 1, 4)
    s = heads[0] @ np.swapaxes(heads[1], -1, -2) * 0.25
    o = softmax(s) @ heads[2]
    return o.transpose(0, 2, 1, 3).reshape(x.shape[0], x.shape[1], 32)


def padded(q, kt, v, keep):
    s = np.where(keep, f64(q) @ f64(kt), -np.inf)
    return softmax(s) @ f64(v)


for name, function in report.items():
    kinds = [k["kind"] for k in function["kernel_list"]]
    expect(f"{name} is one attention kernel", kinds == ["attention"], str(kinds))

# Inputs scaled so that the scores are of order 1.
cases = []
for length in (1, 7, 33, 64):
    q = rng.uniform(-1, 1, (2, 3, length, 32)).astype(np.float32)
    k = rng.uniform(-1, 1, (2, 3, length, 32)).astype(np.float32)
    v = rng.uniform(-1, 1, (2, 3, length, 16)).astype(np.float32)
    cases.append((f"sdpa[{length}]", "sdpa", (q, k, v), [sdpa(q, k, v)], "f32"))
    cases.append((f"with_lse[{length}]", "with_lse", (q, k, v), with_lse(q, k, v), "f32"))
q = rng.uniform(-1, 1, (2, 3, 24, 32)).astype(np.float32)
k = rng.uniform(-1, 1, (2, 3, 24, 32)).astype(np.float32)
v = rng.uniform(-1, 1, (2, 3, 24, 16)).astype(np.float32)
cases.append(("with_lse_static", "with_lse_static", (q, k, v), with_lse(q, k, v), "f32"))
causal = np.where(np.tril(np.ones((24, 24), bool)), 0.0, -np.inf).astype(np.float32)
q = rng.uniform(-2, 2, (2, 2, 4, 24, 16)).astype(np.float32)
kt = rng.uniform(-2, 2, (2, 2, 1, 16, 24)).astype(np.float32)
v = rng.uniform(-1, 1, (2, 2, 1, 24, 16)).astype(np.float32)
cases.append(("grouped_softcap", "grouped_softcap", (q, kt, v, causal),
              [grouped_softcap(q, kt, v, causal)], "f32"))
bf16 = cpu.BFLOAT16
lengths = rng.integers(1, 41, size=3)  # ragged: keys past each length masked
keep = (np.arange(40)[None, None, None, :] < lengths[:, None, None, None])
q = rng.uniform(-0.5, 0.5, (3, 4, 20, 32)).astype(bf16)
kt = rng.uniform(-0.5, 0.5, (3, 4, 32, 40)).astype(bf16)
v = rng.uniform(-1, 1, (3, 4, 40, 32)).astype(bf16)
cases.append((f"padded_bf16 lengths {lengths.tolist()}", "padded_bf16", (q, kt, v, keep),
              [padded(q, kt, v, keep)], "bf16"))
q = rng.uniform(-0.5, 0.5, (2, 2, 24, 32)).astype(bf16)
k = rng.uniform(-0.5, 0.5, (2, 2, 40, 32)).astype(bf16)
v = rng.uniform(-1, 1, (2, 2, 40, 16)).astype(bf16)
cases.append(("causal_positions", "causal_positions", (q, k, v), causal_positions(q, k, v),
              "bf16"))
for queries, keys in ((1, 1), (5, 9), (24, 24), (33, 17)):
    q = rng.uniform(-0.5, 0.5, (2, 2, queries, 32)).astype(bf16)
    k = rng.uniform(-0.5, 0.5, (2, 2, keys, 32)).astype(bf16)
    v = rng.uniform(-1, 1, (2, 2, keys, 16)).astype(bf16)
    cases.append((f"causal_dynamic[{queries}x{keys}]", "causal_dynamic", (q, k, v),
                  causal_dynamic(q, k, v), "bf16"))
q = rng.uniform(-0.5, 0.5, (2, 2, 24, 32)).astype(bf16)
kt = rng.uniform(-0.5, 0.5, (2, 2, 32, 40)).astype(bf16)
v = rng.uniform(-1, 1, (2, 2, 40, 16)).astype(bf16)
bias = rng.uniform(-2, 2, (2, 2, 24, 40)).astype(bf16)
cases.append(("bias_bf16", "bias_bf16", (q, kt, v, bias), [bias_bf16(q, kt, v, bias)], "bf16"))
for length in (1, 7, 33):
    x = rng.uniform(-1, 1, (2, length, 96)).astype(np.float32)
    cases.append((f"heads_view[{length}]", "heads_view", (x,), [heads_view(x)], "f32"))
x = rng.uniform(-1, 1, (2, 24, 96)).astype(np.float32)
cases.append(("heads_view_static", "heads_view_static", (x,), [heads_view(x)], "f32"))

for label, name, inputs, expected, element in cases:
    fused.reset_traffic()
    outs = fused.functions[name](*inputs)
    refs = unfused.functions[name](*inputs)
    for i, (out, ref, want) in enumerate(zip(outs, refs, expected)):
        testing.check(f"{label} fused output {i}", out, want, element, failures)
        testing.check(f"{label} unfused output {i}", ref, want, element, failures)
        expect(f"{label} output {i} fused == unfused", np.array_equal(f64(out), f64(ref)))
    expect(f"{label} outputs", len(outs) == len(refs) == len(expected))
    if report[name]["bytes"] is not None:
        counted = sum(fused.traffic(0 if name == "sdpa" else list(report).index(name)))
        expect(f"{label} traffic", counted == report[name]["bytes"],
               f"counted {counted} bytes, predicted {report[name]['bytes']}")

print(f"{len(failures)} failures: {failures}")
sys.exit(1 if failures else 0)
