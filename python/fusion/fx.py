"""The PyTorch front end: a torch.nn.Module (or function) traced with torch.fx
becomes a `fusion` module.

    from fusion import fx
    mlir, params = fx.import_module(block, (x,), name="block")
    # mlir: text of func.func @block(inputs..., params...) -> outputs
    # params: the module's parameters, in the order the function takes them
    #         (nn.Linear weights transposed, [in, out], so no kernel does it)

Covered: elementwise arithmetic and math (add, sub, mul, div, neg, exp, log,
tanh, sigmoid, sqrt, rsqrt, abs, pow with exponent 2, relu, gelu, silu,
float casts), reductions (sum, mean, amax, amin over dims), softmax,
layer_norm, matmul, linear (as a matmul boundary plus the bias add),
transpose/permute, and the torch.nn modules Linear, LayerNorm, GELU, SiLU,
ReLU, Sigmoid, Tanh, Softmax, Dropout (identity: tracing is for inference)
and Identity. Anything else raises UnsupportedOpError naming the op.
Works with torch 1.13 (Debian's python3-torch) and 2.x.
"""

import operator

import torch
import torch.fx
from torch.fx.passes.shape_prop import ShapeProp

__all__ = ["import_module", "UnsupportedOpError"]

_ELEMENT = {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16", torch.bool: "i1"}


def _float(x):
    """A float literal MLIR parses (always with a dot and exponent)."""
    return format(float(x), ".9e")


class UnsupportedOpError(NotImplementedError):
    """A traced op the fusion dialect does not cover."""


def _tensor_type(shape, dtype):
    if dtype not in _ELEMENT:
        raise UnsupportedOpError(f"tensors of dtype {dtype} are not supported")
    dims = "x".join(str(d) for d in shape)
    return f"tensor<{dims}x{_ELEMENT[dtype]}>" if dims else f"tensor<{_ELEMENT[dtype]}>"


class _Emitter:
    def __init__(self, gm, name):
        self.gm = gm
        self.name = name
        self.lines = []
        self.values = {}  # fx node -> (ssa name, shape, dtype)
        self.counter = 0
        self.params = []  # (qualified name, tensor)

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

    def scalar(self, number, dtype):
        element = _ELEMENT[dtype]
        return self.emit(f"fusion.constant dense<{_float(number)}> : tensor<{element}>", (), dtype)

    def operand(self, arg, like_dtype):
        if isinstance(arg, torch.fx.Node):
            return self.values[arg]
        if isinstance(arg, (int, float)):
            return self.scalar(arg, like_dtype)
        raise UnsupportedOpError(f"operand {arg!r} is not a tensor or a number")

    def broadcast_shape(self, *shapes):
        return tuple(torch.broadcast_shapes(*[torch.Size(s) for s in shapes]))

    def binary(self, op, lhs, rhs):
        dtype = (lhs if isinstance(lhs, torch.fx.Node) else rhs).meta["tensor_meta"].dtype
        a, b = self.operand(lhs, dtype), self.operand(rhs, dtype)
        shape = self.broadcast_shape(a[1], b[1])
        result = _tensor_type(shape, dtype)
        return self.emit(f"fusion.{op} {a[0]}, {b[0]} : ({self.type_of(a)}, {self.type_of(b)}) -> {result}",
                         shape, dtype)

    def unary(self, op, x, extra=""):
        v = self.values[x]
        return self.emit(f"fusion.{op} {v[0]}{extra} : {self.type_of(v)}", v[1], v[2])

    def convert(self, v, dtype):
        if v[2] == dtype:
            return v
        return self.emit(f"fusion.convert {v[0]} : {self.type_of(v)} to {_tensor_type(v[1], dtype)}",
                         v[1], dtype)

    def reduce(self, op, x, dims, keepdim):
        v = self.values[x]
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

    def linear(self, x, weight, bias, transposed=False):
        w = weight if transposed else self.transpose(weight, [1, 0])
        y = self.matmul(x, w)
        if bias is None:
            return y
        shape = y[1]
        return self.emit(f"fusion.add {y[0]}, {bias[0]} : ({self.type_of(y)}, {self.type_of(bias)}) -> "
                         f"{_tensor_type(shape, y[2])}", shape, y[2])

    def layer_norm(self, x, weight, bias, eps, normalized):
        v = self.values[x]
        if len(normalized) != 1:
            raise UnsupportedOpError("layer_norm over more than the last dimension is not supported")
        if weight is None or bias is None:
            raise UnsupportedOpError("layer_norm without weight and bias is not supported")
        return self.emit(f"fusion.layer_norm {v[0]}, {weight[0]}, {bias[0]} epsilon = {_float(eps)} : "
                         f"{self.type_of(v)}, {self.type_of(weight)}, {self.type_of(bias)}", v[1], v[2])

    def softmax(self, x, dim):
        v = self.values[x]
        return self.emit(f"fusion.softmax {v[0]} axis = {dim % len(v[1])} : {self.type_of(v)}", v[1], v[2])

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
            return self.values[x]
        if isinstance(module, nn.Linear):
            prefix = node.target
            weight = self.param(f"{prefix}.weight", transposed=True)
            bias = self.param(f"{prefix}.bias") if module.bias is not None else None
            return self.linear(self.values[x], weight, bias, transposed=True)
        if isinstance(module, nn.LayerNorm):
            prefix = node.target
            weight = self.param(f"{prefix}.weight") if module.elementwise_affine else None
            bias = self.param(f"{prefix}.bias") if module.elementwise_affine else None
            return self.layer_norm(x, weight, bias, module.eps, module.normalized_shape)
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

    def pow(self, x, exponent):
        if exponent == 2:
            return self.unary("square", x)
        if exponent == 0.5:
            return self.unary("sqrt", x)
        return self.binary("pow", x, exponent)

    def call_function(self, node, fn, args, kwargs):
        F = torch.nn.functional
        if fn in self._BINARY:
            if kwargs.get("alpha", 1) != 1:
                raise UnsupportedOpError(f"{fn.__name__} with alpha is not supported")
            return self.binary(self._BINARY[fn], args[0], args[1])
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
            return self.layer_norm(args[0], self.values.get(weight), self.values.get(bias), eps, args[1])
        if fn is F.linear:
            weight = self.values[kwargs.get("weight", args[1])]
            bias = kwargs.get("bias", args[2] if len(args) > 2 else None)
            return self.linear(self.values[args[0]], weight, self.values[bias] if bias is not None else None)
        if fn in (torch.matmul, operator.matmul):
            return self.matmul(self.values[args[0]], self.values[args[1]])
        if fn in (torch.sum, torch.mean, torch.amax, torch.amin):
            return self.call_method(node, fn.__name__, args, kwargs)
        name = getattr(fn, "__name__", repr(fn))
        raise UnsupportedOpError(f"function {name} is not supported")

    def call_method(self, node, method, args, kwargs):
        x = args[0]
        if method in self._METHOD_UNARY:
            return self.unary(self._METHOD_UNARY[method], x)
        if method in self._METHOD_BINARY:
            return self.binary(self._METHOD_BINARY[method], x, args[1])
        if method == "pow":
            return self.pow(x, args[1])
        if method in self._REDUCE:
            dims = kwargs.get("dim", args[1] if len(args) > 1 else None)
            keepdim = kwargs.get("keepdim", args[2] if len(args) > 2 else False)
            return self.reduce(self._REDUCE[method], x, dims, keepdim)
        if method == "softmax":
            return self.softmax(x, kwargs.get("dim", args[1] if len(args) > 1 else None))
        if method in ("float", "bfloat16", "half", "to", "type_as"):
            dtype = node.meta["tensor_meta"].dtype
            return self.convert(self.values[x], dtype)
        if method in ("transpose", "permute"):
            v = self.values[x]
            rank = len(v[1])
            if method == "transpose":
                a, b = args[1] % rank, args[2] % rank
                perm = list(range(rank))
                perm[a], perm[b] = perm[b], perm[a]
            else:
                dims = args[1] if isinstance(args[1], (tuple, list)) else args[1:]
                perm = [d % rank for d in dims]
            return self.transpose(v, perm)
        if method in ("contiguous",):
            return self.values[x]
        raise UnsupportedOpError(f"method Tensor.{method} is not supported")


def import_module(module, example_inputs, name="forward"):
    """Traces `module` (a torch.nn.Module or a function of tensors) on
    `example_inputs` and returns (mlir_text, params): a module with one
    function `@name(inputs..., params...)` and the parameter tensors it
    takes after the inputs. Raises UnsupportedOpError for an op the fusion
    dialect does not cover."""
    if isinstance(module, torch.nn.Module):
        module = module.eval()
    gm = torch.fx.symbolic_trace(module)
    with torch.no_grad():
        ShapeProp(gm).propagate(*example_inputs)
    emitter = _Emitter(gm, name)
    inputs, outputs = [], []
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            meta = node.meta["tensor_meta"]
            value = (f"%a{len(inputs)}", tuple(meta.shape), meta.dtype)
            inputs.append(value)
            emitter.values[node] = value
        elif node.op == "output":
            results = node.args[0]
            results = results if isinstance(results, (tuple, list)) else (results,)
            outputs = [emitter.values[r] for r in results]
        else:
            emitter.values[node] = emitter.node(node)
    params = [(f"%p{i}", tuple(t.shape), t.dtype) for i, (_, t) in enumerate(emitter.params)]
    signature = ", ".join(f"{v[0]}: {emitter.type_of(v)}" for v in inputs + params)
    result_types = ", ".join(emitter.type_of(v) for v in outputs)
    text = [f"func.func @{name}({signature}) -> ({result_types}) {{"] + emitter.lines + [
        f"    return {', '.join(v[0] for v in outputs)} : {result_types}", "}"]
    return "\n".join(text) + "\n", [t for _, t in emitter.params]
