#!/usr/bin/env python3
"""Where a prefill attention call's time goes: the GPU activities of
Fusion's call (attention_prefill.fused.so, and of attention_prefill.before.so
where present) beside scaled_dot_product_attention's (its flash backend) at
the lengths named, from torch.profiler's CUDA activity: each kernel's mean
time a call and one call's timeline with the idle time before each activity.
Set against the do_bench times of attention_prefill.py, it tells a kernel's
own time from what surrounds it.

    python3 attention_kernel_times.py [--programs prefill,prefill_d64]
        [--lengths 1024,4096] [--calls N] [--flush]
    ncu ... --nvtx --nvtx-include "measured/" \\
        python3 attention_kernel_times.py ... --once

`--flush` writes 256 MiB between calls, as do_bench does to empty the L2;
`--once` makes one call of each variant inside an NVTX range `measured`,
after warm-up, for ncu. Writes attention_kernel_times.json into $OUT (or
the current directory)."""

import argparse
import json
import os
import sys

import torch
import torch.nn.functional as F

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from fusion import cuda  # noqa: E402
import attention_prefill  # noqa: E402
from kernel_profile import add_arguments, print_report, profile_variants  # noqa: E402


def variants(name, length, libraries):
    """(label, call) of each way to run `name` at `length` query rows and
    keys: each library's function and SDPA."""
    dim = attention_prefill.PROGRAMS[name][0]
    g = torch.Generator(device="cuda").manual_seed(length)
    q, k, v = (torch.randn(attention_prefill.BATCH, attention_prefill.HEADS, length, dim,
                           device="cuda", generator=g).bfloat16() for _ in range(3))
    out = [torch.empty_like(q)]
    calls = [(label, lambda f=library.functions[name]: f(q, k, v, outputs=out))
             for label, library in libraries.items() if name in library.functions]
    calls.append(("sdpa", lambda: F.scaled_dot_product_attention(q, k, v, scale=dim ** -0.5)))
    return calls


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--programs", default="prefill,prefill_d64")
    parser.add_argument("--lengths", default="1024,4096")
    add_arguments(parser)
    args = parser.parse_args()
    libraries = {"fusion": cuda.load(os.path.join(here, "attention_prefill.fused.so"))}
    before = os.path.join(here, "attention_prefill.before.so")
    if os.path.exists(before):
        libraries["fusion_before"] = cuda.load(before)
    cache = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    report = {}
    for name in args.programs.split(","):
        if name not in ("prefill", "prefill_d64"):
            sys.exit(f"{name!r}: only prefill and prefill_d64 have an SDPA twin here")
        for length in (int(n) for n in args.lengths.split(",")):
            label = f"{name}[{length}]"
            results, timelines = profile_variants(
                variants(name, length, libraries), args.calls,
                cache if args.flush or args.once else None, args.once)
            if not args.once:
                print_report(label, results, timelines)
                report[label] = {"kernels": results, "timelines": timelines}
    if not args.once:
        with open(os.path.join(os.environ.get("OUT", "."), "attention_kernel_times.json"),
                  "w") as f:
            json.dump({"flush": args.flush, "calls": args.calls, "programs": report}, f, indent=1)


if __name__ == "__main__":
    main()
