# The GPU matmul cases (benchmarks/gpu/matmul_cases.py) compiled as the
# generated bundle compiles them (matmul-epilogue=any,
# matmul-backend=generated): each case runs the strategy the case says it
# exercises (matmul_cases.STRATEGIES), so that a case written for the
# tensor-core kernel cannot silently fall back to matmul_tiles.
#
# RUN: %fusion_python %s %fusion_obj_root %fusion_src_root %t

import os
import re
import subprocess
import sys

build_dir, src_root, work_dir = sys.argv[1:4]
sys.path.insert(0, os.path.join(src_root, "benchmarks", "gpu"))
import matmul_cases  # noqa: E402

os.makedirs(work_dir, exist_ok=True)
source = os.path.join(work_dir, "matmul_cases.mlir")
with open(source, "w") as f:
    f.write(matmul_cases.MODULE)
planned = subprocess.run(
    [os.path.join(build_dir, "bin", "fusion-opt"), source, "--fusion-pipeline=matmul-epilogue=any",
     "--fusion-plan-kernels=matmul-backend=generated"],
    capture_output=True, text=True, check=True).stdout

strategies = {}
for function, body in re.findall(r"func\.func @(\w+)\((.*?)\n  \}\n", planned, re.S):
    strategies[function] = re.findall(r'fusion\.kernel matmul "\w+" .*?plan = #fusion\.plan<(\w+)', body)

failures = []
for name, expected in sorted(matmul_cases.STRATEGIES.items()):
    got = strategies.get(name)
    ok = got == [expected]
    print(f"{'ok  ' if ok else 'FAIL'} {name:32} {got} (expected [{expected!r}])")
    if not ok:
        failures.append(name)
missing = set(strategies) - set(matmul_cases.STRATEGIES)
if missing:
    print(f"FAIL cases without an expected strategy: {sorted(missing)}")
    failures += sorted(missing)
print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
