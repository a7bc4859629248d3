"""Seeded random `fusion` graphs with a numpy evaluator, for differential
tests: elementwise chains, broadcasts, diamonds and multi-consumer values,
ops between two reshapes (split rows and back), reductions over the last
and the first axis, norms, softmax, slices, and
dynamic row counts and row lengths. The numpy evaluation is the reference
for calls with sizes 0 and 1, infinities and NaNs, and sizes that disagree
(numpy then cannot broadcast, and Fusion must refuse the call).

    graph = random_graph(seed=7)
    graph.mlir            # one func.func, named graph.name
    graph.evaluate(*xs)   # float64 reference outputs
"""

import warnings

import numpy as np

# Value kinds and their shapes for rows R and width H.
FULL, ROW, ROWVEC, COL, HALF, SCALAR = "full", "row", "rowvec", "col", "half", "scalar"


def _shape(kind, rows, width):
    return {FULL: (rows, width), ROW: (rows, 1), ROWVEC: (rows,),
            COL: (width,), HALF: (rows, None if width is None else width // 2),
            SCALAR: ()}[kind]


def _type(kind, rows, width):
    # `None` sizes are dynamic (`?`); a slice's half width stays static.
    if kind == HALF and width is None:
        raise ValueError("slices need a static width")
    dims = ["?" if d is None else str(d) for d in _shape(kind, rows, width)]
    return "tensor<" + "x".join(dims + ["f32"]) + ">"


class Graph:
    def __init__(self, name, rows, width, dynamic_rows, dynamic_width=False):
        self.name, self.rows, self.width = name, rows, width
        self.dynamic_rows, self.dynamic_width = dynamic_rows, dynamic_width
        self.lines, self.values, self.inputs, self.outputs = [], [], [], []
        self.steps = []  # (target index, numpy function, operand indices)

    def type_of(self, kind):
        return _type(kind, None if self.dynamic_rows else self.rows,
                     None if self.dynamic_width else self.width)

    def add(self, kind, text, fn, operands):
        name = f"%v{len(self.values)}"
        self.lines.append(f"  {name} = {text}")
        self.values.append((name, kind))
        self.steps.append((len(self.values) - 1, fn, operands))
        return len(self.values) - 1

    def input(self, kind):
        name = f"%in{len(self.inputs)}"
        self.inputs.append((name, kind))
        self.values.append((name, kind))
        self.steps.append((len(self.values) - 1, None, len(self.inputs) - 1))
        return len(self.values) - 1

    @property
    def mlir(self):
        args = ", ".join(f"{n}: {self.type_of(k)}" for n, k in self.inputs)
        outs = [self.values[i] for i in self.outputs]
        result_types = ", ".join(self.type_of(k) for _, k in outs)
        body = "\n".join(self.lines)
        returns = ", ".join(n for n, _ in outs)
        return (f"func.func @{self.name}({args}) -> ({result_types}) {{\n{body}\n"
                f"  return {returns} : {result_types}\n}}\n")

    def input_shapes(self, rows, width=None):
        """Input shapes at `rows` rows of `width` (default: the graph's)."""
        return [_shape(k, rows, self.width if width is None else width)
                for _, k in self.inputs]

    def evaluate(self, *arrays):
        """float64 reference outputs; raises ValueError where numpy cannot
        broadcast the inputs' sizes together (Fusion must refuse the call)."""
        env = {}
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # means of empty rows
            for target, fn, operands in self.steps:
                if fn is None:
                    env[target] = np.asarray(arrays[operands], dtype=np.float64)
                else:
                    env[target] = fn(*[env[i] for i in operands])
        return [env[i] for i in self.outputs]

    def dynamic_inputs(self):
        """(input, dimension) of each dynamic size of the inputs."""
        dims = []
        for index, (_, kind) in enumerate(self.inputs):
            shape = _shape(kind, None if self.dynamic_rows else self.rows,
                           None if self.dynamic_width else self.width)
            dims += [(index, d) for d, size in enumerate(shape) if size is None]
        return dims


def _binary_kind(a, b):
    """The kind of a broadcast of kinds a and b, or None if they do not mix."""
    if a == b:
        return a
    pair = {a, b}
    if pair <= {FULL, ROW, COL}:
        return FULL
    if pair == {ROW, ROWVEC}:
        return None  # [R, 1] with [R] would broadcast across the wrong axis
    return None


UNARY = [
    ("fusion.tanh", np.tanh),
    ("fusion.neg", np.negative),
    ("fusion.abs", np.abs),
    ("fusion.sigmoid", lambda x: 1 / (1 + np.exp(-x))),
    ("fusion.relu", lambda x: np.maximum(x, 0)),
    ("fusion.silu", lambda x: x / (1 + np.exp(-x))),
    ("fusion.square", np.square),
]
BINARY = [
    ("fusion.add", np.add),
    ("fusion.sub", np.subtract),
    ("fusion.mul", np.multiply),
    ("fusion.max", np.maximum),
    ("fusion.min", np.minimum),
]


def random_graph(seed, ops=12):
    rng = np.random.default_rng(seed)
    rows = int(rng.integers(1, 9))
    width = int(rng.choice([8, 12, 32, 48]))
    g = Graph(f"graph{seed}", rows, width, dynamic_rows=bool(rng.random() < 0.3))
    # Rows of dynamic length (as attention scores have): drawn after the
    # choices above so that the graphs of a seed keep their static form.
    g.dynamic_width = bool(np.random.default_rng(seed + 7919).random() < 0.2)
    for kind in [FULL, COL, FULL, ROW][: int(rng.integers(2, 5))]:
        g.input(kind)
    # Which unary ops sit between two reshapes: a stream of its own, so
    # that a seed's graph is the one it was before reshapes were drawn.
    split_rng = np.random.default_rng(seed + 104729)

    def pick(kinds=None):
        choices = [i for i, (_, k) in enumerate(g.values)
                   if (kinds is None and k != SCALAR) or (kinds and k in kinds)]
        # Favour recent values (chains), sometimes reuse old ones (diamonds).
        return int(choices[-1] if rng.random() < 0.5 else rng.choice(choices))

    def ty(i):
        return g.type_of(g.values[i][1])

    def name(i):
        return g.values[i][0]

    for _ in range(ops):
        choice = rng.random()
        if choice < 0.3:
            i = pick()
            op, fn = UNARY[rng.integers(len(UNARY))]
            if g.values[i][1] == FULL and split_rng.random() < 0.3:
                # The op between two reshapes: [R, H] -> [R, H / 2, 2] (or
                # [R, ?, 1] for rows of dynamic length) and back, which the
                # elementwise kernels around it fuse across.
                rows = "?" if g.dynamic_rows else str(g.rows)
                inner = "?x1" if g.dynamic_width else f"{g.width // 2}x2"
                split = f"tensor<{rows}x{inner}xf32>"
                a, b = f"%s{len(g.values)}a", f"%s{len(g.values)}b"
                g.lines.append(f"  {a} = fusion.reshape {name(i)} : {ty(i)} -> {split}")
                g.lines.append(f"  {b} = {op} {a} : {split}")
                g.add(FULL, f"fusion.reshape {b} : {split} -> {ty(i)}", fn, [i])
            else:
                g.add(g.values[i][1], f"{op} {name(i)} : {ty(i)}", fn, [i])
        elif choice < 0.6:
            a = pick()
            candidates = [j for j, (_, k) in enumerate(g.values)
                          if k != SCALAR and _binary_kind(g.values[a][1], k)]
            b = int(rng.choice(candidates))
            kind = _binary_kind(g.values[a][1], g.values[b][1])
            op, fn = BINARY[rng.integers(len(BINARY))]
            types = f"({ty(a)}, {ty(b)}) -> {g.type_of(kind)}"
            g.add(kind, f"{op} {name(a)}, {name(b)} : {types}", fn, [a, b])
        elif choice < 0.7:
            i = pick()
            c = float(np.round(rng.uniform(-2, 2), 3)) or 0.5
            const = g.add(SCALAR, f"fusion.constant dense<{c}> : tensor<f32>",
                          lambda c=c: np.float64(c), [])
            kind = g.values[i][1]
            op, fn = BINARY[rng.integers(3)]
            g.add(kind, f"{op} {name(i)}, {name(const)} : ({ty(i)}, tensor<f32>) -> {ty(i)}",
                  fn, [i, const])
        elif choice < 0.8:
            i = pick([FULL])
            keep = bool(rng.random() < 0.6)
            # reduce_max of an empty row gives its identity, -inf.
            op, fn = [("reduce_sum", np.sum),
                      ("reduce_max", lambda x, **kw: np.max(x, initial=-np.inf, **kw)),
                      ("reduce_mean", np.mean)][rng.integers(3)]
            kind = ROW if keep else ROWVEC
            suffix = " keep_dims" if keep else ""
            g.add(kind, f"fusion.{op} {name(i)} axes = [1]{suffix} : {ty(i)} -> {g.type_of(kind)}",
                  lambda x, fn=fn, keep=keep: fn(x, axis=1, keepdims=keep), [i])
        elif choice < 0.85:
            i = pick([FULL])
            g.add(COL, f"fusion.reduce_sum {name(i)} axes = [0] : {ty(i)} -> {g.type_of(COL)}",
                  lambda x: np.sum(x, axis=0), [i])
        elif choice < 0.92:
            i = pick([FULL])
            if rng.random() < 0.5:
                g.add(FULL, f"fusion.softmax {name(i)} axis = 1 : {ty(i)}",
                      lambda x: (lambda e: e / e.sum(1, keepdims=True))(
                          np.exp(x - np.max(x, 1, keepdims=True, initial=-np.inf))), [i])
            else:
                w = pick([COL])
                g.add(FULL, f"fusion.rms_norm {name(i)}, {name(w)} epsilon = 1.0e-05 : {ty(i)}, {ty(w)}",
                      lambda x, w: x / np.sqrt(np.mean(x * x, 1, keepdims=True) + 1e-5) * w,
                      [i, w])
        elif not g.dynamic_width:
            i = pick([FULL])
            half = g.width // 2
            sizes = f"[-1, {half}]" if g.dynamic_rows else f"[{g.rows}, {half}]"
            g.add(HALF, f"fusion.slice {name(i)} offsets = [0, {half}] sizes = {sizes} "
                        f"strides = [1, 1] : {ty(i)} -> {g.type_of(HALF)}",
                  lambda x, h=half: x[:, h:], [i])

    computed = [i for i, (_, k) in enumerate(g.values)
                if k != SCALAR and i >= len(g.inputs)]
    count = min(len(computed), int(rng.integers(1, 4)))
    g.outputs = [computed[-1]] + [int(i) for i in rng.choice(computed[:-1], size=max(0, count - 1),
                                                            replace=False)] if computed else []
    if not g.outputs:
        g.outputs = [g.add(FULL, f"fusion.exp {name(0)} : {ty(0)}", np.exp, [0])]
    return g


class GraphChecker:
    """The calls a graph is checked with, the same on both targets:

        checker = GraphChecker(rng)
        checker.check_graph(g, input_types, run, rows, width)
        checker.failures, checker.counts

    `run(inputs)` calls the fused and the unfused function on numpy
    `inputs` and returns [(label, outputs as numpy arrays, or the
    SizeMismatchError raised)]. Each graph is called at (rows, width), with
    infinities and NaNs among the inputs, with run-time sizes of 0 and 1
    where it has dynamic sizes, and with one dynamic input size off by one:
    refused with SizeMismatchError exactly where numpy cannot broadcast the
    sizes, run where they never meet. Comparisons are against the float64
    evaluation and between the variants (fused against unfused)."""

    def __init__(self, rng, absolute=1e-5):
        self.rng, self.absolute = rng, absolute
        self.failures = []
        self.counts = {"calls": 0, "specials": 0, "edge sizes": 0, "refused": 0}

    def compare(self, name, out, ref, tolerance=1e-5, absolute=None):
        """NaN where the reference is NaN (infinities and NaNs among the
        inputs, the mean of an empty row), the same infinity where it is
        infinite (in f32 range), and the finite rest within tolerance: f32
        against float64, relative error 1e-5, or, where a result is small
        because of cancellation (a random graph can subtract or average
        values of size ~2 down to ~1e-3), absolute error 1e-5. Poisoned
        (unwritten) elements are NaN where the reference is not."""
        from . import testing
        absolute = self.absolute if absolute is None else absolute
        ref32 = ref.astype(np.float32)
        nan, inf = np.isnan(ref32), np.isinf(ref32)
        if not np.array_equal(np.isnan(out), nan):
            wrong = np.isnan(out) != nan
            self.failures.append(f"{name}: NaN at {np.argwhere(wrong)[:3].tolist()} where "
                                 f"the reference has {ref32[wrong][:3].tolist()}")
            return
        if not np.array_equal(out[inf], ref32[inf]):
            self.failures.append(f"{name}: infinities differ")
            return
        finite = ~(nan | inf)
        error = testing.relative_error(out[finite], ref[finite])
        largest = testing.max_abs_error(out[finite], ref[finite])
        if error > tolerance and largest > absolute:
            self.failures.append(f"{name}: relative error {error:.2e}, absolute {largest:.2e}")

    def inputs(self, g, input_types, rows, width, specials=False):
        from . import testing
        arrays = [testing.random_input(self.rng, t, s)
                  for t, s in zip(input_types, g.input_shapes(rows, width))]
        if specials:
            for x in arrays:
                flat = x.reshape(-1)
                if flat.size:
                    where = self.rng.random(flat.size) < 0.08
                    flat[where] = self.rng.choice([np.inf, -np.inf, np.nan],
                                                  size=int(where.sum()))
        return arrays

    def check_call(self, g, run, inputs, tag):
        from .cpu import SizeMismatchError
        self.counts["calls"] += 1
        try:
            expected = g.evaluate(*inputs)
        except ValueError as e:
            if "broadcast" not in str(e):
                raise
            expected = None  # the sizes disagree: every variant must refuse
        results = run(inputs)
        if expected is None:
            for label, got in results:
                if not isinstance(got, SizeMismatchError):
                    self.failures.append(f"{g.name} {tag} {label}: sizes that disagree "
                                         f"were not refused")
            self.counts["refused"] += 1
            return
        for label, got in results:
            if isinstance(got, Exception):
                self.failures.append(f"{g.name} {tag} {label}: refused a valid call: {got}")
                return
        for i, ref in enumerate(expected):
            outs = [(label, got[i]) for label, got in results]
            for label, out in outs:
                name = f"{g.name} {tag} {label} output {i}"
                if out.shape != ref.shape:
                    self.failures.append(f"{name}: shape {out.shape}, expected {ref.shape}")
                else:
                    self.compare(name, out, ref)
            (first, a), *others = outs
            for label, b in others:
                if a.shape == b.shape:
                    self.compare(f"{g.name} {tag} {first} vs {label} output {i}", a,
                                 b.astype(np.float64), 1e-6, 1e-6)

    def check_graph(self, g, input_types, run, rows, width):
        rows = rows if g.dynamic_rows else g.rows
        width = width if g.dynamic_width else g.width
        self.check_call(g, run, self.inputs(g, input_types, rows, width),
                        f"rows={rows} width={width}")
        self.check_call(g, run, self.inputs(g, input_types, rows, width, specials=True),
                        "infinities and NaNs")
        self.counts["specials"] += 1
        if g.dynamic_rows or g.dynamic_width:
            for size in (0, 1):
                r = size if g.dynamic_rows else g.rows
                w = size if g.dynamic_width else g.width
                self.check_call(g, run, self.inputs(g, input_types, r, w), f"rows={r} width={w}")
                self.counts["edge sizes"] += 1
        dims = g.dynamic_inputs()
        if dims:
            index, dim = dims[int(self.rng.integers(len(dims)))]
            r = max(rows, 2) if g.dynamic_rows else rows
            w = max(width, 2) if g.dynamic_width else width
            arrays = self.inputs(g, input_types, r, w)
            from . import testing
            shape = list(arrays[index].shape)
            shape[dim] += 1
            arrays[index] = testing.random_input(self.rng, input_types[index], tuple(shape))
            self.check_call(g, run, arrays, f"input {index} dimension {dim} off by one")

    def summary(self):
        c = self.counts
        return (f"{c['calls']} calls ({c['specials']} with infinities and NaNs, "
                f"{c['edge sizes']} with run-time sizes 0 or 1, {c['refused']} refused as "
                f"sizes disagree)")
