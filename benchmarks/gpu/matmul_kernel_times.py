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
import collections
import json
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from fusion import cuda  # noqa: E402
import matmul_bench  # noqa: E402


def profile(call, calls):
    """The GPU activities of `calls` calls back to back (after warm-up),
    ordered by start: (name, start us, duration us)."""
    for _ in range(5):
        call()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            call()
        torch.cuda.synchronize()
    return sorted(((event.name, event.time_range.start, event.device_time)
                   for event in prof.events()
                   if event.device_type == torch.autograd.DeviceType.CUDA),
                  key=lambda activity: activity[1])


def kernel_times(activities, calls):
    """{kernel name: (launches a call, mean us a call)}."""
    totals, counts = collections.defaultdict(float), collections.defaultdict(int)
    for name, _, duration in activities:
        totals[name] += duration
        counts[name] += 1
    return {name: (counts[name] / calls, totals[name] / calls) for name in totals}


def timeline(activities, calls):
    """One call's activities from the middle of the run, each with the GPU
    idle time before it, and the mean span and busy time of a call."""
    per_call = len(activities) // calls
    span = (activities[-1][1] + activities[-1][2] - activities[0][1]) / calls
    busy = sum(a[2] for a in activities) / calls
    middle = (calls // 2) * per_call
    rows = []
    for i in range(middle, middle + per_call):
        name, start, duration = activities[i]
        previous = activities[i - 1]
        rows.append(dict(name=name, idle_before_us=start - previous[1] - previous[2],
                         us=duration))
    return dict(span_us=span, busy_us=busy, activities=rows)


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
    for who, kernels in results.items():
        total = sum(t for _, t in kernels.values())
        print(f"{label} {who}: {total:.1f} us of kernels a call")
        for kernel, (launches, t) in sorted(kernels.items(), key=lambda kv: -kv[1][1]):
            print(f"  {t:9.1f} us  x{launches:g}  {kernel[:110]}")
    for who, line in timelines.items():
        print(f"{label} {who}: a call spans {line['span_us']:.1f} us back to back, "
              f"the GPU busy {line['busy_us']:.1f} us of it; one call:")
        for a in line["activities"]:
            print(f"  idle {a['idle_before_us']:6.1f} us, then {a['us']:7.1f} us  {a['name'][:90]}")
    with open(os.path.join(os.environ.get("OUT", "."), "matmul_kernel_times.json"), "w") as f:
        json.dump({"program": label, "kernels": results, "timelines": timelines}, f, indent=1)


if __name__ == "__main__":
    main()
