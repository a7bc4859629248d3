# A tensor<?x4096xbf16> program compiles once and runs correctly for row
# counts 1, a prime, and a large one; each call's counted traffic equals the
# report's formula evaluated at that row count.
#
# RUN: %fusion_python %s %fusion_obj_root %t

import os
import sys

import numpy as np

from fusion import cpu, testing

build_dir, work_dir = sys.argv[1], sys.argv[2]
os.makedirs(work_dir, exist_ok=True)
source = os.path.join(work_dir, "decode.mlir")
with open(source, "w") as f:
    f.write("""
func.func @add_rmsnorm(%x: tensor<?x4096xbf16>, %r: tensor<?x4096xbf16>, %w: tensor<4096xbf16>) -> (tensor<?x4096xbf16>, tensor<?x4096xbf16>) {
  %s = fusion.add %x, %r : tensor<?x4096xbf16>
  %y = fusion.rms_norm %s, %w epsilon = 1.0e-06 : tensor<?x4096xbf16>, tensor<4096xbf16>
  return %s, %y : tensor<?x4096xbf16>, tensor<?x4096xbf16>
}
""")

module = cpu.compile(source, build_dir, fuse=True, count_traffic=True, work_dir=work_dir,
                     debug=True)
formula = cpu.report(source, build_dir)["functions"][0]["bytes_formula"]
fn = module.add_rmsnorm
rng = testing.fresh_rng()
failures = []
for rows in (1, 101, 1024):
    x, r = (testing.random_input(rng, fn.inputs[0], (rows, 4096)) for _ in range(2))
    w = testing.random_input(rng, fn.inputs[2])
    module.reset_traffic()
    s, y = fn(x, r, w)
    sf = x.astype(np.float64) + r.astype(np.float64)
    ref_y = sf / np.sqrt(np.mean(sf * sf, -1, keepdims=True) + 1e-6) * w.astype(np.float64)
    testing.check(f"rows={rows} sum", s, sf, "bf16", failures)
    testing.check(f"rows={rows} norm", y, ref_y, "bf16", failures)
    counted = sum(module.traffic(0))
    # The formula is a sum of terms like "32768*d0" and "8192".
    predicted = sum(int(term.split("*")[0]) * (rows if "*d0" in term else 1)
                    for term in formula.split(" + "))
    ok = counted == predicted
    print(f"{'ok' if ok else 'FAIL'}: rows={rows} traffic: counted {counted}, predicted {predicted} ({formula})")
    if not ok:
        failures.append(f"rows={rows} traffic")
print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
