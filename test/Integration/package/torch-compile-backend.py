# The installed package registers the torch.compile backend by name, through
# its `torch_dynamo_backends` entry point: in a virtual environment with the
# package installed (and PyTorch 2.x from the system's site-packages), from
# another directory with no PYTHONPATH or Fusion on PATH,
# `torch.compile(f, backend="fusion")` compiles with the package's own
# fusion-compile, without `import fusion` first, and matches PyTorch.
#
# REQUIRES: torch-compile
# RUN: rm -rf %t && mkdir -p %t
# RUN: %fusion_python -m venv --system-site-packages %t/venv
# pip builds the wheel inside the directory it installs from: each test
# installs from its own copy, or the two package tests, run in parallel,
# race on build/bdist.* there (a CI run failed on a missing PKG-INFO).
# RUN: cp -r %fusion_obj_root/python-package %t/package
# RUN: %t/venv/bin/python -m pip install --quiet --no-build-isolation --no-deps --no-index %t/package
# RUN: cd / && env -u PYTHONPATH -u LD_LIBRARY_PATH FUSION_CACHE_DIR=%t/cache PATH=/usr/bin:/bin %t/venv/bin/python %s %t

import os
import sys
from importlib.metadata import entry_points

work = sys.argv[1]
(entry,) = [e for e in entry_points(group="torch_dynamo_backends") if e.name == "fusion"]
assert entry.value == "fusion.backend:fusion_backend", entry.value
assert "fusion" not in sys.modules

import torch  # noqa: E402


def gelu_residual(x, w, r):
    return torch.nn.functional.gelu(x * w, approximate="tanh") + r


x, w, r = torch.randn(8, 32), torch.randn(32), torch.randn(8, 32)
with torch.no_grad():
    got = torch.compile(gelu_residual, backend="fusion")(x, w, r)
expected = gelu_residual(x.double(), w.double(), r.double())
error = float((got.double() - expected).norm() / expected.norm())
import fusion  # noqa: E402  (loaded by torch through the entry point)

assert os.path.abspath(fusion.__file__).startswith(os.path.join(work, "venv")), fusion.__file__
libraries = os.listdir(os.path.join(work, "cache"))
assert error <= 1e-5 and len(libraries) == 1, (error, libraries)
print(f"ok: torch.compile(backend='fusion') from the installed package, rel. error {error:.1e}")
