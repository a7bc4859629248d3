#!/usr/bin/env python3
"""Times every function of a compiled library on the GPU machine: the
variants of one kernel under hand-written plans (made by
scripts/plan-variants.py), to measure which plan a shape should get.
Median of triton.testing.do_bench with preallocated outputs; effective
GB/s counts each input and output once. Prints one line per function and
writes the numbers as JSON into $OUT.

  python3 plan_sweep.py [--rep MS] [--check] LIBRARY.so [NAME...]

Variants of one kernel (functions of one signature) share their inputs.
With --check, the samples of measure-row-plans.py (OnePass: logsumexp,
TwoPass: softmax, ThreePass: layernorm) are first checked against PyTorch
in float64 with their outputs poisoned (NaN), at run_checks.py's
tolerances, whole outputs and each element; a variant that fails is
reported and not timed.
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
    parser.add_argument("--check", action="store_true",
                        help="check the row-plan samples before timing them")
    parser.add_argument("library")
    parser.add_argument("names", nargs="*", help="functions whose names start so")
    args = parser.parse_args()
    module = cuda.load(args.library)
    results, inputs, checks, references = [], {}, [], {}
    for name, fn in module.functions.items():
        if args.names and not any(name.startswith(n) for n in args.names):
            continue
        signature = tuple((tuple(t.shape), t.element) for t in fn.inputs)
        if signature not in inputs:
            inputs.clear()
            references.clear()
            inputs[signature] = [
                torch.empty([DYNAMIC_SIZE if d is None else d for d in t.shape],
                            dtype=DTYPES[t.element], device="cuda").uniform_(-2, 2)
                for t in fn.inputs]
        xs = inputs[signature]
        outs = fn(*xs)
        if args.check:
            ok, detail = check_row_sample(name, fn, xs, outs, references)
            checks.append(dict(function=name, ok=ok, errors=detail))
            if not ok:
                print(f"FAIL {name}: {detail}", flush=True)
                continue
        nbytes = sum(t.numel() * t.element_size() for t in list(xs) + list(outs))
        ms = triton.testing.do_bench(lambda: fn(*xs, outputs=outs), warmup=25,
                                     rep=args.rep, return_mode="median")
        results.append(dict(function=name, ms=ms, gbs=nbytes / ms / 1e6))
        print(f"{name:40} {ms * 1e3:9.1f} us {nbytes / ms / 1e6:7.0f} GB/s", flush=True)
        # Written as it goes, so that a run stopped by a time limit keeps
        # what it measured.
        if len(results) % 100 == 0:
            write_results(args.library, results, checks)
    write_results(args.library, results, checks)
    if args.check:
        failed = sum(not c["ok"] for c in checks)
        print(f"checks: {len(checks) - failed} passed, {failed} failed")
        sys.exit(1 if failed else 0)


def write_results(library, results, checks):
    with open(os.path.join(os.environ.get("OUT", "."), "plan_sweep.json"), "w") as f:
        json.dump(dict(device=torch.cuda.get_device_name(),
                       library=os.path.basename(library), results=results,
                       checks=checks), f, indent=1)


def row_sample_reference(name, xs):
    """The float64 outputs of a measure-row-plans.py sample, by its class."""
    x = xs[0].double()
    if name.startswith("OnePass_"):
        return [torch.logsumexp(x, -1)]
    if name.startswith("TwoPass_"):
        return [torch.softmax(x, -1)]
    if name.startswith("ThreePass_"):
        return [torch.nn.functional.layer_norm(x, x.shape[-1:], xs[1].double(),
                                               xs[2].double(), eps=1e-5)]
    return None


def check_row_sample(name, fn, xs, outs, references):
    """(ok, errors) of one call of `fn` into poisoned `outs`; `references`
    keeps the float64 outputs of the inputs `xs` by class."""
    from run_checks import TOLERANCE, rel_error, worst_error
    row_class = name.split("_")[0]
    if row_class not in references:
        references[row_class] = row_sample_reference(name, xs)
    refs = references[row_class]
    if refs is None:
        return False, "not a row-plan sample: no reference"
    for out in outs:
        out.fill_(float("nan"))
    fn(*xs, outputs=outs)
    torch.cuda.synchronize()
    errors = [max(rel_error(o, r), worst_error(o, r)) for o, r in zip(outs, refs)]
    ok = all(e <= TOLERANCE[t.element] for e, t in zip(errors, fn.outputs))
    return ok, " ".join(f"{e:.1e}" for e in errors)


if __name__ == "__main__":
    main()
