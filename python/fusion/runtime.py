"""Load a library made by fusion-compile, whatever its target:

    from fusion import runtime
    module = runtime.load("libmodel.so")     # libmodel.json beside it
    (y,) = module.softmax(x)                 # numpy arrays (cpu) or CUDA tensors (cuda)

Arguments are checked against the signature before anything runs (a
fusion.cpu.SignatureError otherwise); outputs are allocated, poisoned with
NaN, filled and returned.
"""

import ctypes
import json
import os

from . import cpu, cuda


def load(path):
    with open(os.path.splitext(path)[0] + ".json") as f:
        target = json.load(f)["target"]
    if target == "cuda":
        return cuda.load(path)
    library = os.path.abspath(path)
    ctypes.CDLL(library)  # loads the runtime it was linked with
    runtime = ctypes.CDLL("libfusion_cpu_runtime.so")
    runtime.fusion_traffic_bytes.restype = ctypes.c_int64
    runtime.fusion_traffic_bytes.argtypes = [ctypes.c_int64, ctypes.c_int32]
    return cpu.CompiledModule(library, cpu.read_signatures(library), runtime)
