#!/usr/bin/env bash
# On the GPU machine, from the bundle: the correctness checks of the small
# workloads and the codegen cases (run_checks.py small) and the random
# graphs, the matmul cases with the generated (tensor-core) kernels and the
# prefill attention checks (attention_tiles) and the many-row cases of the
# row widths (row_widths_check.py),
# under compute-sanitizer: memcheck (out-of-bounds and misaligned
# accesses, with PyTorch's caching allocator off so that every tensor is its
# own allocation), racecheck (shared-memory hazards) and synccheck (barrier
# misuse). Any report fails the run. PyTorch's own kernels (the float64
# references; its reduce_kernel draws racecheck hazard reports) are left
# out (kernels whose mangled names start with at::native): the tools check
# Fusion's kernels. Logs go to $OUT (or ./results).
set -uo pipefail
cd "$(dirname "$0")"
export OUT=${OUT:-$PWD/results} PYTHONUNBUFFERED=1 PYTORCH_NO_CUDA_MEMORY_CACHING=1
mkdir -p "$OUT"
status=0
graphs=${SANITIZER_RANDOM_GRAPHS:-60}
# The runtime's look-up of the fusion_launch_dependents marker answers
# CUDA_ERROR_NOT_FOUND for every module without it (most of them), which
# the tools count as API errors; the runtime itself reports every other
# failing call (an exception in the checks), so API errors are not asked.
only_fusion="--kernel-name-exclude kns=_ZN2at6native --report-api-errors no"
for tool in memcheck racecheck synccheck; do
  compute-sanitizer --tool $tool $only_fusion --error-exitcode 9 --print-limit 20 \
    python3 run_checks.py small > "$OUT/sanitizer_${tool}_checks.txt" 2>&1 || status=1
  RANDOM_GRAPHS=$graphs compute-sanitizer --tool $tool $only_fusion --error-exitcode 9 --print-limit 20 \
    python3 random_graphs_check.py > "$OUT/sanitizer_${tool}_random_graphs.txt" 2>&1 || status=1
  compute-sanitizer --tool $tool $only_fusion --error-exitcode 9 --print-limit 20 \
    python3 matmul_checks.py matmul_cases.fused.generated > "$OUT/sanitizer_${tool}_matmul.txt" 2>&1 || status=1
  compute-sanitizer --tool $tool $only_fusion --error-exitcode 9 --print-limit 20 \
    python3 attention_prefill.py --checks > "$OUT/sanitizer_${tool}_attention.txt" 2>&1 || status=1
  # The rows of many-row cases (staged, streamed and held plans, clusters)
  # on their own: run_checks.py stops under racecheck (row_widths_check.py).
  compute-sanitizer --tool $tool $only_fusion --error-exitcode 9 --print-limit 20 \
    python3 row_widths_check.py _many > "$OUT/sanitizer_${tool}_rows.txt" 2>&1 || status=1
  for part in checks random_graphs matmul attention rows; do
    log="$OUT/sanitizer_${tool}_${part}.txt"
    echo "$tool $part: $(grep -h -E 'SUMMARY|passed, |random graphs on the GPU|matmul checks' "$log" | tr '\n' ' ')"
  done
done
exit $status
