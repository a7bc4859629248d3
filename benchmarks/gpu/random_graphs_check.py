#!/usr/bin/env python3
"""Runs on the GPU machine, from the bundle: the seeded random graphs of
fusion.random_graphs (the CPU suite's generator: chains, broadcasts,
reductions over either axis, norms, softmax, slices, dynamic row counts and
row lengths), compiled fused and unfused for sm_90, on fresh random inputs
(outputs poisoned: debug=True), against the generator's float64 numpy
evaluation. Tolerances for f32: relative 1e-5, or absolute 1e-5 where
cancellation makes a result small (as the CPU suite). Prints a count."""

import os
import sys

import numpy as np
import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from fusion import cuda, random_graphs, testing  # noqa: E402

SEED, COUNT = 1, int(os.environ.get("RANDOM_GRAPHS", "300"))
ABSOLUTE_F32 = 1e-5


def main():
    graphs = [random_graphs.random_graph(SEED * 100000 + i) for i in range(COUNT)]
    modules = {fuse: cuda.load(os.path.join(here, f"random_graphs.{'fused' if fuse else 'unfused'}.so"),
                               debug=True) for fuse in (True, False)}
    rng = np.random.default_rng()
    failures, calls = [], 0
    for g in graphs:
        fn = modules[True].functions[g.name]
        # Each graph at two sizes: a dynamic size of 1 and a larger one.
        for rows, width in ((1, 1), (int(rng.integers(2, 700)), int(rng.choice([3, 37, 4099])))):
            rows = rows if g.dynamic_rows else g.rows
            width = width if g.dynamic_width else g.width
            arrays = [testing.random_input(rng, t, s)
                      for t, s in zip(fn.inputs, g.input_shapes(rows, width))]
            expected = g.evaluate(*arrays)
            xs = [torch.from_numpy(a).cuda() for a in arrays]
            for fuse, module in modules.items():
                calls += 1
                label = f"{g.name}[{rows}x{width}] {'fused' if fuse else 'unfused'}"
                try:
                    outs = module.functions[g.name](*xs)
                    torch.cuda.synchronize()
                except Exception as e:  # a runtime error is a failure, reported
                    failures.append(f"{label}: {e}")
                    continue
                for i, (out, ref) in enumerate(zip(outs, expected)):
                    out = out.cpu().numpy()
                    if out.shape != np.shape(ref):
                        failures.append(f"{label} output {i}: shape {out.shape}, "
                                        f"expected {np.shape(ref)}")
                        continue
                    error = testing.relative_error(out, ref)
                    absolute = testing.max_abs_error(out, ref)
                    if error > testing.TOLERANCE["f32"] and absolute > ABSOLUTE_F32:
                        failures.append(f"{label} output {i}: relative {error:.2e}, "
                                        f"absolute {absolute:.2e}")
    for line in failures:
        print("FAIL:", line)
    print(f"random graphs on the GPU: {len(graphs)} graphs, {calls} calls, "
          f"{len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
