#!/usr/bin/env bash
# Builds here everything the GPU machine needs, into bundle/ (git-ignored,
# under 64 MiB): the workloads compiled fused and unfused for sm_90 at the
# given scales, the CUDA runtime, the Python package and the check script.
#   scripts/build-gpu-bundle.sh [small] [full]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUSION_BUILD_DIR:-$root/build}
bundle=$root/bundle
scales=${*:-small}

"$root/scripts/build.sh" fusion-opt fusion_cuda_runtime
rm -rf "$bundle" && mkdir -p "$bundle"
cp -r "$root/python/fusion" "$bundle/fusion"
cp "$root/benchmarks/gpu/"*.py "$root/benchmarks/gpu/"*.sh "$bundle/"
cp "$build/lib/libfusion_cuda_runtime.so" "$bundle/"
for scale in $scales; do
  PYTHONPATH="$root/python:$root/benchmarks/gpu" python3 - "$scale" "$build" "$bundle" <<'PY'
import os, sys
from fusion import cuda
import json
from fusion import cpu
import reductions, workloads
scale, build, bundle = sys.argv[1:]
for stem, text in ((f"workloads_{scale}", workloads.module(scale)),
                   (f"reductions_{scale}", reductions.module(scale))):
    source = os.path.join(bundle, stem + ".mlir")
    with open(source, "w") as f:
        f.write(text)
    for fuse in (True, False):
        print(cuda.compile(source, build, bundle, fuse=fuse))
        # The predicted traffic as the sm_90 plans move it, for the ncu
        # comparison there.
        variant = "fused" if fuse else "unfused"
        with open(os.path.join(bundle, f"report_{stem.replace('workloads_', '')}.{variant}.json"),
                  "w") as f:
            json.dump(cpu.report(source, build, fuse, chip="sm_90"), f, indent=1)
PY
done
# Rows the plan streams (one block, each pass reading the row again), for
# the ncu check that the report counts every pass: softmax over rows of
# 262144 f32 (in the 8 parts a cluster allows, 16 vectors a thread at 512
# threads, more than so large a block holds).
cat > "$bundle/workloads_streamed.mlir" <<'MLIR'
func.func @softmax_streamed(%x: tensor<256x262144xf32>) -> tensor<256x262144xf32> {
  %0 = fusion.softmax %x axis = 1 : tensor<256x262144xf32>
  return %0 : tensor<256x262144xf32>
}
MLIR
PYTHONPATH="$root/python" python3 - "$build" "$bundle" <<'PY'
import json, os, sys
from fusion import cpu, cuda
build, bundle = sys.argv[1:]
source = os.path.join(bundle, "workloads_streamed.mlir")
print(cuda.compile(source, build, bundle, fuse=True))
with open(os.path.join(bundle, "report_streamed.fused.json"), "w") as f:
    json.dump(cpu.report(source, build, True, chip="sm_90"), f, indent=1)
PY
# The codegen cases (small shapes, every GPU codegen path), with the
# generated matmul and any epilogue fused; the row kernels at edge widths
# and the math accuracy functions; the matmul cases and benchmark
# programs with the defaults (library matmuls, library epilogues), the cases
# once more with TF32.
PYTHONPATH="$root/python:$root/benchmarks/gpu" python3 - "$build" "$bundle" "$root" <<'PY'
import os, sys
from fusion import cuda
import codegen_cases
build, bundle, root = sys.argv[1:]
source = os.path.join(bundle, "codegen_cases.mlir")
with open(source, "w") as f:
    f.write(codegen_cases.module())
for fuse in (True, False):
    print(cuda.compile(source, build, bundle, fuse=fuse, matmul_epilogue="any",
                       matmul_backend="generated"))
# Row kernels at edge widths; the elementwise math for the accuracy check.
import row_widths
source = os.path.join(bundle, "row_widths.mlir")
with open(source, "w") as f:
    f.write(row_widths.module())
for fuse in (True, False):
    print(cuda.compile(source, build, bundle, fuse=fuse))
import math_accuracy
source = os.path.join(bundle, "math_accuracy.mlir")
with open(source, "w") as f:
    f.write(math_accuracy.module())
print(cuda.compile(source, build, bundle))
import matmul_cases
for stem, text, tf32 in (("matmul_cases", matmul_cases.module(), False),
                         ("matmul_cases_tf32", matmul_cases.tf32_module(), True)):
    source = os.path.join(bundle, stem + ".mlir")
    with open(source, "w") as f:
        f.write(text)
    print(cuda.compile(source, build, bundle, matmul_tf32=tf32))
# The cases with the generated kernels and any epilogue fused.
print(cuda.compile(os.path.join(bundle, "matmul_cases.mlir"), build, bundle,
                   matmul_backend="generated", matmul_epilogue="any", suffix=".generated"))
source = os.path.join(bundle, "matmul_bench.mlir")
with open(source, "w") as f:
    for part in ("benchmarks/gpu/matmul_bench.mlir", "examples/transformer_mlp_block.mlir"):
        f.write(open(os.path.join(root, part)).read())
print(cuda.compile(source, build, bundle))
# The call-path checks' functions.
print(cuda.compile(os.path.join(root, "benchmarks/gpu/call_path.mlir"), build, bundle))
# Decode attention (attention_rows), fused and an op per kernel.
import attention_decode
attention = os.path.join(bundle, "attention_decode.mlir")
with open(attention, "w") as f:
    f.write(attention_decode.MODULE)
for fuse in (True, False):
    print(cuda.compile(attention, build, bundle, fuse=fuse))
# Prefill attention (attention_tiles), fused.
import attention_prefill
attention = os.path.join(bundle, "attention_prefill.mlir")
with open(attention, "w") as f:
    f.write(attention_prefill.MODULE)
print(cuda.compile(attention, build, bundle))
# Attention reading its operands as views of a projection (attention_tiles).
import attention_views
attention = os.path.join(bundle, "attention_views.mlir")
with open(attention, "w") as f:
    f.write(attention_views.MODULE)
print(cuda.compile(attention, build, bundle))
# The same programs with the generated matmuls (tensor-core kernels where
# they apply) and any epilogue fused.
print(cuda.compile(source, build, bundle, matmul_backend="generated", matmul_epilogue="any",
                   suffix=".generated"))
# Any epilogue fused, the library where a kernel is one (matmul-backend=auto).
print(cuda.compile(source, build, bundle, matmul_epilogue="any", suffix=".auto_any"))
# Kernels launched as programmatic dependents (fusion-launch-dependents,
# off by default until timed): the generated build's twin, and the matmul
# cases for the checks (`matmul_variants.py`, `matmul_checks.py`).
print(cuda.compile(source, build, bundle, matmul_backend="generated", matmul_epilogue="any",
                   launch_dependents=True, suffix=".generated_dependents"))
print(cuda.compile(os.path.join(bundle, "matmul_cases.mlir"), build, bundle,
                   matmul_backend="generated", matmul_epilogue="any", launch_dependents=True,
                   suffix=".generated_dependents"))
# The CPU suite's random graphs (random_graphs_check.py runs them there).
from fusion import random_graphs
source = os.path.join(bundle, "random_graphs.mlir")
with open(source, "w") as f:
    f.write("\n".join(random_graphs.random_graph(100000 + i).mlir for i in range(300)))
for fuse in (True, False):
    print(cuda.compile(source, build, bundle, fuse=fuse))
PY
# torch.compile(backend="fusion") there: the backend's libraries compiled
# ahead of time into its disk cache, and a copy of fusion-compile, which
# identifies them (it does not run there: no MLIR). Dynamo's graphs differ
# between PyTorch versions: FUSION_BUNDLE_PYTHON names a python3 with the
# GPU machine's PyTorch (2.11 on 2026-11-30).
"${FUSION_BUNDLE_PYTHON:-python3}" -c "import torch; print('bundle: tracing with torch', torch.__version__)"
PYTHONPATH="$root/python" "${FUSION_BUNDLE_PYTHON:-python3}" "$root/benchmarks/gpu/compile_check.py" prepare "$build" \
  "$bundle/fusion-cache" 2>&1 | tail -1
mkdir -p "$bundle/bin" && cp "$build/bin/fusion-compile" "$bundle/bin/"
du -sh "$bundle"
