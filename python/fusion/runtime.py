"""Load a library made by fusion-compile, whatever its target:

    from fusion import runtime
    module = runtime.load("libmodel.so")     # libmodel.json beside it
    (y,) = module.softmax(x)                 # numpy arrays (cpu) or CUDA tensors (cuda)

Arguments are checked against the signature before anything runs (a
fusion.cpu.SignatureError otherwise); outputs are allocated, filled and
returned (poisoned with NaN first with `debug=True` or FUSION_DEBUG=1). It
works from any directory: a library finds its runtime beside it or in the
build that made it (its rpath), and the CPU traffic counters are looked up
through the library.
"""

import json
import os

from . import cpu, cuda


def load(path, debug=None):
    with open(os.path.splitext(path)[0] + ".json") as f:
        target = json.load(f)["target"]
    if target == "cuda":
        return cuda.load(path, debug)
    library = os.path.abspath(path)
    return cpu.CompiledModule(library, cpu.read_signatures(library), debug)
