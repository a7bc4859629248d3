"""Fusion as a torch.compile backend.

    model = torch.compile(model, backend="fusion")    # the installed package registers it
    with torch.no_grad():
        y = model(x)

Dynamo hands the backend each captured graph. The backend splits it into
the parts the fusion dialect covers (fusion.fx decides, op by op) and the
rest; each supported part becomes one fusion function, compiled with
fusion-compile for the tensors' device (the CPU, or the CUDA GPU's chip)
and called through fusion.cpu or fusion.cuda; the rest runs with PyTorch.
The graph's unsupported ops are listed in one log line (logger "fusion");
nothing here raises for an op or a shape the compiler does not take: that
part runs with PyTorch instead.

- Compiled libraries are cached on disk by the module text, the target and
  the compiler (FUSION_CACHE_DIR, default ~/.cache/fusion), so a second
  process, or a graph seen again, does not compile.
- Sizes Dynamo made symbolic (after a second size, or with
  torch.compile(dynamic=True)) become dynamic dimensions: one library
  serves every batch and sequence length.
- In-place writes to inputs (an optimizer step's `p.add_(...)`) are
  computed by the function and copied back into the inputs. A graph that
  writes its inputs is compiled whole or not at all, so no write moves
  past a read PyTorch still does.
- The generated kernels have no backward: a graph captured with gradients
  required (training) runs with PyTorch, said once in the log.
"""

import functools
import hashlib
import logging
import os
import shutil
import tempfile
from collections import Counter

import torch
import torch.fx
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

from . import cpu, cuda, runtime, tools
from . import fx as fusion_fx

__all__ = ["fusion_backend", "make_backend"]

log = logging.getLogger("fusion")

# The function name every compiled part has (the cache key is the text).
_FUNCTION = "part"
_COMPUTE_OPS = ("call_function", "call_method", "call_module")


def _op_name(node):
    """How a node's op is named in the log: torch.rsqrt, Tensor.view, ..."""
    if node.op == "call_method":
        return f"Tensor.{node.target}"
    if node.op == "call_module":
        return f"module {node.target}"
    target = node.target
    if isinstance(target, torch._ops.OpOverload):
        return f"torch.ops.{target}"
    module = getattr(target, "__module__", None) or ""
    name = getattr(target, "__name__", repr(target))
    if module.startswith(("torch._C._nn", "torch.nn.functional")):
        module = "torch.nn.functional"
    elif module.startswith("torch._C._VariableFunctions"):
        module = "torch"
    return f"{module}.{name}" if module else name


def _is_in_place(node):
    if node.op == "call_method":
        return node.target in fusion_fx._Emitter._IN_PLACE
    return node.op == "call_function" and bool(node.kwargs.get("inplace"))


def _is_size(node):
    """Whether a node is an integer (a size, symbolic or not)."""
    value = node.meta.get("example_value", node.meta.get("val"))
    return isinstance(value, (int, torch.SymInt)) and not isinstance(value, bool)


class _Support(OperatorSupportBase):
    """A node is supported when fusion.fx imports it on its own (given its
    tensor operands) and its tensors are on one device. Refusals are kept
    (op name -> count) for the log line."""

    def __init__(self, gm):
        self.gm = gm
        self.refused = Counter()
        self._verdicts = {}

    def is_node_supported(self, submodules, node):
        if node.op not in _COMPUTE_OPS:
            return False
        if node not in self._verdicts:
            self._verdicts[node] = self._imports(node)
            if not self._verdicts[node]:
                self.refused[_op_name(node)] += 1
        return self._verdicts[node]

    def _imports(self, node):
        emitter = fusion_fx._Emitter(self.gm, "probe")
        devices = set()
        try:
            for i, operand in enumerate(node.all_input_nodes):
                tensor = fusion_fx._node_tensor(operand)
                items = fusion_fx.node_tensors(operand)
                if tensor is None and items is not None:
                    # An item of a split: only where the split is imported
                    # too (a part cannot take a tuple).
                    if not self.is_node_supported(None, operand):
                        return False
                    devices.update(t.device.type for t in items)
                    emitter.values[operand] = [
                        (f"%a{i}_{j}",) + fusion_fx.tensor_type(t) for j, t in enumerate(items)]
                    continue
                if tensor is None:
                    # A size (Dynamo's symbolic ones): the ops taking one,
                    # view and reshape, read their shapes from metadata.
                    if _is_size(operand):
                        continue
                    return False  # another non-tensor value
                devices.add(tensor.device.type)
                shape, dtype = fusion_fx.node_type(operand)
                emitter.values[operand] = (f"%a{i}", shape, dtype)
            results = [fusion_fx._node_tensor(node)]
            if results[0] is None:
                results = fusion_fx.node_tensors(node)
            if results is None:
                return False
            devices.update(t.device.type for t in results)
            emitter.node(node)
        except fusion_fx.UnsupportedOpError:
            return False
        except Exception as e:  # an importer defect: PyTorch runs the node (logged once per node)
            log.warning("fusion: the importer failed on %s (%s: %s); it runs with PyTorch",
                        _op_name(node), type(e).__name__, e)
            return False
        # meta: a model traced only to compile it ahead of time.
        return len(devices) == 1 and devices <= {"cpu", "cuda", "meta"}


@functools.lru_cache(maxsize=None)
def _compiler_identity(tool):
    """What identifies the compiler in a cache key: a hash of fusion-compile
    itself (its passes are linked in), so a rebuilt compiler misses and a
    copy of the same one elsewhere hits."""
    with open(tool, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _target_of(device):
    """(target, chip) of fusion-compile for a torch device."""
    if device.type == "cuda":
        major, minor = torch.cuda.get_device_capability(device)
        return "cuda", f"sm_{major}{minor}"
    return "cpu", None


@functools.lru_cache(maxsize=None)
def _load(path, debug):
    return runtime.load(path, debug=debug)


def _cached_library(text, target, chip, options):
    """The path of the library of the function in `text` for `target`
    (and `chip`): from the disk cache, else compiled into it."""
    tool = tools.find("fusion-compile", options.get("build_dir"))
    key_text = "\n".join([text, target, chip or "", _compiler_identity(tool),
                          options.get("matmul_backend", "auto")])
    key = hashlib.sha256(key_text.encode()).hexdigest()[:32]
    entry = os.path.join(tools.cache_dir(), key)
    library = os.path.join(entry, "part.fused.so")
    if not os.path.exists(library):
        root = tools.cache_dir()
        scratch = tempfile.mkdtemp(prefix="compiling-", dir=root)
        try:
            source = os.path.join(scratch, "part.mlir")
            with open(source, "w") as f:
                f.write(text)
            build_dir = options.get("build_dir")
            if target == "cuda":
                cuda.compile(source, build_dir, scratch, chip=chip,
                             matmul_backend=options.get("matmul_backend", "auto"))
            else:
                cpu.build(source, os.path.join(scratch, "part.fused.so"), build_dir)
            try:
                os.rename(scratch, entry)  # atomic: readers see all of it or none
            except OSError:
                pass  # another process cached it first
        finally:
            if os.path.exists(scratch):
                shutil.rmtree(scratch, ignore_errors=True)
        log.debug("fusion: compiled %s into %s", target, entry)
    return library


# CPU calls: torch tensors <-> numpy arrays, sharing memory.
def _to_numpy(t):
    t = t.detach()
    if t.dtype == torch.bfloat16:
        if cpu.BFLOAT16 is None:
            raise TypeError("bf16 on the CPU needs the ml_dtypes package")
        return t.contiguous().view(torch.int16).numpy().view(cpu.BFLOAT16)
    return t.numpy()


def _from_numpy(a):
    if cpu.BFLOAT16 is not None and a.dtype == cpu.BFLOAT16:
        return torch.from_numpy(a.view("int16")).view(torch.bfloat16)
    return torch.from_numpy(a)


def _writable_in_place(t):
    """Whether a tensor can be a kernel's output buffer (CUDA kernels
    access whole vectors from the start)."""
    return t.is_contiguous() and t.data_ptr() % cuda._VECTOR_BYTES == 0


class _CompiledPart(torch.nn.Module):
    """A supported part of a graph, called through its compiled function;
    writes to inputs are copied back, and outputs that are inputs are
    returned as the input tensors themselves."""

    def __init__(self, function, imported, placeholders, device_type, returns_tuple, debug):
        super().__init__()
        self.function = function
        self.debug = debug
        self.imported = imported
        self.device_type = device_type
        self.returns_tuple = returns_tuple
        # Which forward() arguments the function takes (tensors only).
        self.taken = [i for i, node in enumerate(placeholders) if node in imported.inputs]

    def forward(self, *args):
        tensors = [args[i] for i in self.taken]
        params = self.imported.params
        outputs, written = self._outputs(tensors, params) if self.imported.mutated else (None, [])
        if self.device_type == "cpu":
            results = [_from_numpy(r) for r in self.function(
                *[_to_numpy(t) for t in tensors], *[_to_numpy(p) for p in params],
                outputs=None if outputs is None else [_to_numpy(o) for o in outputs])]
        else:
            results = self.function(*tensors, *params, outputs=outputs)
        for i, k in written:
            tensors[i].copy_(results[k])
        outputs = tuple(tensors[k] if kind == "input" else results[k]
                        for kind, k in self.imported.outputs)
        return outputs if self.returns_tuple else outputs[0]

    def _outputs(self, tensors, params):
        """The output buffers of a call that writes inputs: an input is
        its own result's buffer where fusion-compile proved that safe (one
        elementwise kernel reads it); the other results get new tensors.
        Also the (input, result) pairs still to copy back."""
        function = self.function
        shapes = function.output_shapes([*tensors, *params])
        outputs = [None] * len(shapes)
        copies = []
        for i, k in self.imported.mutated:
            if (i, k) in function.in_place and _writable_in_place(tensors[i]):
                outputs[k] = tensors[i]
            else:
                copies.append((i, k))
        device = tensors[0].device if tensors else params[0].device
        for k, (shape, t) in enumerate(zip(shapes, function.outputs)):
            if outputs[k] is None:
                outputs[k] = torch.empty(shape, dtype=cuda.Function._torch_dtype(t), device=device)
                if self.debug and t.element != "i1":
                    outputs[k].fill_(float("nan"))  # poison, as the function would
        return outputs, copies


def _placeholder_meta(parent, call):
    """Gives the placeholders of the part `call` calls the tensor metadata
    of the values passed to them (the partitioner makes new nodes)."""
    sub = parent.get_submodule(call.target)
    placeholders = [n for n in sub.graph.nodes if n.op == "placeholder"]
    for placeholder, arg in zip(placeholders, call.args):
        if isinstance(arg, torch.fx.Node):
            for key in ("example_value", "val", "tensor_meta"):
                if key in arg.meta and key not in placeholder.meta:
                    placeholder.meta[key] = arg.meta[key]
    return sub, placeholders


def _compile_part(sub, placeholders, options):
    """A _CompiledPart for the GraphModule `sub`, or the reason it is not
    one (the part then runs with PyTorch)."""
    try:
        imported = fusion_fx.import_graph(sub, _FUNCTION)
    except fusion_fx.UnsupportedOpError as e:
        return None, str(e)
    except Exception as e:  # an importer defect: the part runs with PyTorch
        return None, f"the importer failed ({type(e).__name__}: {e})"
    devices = {fusion_fx._node_tensor(n).device for n in imported.inputs}
    devices |= {p.device for p in imported.params}
    if len(devices) != 1:
        return None, f"tensors on {len(devices)} devices"
    device = devices.pop()
    target, chip = _target_of(device)
    ahead = options.get("ahead_of_time")
    if ahead:
        target, chip = "cuda", ahead
    elif device.type == "meta":
        return None, "meta tensors (nothing to run; see ahead_of_time)"
    try:
        library = _cached_library(imported.text, target, chip, options)
        if ahead:
            return None, f"compiled ahead of time for {chip}"
        compiled = _load(library, bool(options.get("debug", False)))
    except (RuntimeError, OSError) as e:
        first = str(e).strip().splitlines()
        return None, "fusion-compile failed: " + (first[1] if len(first) > 1 else first[0] if first else "")
    output = next(n for n in sub.graph.nodes if n.op == "output")
    returns_tuple = isinstance(output.args[0], (tuple, list))
    return _CompiledPart(compiled.functions[_FUNCTION], imported, placeholders, device.type,
                         returns_tuple, bool(options.get("debug", False))), None


def _partition(gm, support):
    """gm with each maximal supported part moved into a submodule
    fused_<n>; the call nodes of those submodules."""
    partitioner = CapabilityBasedPartitioner(gm, support, allows_single_node_partition=True)
    partitions = partitioner.propose_partitions()
    if not partitions:
        return gm, []
    fused = partitioner.fuse_partitions(partitions, prefix="fused_")
    calls = [n for n in fused.graph.nodes if n.op == "call_module" and n.target.startswith("fused_")]
    return fused, calls


def make_backend(**options):
    """A torch.compile backend with `options`: build_dir (where
    fusion-compile is; default FUSION_BUILD_DIR, else the installed package,
    else PATH),
    matmul_backend (auto, library, generated), debug (poison outputs, for
    tests; default FUSION_DEBUG=1 in the environment), and ahead_of_time (a chip, e.g. "sm_90": compile every part
    for that GPU into the disk cache and run the graph with PyTorch here,
    typically on "meta" tensors, which compute nothing; a GPU machine
    without MLIR then runs the same model, at the same sizes, from a copy of
    the cache, given a copy of the same fusion-compile to identify it)."""

    options = dict(options)
    if not options.get("build_dir") and os.environ.get("FUSION_BUILD_DIR"):
        options["build_dir"] = os.environ["FUSION_BUILD_DIR"]
    options.setdefault("debug", cpu.debug_default())

    def backend(gm, example_inputs):
        return _compile_graph(gm, example_inputs, options)

    return backend


def _listed(counter):
    return ", ".join(f"{name} x{count}" if count > 1 else name for name, count in sorted(counter.items()))


def _compile_graph(gm, example_inputs, options):
    if torch.is_grad_enabled() and any(
            isinstance(t, torch.Tensor) and t.requires_grad for t in example_inputs):
        log.warning("fusion: the graph needs gradients, which Fusion's kernels do not compute: "
                    "running it with PyTorch (call the model under torch.no_grad() or "
                    "torch.inference_mode() to use Fusion)")
        return gm.forward
    support = _Support(gm)
    compute = [n for n in gm.graph.nodes if n.op in _COMPUTE_OPS]
    whole = all([support.is_node_supported(None, n) for n in compute])
    if whole and compute:
        # One function for the graph, no partitioning.
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        part, reason = _compile_part(gm, placeholders, options)
        if part is not None:
            log.info("fusion: %d ops in one compiled part", len(compute))
            return part
        log.warning("fusion: all %d ops run with PyTorch: %s", len(compute), reason)
        return gm.forward
    if any(_is_in_place(n) for n in compute):
        # A write in one part and a read of the same tensor left to
        # PyTorch could be reordered: all or nothing.
        log.warning("fusion: the graph writes its inputs and has ops Fusion does not take (%s): "
                    "all %d ops run with PyTorch", _listed(support.refused), len(compute))
        return gm.forward
    try:
        fused, parts = _partition(gm, support)
    except Exception as e:  # PyTorch's partitioner: its failure is not the caller's
        log.warning("fusion: partitioning the graph failed (%s: %s): all %d ops run with PyTorch",
                    type(e).__name__, e, len(compute))
        return gm.forward
    fallbacks = Counter(support.refused)
    compiled = 0
    for call in parts:
        sub, placeholders = _placeholder_meta(fused, call)
        part, reason = _compile_part(sub, placeholders, options)
        if part is None:
            ops = [n for n in sub.graph.nodes if n.op in _COMPUTE_OPS]
            fallbacks.update(_op_name(n) for n in ops)
            log.info("fusion: a part of %d ops runs with PyTorch: %s", len(ops), reason)
            continue
        setattr(fused, call.target, part)
        compiled += 1
    if fallbacks:
        log.warning("fusion: %d of %d ops run with PyTorch (%d parts compiled): %s",
                    sum(fallbacks.values()), len(compute), compiled, _listed(fallbacks))
    else:
        log.info("fusion: %d ops in %d compiled parts", len(compute), compiled)
    fused.recompile()
    return fused.forward


def fusion_backend(gm, example_inputs):
    """The torch.compile backend registered as "fusion" (options from the
    environment: FUSION_BUILD_DIR, FUSION_DEBUG=1, FUSION_CACHE_DIR)."""
    return make_backend()(gm, example_inputs)


def _register():
    """Registers the backend by name for a package that is imported but not
    installed (an installed one is found through its entry point)."""
    try:
        from torch._dynamo.backends.registry import _BACKENDS, register_backend
    except ImportError:
        return
    if "fusion" not in _BACKENDS:
        register_backend(fusion_backend, name="fusion")


_register()
