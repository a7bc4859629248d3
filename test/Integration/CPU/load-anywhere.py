# A library made by fusion-compile loads with fusion.runtime from a fresh
# process in another directory, with no LD_LIBRARY_PATH: with
# --count-traffic its traffic counters are found through the library, and
# without it asking for traffic says why instead of failing to load. Calls
# do not poison their outputs unless asked (debug=True or FUSION_DEBUG=1).
#
# RUN: %fusion_python %s %fusion_obj_root %t

import os
import subprocess
import sys

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
libraries = {}
for counted in (False, True):
    library = os.path.join(work_dir, f"libscale{'_counted' if counted else ''}.so")
    subprocess.run([os.path.join(build_dir, "bin", "fusion-compile"), source, "--target=cpu",
                    "-o", library] + (["--count-traffic"] if counted else []), check=True)
    libraries[counted] = library

CALLER = """
import sys
import numpy as np
from fusion import runtime
plain, counted = sys.argv[1:3]
x = np.arange(24, dtype=np.float32).reshape(3, 8)
w = np.full(8, 2.0, dtype=np.float32)
for path in (plain, counted):
    module = runtime.load(path)
    assert not module.debug, "calls poison outputs by default"
    (y,) = module.scale(x, w)
    assert np.array_equal(y, x * w), y
module = runtime.load(counted)
module.reset_traffic()
module.scale(x, w)
read, written = module.traffic(0)
assert (read, written) == (3 * 8 * 4 + 8 * 4, 3 * 8 * 4), (read, written)
try:
    runtime.load(plain).traffic(0)
    raise SystemExit("traffic of a library without counters did not raise")
except RuntimeError as e:
    assert "--count-traffic" in str(e), e
print("ok")
"""
# Only the package itself is on the path (an installed package would be).
import fusion  # noqa: E402
env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "FUSION_DEBUG")}
env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(fusion.__file__)))
result = subprocess.run([sys.executable, "-c", CALLER, libraries[False], libraries[True]],
                        cwd="/", env=env, capture_output=True, text=True)
print(result.stdout, result.stderr)
sys.exit(0 if result.returncode == 0 and "ok" in result.stdout else 1)
