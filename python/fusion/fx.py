"""The PyTorch front end: a torch.nn.Module (or function) traced with torch.fx
becomes a `fusion` module.

    from fusion import fx
    mlir, params = fx.import_module(block, (x,), name="block")
    # mlir: text of func.func @block(inputs..., params...) -> outputs
    # params: the module's parameters, in the order the function takes them
    #         (nn.Linear weights transposed, [in, out], so no kernel does it)

Covered: elementwise arithmetic and math (add, sub, mul, div with alpha,
addcmul, addcdiv, neg, exp, log, tanh, sigmoid, sqrt, rsqrt, abs, pow with
exponent 2, relu, gelu, silu, float casts), reductions (sum, mean, amax, amin
over dims), softmax, layer_norm, rms_norm, matmul (mm, bmm; addmm and
baddbmm with beta and alpha), scaled_dot_product_attention (float or
boolean attn_mask, is_causal, scale, enable_gqa or K and V with repeated
heads; no dropout), linear (as a
matmul boundary plus the bias add), transpose/permute, views, indexing,
split/chunk, cat, stack, and the torch.nn modules Linear, LayerNorm,
RMSNorm, GELU, SiLU, ReLU, Sigmoid, Tanh, Softmax, Dropout (identity:
tracing is for inference) and Identity. Anything else raises UnsupportedOpError naming the op. Works with
torch 1.13 (Debian's python3-torch) and 2.x.

`import_graph` is the same importer for a graph someone else traced (the
torch.compile backend, fusion.backend): shapes and dtypes come from the
nodes' metadata (Dynamo's fake tensors, whose symbolic sizes become dynamic
`?` dimensions), and in-place ops on inputs (`m.mul_(0.9).add_(g)`) become
values the function returns, for the caller to copy back.
"""

import math
import operator
from dataclasses import dataclass, field
from typing import Dict, List, Tuple

import torch
import torch.fx
from torch.fx.passes.shape_prop import ShapeProp

__all__ = ["import_module", "UnsupportedOpError"]


def _is_prims_fma(fn):
    """torch.ops.prims.fma.default (registered only once Dynamo loads)."""
    return getattr(fn, "__module__", None) == "torch._ops.prims" and str(fn) == "prims.fma.default"


_ELEMENT = {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16", torch.bool: "i1"}


def _float(x):
    """A float literal MLIR parses (always with a dot and exponent)."""
    return format(float(x), ".9e")


class UnsupportedOpError(NotImplementedError):
    """A traced op the fusion dialect does not cover."""


def _tensor_type(shape, dtype):
    """The MLIR type of a tensor of `shape` (None: a dynamic dimension)."""
    if dtype not in _ELEMENT:
        raise UnsupportedOpError(f"tensors of dtype {dtype} are not supported")
    dims = "x".join("?" if d is None else str(d) for d in shape)
    return f"tensor<{dims}x{_ELEMENT[dtype]}>" if dims else f"tensor<{_ELEMENT[dtype]}>"


def _node_tensor(node):
    """The tensor a traced node describes, from its metadata: ShapeProp's
    tensor_meta, or the fake tensor Dynamo ("example_value") or AOT ("val")
    left; None where the node is not a tensor."""
    meta = node.meta
    for key in ("tensor_meta", "example_value", "val"):
        value = meta.get(key)
        if value is not None and hasattr(value, "shape") and hasattr(value, "dtype"):
            return value
    return None


def node_tensors(node):
    """The tensors a node that gives several (a split) describes, from its
    metadata; None where it is not a tuple or list of tensors."""
    for key in ("tensor_meta", "example_value", "val"):
        value = node.meta.get(key)
        if isinstance(value, (tuple, list)) and value and all(
                hasattr(v, "shape") and hasattr(v, "dtype") for v in value):
            return list(value)
    return None


def _keeps_dynamic_sizes(x, node):
    """Whether the reshape of node `x` into `node` keeps each symbolic size
    whole and in order, with the same product of static sizes between them
    (fusion.reshape's rule for dynamic sizes)."""
    source, result = _node_tensor(x), _node_tensor(node)
    if source is None or result is None:
        return False

    def runs(shape):
        symbols, products = [], [1]
        for d in shape:
            if isinstance(d, int):
                products[-1] *= d
            else:
                symbols.append(str(d))
                products.append(1)
        return symbols, products

    return runs(source.shape) == runs(result.shape)


def node_type(node):
    """(shape, dtype) of a tensor node: a symbolic size (Dynamo's dynamic
    dimensions) is None. Raises UnsupportedOpError for a node that is not
    a tensor."""
    tensor = _node_tensor(node)
    if tensor is None:
        raise UnsupportedOpError(f"{node.name} is not a tensor")
    return tensor_type(tensor)


def tensor_type(tensor):
    """(shape, dtype) of a (fake) tensor, a symbolic size as None."""
    return tuple(d if isinstance(d, int) else None for d in tensor.shape), tensor.dtype


def _broadcast_dims(a, b):
    """numpy broadcasting of two dimensions, None being a run-time size
    (the compiled function checks that sizes meeting here agree)."""
    if a == 1:
        return b
    if b == 1 or a == b:
        return a
    if a is None or b is None:
        return a if b is None else b
    raise UnsupportedOpError(f"sizes {a} and {b} do not broadcast")


class _Emitter:
    def __init__(self, gm, name):
        self.gm = gm
        self.name = name
        self.lines = []
        self.values = {}  # fx node -> (ssa name, shape, dtype)
        self.counter = 0
        self.params = []  # (qualified name, tensor)
        # In-place ops: the input each value aliases, and the inputs written
        # with their final values (placeholder -> value).
        self.alias_of = {}
        self.mutated = {}
        # Nodes PyTorch may give as views of another tensor (view, reshape,
        # transpose, ...): an in-place write through one, or to a tensor one
        # was taken of, would have to reach the other; the importer refuses
        # both. view node -> the node it views.
        self.view_of = {}
        # K or V heads repeated for grouped-query attention (repeat_kv,
        # repeat_interleave along the heads): node -> (the node holding each
        # head once, with a size-1 axis after the heads where `inserted`, the
        # repeats).
        self.head_repeats = {}

    # -- helpers ---------------------------------------------------------
    def fresh(self):
        self.counter += 1
        return f"%v{self.counter}"

    def emit(self, text, shape, dtype):
        name = self.fresh()
        self.lines.append(f"    {name} = {text}")
        return name, tuple(shape), dtype

    def type_of(self, value):
        return _tensor_type(value[1], value[2])

    # Bit patterns of the values MLIR has no decimal literal for.
    _NON_FINITE = {torch.float32: ("0x7F800000", "0xFF800000", "0x7FC00000"),
                   torch.bfloat16: ("0x7F80", "0xFF80", "0x7FC0"),
                   torch.float16: ("0x7C00", "0xFC00", "0x7E00")}

    def literal(self, number, dtype):
        """`number` as an element of a dense attribute of `dtype`."""
        if math.isfinite(float(number)):
            return _float(number)
        if dtype not in self._NON_FINITE:
            raise UnsupportedOpError(f"{number} as a {dtype} constant")
        inf, ninf, nan = self._NON_FINITE[dtype]
        return nan if math.isnan(number) else (inf if number > 0 else ninf)

    def scalar(self, number, dtype):
        return self.emit(f"fusion.constant dense<{self.literal(number, dtype)}> : "
                         f"tensor<{_ELEMENT[dtype]}>", (), dtype)

    def operand(self, arg, like_dtype):
        if isinstance(arg, torch.fx.Node):
            return self.value(arg)
        if isinstance(arg, (int, float)):
            return self.scalar(arg, like_dtype)
        raise UnsupportedOpError(f"operand {arg!r} is not a tensor or a number")

    def value(self, node):
        """The value of a tensor node (its latest, after in-place ops)."""
        if not isinstance(node, torch.fx.Node) or node not in self.values \
                or isinstance(self.values[node], list):
            raise UnsupportedOpError(f"operand {node!r} is not a tensor")
        return self.values[node]

    def broadcast_shape(self, *shapes):
        rank = max(len(s) for s in shapes)
        result = [1] * rank
        for shape in shapes:
            for i, d in enumerate(shape):
                k = rank - len(shape) + i
                result[k] = _broadcast_dims(result[k], d)
        return tuple(result)

    def binary(self, op, lhs, rhs):
        """fusion.`op` of two nodes or a node and a number (in its dtype)."""
        dtype = self.value(lhs if isinstance(lhs, torch.fx.Node) else rhs)[2]
        return self.combine(op, self.operand(lhs, dtype), self.operand(rhs, dtype))

    def unary(self, op, x, extra=""):
        v = self.value(x)
        return self.emit(f"fusion.{op} {v[0]}{extra} : {self.type_of(v)}", v[1], v[2])

    def convert(self, v, dtype):
        if v[2] == dtype:
            return v
        return self.emit(f"fusion.convert {v[0]} : {self.type_of(v)} to {_tensor_type(v[1], dtype)}",
                         v[1], dtype)

    def reduce(self, op, x, dims, keepdim):
        v = self.value(x)
        rank = len(v[1])
        if dims is None:
            dims = list(range(rank))
        dims = sorted(d % rank for d in ([dims] if isinstance(dims, int) else dims))
        shape = [1 if i in dims else s for i, s in enumerate(v[1])] if keepdim else \
            [s for i, s in enumerate(v[1]) if i not in dims]
        keep = " keep_dims" if keepdim else ""
        axes = ", ".join(map(str, dims))
        return self.emit(f"fusion.{op} {v[0]} axes = [{axes}]{keep} : {self.type_of(v)} -> "
                         f"{_tensor_type(shape, v[2])}", shape, v[2])

    def transpose(self, v, permutation):
        shape = [v[1][p] for p in permutation]
        perm = ", ".join(map(str, permutation))
        return self.emit(f"fusion.transpose {v[0]} permutation = [{perm}] : {self.type_of(v)} -> "
                         f"{_tensor_type(shape, v[2])}", shape, v[2])

    def reshape(self, node, x):
        """view, reshape, flatten, unsqueeze, squeeze: fusion.reshape to the
        node's own shape (dynamic sizes kept whole and in order)."""
        v = self.value(x)
        shape, dtype = node_type(node)
        if dtype != v[2]:
            raise UnsupportedOpError("a view as another dtype is not supported")
        if (None in shape or None in v[1]) and not _keeps_dynamic_sizes(x, node):
            raise UnsupportedOpError("a reshape that merges, splits or moves a dynamic size is "
                                     "not supported")
        self.view_of[node] = x
        if shape == v[1]:
            return v
        return self.emit(f"fusion.reshape {v[0]} : {self.type_of(v)} -> {_tensor_type(shape, dtype)}",
                         shape, dtype)

    def slice(self, v, offsets, sizes, strides):
        """fusion.slice of value `v`; a dynamic dimension (size None) is kept
        whole (offset 0, stride 1), as the op allows."""
        if list(offsets) == [0] * len(sizes) and list(sizes) == list(v[1]) and \
                list(strides) == [1] * len(sizes):
            return v
        join = lambda xs: ", ".join(map(str, xs))  # noqa: E731
        attr_sizes = [-1 if size is None else size for size in sizes]
        return self.emit(f"fusion.slice {v[0]} offsets = [{join(offsets)}] "
                         f"sizes = [{join(attr_sizes)}] strides = [{join(strides)}] : "
                         f"{self.type_of(v)} -> {_tensor_type(sizes, v[2])}", sizes, v[2])

    def getitem(self, node, x, index):
        """x[index]: an item of a split, or basic indexing (slices with
        positive steps, integers, None and one Ellipsis) as fusion.slice,
        then fusion.reshape where integers drop dimensions or None adds
        them. Dynamic dimensions can only be kept whole (`:` or `...`)."""
        if isinstance(x, torch.fx.Node) and isinstance(self.values.get(x), list):
            if not isinstance(index, int):
                raise UnsupportedOpError("an item of a split by a non-constant index")
            self.view_of[node] = x
            return self.values[x][index]
        v = self.value(x)
        items = list(index) if isinstance(index, tuple) else [index]
        def basic(i):
            if isinstance(i, slice):
                return all(p is None or (isinstance(p, int) and not isinstance(p, bool))
                           for p in (i.start, i.stop, i.step))
            return (isinstance(i, int) and not isinstance(i, bool)) or i is None or i is Ellipsis

        if not all(basic(i) for i in items) or items.count(Ellipsis) > 1:
            raise UnsupportedOpError(f"indexing by {index!r} is not supported (slices, integers, "
                                     f"None and ... are)")
        consumed = sum(isinstance(i, (int, slice)) for i in items)
        rank = len(v[1])
        if consumed > rank:
            raise UnsupportedOpError(f"too many indices for a tensor of rank {rank}")
        rest = [slice(None)] * (rank - consumed)
        if Ellipsis in items:
            at = items.index(Ellipsis)
            items[at:at + 1] = rest
        else:
            items += rest
        offsets, sizes, strides = [], [], []
        dims = iter(v[1])
        for item in items:
            if item is None:
                continue
            size = next(dims)
            if size is None:
                whole = isinstance(item, slice) and item.start in (None, 0) and \
                    item.stop is None and item.step in (None, 1)
                if not whole:
                    raise UnsupportedOpError(f"indexing a dynamic dimension by {item!r} (it can "
                                             f"only be kept whole)")
                offsets.append(0), sizes.append(None), strides.append(1)
                continue
            if isinstance(item, int):
                if not -size <= item < size:
                    raise UnsupportedOpError(f"index {item} is out of range for size {size}")
                offsets.append(item % size), sizes.append(1), strides.append(1)
                continue
            start, stop, step = item.indices(size)
            if step <= 0:
                raise UnsupportedOpError("slices with a negative step are not supported")
            offsets.append(start), sizes.append(len(range(start, stop, step))), strides.append(step)
        sliced = self.slice(v, offsets, sizes, strides)
        self.view_of[node] = x
        shape, _ = node_type(node)
        if tuple(shape) == tuple(sliced[1]):
            return sliced
        return self.emit(f"fusion.reshape {sliced[0]} : {self.type_of(sliced)} -> "
                         f"{_tensor_type(shape, sliced[2])}", shape, sliced[2])

    def split(self, node, x, sections, dim):
        """Tensor.split / torch.split (a size, or a list of sizes) and chunk
        (`sections` None: chunks of ceil(size / n)): a list of slices."""
        v = self.value(x)
        rank = len(v[1])
        dim %= rank
        size = v[1][dim]
        if size is None:
            raise UnsupportedOpError("splitting a dynamic dimension is not supported")
        if isinstance(sections, int):
            sections = [min(sections, size - s) for s in range(0, size, sections)] or [0]
        if sum(sections) != size:
            raise UnsupportedOpError(f"split sizes {sections} do not add up to {size}")
        parts, start = [], 0
        for length in sections:
            offsets = [start if d == dim else 0 for d in range(rank)]
            sizes = [length if d == dim else s for d, s in enumerate(v[1])]
            parts.append(self.slice(v, offsets, sizes, [1] * rank))
            start += length
        self.view_of[node] = x
        return parts

    def concat(self, node, tensors, dim, stack=False):
        """torch.cat along a static size: fusion.concat of the tensors
        converted to the result's dtype (torch's promotion), empty ones
        left out (torch.cat also takes a 1-D empty tensor beside any). With
        `stack` (torch.stack), each tensor gets a size-1 axis at `dim`
        first (a fusion.reshape) and they are joined along it."""
        shape, dtype = node_type(node)
        if not isinstance(tensors, (list, tuple)) or not tensors or \
                not all(isinstance(t, torch.fx.Node) for t in tensors):
            raise UnsupportedOpError("cat of something other than a list of tensors")
        values = [self.value(t) for t in tensors]
        dim %= len(shape)
        if stack:
            def unsqueezed(v):
                wider = v[1][:dim] + (1,) + v[1][dim:]
                return self.emit(f"fusion.reshape {v[0]} : {self.type_of(v)} -> "
                                 f"{_tensor_type(wider, v[2])}", wider, v[2])
            values = [unsqueezed(v) for v in values]
        else:
            values = [v for v in values
                      if not (len(v[1]) == 1 and v[1][0] == 0 and len(shape) != 1)]
        if shape[dim] is None:
            raise UnsupportedOpError("cat along a dynamic dimension is not supported")
        values = [self.convert(v, dtype) for v in values if v[1][dim] != 0] or \
            [self.convert(values[0], dtype)]
        if len(values) == 1:
            return values[0]
        operands = ", ".join(v[0] for v in values)
        types = ", ".join(self.type_of(v) for v in values)
        return self.emit(f"fusion.concat {operands} axis = {dim} : ({types}) -> "
                         f"{_tensor_type(shape, dtype)}", shape, dtype)

    def where(self, cond, a, b):
        """torch.where(cond, a, b): fusion.select, numbers as constants of
        the tensor operand's dtype."""
        c = self.value(cond)
        if c[2] != torch.bool:
            raise UnsupportedOpError("where with a condition that is not boolean")
        tensors = [self.value(t) for t in (a, b) if isinstance(t, torch.fx.Node)]
        if not tensors:
            raise UnsupportedOpError("where of two numbers")
        dtype = tensors[0][2]
        x, y = (self.convert(self.operand(t, dtype), dtype) for t in (a, b))
        if dtype not in self._NON_FINITE:
            raise UnsupportedOpError(f"where of {dtype} values")
        shape = self.broadcast_shape(c[1], x[1], y[1])
        return self.emit(f"fusion.select {c[0]}, {x[0]}, {y[0]} : ({self.type_of(c)}, "
                         f"{self.type_of(x)}, {self.type_of(y)}) -> {_tensor_type(shape, dtype)}",
                         shape, dtype)

    def logical_not(self, x):
        """~x of a boolean tensor: where x is false (x as 0 or 1, compared
        with 0; the dialect's comparisons take floats)."""
        v = self.value(x)
        if v[2] != torch.bool:
            raise UnsupportedOpError("~ of a tensor that is not boolean (bitwise not)")
        one, zero = self.scalar(1.0, torch.float32), self.scalar(0.0, torch.float32)
        f = self.emit(f"fusion.select {v[0]}, {one[0]}, {zero[0]} : ({self.type_of(v)}, "
                      f"tensor<f32>, tensor<f32>) -> {_tensor_type(v[1], torch.float32)}",
                      v[1], torch.float32)
        return self.emit(f"fusion.cmp eq, {f[0]}, {zero[0]} : ({self.type_of(f)}, tensor<f32>) -> "
                         f"{_tensor_type(v[1], torch.bool)}", v[1], torch.bool)

    def compare(self, predicate, lhs, rhs):
        """fusion.cmp of two float operands (a number takes the tensor's
        dtype): a boolean tensor."""
        dtype = self.value(lhs if isinstance(lhs, torch.fx.Node) else rhs)[2]
        a, b = self.operand(lhs, dtype), self.operand(rhs, dtype)
        if dtype not in self._NON_FINITE or a[2] != b[2]:
            raise UnsupportedOpError(f"comparison of {a[2]} and {b[2]}")
        shape = self.broadcast_shape(a[1], b[1])
        return self.emit(f"fusion.cmp {predicate}, {a[0]}, {b[0]} : ({self.type_of(a)}, "
                         f"{self.type_of(b)}) -> {_tensor_type(shape, torch.bool)}",
                         shape, torch.bool)

    def broadcast_to(self, v, shape):
        """`v` materialized at `shape` (which it broadcasts to): a product
        with a splat 1, exact for every value, -0 and NaN included. A
        dynamic size of `shape` must be `v`'s own (the 1 has size 1 there)."""
        if tuple(v[1]) == tuple(shape):
            return v
        lead = len(shape) - len(v[1])
        if lead < 0 or any(d is None and (i < lead or v[1][i - lead] is not None)
                           for i, d in enumerate(shape)) or \
                self.broadcast_shape(v[1], shape) != tuple(shape):
            raise UnsupportedOpError(f"sizes {v[1]} do not broadcast to {shape}")
        ones = tuple(1 if d is None else d for d in shape)
        one = self.emit(f"fusion.constant dense<{_float(1)}> : {_tensor_type(ones, v[2])}",
                        ones, v[2])
        return self.combine("mul", v, one)

    def note_repeat_kv(self, node, x):
        """Notes reshape `node` of `x` as heads repeated (head_repeats)
        where it is Hugging Face's repeat_kv: `x` expands a size-1 axis
        inserted after the heads axis of a [..., H, S, D] tensor to G, and
        `node` merges the two (`t[:, :, None].expand(B, H, G, S, D)
        .reshape(B, H G, S, D)`)."""
        if not (isinstance(x, torch.fx.Node) and x.op == "call_method"
                and x.target == "expand" and isinstance(x.args[0], torch.fx.Node)):
            return
        try:
            (out, _), (wide, _), (narrow, _) = node_type(node), node_type(x), node_type(x.args[0])
        except UnsupportedOpError:
            return
        a = len(wide) - 3  # the repeats' axis, after the heads
        if len(out) != len(wide) - 1 or len(narrow) != len(wide) or a < 1 or \
                narrow[a] != 1 or None in (wide[a], wide[a - 1]) or \
                narrow[:a] + narrow[a + 1:] != wide[:a] + wide[a + 1:] or \
                out != wide[:a - 1] + (wide[a - 1] * wide[a],) + wide[a + 1:]:
            return
        self.head_repeats[node] = (x.args[0], True, wide[a])

    def repeat(self, node, x, repeats, dim):
        """repeat_interleave by an integer along `dim` (each element
        `repeats` times in a row): a size-1 axis after `dim`, materialized
        `repeats` wide, merged into `dim`."""
        v = self.value(x)
        if not isinstance(repeats, int) or dim is None or v[1][dim % len(v[1])] is None:
            raise UnsupportedOpError("repeat_interleave other than by an integer along a static "
                                     "size")
        dim %= len(v[1])
        if dim == len(v[1]) - 3 and dim >= 0:
            self.head_repeats[node] = (x, False, repeats)
        inserted = v[1][:dim + 1] + (1,) + v[1][dim + 1:]
        wide = v[1][:dim + 1] + (repeats,) + v[1][dim + 1:]
        split = self.emit(f"fusion.reshape {v[0]} : {self.type_of(v)} -> "
                          f"{_tensor_type(inserted, v[2])}", inserted, v[2])
        copies = self.broadcast_to(split, wide)
        shape, _ = node_type(node)
        return self.emit(f"fusion.reshape {copies[0]} : {self.type_of(copies)} -> "
                         f"{_tensor_type(shape, v[2])}", shape, v[2])

    def masked_fill(self, x, mask, value):
        """x where mask is false, value (a number, or a rank-0 tensor) where
        it is true."""
        v, m = self.value(x), self.value(mask)
        if m[2] != torch.bool:
            raise UnsupportedOpError("masked_fill with a mask that is not boolean")
        fill = self.operand(value, v[2])
        if len(fill[1]) != 0:
            raise UnsupportedOpError("masked_fill with a value that is not a scalar")
        fill = self.convert(fill, v[2])
        shape = self.broadcast_shape(m[1], v[1])
        if shape != v[1]:
            raise UnsupportedOpError("masked_fill whose mask broadcasts the tensor")
        return self.emit(f"fusion.select {m[0]}, {fill[0]}, {v[0]} : ({self.type_of(m)}, "
                         f"{self.type_of(fill)}, {self.type_of(v)}) -> {self.type_of(v)}",
                         v[1], v[2])

    def matmul(self, a, b):
        shape = self.broadcast_shape(a[1][:-2], b[1][:-2]) + (a[1][-2], b[1][-1])
        return self.emit(f"fusion.matmul {a[0]}, {b[0]} : ({self.type_of(a)}, {self.type_of(b)}) -> "
                         f"{_tensor_type(shape, a[2])}", shape, a[2])

    def param(self, qualified, transposed=False):
        """The function argument holding parameter (or buffer) `qualified`
        (transposed, for a Linear weight: then the call needs no transpose),
        added after the inputs on first use."""
        key = qualified + (".T" if transposed else "")
        for i, (name, _) in enumerate(self.params):
            if name == key:
                return self.values[("param", i)]
        try:
            tensor = self.gm.get_parameter(qualified)
        except AttributeError:
            try:
                tensor = self.gm.get_buffer(qualified)
            except AttributeError:
                raise UnsupportedOpError(f"attribute {qualified} is not a parameter or buffer") from None
        tensor = tensor.detach()
        if transposed:
            tensor = tensor.t().contiguous()
        index = len(self.params)
        self.params.append((key, tensor))
        value = (f"%p{index}", tuple(tensor.shape), tensor.dtype)
        self.values[("param", index)] = value
        return value

    def add_product(self, c, a, b, beta, alpha):
        """addmm and baddbmm: beta * c + alpha * (a @ b); with beta 0, c is
        not read (PyTorch ignores it, NaN included)."""
        y = self.matmul(self.value(a), self.value(b))
        if alpha != 1:
            y = self.combine("mul", y, self.scalar(alpha, y[2]))
        if beta == 0:
            return y
        c = self.operand(c, y[2])
        if beta != 1:
            c = self.combine("mul", c, self.scalar(beta, c[2]))
        return self.combine("add", y, c)

    def linear(self, x, weight, bias, transposed=False):
        w = weight if transposed else self.transpose(weight, [1, 0])
        y = self.matmul(x, w)
        return y if bias is None else self.combine("add", y, bias)

    def layer_norm(self, x, weight, bias, eps, normalized):
        v = self.value(x)
        if len(normalized) != 1:
            raise UnsupportedOpError("layer_norm over more than the last dimension is not supported")
        if weight is None or bias is None:
            raise UnsupportedOpError("layer_norm without weight and bias is not supported")
        return self.emit(f"fusion.layer_norm {v[0]}, {weight[0]}, {bias[0]} epsilon = {_float(eps)} : "
                         f"{self.type_of(v)}, {self.type_of(weight)}, {self.type_of(bias)}", v[1], v[2])

    def rms_norm(self, x, weight, eps, normalized):
        """F.rms_norm and nn.RMSNorm over the last dimension: fusion.rms_norm
        (computed in f32); without a weight, a splat weight of ones; eps
        None is the dtype's epsilon, as PyTorch takes it. With a weight of
        another dtype, computed in the promoted dtype and returned in x's,
        as PyTorch does."""
        v = self.value(x) if isinstance(x, torch.fx.Node) else x
        normalized = (normalized,) if isinstance(normalized, int) else tuple(normalized)
        if len(normalized) != 1 or v[1][-1] is None:
            raise UnsupportedOpError("rms_norm over more than the last dimension, or a dynamic "
                                     "one, is not supported")
        if eps is None:
            eps = torch.finfo(v[2]).eps
        if weight is not None and weight[2] != v[2]:
            wide = torch.promote_types(v[2], weight[2])
            n = self.rms_norm(self.convert(v, wide), self.convert(weight, wide), eps, normalized)
            return self.convert(n, v[2])
        if weight is None:
            size = v[1][-1]
            weight = self.emit(f"fusion.constant dense<1.0> : tensor<{size}x{_ELEMENT[v[2]]}>",
                               (size,), v[2])
        return self.emit(f"fusion.rms_norm {v[0]}, {weight[0]} epsilon = {_float(eps)} : "
                         f"{self.type_of(v)}, {self.type_of(weight)}", v[1], v[2])

    def softmax(self, x, dim):
        v = self.value(x)
        return self.emit(f"fusion.softmax {v[0]} axis = {dim % len(v[1])} : {self.type_of(v)}", v[1], v[2])

    _MINUS_INF = {torch.float32: "0xFF800000", torch.bfloat16: "0xFF80", torch.float16: "0xFC00"}

    def position(self, x, axis, dimension):
        """The positions along `axis` of `x` as an f32 iota of rank 2 laid
        along `dimension` (a query row's index down, a key's across), its
        size taken from `x` where that size is dynamic."""
        size = x[1][axis]
        shape = (size, 1) if dimension == 0 else (1, size)
        result = _tensor_type(shape, torch.float32)
        if size is not None:
            return self.emit(f"fusion.iota dimension = {dimension} : {result}", shape,
                             torch.float32)
        return self.emit(f"fusion.iota dimension = {dimension} size_of {x[0]}[{axis}] : "
                         f"{self.type_of(x)} -> {result}", shape, torch.float32)

    def attention(self, q, k, v, mask=None, causal=False, scale=None):
        """F.scaled_dot_product_attention as the ops fusion-fuse-attention
        makes one kernel of: the scores Q K^T (in Q's type, the product's),
        scaled in f32 with a float mask added there, a boolean mask and the
        causal one (key <= query position, from fusion.iota: the kernel
        skips the key blocks it empties) as selects of -inf, the softmax
        over the keys in f32, the probabilities rounded once to V's type
        (as FlashAttention does), and their product with V."""
        if not (len(q[1]) >= 2 and q[2] == k[2] == v[2] and q[2] in self._MINUS_INF):
            raise UnsupportedOpError("scaled_dot_product_attention needs Q, K and V of one "
                                     "float dtype")
        rank = len(k[1])
        if scale is None:
            if q[1][-1] is None:
                raise UnsupportedOpError("scaled_dot_product_attention with a dynamic head "
                                         "size and no scale")
            scale = q[1][-1] ** -0.5
        kt = self.transpose(k, list(range(rank - 2)) + [rank - 1, rank - 2])
        dtype = q[2]
        t = self.combine("mul", self.convert(self.matmul(q, kt), torch.float32),
                         self.scalar(scale, torch.float32))
        if mask is not None and mask[2] != torch.bool:
            t = self.combine("add", t, self.convert(mask, torch.float32))
        keep = [mask] if mask is not None and mask[2] == torch.bool else []
        if causal:
            row = self.position(q, len(q[1]) - 2, 0)
            key = self.position(k, len(k[1]) - 2, 1)
            shape = (row[1][0], key[1][1])
            keep.append(self.emit(f"fusion.cmp le, {key[0]}, {row[0]} : ({self.type_of(key)}, "
                                  f"{self.type_of(row)}) -> {_tensor_type(shape, torch.bool)}",
                                  shape, torch.bool))
        for m in keep:
            ninf = self.emit(f"fusion.constant dense<{self._MINUS_INF[torch.float32]}> : "
                             f"tensor<f32>", (), torch.float32)
            shape = self.broadcast_shape(m[1], t[1])
            t = self.emit(f"fusion.select {m[0]}, {t[0]}, {ninf[0]} : ({self.type_of(m)}, "
                          f"{self.type_of(t)}, {self.type_of(ninf)}) -> "
                          f"{_tensor_type(shape, torch.float32)}", shape, torch.float32)
        p = self.emit(f"fusion.softmax {t[0]} axis = {len(t[1]) - 1} : {self.type_of(t)}",
                      t[1], torch.float32)
        return self.matmul(self.convert(p, dtype), v)

    # -- nodes -------------------------------------------------------------
    def node(self, node):
        op, target, args, kwargs = node.op, node.target, node.args, node.kwargs
        if op == "get_attr":
            return self.param(target)
        if op == "call_module":
            return self.call_module(node, self.gm.get_submodule(target), args)
        if op == "call_method":
            return self.call_method(node, target, args, kwargs)
        if op == "call_function":
            return self.call_function(node, target, args, kwargs)
        raise UnsupportedOpError(f"fx node kind {op} ({target}) is not supported")

    def call_module(self, node, module, args):
        nn = torch.nn
        x = args[0]
        if isinstance(module, (nn.Dropout, nn.Identity)):
            return self.value(x)
        if isinstance(module, nn.Linear):
            prefix = node.target
            weight = self.param(f"{prefix}.weight", transposed=True)
            bias = self.param(f"{prefix}.bias") if module.bias is not None else None
            return self.linear(self.value(x), weight, bias, transposed=True)
        if isinstance(module, nn.LayerNorm):
            prefix = node.target
            weight = self.param(f"{prefix}.weight") if module.elementwise_affine else None
            bias = self.param(f"{prefix}.bias") if module.elementwise_affine else None
            return self.layer_norm(x, weight, bias, module.eps, module.normalized_shape)
        if isinstance(module, getattr(nn, "RMSNorm", ())):
            weight = self.param(f"{node.target}.weight") if module.elementwise_affine else None
            return self.rms_norm(x, weight, module.eps, module.normalized_shape)
        if isinstance(module, nn.GELU):
            return self.gelu(x, getattr(module, "approximate", "none"))
        simple = {nn.SiLU: "silu", nn.ReLU: "relu", nn.Sigmoid: "sigmoid", nn.Tanh: "tanh"}
        for kind, name in simple.items():
            if isinstance(module, kind):
                return self.unary(name, x)
        if isinstance(module, nn.Softmax):
            return self.softmax(x, module.dim)
        raise UnsupportedOpError(f"module {type(module).__name__} ({node.target}) is not supported")

    def gelu(self, x, approximate):
        if approximate == "tanh":
            return self.unary("gelu", x, " approximation = tanh")
        return self.unary("gelu", x)

    _BINARY = {operator.add: "add", torch.add: "add", operator.sub: "sub", torch.sub: "sub",
               operator.mul: "mul", torch.mul: "mul", operator.truediv: "div", torch.div: "div",
               torch.maximum: "max", torch.minimum: "min"}
    _UNARY = {torch.exp: "exp", torch.log: "log", torch.tanh: "tanh", torch.sigmoid: "sigmoid",
              torch.sqrt: "sqrt", torch.rsqrt: "rsqrt", torch.abs: "abs", torch.neg: "neg",
              operator.neg: "neg", torch.relu: "relu", torch.nn.functional.relu: "relu",
              torch.nn.functional.silu: "silu", torch.erf: "erf", torch.reciprocal: "reciprocal"}
    _METHOD_UNARY = {"exp": "exp", "log": "log", "tanh": "tanh", "sigmoid": "sigmoid", "sqrt": "sqrt",
                     "rsqrt": "rsqrt", "abs": "abs", "neg": "neg", "relu": "relu", "erf": "erf",
                     "reciprocal": "reciprocal"}
    _METHOD_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div"}
    _REDUCE = {"sum": "reduce_sum", "mean": "reduce_mean", "amax": "reduce_max", "amin": "reduce_min"}

    def combine(self, op, a, b):
        """fusion.`op` of two values (not nodes)."""
        shape = self.broadcast_shape(a[1], b[1])
        result = _tensor_type(shape, a[2])
        return self.emit(f"fusion.{op} {a[0]}, {b[0]} : ({self.type_of(a)}, {self.type_of(b)}) -> {result}",
                         shape, a[2])

    def add_scaled(self, op, x, y, alpha):
        """x + alpha * y (op "add") or x - alpha * y ("sub"), as torch.add's
        and torch.sub's alpha."""
        if alpha == 1:
            return self.binary(op, x, y)
        if not isinstance(y, torch.fx.Node):
            return self.binary(op, x, y * alpha)
        v = self.value(y)
        return self.combine(op, self.operand(x, v[2]), self.combine("mul", v, self.scalar(alpha, v[2])))

    def addc(self, op, x, t1, t2, value):
        """x + value * (t1 op t2): torch.addcmul ("mul") and addcdiv ("div")."""
        product = self.binary(op, t1, t2)
        if value != 1:
            product = self.combine("mul", product, self.scalar(value, product[2]))
        return self.combine("add", self.operand(x, product[2]), product)

    def mutate(self, target, value):
        """Records that an in-place op wrote `value` into `target`: later
        reads of it and of its aliases see the new value, and where it is
        an input (or an alias of one) the function returns the value for
        the caller to copy back. Returns the written node."""
        base = self.alias_of.get(target, target)
        if not isinstance(base, torch.fx.Node):
            raise UnsupportedOpError(f"in-place op on {target!r}, which is not a tensor")
        if base in self.view_of or base in self.view_of.values():
            raise UnsupportedOpError(f"in-place op on {base.name}, a view or viewed tensor")
        old = self.value(base)
        if value[1] != old[1] or value[2] != old[2]:
            raise UnsupportedOpError(f"in-place op changes the type of {base.name}")
        if base.op == "placeholder":
            self.mutated[base] = value
        self.values[base] = value
        for alias, aliased in self.alias_of.items():
            if aliased is base:
                self.values[alias] = value
        return base

    def pow(self, x, exponent):
        if exponent == 2:
            return self.unary("square", x)
        if exponent == 0.5:
            return self.unary("sqrt", x)
        return self.binary("pow", x, exponent)

    def call_function(self, node, fn, args, kwargs):
        if kwargs.get("inplace"):  # F.relu(x, inplace=True) and the like
            value = self.call_function(node, fn, args, {k: v for k, v in kwargs.items() if k != "inplace"})
            self.alias_of[node] = self.mutate(args[0], value)
            return value
        F = torch.nn.functional
        if fn in self._BINARY:
            alpha = kwargs.get("alpha", 1)
            if alpha != 1 and self._BINARY[fn] not in ("add", "sub"):
                raise UnsupportedOpError(f"{fn.__name__} with alpha is not supported")
            return self.add_scaled(self._BINARY[fn], args[0], args[1], alpha)
        if fn in self._UNARY:
            return self.unary(self._UNARY[fn], args[0])
        if fn in (torch.pow, operator.pow):
            return self.pow(args[0], args[1])
        if fn is F.gelu:
            return self.gelu(args[0], kwargs.get("approximate", "none"))
        if fn in (F.softmax, torch.softmax):
            dim = kwargs.get("dim", args[1] if len(args) > 1 else None)
            return self.softmax(args[0], dim)
        if fn is F.layer_norm:
            weight = kwargs.get("weight", args[2] if len(args) > 2 else None)
            bias = kwargs.get("bias", args[3] if len(args) > 3 else None)
            eps = kwargs.get("eps", args[4] if len(args) > 4 else 1e-5)
            weight, bias = (self.value(v) if v is not None else None for v in (weight, bias))
            return self.layer_norm(args[0], weight, bias, eps, args[1])
        if fn is getattr(F, "scaled_dot_product_attention", None):
            return self.sdpa(args, kwargs)
        if fn in (getattr(F, "rms_norm", None), getattr(torch, "rms_norm", None)) and \
                fn is not None:
            given = dict(zip(("input", "normalized_shape", "weight", "eps"), args), **kwargs)
            weight = given.get("weight")
            return self.rms_norm(given["input"], self.value(weight) if weight is not None else None,
                                 given.get("eps"), given["normalized_shape"])
        if fn is F.linear:
            weight = self.value(kwargs.get("weight", args[1]))
            bias = kwargs.get("bias", args[2] if len(args) > 2 else None)
            return self.linear(self.value(args[0]), weight, self.value(bias) if bias is not None else None)
        if fn in (torch.matmul, operator.matmul, torch.mm, torch.bmm):
            return self.matmul(self.value(args[0]), self.value(args[1]))
        if fn in (torch.addmm, torch.baddbmm):
            return self.add_product(args[0], args[1], args[2], kwargs.get("beta", 1),
                                    kwargs.get("alpha", 1))
        if _is_prims_fma(fn):  # Dynamo's form of addcmul_: a * b + c
            product = self.binary("mul", args[0], args[1])
            return self.combine("add", product, self.operand(args[2], product[2]))
        if fn in (torch.addcmul, torch.addcdiv):
            value = kwargs.get("value", args[3] if len(args) > 3 else 1)
            return self.addc("mul" if fn is torch.addcmul else "div", args[0], args[1], args[2], value)
        if fn in (torch.sum, torch.mean, torch.amax, torch.amin):
            return self.call_method(node, fn.__name__, args, kwargs)
        if fn in (torch.reshape, torch.flatten, torch.unsqueeze, torch.squeeze):
            return self.reshape(node, args[0])
        if fn in self._COMPARE:
            return self.compare(self._COMPARE[fn], args[0], args[1])
        if fn in self._FILLS:
            # A float tensor of one value, at the node's (static) shape: a
            # splat constant, which costs a fused kernel nothing.
            shape, dtype = node_type(node)
            if None in shape or dtype not in self._NON_FINITE:
                raise UnsupportedOpError(f"{fn.__name__} of dynamic sizes or of {dtype}")
            value = self._FILLS[fn]
            if value is None:
                value = kwargs.get("fill_value", args[1] if len(args) > 1 else None)
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise UnsupportedOpError(f"{fn.__name__} with a value that is not a number")
            return self.emit(f"fusion.constant dense<{self.literal(value, dtype)}> : "
                             f"{_tensor_type(shape, dtype)}", shape, dtype)
        if fn is operator.getitem:
            return self.getitem(node, args[0], args[1])
        if fn in (torch.cat, torch.concat, getattr(torch, "concatenate", torch.cat), torch.stack):
            return self.concat(node, kwargs.get("tensors", args[0] if args else None),
                               kwargs.get("dim", args[1] if len(args) > 1 else 0),
                               stack=fn is torch.stack)
        if fn in (torch.split, torch.chunk):
            dim = kwargs.get("dim", args[2] if len(args) > 2 else 0)
            if fn is torch.chunk:
                return self.call_method(node, "chunk", args, kwargs)
            return self.split(node, args[0], kwargs.get("split_size_or_sections", args[1]), dim)
        if fn is torch.where and len(args) + len(kwargs) == 3:
            given = dict(zip(("condition", "input", "other"), args), **kwargs)
            return self.where(given["condition"], given["input"], given["other"])
        if fn is torch.repeat_interleave:
            return self.call_method(node, "repeat_interleave", args, kwargs)
        if fn in (operator.invert, torch.logical_not, torch.bitwise_not):
            return self.logical_not(args[0])
        if fn is torch.masked_fill:
            return self.masked_fill(args[0], args[1], kwargs.get("value", args[2] if len(args) > 2 else None))
        if fn in (F.dropout, torch.dropout):
            # Identity when not training (a model in eval mode, inference).
            names = ("input", "p", "training", "inplace") if fn is F.dropout else \
                ("input", "p", "train")
            given = dict(zip(names, args), **kwargs)
            training = given.get("training", given.get("train", fn is F.dropout))
            if training and given.get("p", 0.5) != 0:
                raise UnsupportedOpError("dropout while training is not supported")
            self.view_of[node] = args[0]
            return self.value(args[0])
        name = getattr(fn, "__name__", repr(fn))
        raise UnsupportedOpError(f"function {name} is not supported")

    def sdpa(self, args, kwargs):
        names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale",
                 "enable_gqa")
        given = dict(zip(names, args), **kwargs)
        if given.get("dropout_p", 0.0) != 0.0:
            raise UnsupportedOpError("scaled_dot_product_attention with dropout is not supported")
        mask = given.get("attn_mask")
        causal = given.get("is_causal", False)
        if mask is not None and causal:
            raise UnsupportedOpError("scaled_dot_product_attention with both attn_mask and "
                                     "is_causal")
        q, k, v = (self.value(given[n]) for n in names[:3])
        mask = self.value(mask) if mask is not None else None
        # K and V with their heads repeated G times for grouped-query heads
        # (repeat_kv, repeat_interleave): as enable_gqa on the heads as
        # stored, so that the attention reads each once instead of a copy
        # G times wider.
        repeats = [self.head_repeats.get(given[n]) for n in ("key", "value")]
        if not given.get("enable_gqa", False) and all(repeats) and \
                repeats[0][2] == repeats[1][2]:
            k, v = (self.heads_once(*r) for r in repeats)
            return self.grouped_attention(q, k, v, mask, causal, given.get("scale"))
        if not given.get("enable_gqa", False) or len(q[1]) < 3 or q[1][-3] == k[1][-3]:
            return self.attention(q, k, v, mask, causal, given.get("scale"))
        return self.grouped_attention(q, k, v, mask, causal, given.get("scale"))

    def heads_once(self, source, inserted, repeats):
        """The heads a head_repeats entry repeats, [..., H, S, D]."""
        v = self.value(source)
        return self.view_as(v, v[1][:-3] + v[1][-2:]) if inserted else v

    def view_as(self, v, shape):
        """fusion.reshape of value `v` to `shape` (its dynamic sizes kept
        whole and in order)."""
        if tuple(shape) == tuple(v[1]):
            return v
        return self.emit(f"fusion.reshape {v[0]} : {self.type_of(v)} -> "
                         f"{_tensor_type(shape, v[2])}", tuple(shape), v[2])

    def grouped_attention(self, q, k, v, mask, causal, scale):
        """enable_gqa: query head h reads K and V head h // G (G query heads
        a K/V head). Q viewed as [..., Hkv, G, Sq, D], K and V as [..., Hkv,
        1, Sk, D] (the size-1 axis the attention kernel broadcasts over), a
        mask with a head axis likewise; the output viewed back."""
        heads, kv_heads = q[1][-3], k[1][-3]
        if heads is None or kv_heads is None or v[1][-3] != kv_heads or \
                heads % kv_heads != 0:
            raise UnsupportedOpError("scaled_dot_product_attention with enable_gqa needs "
                                     "static head counts, Q's a multiple of K's and V's")
        group = heads // kv_heads

        def split(x, size):
            return self.view_as(x, (*x[1][:-3], kv_heads, size, *x[1][-2:]))
        if mask is not None and len(mask[1]) >= 3:
            mask = (split(mask, group) if mask[1][-3] == heads else
                    self.view_as(mask, (*mask[1][:-3], 1, 1, *mask[1][-2:])))
        out = self.attention(split(q, group), split(k, 1), split(v, 1), mask, causal, scale)
        return self.view_as(out, (*q[1][:-1], out[1][-1]))

    _COMPARE = {operator.eq: "eq", operator.ne: "ne", operator.lt: "lt", operator.le: "le",
                operator.gt: "gt", operator.ge: "ge", torch.eq: "eq", torch.ne: "ne",
                torch.lt: "lt", torch.le: "le", torch.gt: "gt", torch.ge: "ge"}
    _METHOD_COMPARE = {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}

    # Tensors of one value: the value, or None where it is the argument.
    _FILLS = {torch.zeros_like: 0.0, torch.ones_like: 1.0, torch.full_like: None,
              torch.zeros: 0.0, torch.ones: 1.0, torch.full: None}

    _RESHAPES = ("view", "reshape", "flatten", "unsqueeze", "squeeze")

    _IN_PLACE = {"add_", "sub_", "mul_", "div_", "addcmul_", "addcdiv_", "copy_", "neg_",
                 "exp_", "sqrt_", "rsqrt_", "abs_", "relu_", "sigmoid_", "tanh_", "pow_"}

    def call_method(self, node, method, args, kwargs):
        x = args[0]
        if method in self._IN_PLACE:
            if method == "copy_":
                src = self.value(args[1])
                if src[2] != self.value(x)[2]:
                    src = self.convert(src, self.value(x)[2])
                if src[1] != self.value(x)[1]:
                    raise UnsupportedOpError("copy_ that broadcasts is not supported")
                value = src
            else:
                value = self.call_method(node, method[:-1], args, kwargs)
            self.alias_of[node] = self.mutate(x, value)
            return value
        if method in self._METHOD_UNARY:
            return self.unary(self._METHOD_UNARY[method], x)
        if method in self._METHOD_BINARY:
            alpha = kwargs.get("alpha", 1)
            if alpha != 1 and method not in ("add", "sub"):
                raise UnsupportedOpError(f"Tensor.{method} with alpha is not supported")
            return self.add_scaled(self._METHOD_BINARY[method], x, args[1], alpha)
        if method in ("addcmul", "addcdiv"):
            value = kwargs.get("value", args[3] if len(args) > 3 else 1)
            return self.addc(method[4:], x, args[1], args[2], value)
        if method == "pow":
            return self.pow(x, args[1])
        if method in self._REDUCE:
            dims = kwargs.get("dim", args[1] if len(args) > 1 else None)
            keepdim = kwargs.get("keepdim", args[2] if len(args) > 2 else False)
            return self.reduce(self._REDUCE[method], x, dims, keepdim)
        if method == "softmax":
            return self.softmax(x, kwargs.get("dim", args[1] if len(args) > 1 else None))
        if method in ("float", "bfloat16", "half", "to", "type_as"):
            return self.convert(self.value(x), node_type(node)[1])
        if method in ("transpose", "permute"):
            v = self.value(x)
            rank = len(v[1])
            if method == "transpose":
                a, b = args[1] % rank, args[2] % rank
                perm = list(range(rank))
                perm[a], perm[b] = perm[b], perm[a]
            else:
                dims = args[1] if isinstance(args[1], (tuple, list)) else args[1:]
                perm = [d % rank for d in dims]
            self.view_of[node] = x
            return self.transpose(v, perm)
        if method in ("contiguous",):
            self.view_of[node] = x
            return self.value(x)
        if method in self._RESHAPES:
            self.note_repeat_kv(node, x)
            return self.reshape(node, x)
        if method in ("split", "chunk"):
            dim = kwargs.get("dim", args[2] if len(args) > 2 else 0)
            if method == "chunk":
                n = kwargs.get("chunks", args[1])
                v = self.value(x)
                size = v[1][dim % len(v[1])]
                if size is None:
                    raise UnsupportedOpError("chunks of a dynamic dimension")
                return self.split(node, x, -(-size // n) if size else 1, dim)
            return self.split(node, x, kwargs.get("split_size", args[1] if len(args) > 1 else None),
                              dim)
        if method in self._METHOD_COMPARE:
            return self.compare(self._METHOD_COMPARE[method], x, args[1])
        if method in ("matmul", "mm", "bmm"):
            return self.matmul(self.value(x), self.value(args[1]))
        if method == "repeat_interleave":
            return self.repeat(node, x, kwargs.get("repeats", args[1] if len(args) > 1 else None),
                               kwargs.get("dim", args[2] if len(args) > 2 else None))
        if method in ("expand", "expand_as"):
            shape, _ = node_type(node)
            self.view_of[node] = x
            return self.broadcast_to(self.value(x), shape)
        if method in ("logical_not", "bitwise_not", "__invert__"):
            return self.logical_not(x)
        if method == "masked_fill":
            return self.masked_fill(x, args[1], kwargs.get("value", args[2] if len(args) > 2 else None))
        raise UnsupportedOpError(f"method Tensor.{method} is not supported")


@dataclass
class ImportedGraph:
    """A traced graph as a fusion function.

    text: the module text, one function `@name(inputs..., params...)`.
    params: tensors of the graph's parameters and buffers (get_attr nodes),
        which the function takes after the inputs.
    inputs: the placeholders the function takes, in order (graph inputs
        that are not tensors, such as Dynamo's symbolic sizes, are left out).
    outputs: per graph output, ("result", k) for the function's result k or
        ("input", i) where the graph returns its input i (or an alias of it).
    mutated: (i, k) for an input i that in-place ops wrote: the caller
        copies result k into it after the call.
    """

    text: str
    params: List[torch.Tensor]
    inputs: List[torch.fx.Node]
    outputs: List[Tuple[str, int]] = field(default_factory=list)
    mutated: List[Tuple[int, int]] = field(default_factory=list)


def import_graph(gm, name="forward"):
    """The graph of `gm` (a torch.fx.GraphModule whose nodes carry their
    tensors' shapes and dtypes: ShapeProp's tensor_meta or Dynamo's fake
    tensors) as one fusion function. Raises UnsupportedOpError for a node
    the dialect does not cover."""
    emitter = _Emitter(gm, name)
    inputs, results, outputs = [], [], []
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            if _node_tensor(node) is None:
                continue  # a size or a flag: only ops the importer refuses use it
            shape, dtype = node_type(node)
            emitter.values[node] = (f"%a{len(inputs)}", shape, dtype)
            inputs.append(node)
        elif node.op == "output":
            returned = node.args[0]
            returned = returned if isinstance(returned, (tuple, list)) else (returned,)
            for r in returned:
                base = emitter.alias_of.get(r, r)
                if isinstance(base, torch.fx.Node) and base.op == "placeholder" and base in inputs:
                    outputs.append(("input", inputs.index(base)))
                    continue
                outputs.append(("result", len(results)))
                results.append(emitter.value(r))
        else:
            emitter.values[node] = emitter.node(node)
    mutated = []
    for base, value in emitter.mutated.items():
        mutated.append((inputs.index(base), len(results)))
        results.append(value)
    if not results:
        raise UnsupportedOpError("the graph computes nothing")
    args = [(f"%a{i}",) + node_type(n) for i, n in enumerate(inputs)]
    params = [(f"%p{i}", tuple(t.shape), t.dtype) for i, (_, t) in enumerate(emitter.params)]
    signature = ", ".join(f"{v[0]}: {_tensor_type(v[1], v[2])}" for v in args + params)
    result_types = ", ".join(emitter.type_of(v) for v in results)
    text = [f"func.func @{name}({signature}) -> ({result_types}) {{"] + emitter.lines + [
        f"    return {', '.join(v[0] for v in results)} : {result_types}", "}"]
    return ImportedGraph("\n".join(text) + "\n", [t for _, t in emitter.params], inputs,
                         outputs, mutated)


def import_module(module, example_inputs, name="forward"):
    """Traces `module` (a torch.nn.Module or a function of tensors) on
    `example_inputs` and returns (mlir_text, params): a module with one
    function `@name(inputs..., params...)` and the parameter tensors it
    takes after the inputs. Raises UnsupportedOpError for an op the fusion
    dialect does not cover (and for in-place ops on inputs, whose writes
    only the torch.compile backend carries out)."""
    if isinstance(module, torch.nn.Module):
        module = module.eval()
    gm = torch.fx.symbolic_trace(module)
    with torch.no_grad():
        ShapeProp(gm).propagate(*example_inputs)
    imported = import_graph(gm, name)
    if imported.mutated:
        raise UnsupportedOpError("the module writes its inputs in place")
    if any(kind == "input" for kind, _ in imported.outputs):
        raise UnsupportedOpError("the module returns an input unchanged")
    return imported.text, imported.params
