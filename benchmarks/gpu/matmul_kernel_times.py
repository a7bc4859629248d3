#!/usr/bin/env python3
"""The GPU time of each kernel of one matmul benchmark program, for the
Fusion libraries named and for torch.compile of the same program, from
torch.profiler's CUDA activity (mean over the profiled calls, after
warm-up): where a program's time goes, kernel by kernel; then each
library's GPU activities (kernels, memsets, copies) of one call in order,
with the idle time before each (negative where it overlaps the one before:
a programmatic dependent launch), and the mean span of a call back to back
against the GPU time in it: what launch gaps and memsets cost.

    python3 matmul_kernel_times.py PROGRAM [STEM ...] [--calls N]

PROGRAM is a label of matmul_bench.PROGRAMS (e.g. `mlp_block[4096]`);
STEM a library beside this script (default matmul_bench.fused.generated).
Writes matmul_kernel_times.json into $OUT (or the current directory)."""

import argparse
import json
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from fusion import cuda  # noqa: E402
import matmul_bench  # noqa: E402
from kernel_profile import kernel_times, print_report, profile, timeline  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("program")
    parser.add_argument("stems", nargs="*", default=["matmul_bench.fused.generated"])
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    entry = [p for p in matmul_bench.PROGRAMS if p[0] == args.program]
    if not entry:
        sys.exit(f"no program {args.program!r} in matmul_bench.PROGRAMS")
    label, name, size, _ = entry[0]
    results, timelines = {}, {}
    xs = None
    for stem in args.stems:
        fn = cuda.load(os.path.join(here, stem + ".so")).functions[name]
        xs = xs or matmul_bench.inputs_for(fn, name, size)
        outs = fn(*xs)
        activities = profile(lambda: fn(*xs, outputs=outs), args.calls)
        results[stem] = kernel_times(activities, args.calls)
        timelines[stem] = timeline(activities, args.calls)
    compiled = torch.compile(matmul_bench.EAGER[name])
    activities = profile(lambda: compiled(*xs), args.calls)
    results["torch.compile"] = kernel_times(activities, args.calls)
    timelines["torch.compile"] = timeline(activities, args.calls)
    print_report(label, results, timelines)
    with open(os.path.join(os.environ.get("OUT", "."), "matmul_kernel_times.json"), "w") as f:
        json.dump({"program": label, "kernels": results, "timelines": timelines}, f, indent=1)


if __name__ == "__main__":
    main()
