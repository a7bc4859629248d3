# Every GPU benchmark workload (small shapes), fused and unfused, the
# codegen cases (flat tails, cluster-split wide rows, tiled matmul with
# epilogues), the matmul cases (tensor-core tiles, gated pairs), the
# prefill attention programs (attention_tiles: two and three multiplying
# warpgroups, biases staged and read from memory, causal, Q, K and V read
# as views of a projection and the output stored transposed) and 100 random
# fusion graphs (fused), compiled to PTX for sm_90 (sm_90a where a kernel
# uses wgmma) and assembled by ptxas -v: no kernel spills registers or has
# a local-memory stack frame, but those in SPILLS_OUTSIDE_LOOPS, by at most
# what is listed.
#
# REQUIRES: ptxas
# RUN: %fusion_python %s %fusion_obj_root %fusion_src_root %t

import os
import sys

build_dir, src_root, work_dir = sys.argv[1:4]
sys.path.insert(0, os.path.join(src_root, "benchmarks", "gpu"))
import attention_prefill  # noqa: E402
import attention_views  # noqa: E402
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
attention = os.path.join(work_dir, "attention_prefill.mlir")
with open(attention, "w") as f:
    f.write(attention_prefill.MODULE)
views = os.path.join(work_dir, "attention_views.mlir")
with open(views, "w") as f:
    f.write(attention_views.MODULE)
graphs = os.path.join(work_dir, "graphs.mlir")
with open(graphs, "w") as f:
    f.write("\n".join(random_graphs.random_graph(500000 + i).mlir for i in range(100)))

# Kernels whose spills are known and cheap, with the most bytes each may
# spill (stores, loads), as {entry: (stores, loads)}. None now: the prefill
# with a bias read per score from memory spilled 8 bytes (a batch index kept
# across the key loop for its output's stores) until its output went
# through shared memory by TMA. A listed kernel that stops spilling fails
# too, so that the list stays true.
SPILLS_OUTSIDE_LOOPS = {}

failures, kernels = [], 0
for module, fuse in ((source, "true"), (source, "false"), (cases, "true"), (matmuls, "true"),
                     (attention, "true"), (views, "true"), (graphs, "true")):
    resources = cuda.kernel_resources(
        module, build_dir, os.path.join(work_dir, f"{os.path.basename(module)}.{fuse}"),
        f"fuse={fuse} matmul-epilogue=any matmul-backend=generated")
    for entry, r in resources.items():
        kernels += 1
        if entry in SPILLS_OUTSIDE_LOOPS:
            stores, loads = SPILLS_OUTSIDE_LOOPS[entry]
            ok = 0 < r["spill_stores"] <= stores and r["spill_loads"] <= loads
        else:
            ok = r["stack"] == r["spill_stores"] == r["spill_loads"] == 0
        print(f"{'ok  ' if ok else 'FAIL'} {entry:28} fuse={fuse:5} stack {r['stack']} B, "
              f"spill stores {r['spill_stores']} B, spill loads {r['spill_loads']} B, "
              f"registers {r['registers']}")
        if not ok:
            failures.append(entry)

print(f"{kernels} kernels, {len(failures)} failed (spills or a stack frame, or not the "
      f"listed spills of {len(SPILLS_OUTSIDE_LOOPS)})")
sys.exit(1 if failures or kernels == 0 else 0)
