#!/usr/bin/env python3
"""Times every function of a compiled library on the GPU machine: the
variants of one kernel under hand-written plans (made by
scripts/plan-variants.py), to measure which plan a shape should get.
Median of triton.testing.do_bench with preallocated outputs; effective
GB/s counts each input and output once. Prints one line per function and
writes the numbers as JSON into $OUT.

  python3 plan_sweep.py [--rep MS] LIBRARY.so [NAME...]

Variants of one kernel (functions of one signature) share their inputs.
"""

import argparse
import json
import os
import sys

import torch
import triton.testing

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from fusion import cuda  # noqa: E402

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
# Dynamic sizes are taken as this (run_bench.py's for the reduction workloads).
DYNAMIC_SIZE = 16384


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rep", type=int, default=200,
                        help="milliseconds of timed calls a function (do_bench's rep)")
    parser.add_argument("library")
    parser.add_argument("names", nargs="*", help="functions whose names start so")
    args = parser.parse_args()
    module = cuda.load(args.library)
    results, inputs = [], {}
    for name, fn in module.functions.items():
        if args.names and not any(name.startswith(n) for n in args.names):
            continue
        signature = tuple((tuple(t.shape), t.element) for t in fn.inputs)
        if signature not in inputs:
            inputs.clear()
            inputs[signature] = [
                torch.empty([DYNAMIC_SIZE if d is None else d for d in t.shape],
                            dtype=DTYPES[t.element], device="cuda").uniform_(-2, 2)
                for t in fn.inputs]
        xs = inputs[signature]
        outs = fn(*xs)
        nbytes = sum(t.numel() * t.element_size() for t in list(xs) + list(outs))
        ms = triton.testing.do_bench(lambda: fn(*xs, outputs=outs), warmup=25,
                                     rep=args.rep, return_mode="median")
        results.append(dict(function=name, ms=ms, gbs=nbytes / ms / 1e6))
        print(f"{name:40} {ms * 1e3:9.1f} us {nbytes / ms / 1e6:7.0f} GB/s", flush=True)
    with open(os.path.join(os.environ.get("OUT", "."), "plan_sweep.json"), "w") as f:
        json.dump(dict(device=torch.cuda.get_device_name(),
                       library=os.path.basename(args.library), results=results), f, indent=1)


if __name__ == "__main__":
    main()
