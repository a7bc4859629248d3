#!/usr/bin/env python3
"""The row kernels of row_widths.py whose names contain any of the given
patterns, each checked against PyTorch in float64 as run_checks.py does
(fresh inputs, outputs poisoned first by the debug loader, every element
held to the type's tolerance), in a process small enough for the
sanitizers:

    compute-sanitizer --tool racecheck python3 row_widths_check.py _many

(run_checks.py under racecheck stops at its first kernel with an
internal sanitizer error on the H200 of 2026-12-04, before any Fusion
kernel runs; this script's kernels run under it.) Exits 1 if a case fails
or none matches."""

import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from fusion import cuda  # noqa: E402
import row_widths  # noqa: E402
from run_checks import TOLERANCE, inputs_for, rel_error, worst_error  # noqa: E402


def main():
    patterns = sys.argv[1:] or [""]
    module = cuda.load(os.path.join(here, "row_widths.fused.so"), debug=True)
    checked = failed = 0
    for name, fn in module.functions.items():
        if not any(p in name for p in patterns):
            continue
        xs = inputs_for(fn, name)
        outs = fn(*xs)
        torch.cuda.synchronize()
        refs = row_widths.reference(name, *xs)
        errors = [max(rel_error(o, r), worst_error(o, r)) for o, r in zip(outs, refs)]
        ok = all(e <= TOLERANCE[t.element] for e, t in zip(errors, fn.outputs))
        checked += 1
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name:32} rel.err "
              + " ".join(f"{e:.1e}" for e in errors), flush=True)
    print(f"{checked - failed} passed, {failed} failed")
    sys.exit(1 if failed or not checked else 0)


if __name__ == "__main__":
    main()
