#!/usr/bin/env python3
"""Runs on the GPU machine, from the bundle: the seeded random graphs of
fusion.random_graphs (the CPU suite's generator: chains, broadcasts,
reductions over either axis, norms, softmax, slices, dynamic row counts and
row lengths), compiled fused and unfused for sm_90, checked the way the CPU
suite checks them (random_graphs.GraphChecker): fresh random inputs at a
large size (up to 700 rows of up to 4099), with infinities and NaNs, with
run-time sizes 0 and 1, and with a dynamic size off by one (refused with
SizeMismatchError exactly where numpy cannot broadcast); outputs poisoned
(debug=True), against the generator's float64 numpy evaluation. Tolerances
for f32: relative 1e-5, or absolute 1e-5 where cancellation makes a result
small. Prints a count."""

import os
import sys

import numpy as np
import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from fusion import cpu, cuda, random_graphs  # noqa: E402

SEED, COUNT = 1, int(os.environ.get("RANDOM_GRAPHS", "300"))


def main():
    graphs = [random_graphs.random_graph(SEED * 100000 + i) for i in range(COUNT)]
    modules = {label: cuda.load(os.path.join(here, f"random_graphs.{label}.so"), debug=True)
               for label in ("fused", "unfused")}
    rng = np.random.default_rng()
    checker = random_graphs.GraphChecker(rng)

    def runner(g):
        def run(inputs):
            xs = [torch.from_numpy(a).cuda() for a in inputs]
            results = []
            for label, module in modules.items():
                try:
                    outs = module.functions[g.name](*xs)
                    torch.cuda.synchronize()
                    results.append((label, [o.cpu().numpy() for o in outs]))
                except cpu.SizeMismatchError as e:
                    results.append((label, e))
                except Exception as e:  # a runtime error: reported as a failure
                    results.append((label, RuntimeError(f"{type(e).__name__}: {e}")))
            return results
        return run

    for g in graphs:
        rows, width = int(rng.integers(2, 700)), int(rng.choice([3, 37, 4099]))
        checker.check_graph(g, modules["fused"].functions[g.name].inputs, runner(g), rows, width)
    for line in checker.failures:
        print("FAIL:", line)
    print(f"random graphs on the GPU: {len(graphs)} graphs, {checker.summary()}, "
          f"{len(checker.failures)} failures")
    sys.exit(1 if checker.failures else 0)


if __name__ == "__main__":
    main()
