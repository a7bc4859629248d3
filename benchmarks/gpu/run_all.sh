#!/usr/bin/env bash
# The one command on the GPU machine, from the bundle: correctness (small and
# full shapes, the reduction workloads, the matmul cases, and the error of
# the elementwise math against float64), decode and prefill attention against SDPA, timings of the
# benchmark and of the reduction workloads beside torch eager,
# torch.compile, jax.jit and the copy ceiling, DRAM traffic from ncu against
# the report, the GPU time of each decode kernel, and the matmul programs
# (TFLOP/s beside torch eager and torch.compile). JSON results go to $OUT (or ./results); the short table
# comes last.
set -uo pipefail
cd "$(dirname "$0")"
export OUT=${OUT:-$PWD/results} XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
mkdir -p "$OUT"
status=0
python3 run_checks.py small > "$OUT/checks_small.txt" 2>&1 || status=1
python3 run_checks.py full > "$OUT/checks_full.txt" 2>&1 || status=1
python3 matmul_checks.py > "$OUT/matmul_checks.txt" 2>&1 || status=1
python3 matmul_checks.py matmul_cases.fused.generated > "$OUT/matmul_checks_generated.txt" 2>&1 || status=1
python3 arrival_counters_check.py > "$OUT/arrival_counters.txt" 2>&1 || status=1
python3 random_graphs_check.py > "$OUT/random_graphs.txt" 2>&1 || status=1
python3 math_accuracy.py > "$OUT/math_accuracy.txt" 2>&1 || status=1
ncu_metrics=dram__bytes_read.sum,dram__bytes_write.sum
for v in fused unfused; do
  ncu --clock-control none --metrics $ncu_metrics --csv python3 run_traffic.py full $v \
    > "$OUT/ncu_$v.csv" 2> "$OUT/ncu_$v.err" || status=1
  python3 run_traffic.py --compare "$OUT/ncu_$v.csv" full $v > "$OUT/traffic_$v.txt" 2>&1 || status=1
done
ncu --clock-control none --metrics $ncu_metrics --csv python3 run_traffic.py streamed fused \
  > "$OUT/ncu_streamed.csv" 2> "$OUT/ncu_streamed.err" || status=1
python3 run_traffic.py --compare "$OUT/ncu_streamed.csv" streamed fused > "$OUT/traffic_streamed.txt" 2>&1 || status=1
ncu --clock-control none --metrics $ncu_metrics --csv python3 run_traffic.py reductions_full fused \
  > "$OUT/ncu_reductions.csv" 2> "$OUT/ncu_reductions.err" || status=1
python3 run_traffic.py --compare "$OUT/ncu_reductions.csv" reductions_full fused > "$OUT/traffic_reductions.txt" 2>&1 || status=1
ncu --clock-control none --metrics gpu__time_duration.sum --csv python3 run_traffic.py --decode full \
  > "$OUT/ncu_decode.csv" 2> "$OUT/ncu_decode.err" || status=1
python3 run_traffic.py --decode-times "$OUT/ncu_decode.csv" > "$OUT/decode.txt" 2>&1 || status=1
# torch.compile(backend="fusion"), from the libraries compiled ahead of time.
FUSION_CACHE_DIR=$PWD/fusion-cache FUSION_BUILD_DIR=$PWD LD_LIBRARY_PATH=$PWD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
  python3 compile_check.py 2>&1 | grep -vi warning > "$OUT/compile_check.txt" || status=1
python3 attention_decode.py 2>&1 | grep -vi warning > "$OUT/attention_decode.txt" || status=1
python3 attention_prefill.py 2>&1 | grep -vi warning > "$OUT/attention_prefill.txt" || status=1
python3 attention_views.py 2>&1 | grep -vi warning > "$OUT/attention_views.txt" || status=1
python3 run_bench.py full 2>&1 | grep -vi warning > "$OUT/bench.txt" || status=1
python3 run_bench.py reductions 2>&1 | grep -vi warning > "$OUT/bench_reductions.txt" || status=1
python3 matmul_bench.py 2>&1 | grep -vi warning > "$OUT/matmul_bench.txt" || status=1

echo "== correctness";  grep -h -E "FAIL|passed|random graphs" "$OUT/checks_small.txt" "$OUT/checks_full.txt" "$OUT/matmul_checks.txt" "$OUT/matmul_checks_generated.txt" "$OUT/random_graphs.txt" "$OUT/math_accuracy.txt"
echo "== DRAM traffic (ncu) / predicted"; cat "$OUT/traffic_fused.txt" "$OUT/traffic_unfused.txt" "$OUT/traffic_streamed.txt" "$OUT/traffic_reductions.txt"
echo "== decode: GPU time per kernel"; cat "$OUT/decode.txt"
echo "== effective GB/s"; cat "$OUT/bench.txt" "$OUT/bench_reductions.txt"
echo "== matmul programs"; cat "$OUT/matmul_bench.txt"
echo "== torch.compile(backend=\"fusion\")"; grep -E "FAIL|checks passed" "$OUT/compile_check.txt"; sed -n '/^model/,$p' "$OUT/compile_check.txt"
exit $status
