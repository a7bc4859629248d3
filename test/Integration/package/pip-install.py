# The Python package installs with pip into a virtual environment and works
# there from another directory, with no PYTHONPATH, LD_LIBRARY_PATH or
# Fusion on PATH: `import fusion` comes from the environment, fusion-compile
# from the package (fusion/bin), a CPU library it compiles loads and runs,
# and its traffic counters work; the C++ call path's source (built on first
# use against the PyTorch at hand) is in the package. (The environment sees the system's
# site-packages for numpy and setuptools, so the install needs no network.)
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %fusion_python -m venv --system-site-packages %t/venv
# pip builds the wheel inside the directory it installs from: each test
# installs from its own copy, or the two package tests, run in parallel,
# race on build/bdist.* there (a CI run failed on a missing PKG-INFO).
# RUN: cp -r %fusion_obj_root/python-package %t/package
# RUN: %t/venv/bin/python -m pip install --quiet --no-build-isolation --no-deps --no-index %t/package
# RUN: cd / && env -u PYTHONPATH -u LD_LIBRARY_PATH PATH=/usr/bin:/bin %t/venv/bin/python %s %t

import os
import sys

if __name__ == "__main__" and len(sys.argv) == 2:
    work = sys.argv[1]
    import numpy as np

    import fusion
    from fusion import cpu, runtime, tools

    venv = os.path.join(work, "venv")
    assert os.path.abspath(fusion.__file__).startswith(venv), fusion.__file__
    from fusion import launch
    assert os.path.exists(launch._SOURCE) and launch._SOURCE.startswith(venv), launch._SOURCE
    compiler = tools.find("fusion-compile")
    assert compiler.startswith(venv), compiler
    source = os.path.join(work, "chain.mlir")
    with open(source, "w") as f:
        f.write("""
func.func @chain(%x: tensor<?x16xf32>, %w: tensor<16xf32>) -> tensor<?x16xf32> {
  %0 = fusion.mul %x, %w : (tensor<?x16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %1 = fusion.relu %0 : tensor<?x16xf32>
  return %1 : tensor<?x16xf32>
}
""")
    module = cpu.compile(source, count_traffic=True, work_dir=work)
    x = np.linspace(-1, 1, 5 * 16, dtype=np.float32).reshape(5, 16)
    w = np.linspace(0.5, 2, 16, dtype=np.float32)
    (y,) = runtime.load(module.path).chain(x, w)
    assert np.array_equal(y, np.maximum(x * w, 0)), y
    module.reset_traffic()
    module.chain(x, w)
    assert module.traffic(0) == (5 * 16 * 4 + 16 * 4, 5 * 16 * 4), module.traffic(0)
    print("ok: installed package compiled, loaded and ran", module.path)
