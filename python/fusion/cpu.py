"""Compile fusion modules for the CPU (with fusion-compile) and call their
functions with numpy.

    from fusion import cpu
    module = cpu.compile("model.mlir", build_dir="build", fuse=True)
    (y,) = module.softmax(x)

Functions take their inputs as numpy arrays and return their outputs,
allocated here from the signature (a dynamic output dimension takes the size
of the input dimension fusion-compile traced it to). Dynamic sizes that must
agree are checked by the compiled function before it runs: a mismatch
raises SizeMismatchError naming the function, the arguments and the sizes. With `debug=True` (or FUSION_DEBUG=1 in the
environment) outputs are poisoned with NaN before the call, so an element
the program never writes shows up; the tests ask for it.
"""

import ctypes
import functools
import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from typing import List, Optional, Tuple

import numpy as np

from . import tools

try:
    import ml_dtypes

    BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # bf16 functions then cannot be called
    BFLOAT16 = None

@dataclass
class TensorType:
    shape: Tuple[Optional[int], ...]  # None for a dynamic dimension
    element: str  # f32, f16, bf16, i1
    # For an output: per dimension, the (input, dimension) a dynamic size
    # comes from (None where unknown), as fusion-compile traced it.
    dim_sources: Optional[Tuple[Optional[Tuple[int, int]], ...]] = None

    @property
    def dtype(self):
        if self.element == "bf16":
            if BFLOAT16 is None:
                raise TypeError("bf16 needs the ml_dtypes package")
            return BFLOAT16
        return np.dtype({"f32": np.float32, "f16": np.float16, "i1": np.bool_}[self.element])

    def __str__(self):
        dims = ["?" if d is None else str(d) for d in self.shape]
        return "tensor<" + "x".join(dims + [self.element]) + ">"


def _parse_tensor(text):
    """TensorType of "4x?xbf16" (the inside of a tensor<...> type)."""
    parts = text.split("x")
    element = parts[-1]
    shape = tuple(None if p == "?" else int(p) for p in parts[:-1])
    return TensorType(shape, element)


@functools.lru_cache(maxsize=None)
def _descriptor_type(rank):
    """The ctypes struct of a rank-`rank` memref descriptor (one class per
    rank: building a ctypes class per call costs tens of microseconds)."""
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
              ("offset", ctypes.c_int64)]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    return type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})


def _descriptor(array):
    desc = _descriptor_type(array.ndim)()
    pointer = array.ctypes.data_as(ctypes.c_void_p)
    desc.allocated = pointer
    desc.aligned = pointer
    desc.offset = 0
    for i in range(array.ndim):
        desc.sizes[i] = array.shape[i]
        desc.strides[i] = array.strides[i] // array.itemsize
    return desc


class SignatureError(TypeError):
    """An argument does not match the function's signature."""


class SizeMismatchError(SignatureError, ValueError):
    """Dynamic sizes of a call that must be equal are not: the compiled
    function refused the call before touching memory."""


def output_shapes(name, inputs, outputs, input_shapes):
    """The shapes of a call's outputs: a dynamic output dimension takes the
    size of the input dimension the compiler traced it to (the signature
    file's output_dim_sources). Whether the sizes agree is checked by the
    compiled function itself before it touches memory."""
    shapes = []
    for out in outputs:
        shape = []
        for i, dim in enumerate(out.shape):
            if dim is None:
                traced = out.dim_sources[i] if out.dim_sources else None
                if traced is None:
                    raise SignatureError(f"{name}: the signature file does not say how to size "
                                         f"dimension {i} of {out} (recompile with this fusion-compile)")
                dim = input_shapes[traced[0]][traced[1]]
            shape.append(int(dim))
        shapes.append(tuple(shape))
    return shapes


def debug_default():
    """Whether calls poison their outputs when the caller does not say:
    FUSION_DEBUG=1 in the environment."""
    return os.environ.get("FUSION_DEBUG") == "1"


class Function:
    def __init__(self, library, name, inputs, outputs, debug=False, in_place=frozenset()):
        self.name = name
        self.debug = debug
        self.inputs, self.outputs = inputs, outputs
        # (input, result): result may be written into that input's buffer.
        self.in_place = in_place
        self._entry = getattr(library, "_mlir_ciface_" + name)
        self._entry.restype = None
        # The CPU runtime, reached through the library; a library without
        # size checks does not link it (and has nothing to report).
        self._last_error = getattr(library, "fusion_cpu_last_error", None)
        if self._last_error:
            self._last_error.restype = ctypes.c_char_p
            self._clear_error = library.fusion_cpu_clear_error

    def output_shapes(self, arrays):
        return output_shapes(self.name, self.inputs, self.outputs,
                             [a.shape for a in arrays])

    def check(self, arrays):
        if len(arrays) != len(self.inputs):
            raise SignatureError(f"{self.name} takes {len(self.inputs)} arrays, got {len(arrays)}")
        for i, (array, expected) in enumerate(zip(arrays, self.inputs)):
            if not isinstance(array, np.ndarray):
                raise SignatureError(f"{self.name}: argument {i} is not a numpy array")
            if array.dtype != expected.dtype:
                raise SignatureError(f"{self.name}: argument {i} has dtype {array.dtype}, expected {expected.element} for {expected}")
            if array.ndim != len(expected.shape) or any(
                    d is not None and d != s for d, s in zip(expected.shape, array.shape)):
                raise SignatureError(f"{self.name}: argument {i} has shape {array.shape}, expected {expected}")

    def check_outputs(self, outputs, shapes):
        if len(outputs) != len(self.outputs):
            raise SignatureError(f"{self.name} writes {len(self.outputs)} outputs, got {len(outputs)}")
        for i, (out, shape, t) in enumerate(zip(outputs, shapes, self.outputs)):
            if not isinstance(out, np.ndarray) or out.dtype != t.dtype or out.shape != shape:
                raise SignatureError(f"{self.name}: output {i} is not a {shape} array of {t.element}")
            if not out.flags.c_contiguous or not out.flags.writeable:
                raise SignatureError(f"{self.name}: output {i} is not a writable contiguous array")

    def __call__(self, *arrays, outputs=None):
        """The outputs, allocated here or written into `outputs` (arrays of
        the output shapes: an input may be one where fusion-compile proved
        it safe, see in_place)."""
        self.check(arrays)
        arrays = [np.ascontiguousarray(a) for a in arrays]
        shapes = self.output_shapes(arrays)
        if outputs is not None:
            self.check_outputs(outputs, shapes)
            outputs = list(outputs)
        else:
            outputs = []
            for shape, t in zip(shapes, self.outputs):
                out = np.empty(shape, dtype=t.dtype)
                if self.debug and t.element != "i1":
                    out[...] = np.nan  # poison: unwritten elements stay NaN
                outputs.append(out)
        descriptors = [_descriptor(a) for a in arrays + outputs]
        self._entry(*[ctypes.byref(d) for d in descriptors])
        self._raise_if_refused()
        return tuple(outputs)

    def _raise_if_refused(self):
        error = self._last_error and self._last_error()
        if error:
            self._clear_error()
            raise SizeMismatchError(f"{self.name}: {error.decode()}")


class FunctionTable:
    """A compiled module's functions, also as attributes (`module.softmax`)."""

    functions: dict

    def __getattr__(self, name):
        try:
            return self.__dict__["functions"][name]
        except KeyError:
            raise AttributeError(name) from None


class CompiledModule(FunctionTable):
    def __init__(self, path, signatures, debug=None):
        self.path = path
        self.debug = debug_default() if debug is None else debug
        self._library = ctypes.CDLL(path)
        self.functions = {name: Function(self._library, name, ins, outs, self.debug, in_place)
                          for name, (ins, outs, in_place) in signatures.items()}
        with open(os.path.splitext(path)[0] + ".json") as f:
            self.count_traffic = json.load(f).get("count_traffic", False)

    def _counters(self):
        """The traffic counters of the CPU runtime, which a library compiled
        with --count-traffic links (looked up through it, so no path or
        LD_LIBRARY_PATH is needed)."""
        # The runtime may be loaded for the size checks alone: the signature
        # file says whether the kernels count.
        if not self.count_traffic:
            raise RuntimeError(f"{self.path} was compiled without --count-traffic")
        counters = self._library.fusion_traffic_bytes
        counters.restype = ctypes.c_int64
        counters.argtypes = [ctypes.c_int64, ctypes.c_int32]
        return counters

    def reset_traffic(self):
        self._counters()
        self._library.fusion_traffic_reset()

    def traffic(self, kernel_id):
        """(bytes read, bytes written) by kernel `kernel_id` since the reset."""
        counters = self._counters()
        return counters(kernel_id, 0), counters(kernel_id, 1)


def _run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stderr}")
    return result.stdout


def read_signatures(library):
    """{name: (inputs, outputs, in_place)} from the .json fusion-compile
    wrote beside `library`; in_place: the (input, result) pairs whose result
    fusion-compile proved may be written into the input's buffer."""
    with open(os.path.splitext(library)[0] + ".json") as f:
        document = json.load(f)
    signatures = {}
    for name, sig in document["functions"].items():
        outputs = [_parse_tensor(t[7:-1]) for t in sig["outputs"]]
        for out, sources in zip(outputs, sig.get("output_dim_sources", [])):
            out.dim_sources = tuple(tuple(s) if s else None for s in sources)
        in_place = {tuple(pair) for pair in sig.get("in_place", [])}
        signatures[name] = ([_parse_tensor(t[7:-1]) for t in sig["inputs"]], outputs, in_place)
    return signatures


def compile(source, build_dir=None, fuse=True, count_traffic=False, work_dir=None,
            matmul_epilogue="library", debug=None):
    """Compiles the module at `source` for the CPU with fusion-compile and
    loads it. `matmul_epilogue`: none, library or any (fusion-compile's
    --matmul-epilogue); `debug` as in CompiledModule. fusion-compile is
    taken from `build_dir`, else the installed package, else PATH."""
    work_dir = work_dir or tempfile.mkdtemp(prefix="fusion-cpu-")
    library = os.path.join(work_dir, os.path.splitext(os.path.basename(source))[0]
                           + (".fused" if fuse else ".unfused") + ".so")
    build(source, library, build_dir, fuse, count_traffic, matmul_epilogue)
    return CompiledModule(library, read_signatures(library), debug)


def build(source, library, build_dir=None, fuse=True, count_traffic=False,
          matmul_epilogue="library"):
    """Compiles `source` into the CPU library `library` (and its signature
    file beside it) without loading it; options as in compile."""
    command = [tools.find("fusion-compile", build_dir), source,
               "--target=cpu", "-o", library]
    if not fuse:
        command.append("--no-fuse")
    if count_traffic:
        command.append("--count-traffic")
    command.append(f"--matmul-epilogue={matmul_epilogue}")
    _run(command)


def report(source, build_dir=None, fuse=True, chip=None):
    """The fusion-report JSON of the module as the pipelines build it; with
    `chip` (e.g. "sm_90"), kernels are planned for that GPU first and bytes
    are counted as the plans move them (a streamed row once per pass)."""
    fusion_opt = tools.find("fusion-opt", build_dir)
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        kernels = "--fusion-pipeline" if fuse else "--fusion-decompose --canonicalize --cse --fusion-outline"
        if chip:
            kernels += f" --fusion-plan-kernels=chip={chip}"
        _run([fusion_opt, source, *kernels.split(),
              f"--fusion-report=format=json output={out.name}", "-o", os.devnull])
        with open(out.name) as f:
            return json.load(f)
