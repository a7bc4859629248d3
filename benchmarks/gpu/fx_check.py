#!/usr/bin/env python3
"""Here, after fx_export.py ran on the GPU machine: compiles each exported
fusion module for the CPU and compares its outputs with the outputs torch
2.x computed there.  python3 benchmarks/gpu/fx_check.py DIR [BUILD_DIR]"""

import glob
import os
import sys

import numpy as np

from fusion import cpu


def main():
    directory = sys.argv[1]
    build = sys.argv[2] if len(sys.argv) > 2 else "build"
    failures = 0
    for source in sorted(glob.glob(os.path.join(directory, "*.mlir"))):
        name = os.path.splitext(os.path.basename(source))[0]
        data = np.load(os.path.join(directory, name + ".npz"))
        count = lambda prefix: len([k for k in data.files if k.startswith(prefix)])  # noqa: E731
        args = [data[f"input{i}"] for i in range(count("input"))] + \
               [data[f"param{i}"] for i in range(count("param"))]
        module = cpu.compile(source, build, fuse=True, work_dir=directory, debug=True)
        got = module.functions[name](*args)
        for i, g in enumerate(got):
            e = data[f"expected{i}"].astype(np.float64)
            error = float(np.linalg.norm(g - e) / max(np.linalg.norm(e), 1e-30))
            ok = error <= float(data["tolerance"])
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name:18} output {i}: rel. error {error:.1e}")
    print(f"{failures} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
