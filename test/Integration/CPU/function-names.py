# Functions named like C library symbols (step, exp, log, time, round) run
# their own code: a library's calls to its functions bind within it
# (fusion-compile links with -Bsymbolic). Before, `_mlir_ciface_step` called
# glibc's regexp `step` and crashed.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %fusion_python %s %fusion_obj_root %t

import os
import sys

import numpy as np

from fusion import cpu

build_dir, work = sys.argv[1:3]
names = {"step": "neg", "exp": "abs", "log": "sqrt", "time": "relu", "round": "square"}
source = os.path.join(work, "names.mlir")
with open(source, "w") as f:
    for name, op in names.items():
        f.write(f"""
func.func @{name}(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {{
  %0 = fusion.{op} %x : tensor<?x8xf32>
  %1 = fusion.add %0, %y : tensor<?x8xf32>
  return %1, %0 : tensor<?x8xf32>, tensor<?x8xf32>
}}
""")
module = cpu.compile(source, build_dir, work_dir=work, debug=True)
reference = {"neg": np.negative, "abs": np.abs, "sqrt": np.sqrt, "relu": lambda v: np.maximum(v, 0),
             "square": np.square}
rng = np.random.default_rng(0)
failures = 0
for name, op in names.items():
    x = rng.random((5, 8), dtype=np.float32)
    y = rng.standard_normal((5, 8)).astype(np.float32)
    got = module.functions[name](x, y)
    expected = reference[op](x)
    ok = np.allclose(got[1], expected, rtol=1e-6) and np.allclose(got[0], expected + y, rtol=1e-6)
    failures += not ok
    print(f"{'ok  ' if ok else 'FAIL'} @{name} computes {op}")
print(f"{failures} failures")
sys.exit(1 if failures else 0)
