#!/usr/bin/env python3
"""Runs on the GPU machine, from a bundle made by scripts/build-gpu-bundle.sh:
the split reductions (column sums, sums over everything, split rows) keep
their arrival counters in a buffer the runtime holds per stream, which every
launch leaves zero (fusion_cuda_arrival_counters). This checks what that
buffer must survive, against a PyTorch float64 reference on fresh random
inputs, outputs poisoned with NaN first:

- `streams`: every reductions_small function called 6 times in turn on
  3 streams without waiting in between, so calls on different streams run
  at once (each stream has its own counters);
- `graph`: each call captured into a CUDA graph (its counters are the
  graph's own), the graph replayed 3 times on new inputs with a direct call
  on the current stream between the replays.

Prints a table last and writes arrival_counters_check.json into $OUT.

    python3 arrival_counters_check.py
"""

import json
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from fusion import cuda  # noqa: E402
import reductions  # noqa: E402
from run_checks import DTYPES, TOLERANCE, inputs_for, rel_error  # noqa: E402

STREAMS = 3
CALLS = 6
REPLAYS = 3


def shapes_of(name):
    """A call's input shapes: the largest the checks use (None: the
    signature's)."""
    return reductions.SHAPES.get(name, [None])[-1]


def fresh(fn, name):
    return inputs_for(fn, name, rows=1000, shapes=shapes_of(name))


def poisoned(fn, xs):
    """NaN-filled outputs of the shapes the call makes."""
    return [torch.full(s, float("nan"), dtype=DTYPES[t.element], device="cuda")
            for s, t in zip(fn.output_shapes(xs), fn.outputs)]


def worst(fn, name, xs, outs):
    refs = reductions.reference(name, *xs)
    return max(rel_error(o, r) / TOLERANCE[t.element]
               for o, r, t in zip(outs, refs, fn.outputs))


def check_streams(fn, name):
    """The worst error over the calls, as a fraction of the tolerance."""
    streams = [torch.cuda.Stream() for _ in range(STREAMS)]
    calls = []
    for i in range(CALLS):
        xs = fresh(fn, name)
        outs = poisoned(fn, xs)
        stream = streams[i % STREAMS]
        # The stream waits for the inputs made on the current one.
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            fn(*xs, outputs=outs)
        calls.append((xs, outs))
    torch.cuda.synchronize()
    return max(worst(fn, name, xs, outs) for xs, outs in calls)


def check_graph(fn, name):
    xs = fresh(fn, name)
    outs = poisoned(fn, xs)
    fn(*xs, outputs=outs)  # loads the module before the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn(*xs, outputs=outs)
    errors = []
    for _ in range(REPLAYS):
        for x, new in zip(xs, fresh(fn, name)):
            x.copy_(new)
        for o in outs:
            o.fill_(float("nan"))
        graph.replay()
        direct_xs = fresh(fn, name)
        direct = poisoned(fn, direct_xs)
        fn(*direct_xs, outputs=direct)
        torch.cuda.synchronize()
        errors += [worst(fn, name, xs, outs), worst(fn, name, direct_xs, direct)]
    return max(errors)


def main():
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    module = cuda.load(os.path.join(here, "reductions_small.fused.so"), debug=False)
    results, lines = [], []
    for name, fn in module.functions.items():
        for test, run in (("streams", check_streams), ("graph", check_graph)):
            try:
                error = run(fn, name)
                module.raise_if_failed()
                ok, detail = error <= 1.0, f"{error:.2f} of the tolerance"
            except Exception as e:  # a runtime error is a failure, reported
                ok, detail = False, f"error: {e}"
            results.append(dict(workload=name, test=test, ok=ok, errors=detail))
            lines.append(f"{'ok  ' if ok else 'FAIL'} {name:24} {test:8} {detail}")
    with open(os.path.join(os.environ.get("OUT", "."), "arrival_counters_check.json"),
              "w") as f:
        json.dump(results, f, indent=1)
    print(f"GPU: {torch.cuda.get_device_name()}")
    print("\n".join(lines))
    failed = sum(not r["ok"] for r in results)
    print(f"arrival counters checks: {len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
