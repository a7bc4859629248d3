#!/usr/bin/env python3
"""Plots effective bandwidth per workload (Fusion fused, the peers, the copy
ceiling) from a bench_<scale>.json written by run_bench.py.

    python3 benchmarks/gpu/plot.py docs/results/bench_full_2026-11-29.json docs/results/bandwidth.png
"""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

source, target = sys.argv[1:3]
with open(source) as f:
    data = json.load(f)
results = [r for r in data["results"] if r["workload"] != "add_rmsnorm_decode"]
series = [("fusion", "Fusion (fused)"), ("torch.compile", "torch.compile"),
          ("xla", "XLA (jax.jit)"), ("eager", "torch eager"),
          ("fusion_unfused", "Fusion (one op per launch)")]
width = 0.16
fig, ax = plt.subplots(figsize=(12, 5))
for i, (key, label) in enumerate(series):
    xs = [j + (i - 2) * width for j in range(len(results))]
    ax.bar(xs, [r["gbs"].get(key, 0) for r in results], width, label=label)
ax.axhline(data["copy_gbs"], color="black", linestyle="--", linewidth=1,
           label=f"device copy {data['copy_gbs']:.0f} GB/s")
ax.set_xticks(range(len(results)))
ax.set_xticklabels([r["workload"] for r in results], rotation=30, ha="right")
ax.set_ylabel("effective GB/s (minimal bytes / median time)")
ax.set_title(f"{data['device']}: effective bandwidth per workload")
ax.legend(fontsize=8, ncol=3)
fig.tight_layout()
fig.savefig(target, dpi=110)
