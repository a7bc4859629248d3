"""Where Fusion's command-line tools are: a build directory when the caller
names one, else the installed package's own copies (fusion/bin), else PATH.
Also where Fusion caches what it builds on a machine (cache_dir)."""

import os
import shutil

_PACKAGE_BIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin")


def find(name, build_dir=None):
    """The path of tool `name` (fusion-compile, fusion-opt)."""
    if build_dir is not None:
        return os.path.join(os.path.abspath(build_dir), "bin", name)
    packaged = os.path.join(_PACKAGE_BIN, name)
    if os.access(packaged, os.X_OK):
        return packaged
    found = shutil.which(name)
    if found:
        return found
    raise FileNotFoundError(
        f"{name} not found: pass build_dir=, install the package (pip install build/python-package) "
        f"or put it on PATH")


def cache_dir():
    """The directory of Fusion's disk cache (compiled parts of torch.compile
    graphs, the C++ call path): FUSION_CACHE_DIR, else fusion/ in the user's
    cache directory."""
    root = os.environ.get("FUSION_CACHE_DIR")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "fusion")
    os.makedirs(root, exist_ok=True)
    return root
