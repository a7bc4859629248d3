# Positions (fusion.iota) outside attention: a causal mask from positions
# fused into a row softmax (no mask in memory), an iota returned alone (a
# kernel with no inputs), positions in bf16 math, a boolean mask of
# positions returned, and positions of dynamic sizes (taken from a tensor
# read anyway, or from one that only gives the size). Fused and unfused,
# outputs poisoned, against numpy in float64; the report counts no bytes
# for the positions, and the counters nothing read for a size alone.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %fusion_python %s %fusion_obj_root %t

import os
import sys

import numpy as np

from fusion import cpu, testing

build_dir, work_dir = sys.argv[1:3]
rng = testing.fresh_rng()
source = os.path.join(work_dir, "positions.mlir")
with open(source, "w") as f:
    f.write("""
func.func @causal_softmax(%x: tensor<2x37x37xf32>) -> tensor<2x37x37xf32> {
  %row = fusion.iota dimension = 0 : tensor<37x1xf32>
  %key = fusion.iota dimension = 1 : tensor<1x37xf32>
  %seen = fusion.cmp le, %key, %row : (tensor<1x37xf32>, tensor<37x1xf32>) -> tensor<37x37xi1>
  %ninf = fusion.constant dense<0xFF800000> : tensor<f32>
  %m = fusion.select %seen, %x, %ninf : (tensor<37x37xi1>, tensor<2x37x37xf32>, tensor<f32>) -> tensor<2x37x37xf32>
  %p = fusion.softmax %m axis = 2 : tensor<2x37x37xf32>
  return %p : tensor<2x37x37xf32>
}
func.func @positions() -> tensor<3x1001xf32> {
  %0 = fusion.iota dimension = 1 : tensor<3x1001xf32>
  return %0 : tensor<3x1001xf32>
}
func.func @ramp(%x: tensor<3x200xbf16>) -> tensor<3x200xbf16> {
  %k = fusion.iota dimension = 1 : tensor<3x200xbf16>
  %r = fusion.iota dimension = 0 : tensor<3x200xbf16>
  %0 = fusion.add %x, %k : tensor<3x200xbf16>
  %1 = fusion.sub %0, %r : tensor<3x200xbf16>
  return %1 : tensor<3x200xbf16>
}
func.func @band(%x: tensor<5x9xf32>) -> (tensor<5x9xf32>, tensor<5x9xi1>) {
  %row = fusion.iota dimension = 0 : tensor<5x9xf32>
  %key = fusion.iota dimension = 1 : tensor<5x9xf32>
  %d = fusion.sub %key, %row : tensor<5x9xf32>
  %a = fusion.abs %d : tensor<5x9xf32>
  %two = fusion.constant dense<2.0> : tensor<f32>
  %near = fusion.cmp le, %a, %two : (tensor<5x9xf32>, tensor<f32>) -> tensor<5x9xi1>
  %zero = fusion.constant dense<0.0> : tensor<f32>
  %y = fusion.select %near, %x, %zero : (tensor<5x9xi1>, tensor<5x9xf32>, tensor<f32>) -> tensor<5x9xf32>
  return %y, %near : tensor<5x9xf32>, tensor<5x9xi1>
}
""")

failures = []
report = {f["name"]: f for f in cpu.report(source, build_dir, True)["functions"]}
expected_bytes = {"causal_softmax": 2 * 2 * 37 * 37 * 4, "positions": 3 * 1001 * 4,
                  "ramp": 2 * 3 * 200 * 2, "band": 5 * 9 * 4 * 2 + 5 * 9}
for name, nbytes in expected_bytes.items():
    ok = report[name]["bytes"] == nbytes
    print(f"{'ok  ' if ok else 'FAIL'} {name}: report {report[name]['bytes']} bytes "
          f"(expected {nbytes}: no bytes for positions)")
    if not ok:
        failures.append(f"{name} bytes")

bf16 = cpu.BFLOAT16
i = np.arange(37)[:, None]
j = np.arange(37)[None, :]
for fuse in (True, False):
    tag = "fused" if fuse else "unfused"
    os.makedirs(os.path.join(work_dir, tag), exist_ok=True)
    module = cpu.compile(source, build_dir, fuse=fuse, debug=True,
                         work_dir=os.path.join(work_dir, tag))
    x = rng.standard_normal((2, 37, 37)).astype(np.float32)
    s = np.where(j <= i, x.astype(np.float64), -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    (y,) = module.causal_softmax(x)
    testing.check(f"{tag} causal softmax", y, e / e.sum(-1, keepdims=True), "f32", failures)
    (y,) = module.positions()
    testing.check(f"{tag} positions", y, np.broadcast_to(np.arange(1001.0), (3, 1001)), "f32",
                  failures)
    x = rng.uniform(-2, 2, (3, 200)).astype(bf16)
    (y,) = module.ramp(x)
    # Rounded to bf16 at each op, as the op semantics say.
    ref = (x.astype(np.float64) + np.arange(200)).astype(bf16).astype(np.float64)
    ref = (ref - np.arange(3)[:, None]).astype(bf16).astype(np.float64)
    ok = np.array_equal(y.astype(np.float64), ref)
    print(f"{'ok  ' if ok else 'FAIL'} {tag} ramp equals its bf16 rounding at each op")
    if not ok:
        failures.append(f"{tag} ramp")
    x = rng.standard_normal((5, 9)).astype(np.float32)
    near = np.abs(np.arange(9)[None, :] - np.arange(5)[:, None]) <= 2
    y, m = module.band(x)
    testing.check(f"{tag} band", y, np.where(near, x, 0.0), "f32", failures)
    testing.check(f"{tag} band mask", m, near, "i1", failures)

# Positions of dynamic sizes, taken from a tensor that is read (the
# softmax's rows) or only gives the size (the iota returned alone): the
# counted traffic is the softmax's rows read and written, the positions
# written, and nothing read for the size.
dynamic = os.path.join(work_dir, "positions_dynamic.mlir")
with open(dynamic, "w") as f:
    f.write("""
func.func @causal_softmax_dynamic(%x: tensor<2x?x?xf32>) -> tensor<2x?x?xf32> {
  %row = fusion.iota dimension = 0 size_of %x[1] : tensor<2x?x?xf32> -> tensor<?x1xf32>
  %key = fusion.iota dimension = 1 size_of %x[2] : tensor<2x?x?xf32> -> tensor<1x?xf32>
  %seen = fusion.cmp le, %key, %row : (tensor<1x?xf32>, tensor<?x1xf32>) -> tensor<?x?xi1>
  %ninf = fusion.constant dense<0xFF800000> : tensor<f32>
  %m = fusion.select %seen, %x, %ninf : (tensor<?x?xi1>, tensor<2x?x?xf32>, tensor<f32>) -> tensor<2x?x?xf32>
  %p = fusion.softmax %m axis = 2 : tensor<2x?x?xf32>
  return %p : tensor<2x?x?xf32>
}
func.func @positions_of(%x: tensor<?x8xbf16>) -> tensor<?x1xf32> {
  %0 = fusion.iota dimension = 0 size_of %x[0] : tensor<?x8xbf16> -> tensor<?x1xf32>
  return %0 : tensor<?x1xf32>
}
""")
for fuse in (True, False):
    tag = "fused" if fuse else "unfused"
    os.makedirs(os.path.join(work_dir, tag + "_dynamic"), exist_ok=True)
    module = cpu.compile(dynamic, build_dir, fuse=fuse, count_traffic=fuse, debug=True,
                         work_dir=os.path.join(work_dir, tag + "_dynamic"))
    # The counters are numbered by kernel in module order.
    kernels, first = {}, 0
    if fuse:
        for function in cpu.report(dynamic, build_dir, True)["functions"]:
            count = len(function["kernel_list"])
            kernels[function["name"]] = range(first, first + count)
            first += count
    for rows, keys in ((1, 1), (6, 6), (9, 4)):
        x = rng.standard_normal((2, rows, keys)).astype(np.float32)
        s = np.where(np.arange(keys)[None, :] <= np.arange(rows)[:, None], x.astype(np.float64),
                     -np.inf)
        e = np.exp(s - s.max(-1, keepdims=True))
        if fuse:
            module.reset_traffic()
        (y,) = module.causal_softmax_dynamic(x)
        testing.check(f"{tag} causal softmax {rows}x{keys}", y, e / e.sum(-1, keepdims=True),
                      "f32", failures)
        x = rng.standard_normal((rows * 3, 8)).astype(bf16)
        (p,) = module.positions_of(x)
        testing.check(f"{tag} positions of {rows * 3} rows", p,
                      np.arange(rows * 3.0)[:, None], "f32", failures)
        if fuse:
            counted = [tuple(map(sum, zip(*(module.traffic(k) for k in kernels[name]))))
                       for name in ("causal_softmax_dynamic", "positions_of")]
            want = [(2 * rows * keys * 4, 2 * rows * keys * 4),
                    (0, rows * 3 * 4)]
            ok = counted == want
            print(f"{'ok  ' if ok else 'FAIL'} traffic at {rows}x{keys}: counted {counted} "
                  f"(read, written), expected {want}")
            if not ok:
                failures.append(f"traffic {rows}x{keys}")

print(f"{len(failures)} failures: {failures}")
sys.exit(1 if failures else 0)
