# Every GPU benchmark workload (small shapes), fused and unfused, the
# codegen cases (flat tails, cluster-split wide rows, tiled matmul with
# epilogues), the matmul cases (tensor-core tiles, gated pairs) and 100
# random fusion graphs (fused), compiled to PTX for sm_90 (sm_90a where a
# kernel uses wgmma) and assembled by ptxas -v: no kernel spills registers
# or has a local-memory stack frame.
#
# REQUIRES: ptxas
# RUN: %fusion_python %s %fusion_obj_root %fusion_src_root %t

import os
import re
import subprocess
import sys

build_dir, src_root, work_dir = sys.argv[1:4]
sys.path.insert(0, os.path.join(src_root, "benchmarks", "gpu"))
import codegen_cases  # noqa: E402
import matmul_cases  # noqa: E402
import workloads  # noqa: E402
from fusion import random_graphs  # noqa: E402

os.makedirs(work_dir, exist_ok=True)
source = os.path.join(work_dir, "workloads.mlir")
with open(source, "w") as f:
    f.write(workloads.module("small"))
cases = os.path.join(work_dir, "codegen_cases.mlir")
with open(cases, "w") as f:
    f.write(codegen_cases.module())
matmuls = os.path.join(work_dir, "matmul_cases.mlir")
with open(matmuls, "w") as f:
    f.write(matmul_cases.MODULE)
graphs = os.path.join(work_dir, "graphs.mlir")
with open(graphs, "w") as f:
    f.write("\n".join(random_graphs.random_graph(500000 + i).mlir for i in range(100)))
ptxas = "/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas") else "ptxas"

failures, kernels = [], 0
for module, fuse in ((source, "true"), (source, "false"), (cases, "true"), (matmuls, "true"),
                     (graphs, "true")):
    lowered = subprocess.run(
        [os.path.join(build_dir, "bin", "fusion-opt"), module,
         f"--fusion-to-nvvm=format=isa fuse={fuse} matmul-epilogue=any matmul-backend=generated"],
        capture_output=True, text=True, check=True).stdout
    for name, assembly in re.findall(r'gpu\.binary @(\w+) .*?assembly = "((?:[^"\\]|\\.)*)"', lowered):
        ptx = re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), assembly)
        path = os.path.join(work_dir, f"{name}.{fuse}.ptx")
        with open(path, "w") as f:
            f.write(ptx)
        chip = re.search(r"^\.target (sm_\w+)", ptx, re.M).group(1)
        result = subprocess.run([ptxas, "-v", "--gpu-name", chip, path, "-o", path + ".cubin"],
                                capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit(f"ptxas failed on {path}:\n{result.stdout}{result.stderr}")
        report = result.stderr
        for entry, frame, stores, loads in re.findall(
                r"Compiling entry function '(\w+)'.*?(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",
                report, re.S):
            kernels += 1
            registers = re.search(rf"Function properties for {entry}.*?Used (\d+) registers", report, re.S)
            ok = frame == stores == loads == "0"
            print(f"{'ok  ' if ok else 'FAIL'} {entry:28} fuse={fuse:5} stack {frame} B, spill stores {stores} B, "
                  f"spill loads {loads} B, registers {registers.group(1) if registers else '?'}")
            if not ok:
                failures.append(entry)

print(f"{kernels} kernels, {len(failures)} with spills or a stack frame")
sys.exit(1 if failures or kernels == 0 else 0)
