#!/usr/bin/env python3
"""The GPU time of each kernel of one matmul benchmark program, for the
Fusion libraries named and for torch.compile of the same program, from
torch.profiler's CUDA activity (mean over the profiled calls, after
warm-up): where a program's time goes, kernel by kernel.

    python3 matmul_kernel_times.py PROGRAM [STEM ...] [--calls N]

PROGRAM is a label of matmul_bench.PROGRAMS (e.g. `mlp_block[4096]`);
STEM a library beside this script (default matmul_bench.fused.generated).
Writes matmul_kernel_times.json into $OUT (or the current directory)."""

import argparse
import collections
import json
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from fusion import cuda  # noqa: E402
import matmul_bench  # noqa: E402


def kernel_times(call, calls):
    """{kernel name: (launches a call, mean us a call)} over `calls` calls."""
    for _ in range(5):
        call()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            call()
        torch.cuda.synchronize()
    totals, counts = collections.defaultdict(float), collections.defaultdict(int)
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            totals[event.name] += event.device_time
            counts[event.name] += 1
    return {name: (counts[name] / calls, totals[name] / calls) for name in totals}


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
    results = {}
    xs = None
    for stem in args.stems:
        fn = cuda.load(os.path.join(here, stem + ".so")).functions[name]
        xs = xs or matmul_bench.inputs_for(fn, name, size)
        outs = fn(*xs)
        results[stem] = kernel_times(lambda: fn(*xs, outputs=outs), args.calls)
    compiled = torch.compile(matmul_bench.EAGER[name])
    results["torch.compile"] = kernel_times(lambda: compiled(*xs), args.calls)
    for who, kernels in results.items():
        total = sum(t for _, t in kernels.values())
        print(f"{label} {who}: {total:.1f} us of kernels a call")
        for kernel, (launches, t) in sorted(kernels.items(), key=lambda kv: -kv[1][1]):
            print(f"  {t:9.1f} us  x{launches:g}  {kernel[:110]}")
    with open(os.path.join(os.environ.get("OUT", "."), "matmul_kernel_times.json"), "w") as f:
        json.dump({"program": label, "kernels": results}, f, indent=1)


if __name__ == "__main__":
    main()
