"""Compile fusion modules for NVIDIA GPUs, and call them with torch tensors.

Compiling (`compile`) needs this project's build (fusion-opt) and LLVM 22;
loading (`load`) needs only the shared library, its signature file and
`libfusion_cuda_runtime.so`, so a compiled bundle runs on a machine without
MLIR:

    module = cuda.load("bundle/workloads.fused.so")    # + .json beside it
    (y,) = module.softmax(x)                           # x: a CUDA tensor

Inputs are checked against the signature before anything runs; outputs are
allocated here (dynamic sizes as in fusion.cpu), poisoned with NaN first,
and returned. A CUDA error in the runtime raises RuntimeError.
"""

import ctypes
import json
import os
import shutil

from . import cpu

LLVM_BIN = cpu.LLVM_BIN


def compile(source, build_dir, out_dir, fuse=True, chip="sm_90"):
    """Compiles `source` into `<out_dir>/<stem>.{fused,unfused}.so` with its
    signature file; returns the library path."""
    build_dir = os.path.abspath(build_dir)
    os.makedirs(out_dir, exist_ok=True)
    stem = os.path.join(out_dir, os.path.splitext(os.path.basename(source))[0]
                        + (".fused" if fuse else ".unfused"))
    fusion_opt = os.path.join(build_dir, "bin", "fusion-opt")
    options = f"fuse={'true' if fuse else 'false'} chip={chip} format=bin"
    cpu._run([fusion_opt, source, f"--fusion-to-nvvm={options}", "-o", stem + ".llvm.mlir"])
    cpu._run([os.path.join(LLVM_BIN, "mlir-translate"), "--mlir-to-llvmir",
              stem + ".llvm.mlir", "-o", stem + ".ll"])
    cpu._run([os.path.join(LLVM_BIN, "llc"), "-O2", "-relocation-model=pic",
              "-filetype=obj", stem + ".ll", "-o", stem + ".o"])
    cc = shutil.which("cc") or shutil.which("gcc")
    # The runtime is found next to the library ($ORIGIN) in a bundle.
    cpu._run([cc, "-shared", stem + ".o", "-o", stem + ".so",
              f"-L{os.path.join(build_dir, 'lib')}", "-lfusion_cuda_runtime",
              "-Wl,-rpath,$ORIGIN"])
    with open(source) as f:
        signatures = cpu.parse_signatures(f.read())
    with open(stem + ".json", "w") as f:
        json.dump({name: {"inputs": [str(t) for t in ins], "outputs": [str(t) for t in outs]}
                   for name, (ins, outs) in signatures.items()}, f, indent=1)
    for ext in (".llvm.mlir", ".ll", ".o"):
        os.remove(stem + ext)
    return stem + ".so"


class Function:
    def __init__(self, module, name, inputs, outputs):
        self.module, self.name = module, name
        self.inputs, self.outputs = inputs, outputs
        self._entry = getattr(module._library, "_mlir_ciface_" + name)
        self._entry.restype = None

    def _torch_dtype(self, t):
        import torch
        return {"f32": torch.float32, "f16": torch.float16,
                "bf16": torch.bfloat16, "i1": torch.bool}[t.element]

    def check(self, tensors):
        import torch
        if len(tensors) != len(self.inputs):
            raise cpu.SignatureError(f"{self.name} takes {len(self.inputs)} tensors, got {len(tensors)}")
        for i, (x, t) in enumerate(zip(tensors, self.inputs)):
            if not isinstance(x, torch.Tensor) or not x.is_cuda:
                raise cpu.SignatureError(f"{self.name}: argument {i} is not a CUDA tensor")
            if x.dtype != self._torch_dtype(t):
                raise cpu.SignatureError(f"{self.name}: argument {i} has dtype {x.dtype}, expected {t}")
            if x.dim() != len(t.shape) or any(d is not None and d != s for d, s in zip(t.shape, x.shape)):
                raise cpu.SignatureError(f"{self.name}: argument {i} has shape {tuple(x.shape)}, expected {t}")

    def output_shapes(self, tensors):
        shapes = []
        for out in self.outputs:
            shape = []
            for i, dim in enumerate(out.shape):
                if dim is None:
                    sources = [x.shape[i] for x, t in zip(tensors, self.inputs)
                               if i < len(t.shape) and t.shape[i] is None]
                    if not sources:
                        raise cpu.SignatureError(f"{self.name}: cannot size dimension {i} of {out}")
                    dim = sources[0]
                shape.append(int(dim))
            shapes.append(tuple(shape))
        return shapes

    def __call__(self, *tensors, outputs=None):
        import torch
        self.check(tensors)
        tensors = [x.contiguous() for x in tensors]
        if outputs is None:
            outputs = []
            for shape, t in zip(self.output_shapes(tensors), self.outputs):
                out = torch.empty(shape, dtype=self._torch_dtype(t), device=tensors[0].device)
                if t.element != "i1":
                    out.fill_(float("nan"))  # poison: unwritten elements stay NaN
                outputs.append(out)
        descriptors = [_descriptor(x) for x in list(tensors) + list(outputs)]
        self._entry(*[ctypes.byref(d) for d in descriptors])
        self.module.raise_if_failed()
        return tuple(outputs)


def _descriptor(x):
    desc = cpu._descriptor_type(x.dim())()
    desc.allocated = desc.aligned = ctypes.c_void_p(x.data_ptr())
    desc.offset = 0
    for i in range(x.dim()):
        desc.sizes[i] = x.shape[i]
        desc.strides[i] = x.stride(i)
    return desc


class Module:
    def __init__(self, path):
        here = os.path.dirname(os.path.abspath(path))
        runtime = os.path.join(here, "libfusion_cuda_runtime.so")
        self._runtime = ctypes.CDLL(runtime, mode=ctypes.RTLD_GLOBAL)
        self._runtime.fusion_cuda_last_error.restype = ctypes.c_char_p
        self._library = ctypes.CDLL(os.path.abspath(path))
        with open(os.path.splitext(path)[0] + ".json") as f:
            signatures = json.load(f)
        self.functions = {
            name: Function(self, name,
                           [cpu._parse_tensor(t[7:-1]) for t in sig["inputs"]],
                           [cpu._parse_tensor(t[7:-1]) for t in sig["outputs"]])
            for name, sig in signatures.items()}

    def __getattr__(self, name):
        try:
            return self.__dict__["functions"][name]
        except KeyError:
            raise AttributeError(name) from None

    def raise_if_failed(self):
        error = self._runtime.fusion_cuda_last_error()
        if error:
            self._runtime.fusion_cuda_clear_error()
            raise RuntimeError(error.decode())


def load(path):
    return Module(path)
