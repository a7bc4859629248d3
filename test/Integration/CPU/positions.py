# Positions (fusion.iota) outside attention: a causal mask from positions
# fused into a row softmax (no mask in memory), an iota returned alone (a
# kernel with no inputs), positions in bf16 math, and a boolean mask of
# positions returned. Fused and unfused, outputs poisoned, against numpy in
# float64; the report counts no bytes for the positions.
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

print(f"{len(failures)} failures: {failures}")
sys.exit(1 if failures else 0)
