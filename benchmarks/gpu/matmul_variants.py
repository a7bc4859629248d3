#!/usr/bin/env python3
"""Times builds of the matmul benchmark programs against each other in one
run, for before/after comparisons of a codegen change: each STEM is a
library compiled from matmul_bench.mlir (e.g. matmul_bench.fused.generated
and one built from an earlier commit), called through fusion.cuda with
preallocated outputs on the same inputs. Rounds alternate between the
libraries; each time is the median of triton.testing.do_bench, and the
table gives the median over rounds. Each library's outputs are also compared
with the first's (relative norm difference), so a faster build that computes
something else shows.

    python3 matmul_variants.py STEM [STEM ...] [--programs a,b] [--rounds N]

Writes matmul_variants.json into $OUT (or the current directory), or
matmul_variants.<n>.json where earlier runs left theirs (n = 1, 2, ...)."""

import argparse
import json
import os
import statistics
import sys

import torch
import triton.testing

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from fusion import cuda  # noqa: E402
import matmul_bench  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("stems", nargs="+")
    parser.add_argument("--programs", default=None)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    modules = {stem: cuda.load(os.path.join(here, stem + ".so")) for stem in args.stems}
    wanted = set(args.programs.split(",")) if args.programs else None
    rows, results = [], []
    for label, name, size, flops in matmul_bench.PROGRAMS:
        if wanted and label not in wanted:
            continue
        first = modules[args.stems[0]].functions[name]
        xs = matmul_bench.inputs_for(first, name, size)
        outs = {stem: m.functions[name](*xs) for stem, m in modules.items()}
        reference = outs[args.stems[0]]
        differs = {stem: max(float((o.double() - r.double()).norm() / r.double().norm().clamp_min(1e-30))
                             for o, r in zip(out, reference))
                   for stem, out in outs.items()}
        times = {stem: [] for stem in modules}
        for _ in range(args.rounds):
            for stem, m in modules.items():
                f = m.functions[name]
                times[stem].append(triton.testing.do_bench(
                    lambda: f(*xs, outputs=outs[stem]), warmup=50, rep=300, return_mode="median"))
        medians = {stem: statistics.median(t) for stem, t in times.items()}
        results.append(dict(program=label, flops=flops, ms=times, median_ms=medians,
                            difference_from_first=differs))
        rows.append(f"{label:22}" + "  ".join(
            f"{stem} {medians[stem]:.4f} ms ({flops / medians[stem] / 1e9:.0f} TFLOP/s, "
            f"diff {differs[stem]:.1e})" for stem in modules))
    out_dir = os.environ.get("OUT", ".")
    path, n = os.path.join(out_dir, "matmul_variants.json"), 1
    while os.path.exists(path):
        path, n = os.path.join(out_dir, f"matmul_variants.{n}.json"), n + 1
    with open(path, "w") as f:
        json.dump(dict(device=torch.cuda.get_device_name(), results=results), f, indent=1)
    print(torch.cuda.get_device_name())
    print("\n".join(rows))


if __name__ == "__main__":
    main()
