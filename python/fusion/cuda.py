"""Compile fusion modules for NVIDIA GPUs, and call them with torch tensors.

Compiling (`compile`) needs this project's build (fusion-compile);
loading (`load`) needs only the shared library, its signature file and
`libfusion_cuda_runtime.so`, so a compiled bundle runs on a machine without
MLIR:

    module = cuda.load("bundle/workloads.fused.so")    # + .json beside it
    (y,) = module.softmax(x)                           # x: a CUDA tensor

Inputs are checked against the signature before anything runs; outputs are
allocated with PyTorch's allocator (dynamic sizes as in fusion.cpu) and
returned, or written into `outputs=[...]`. With `load(path, debug=True)` (or
FUSION_DEBUG=1) outputs are poisoned with NaN first, so unwritten elements
show: the checks ask for it, a user's call does not pay for it. Every call
runs on PyTorch's current stream of the inputs' device (`with
torch.cuda.stream(s):` orders it with the work on `s`, and
`torch.cuda.graph` can capture it). A call like one checked before (the
same dtypes, shapes, strides and device) is made from C++ (fusion.launch):
the host time of a launch-bound call. Dynamic sizes that disagree raise
fusion.cpu.SizeMismatchError (the compiled function checks them before it
launches anything); a CUDA error in the runtime raises RuntimeError.
"""

import ctypes
import functools
import itertools
import json
import os
import re
import subprocess
import threading

from . import cpu, launch, tools

# The kernels read and write whole vectors of up to this many bytes from
# the start of every buffer.
_VECTOR_BYTES = 16


def _aligned(x):
    """`x` contiguous and starting on a vector boundary: copied where it is
    not (a view such as x[1:] starts inside a vector)."""
    x = x.contiguous()
    return x.clone() if x.data_ptr() % _VECTOR_BYTES else x

def compile(source, build_dir, out_dir, fuse=True, chip="sm_90",
            matmul_epilogue="library", matmul_backend="auto", matmul_tf32=False,
            launch_dependents=False, suffix=""):
    """Compiles `source` with fusion-compile into
    `<out_dir>/<stem>.{fused,unfused}<suffix>.so` and its signature file;
    returns the library path. `matmul_epilogue` (none, library, any),
    `matmul_backend` (auto, library, generated), `matmul_tf32` and
    `launch_dependents` are fusion-compile's options of those names; fusion-compile is taken from
    `build_dir` (None: the installed package, else PATH)."""
    os.makedirs(out_dir, exist_ok=True)
    stem = os.path.join(out_dir, os.path.splitext(os.path.basename(source))[0]
                        + (".fused" if fuse else ".unfused") + suffix)
    tool = tools.find("fusion-compile", build_dir)
    cpu._run([tool, source, "--target=cuda", f"--chip={chip}", "-o", stem + ".so"]
             + ([] if fuse else ["--no-fuse"])
             + [f"--matmul-epilogue={matmul_epilogue}", f"--matmul-backend={matmul_backend}"]
             + (["--matmul-tf32"] if matmul_tf32 else [])
             + (["--launch-dependents"] if launch_dependents else []))
    return stem + ".so"


def kernel_resources(source, build_dir, work_dir, options="", ptxas=None):
    """What ptxas gives each kernel of `source` (a path) lowered by
    `fusion-opt --fusion-to-nvvm=format=isa <options>`: {kernel: dict(
    registers, stack, spill_stores, spill_loads)} in bytes (registers a
    thread), the PTX kept in `work_dir`. Raises RuntimeError where ptxas
    refuses the PTX."""
    ptxas = ptxas or ("/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas")
                      else "ptxas")
    lowered = cpu._run([tools.find("fusion-opt", build_dir), source,
                        f"--fusion-to-nvvm=format=isa {options}".strip()])
    os.makedirs(work_dir, exist_ok=True)
    resources = {}
    for name, assembly in re.findall(r'gpu\.binary @(\w+) .*?assembly = "((?:[^"\\]|\\.)*)"',
                                     lowered):
        ptx = re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), assembly)
        path = os.path.join(work_dir, f"{name}.ptx")
        with open(path, "w") as f:
            f.write(ptx)
        chip = re.search(r"^\.target (sm_\w+)", ptx, re.M).group(1)
        result = subprocess.run([ptxas, "-v", "--gpu-name", chip, path, "-o", path + ".cubin"],
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"ptxas failed on {path}:\n{result.stdout}{result.stderr}")
        report = result.stderr
        for entry, stack, stores, loads in re.findall(
                r"Compiling entry function '(\w+)'.*?(\d+) bytes stack frame, "
                r"(\d+) bytes spill stores, (\d+) bytes spill loads", report, re.S):
            registers = re.search(rf"Function properties for {entry}.*?Used (\d+) registers",
                                  report, re.S)
            resources[entry] = dict(registers=int(registers.group(1)) if registers else None,
                                    stack=int(stack), spill_stores=int(stores),
                                    spill_loads=int(loads))
    return resources


class Function:
    def __init__(self, module, name, inputs, outputs, in_place=frozenset()):
        self.module, self.name = module, name
        self.inputs, self.outputs = inputs, outputs
        # (input, result): result may be written into that input's buffer
        # (outputs=[..., the input, ...]); see fusion-compile's in_place.
        self.in_place = in_place
        self._entry = getattr(module._library, "_mlir_ciface_" + name)
        self._entry.restype = None
        self._input_dtypes = [self._torch_dtype(t) for t in inputs]
        self._output_dtypes = [self._torch_dtype(t) for t in outputs]
        self._ranks = [len(t.shape) for t in list(inputs) + list(outputs)]
        # The sizes each argument must have, as (dimension, size).
        self._static_sizes = [tuple((i, d) for i, d in enumerate(t.shape) if d is not None)
                              for t in list(inputs) + list(outputs)]
        self._local = threading.local()
        # Calls like one checked before, made from C++ (calls are on the hot
        # path of decoding); not when outputs are poisoned first.
        known = launch.KnownCalls(
            self._entry, module.set_stream, module._runtime.fusion_cuda_last_error,
            self._ranks, len(inputs), self._output_dtypes) if not module.debug else None
        self._known = known if known else None

    @staticmethod
    def _torch_dtype(t):
        import torch
        return {"f32": torch.float32, "f16": torch.float16,
                "bf16": torch.bfloat16, "i1": torch.bool}[t.element]

    def check(self, tensors, outputs=None):
        """Raises SignatureError unless `tensors` (and `outputs`, when the
        caller provides them) match the signature."""
        import torch
        if len(tensors) != len(self.inputs):
            raise cpu.SignatureError(f"{self.name} takes {len(self.inputs)} tensors, got {len(tensors)}")
        if outputs is not None and len(outputs) != len(self.outputs):
            raise cpu.SignatureError(f"{self.name} writes {len(self.outputs)} outputs, got {len(outputs)}")
        what = "argument" if outputs is None else "output"
        checked = zip(tensors if outputs is None else outputs,
                      self.inputs if outputs is None else self.outputs,
                      self._input_dtypes if outputs is None else self._output_dtypes,
                      self._static_sizes if outputs is None else self._static_sizes[len(self.inputs):])
        for i, (x, t, dtype, static) in enumerate(checked):
            if not isinstance(x, torch.Tensor) or not x.is_cuda:
                raise cpu.SignatureError(f"{self.name}: {what} {i} is not a CUDA tensor")
            if x.dtype != dtype:
                raise cpu.SignatureError(f"{self.name}: {what} {i} has dtype {x.dtype}, expected {t}")
            shape = x.shape
            if len(shape) != len(t.shape) or any(shape[k] != size for k, size in static):
                raise cpu.SignatureError(f"{self.name}: {what} {i} has shape {tuple(shape)}, expected {t}")
            if outputs is not None and not x.is_contiguous():
                raise cpu.SignatureError(f"{self.name}: output {i} is not contiguous")
            if outputs is not None and x.data_ptr() % _VECTOR_BYTES:
                raise cpu.SignatureError(
                    f"{self.name}: output {i} does not start on a {_VECTOR_BYTES}-byte boundary")

    def output_shapes(self, tensors):
        return cpu.output_shapes(self.name, self.inputs, self.outputs,
                                 [tuple(x.shape) for x in tensors])

    def _arguments(self):
        """This thread's memref descriptors and pointers to them, made on its
        first call: a call only fills them."""
        arguments = getattr(self._local, "arguments", None)
        if arguments is None:
            descriptors = [cpu._descriptor_type(rank)() for rank in self._ranks]
            arguments = (descriptors, [ctypes.byref(d) for d in descriptors])
            self._local.arguments = arguments
        return arguments

    def __call__(self, *tensors, outputs=None):
        known = self._known
        if known is not None:
            made = known.call(tensors, None if outputs is None else tuple(outputs))
            if made is not None:
                if made is False:
                    self.module.raise_if_failed(self.name)
                return made
        return self._checked_call(tensors, outputs)

    def _checked_call(self, tensors, outputs):
        """A call checked against the signature (raising what is wrong),
        inputs off a vector boundary copied; remembered as known after."""
        import torch
        self.check(tensors)
        if outputs is not None:
            self.check(tensors, outputs)
        original = tensors
        tensors = [_aligned(x) for x in tensors]
        copied = any(a is not b for a, b in zip(tensors, original))
        device = tensors[0].device if tensors else torch.device("cuda", torch.cuda.current_device())
        if outputs is None:
            outputs = []
            for shape, t, dtype in zip(self.output_shapes(tensors), self.outputs,
                                       self._output_dtypes):
                out = torch.empty(shape, dtype=dtype, device=device)
                if self.module.debug and t.element != "i1":
                    out.fill_(float("nan"))  # poison: unwritten elements stay NaN
                outputs.append(out)
        self.module.use_stream(device)
        descriptors, pointers = self._arguments()
        for desc, x, rank in zip(descriptors, itertools.chain(tensors, outputs), self._ranks):
            desc.allocated = desc.aligned = x.data_ptr()
            if rank:
                desc.sizes[:] = x.shape
                desc.strides[:] = x.stride()
        self._entry(*pointers)
        self.module.raise_if_failed(self.name)
        if self._known is not None and not copied:
            # Only calls whose inputs needed no copy: C++ makes the next
            # such call with these very buffers.
            self._known.remember(tensors, [o.shape for o in outputs], device)
        return tuple(outputs)


@functools.lru_cache(maxsize=None)
def _stream_getter():
    """device index -> raw CUstream of PyTorch's current stream there,
    looked up once: a private accessor, much cheaper than the stream
    object, where this PyTorch has it."""
    import torch
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw
    return lambda index: torch.cuda.current_stream(index).cuda_stream


def _current_stream(device):
    """The raw CUstream of PyTorch's current stream on `device` (0 for the
    legacy default stream)."""
    import torch
    index = device.index if device.index is not None else torch.cuda.current_device()
    return _stream_getter()(index)


class Module(cpu.FunctionTable):
    def __init__(self, path, debug=None):
        self.debug = cpu.debug_default() if debug is None else debug
        self._library = ctypes.CDLL(os.path.abspath(path))
        # The runtime the library loaded (beside it, or where its rpath
        # says), reached through the library: no path needed.
        self._runtime = self._library
        self._runtime.fusion_cuda_last_error.restype = ctypes.c_char_p
        self._runtime.fusion_cuda_set_stream.argtypes = [ctypes.c_void_p]
        self._runtime.fusion_cuda_set_stream.restype = None
        self.set_stream = self._runtime.fusion_cuda_set_stream
        signatures = cpu.read_signatures(path)
        self.functions = {name: Function(self, name, ins, outs, in_place)
                          for name, (ins, outs, in_place) in signatures.items()}

    def use_stream(self, device):
        """Makes the runtime launch this thread's calls on PyTorch's current
        stream of `device` (told every call: known calls tell it from C++)."""
        self.set_stream(_current_stream(device))

    def raise_if_failed(self, function=None):
        error = self._runtime.fusion_cuda_last_error()
        if error:
            self._runtime.fusion_cuda_clear_error()
            message = error.decode()
            # The entry checks of fusion-guard-sizes refused the call.
            prefix = "size check failed: "
            if message.startswith(prefix):
                raise cpu.SizeMismatchError(f"{function}: {message[len(prefix):]}")
            raise RuntimeError(message)


def load(path, debug=None):
    """The library at `path` (its .json beside it); `debug` poisons outputs
    with NaN before each call (default: FUSION_DEBUG=1 in the environment)."""
    return Module(path, debug)
