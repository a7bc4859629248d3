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
import sys

build_dir, src_root, work_dir = sys.argv[1:4]
sys.path.insert(0, os.path.join(src_root, "benchmarks", "gpu"))
import codegen_cases  # noqa: E402
import matmul_cases  # noqa: E402
import workloads  # noqa: E402
from fusion import cuda, random_graphs  # noqa: E402

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

failures, kernels = [], 0
for module, fuse in ((source, "true"), (source, "false"), (cases, "true"), (matmuls, "true"),
                     (graphs, "true")):
    resources = cuda.kernel_resources(
        module, build_dir, os.path.join(work_dir, f"{os.path.basename(module)}.{fuse}"),
        f"fuse={fuse} matmul-epilogue=any matmul-backend=generated")
    for entry, r in resources.items():
        kernels += 1
        ok = r["stack"] == r["spill_stores"] == r["spill_loads"] == 0
        print(f"{'ok  ' if ok else 'FAIL'} {entry:28} fuse={fuse:5} stack {r['stack']} B, "
              f"spill stores {r['spill_stores']} B, spill loads {r['spill_loads']} B, "
              f"registers {r['registers']}")
        if not ok:
            failures.append(entry)

print(f"{kernels} kernels, {len(failures)} with spills or a stack frame")
sys.exit(1 if failures or kernels == 0 else 0)
