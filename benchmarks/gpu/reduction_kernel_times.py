#!/usr/bin/env python3
"""Where a reduction workload's time goes: the GPU activities of Fusion's
call (and of a `before` library's), of torch.compile's and of jax.jit's
for each workload of reductions.py named, from torch.profiler's CUDA
activity (each kernel's mean time a call, one call's timeline with the
idle time before each activity), at the benchmark's full scale.

    python3 reduction_kernel_times.py NAME [NAME ...] [--before LIB]
        [--calls N] [--flush]
    ncu ... --nvtx --nvtx-include "measured/" \\
        python3 reduction_kernel_times.py NAME ... --once

`--flush` writes 256 MiB between calls, as do_bench does to empty the L2
(the memset shows in the timeline); `--once` makes one call of each
variant inside an NVTX range `measured`, after warm-up, for ncu.
Writes reduction_kernel_times.json into $OUT (or the current
directory)."""

import argparse
import json
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from fusion import cuda  # noqa: E402
import reductions  # noqa: E402
from kernel_profile import add_arguments, print_report, profile_variants  # noqa: E402
from run_bench import DTYPES  # noqa: E402


def inputs(fn):
    """The benchmark's inputs: dynamic sizes at the full row count."""
    rows = reductions.SCALES["full"]["r"]
    return [torch.empty([rows if d is None else d for d in t.shape], dtype=DTYPES[t.element],
                        device="cuda").uniform_(-2, 2) for t in fn.inputs]


def variants(name, fused, before):
    """(label, call) of each way to run workload `name`."""
    fn = fused.functions[name]
    xs = inputs(fn)
    outs = fn(*xs)
    calls = [("fusion", lambda: fn(*xs, outputs=outs))]
    if before is not None and name in before.functions:
        calls.append(("fusion_before", lambda: before.functions[name](*xs, outputs=outs)))
    compiled = torch.compile(reductions.eager(name))
    calls.append(("torch.compile", lambda: compiled(*xs)))
    jitted = reductions.xla(name)
    if jitted is not None:
        import jax
        args = [jax.dlpack.from_dlpack(x) for x in xs]
        calls.append(("xla", lambda: jax.block_until_ready(jitted(*args))))
    return calls


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("names", nargs="+")
    parser.add_argument("--before", help="another library of the reductions' programs")
    add_arguments(parser)
    args = parser.parse_args()
    fused = cuda.load(os.path.join(here, "reductions_full.fused.so"))
    before = cuda.load(args.before) if args.before else None
    cache = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    report = {}
    for name in args.names:
        if name not in fused.functions:
            sys.exit(f"no workload {name!r} in reductions_full.fused.so")
        results, timelines = profile_variants(
            variants(name, fused, before), args.calls,
            cache if args.flush or args.once else None, args.once)
        if not args.once:
            print_report(name, results, timelines)
            report[name] = {"kernels": results, "timelines": timelines}
    if not args.once:
        with open(os.path.join(os.environ.get("OUT", "."), "reduction_kernel_times.json"), "w") as f:
            json.dump({"flush": args.flush, "calls": args.calls, "workloads": report}, f, indent=1)


if __name__ == "__main__":
    main()
