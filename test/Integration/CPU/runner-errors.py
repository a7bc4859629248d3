# The Python runner checks arguments against the signature before running:
# wrong dtype, wrong shape, wrong count and non-arrays raise SignatureError;
# a correct call works. Also loads the library through fusion.runtime.
#
# RUN: %fusion_python %s %fusion_obj_root %t

import os
import sys

import numpy as np

from fusion import cpu, runtime, testing

build_dir, work_dir = sys.argv[1:3]
os.makedirs(work_dir, exist_ok=True)
source = os.path.join(work_dir, "scale.mlir")
with open(source, "w") as f:
    f.write("""
func.func @scale(%x: tensor<?x8xf32>, %w: tensor<8xf32>) -> tensor<?x8xf32> {
  %0 = fusion.mul %x, %w : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
""")
compiled = cpu.compile(source, build_dir, work_dir=work_dir, debug=True)
module = runtime.load(compiled.path, debug=True)
fn = module.scale
rng = testing.fresh_rng()
x = rng.standard_normal((5, 8)).astype(np.float32)
w = rng.standard_normal(8).astype(np.float32)

failures = []
cases = {
    "dtype": lambda: fn(x.astype(np.float64), w),
    "shape": lambda: fn(x, w[:4]),
    "rank": lambda: fn(x.reshape(40), w),
    "count": lambda: fn(x),
    "not an array": lambda: fn(x.tolist(), w),
}
for name, call in cases.items():
    try:
        call()
        failures.append(name)
        print(f"FAIL: {name}: no error")
    except cpu.SignatureError as e:
        print(f"ok: {name}: {e}")
(y,) = fn(x, w)
if not np.allclose(y, x * w, rtol=1e-6):
    failures.append("result")
print(f"ok: result {y.shape}" if "result" not in failures else "FAIL: result")
print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
