#!/usr/bin/env python3
"""Compile-time benchmark of the fusion passes on a large generated graph.

Generates a chain of transformer blocks (residual add, RMSNorm, up
projection, SiLU gating, down projection) as `fusion` ops, and the same
computation in linalg on tensors. Times `fusion-opt --fusion-pipeline`
against upstream `mlir-opt --linalg-fuse-elementwise-ops` on it, using
MLIR's own pass timing (`--mlir-timing`), and prints a table.

    benchmarks/compile_time.py --blocks 600 [--fusion-opt build/bin/fusion-opt]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

ROWS, HIDDEN, FFN = 16, 256, 512


def t(*dims, dtype="f32"):
    return "tensor<" + "x".join(str(d) for d in dims) + "x" + dtype + ">"


def fusion_graph(blocks):
    """The model in fusion ops (composites, decomposed by the pipeline)."""
    x, w, wup, wdown = t(ROWS, HIDDEN), t(HIDDEN), t(HIDDEN, 2 * FFN), t(FFN, HIDDEN)
    lines = [f"func.func @model(%h0: {x}, %w: {w}, %wup: {wup}, %wdown: {wdown}) -> {x} {{"]
    h = "%h0"
    for i in range(blocks):
        lines += [
            f"  %s{i} = fusion.add {h}, {h} : {x}",
            f"  %n{i} = fusion.rms_norm %s{i}, %w epsilon = 1.0e-06 : {x}, {w}",
            f"  %u{i} = fusion.matmul %n{i}, %wup : ({x}, {wup}) -> {t(ROWS, 2 * FFN)}",
            f"  %g{i} = fusion.slice %u{i} offsets = [0, 0] sizes = [{ROWS}, {FFN}] strides = [1, 1] : {t(ROWS, 2 * FFN)} -> {t(ROWS, FFN)}",
            f"  %v{i} = fusion.slice %u{i} offsets = [0, {FFN}] sizes = [{ROWS}, {FFN}] strides = [1, 1] : {t(ROWS, 2 * FFN)} -> {t(ROWS, FFN)}",
            f"  %a{i} = fusion.silu %g{i} : {t(ROWS, FFN)}",
            f"  %m{i} = fusion.mul %a{i}, %v{i} : {t(ROWS, FFN)}",
            f"  %d{i} = fusion.matmul %m{i}, %wdown : ({t(ROWS, FFN)}, {wdown}) -> {x}",
            f"  %h{i + 1} = fusion.add %s{i}, %d{i} : {x}",
        ]
        h = f"%h{i + 1}"
    lines += [f"  return %h{blocks} : {x}", "}"]
    return "\n".join(lines) + "\n"


ID2 = "affine_map<(d0, d1) -> (d0, d1)>"
ROW2 = "affine_map<(d0, d1) -> (d0, 0)>"
COL2 = "affine_map<(d0, d1) -> (d1)>"
RED2 = "affine_map<(d0, d1) -> (d0)>"


class Linalg:
    """Emits the same model in linalg on tensors, one generic per primitive op."""

    def __init__(self):
        self.lines, self.n = [], 0

    def fresh(self):
        self.n += 1
        return f"%v{self.n}"

    def empty(self, ty):
        v = self.fresh()
        self.lines.append(f"  {v} = tensor.empty() : {ty}")
        return v

    def generic(self, ins, maps, out_ty, body, iterators='"parallel", "parallel"', init=None):
        out = init or self.empty(out_ty)
        v = self.fresh()
        args = ", ".join(f"%a{i}: f32" for i in range(len(ins))) + ", %o: f32"
        in_types = ", ".join(ty for _, ty in ins)
        in_vals = ", ".join(val for val, _ in ins)
        out_map = RED2 if "reduction" in iterators else ID2
        self.lines.append(
            f"  {v} = linalg.generic {{indexing_maps = [{', '.join(maps)}, {out_map}], "
            f"iterator_types = [{iterators}]}} ins({in_vals} : {in_types}) outs({out} : {out_ty}) {{\n"
            f"  ^bb0({args}):\n{body}\n  }} -> {out_ty}")
        return v

    def binary(self, op, a, b, ty, bmap=ID2, bty=None):
        return self.generic([(a, ty), (b, bty or ty)], [ID2, bmap], ty,
                            f"    %r = {op} %a0, %a1 : f32\n    linalg.yield %r : f32")

    def unary(self, ops, a, ty):
        body, cur = [], "%a0"
        for i, op in enumerate(ops):
            body.append(f"    %t{i} = {op.format(cur)} : f32")
            cur = f"%t{i}"
        body.append(f"    linalg.yield {cur} : f32")
        return self.generic([(a, ty)], [ID2], ty, "\n".join(body))

    def row_mean_square(self, a, ty):
        zero = self.fresh()
        self.lines.append(f"  {zero} = arith.constant 0.0 : f32")
        init = self.empty(t(ROWS))
        filled = self.fresh()
        self.lines.append(f"  {filled} = linalg.fill ins({zero} : f32) outs({init} : {t(ROWS)}) -> {t(ROWS)}")
        return self.generic([(a, ty)], [ID2], t(ROWS),
                            "    %sq = arith.mulf %a0, %a0 : f32\n    %r = arith.addf %sq, %o : f32\n    linalg.yield %r : f32",
                            iterators='"parallel", "reduction"', init=filled)

    def matmul(self, a, b, aty, bty, oty):
        zero = self.fresh()
        self.lines.append(f"  {zero} = arith.constant 0.0 : f32")
        init = self.empty(oty)
        filled = self.fresh()
        self.lines.append(f"  {filled} = linalg.fill ins({zero} : f32) outs({init} : {oty}) -> {oty}")
        v = self.fresh()
        self.lines.append(f"  {v} = linalg.matmul ins({a}, {b} : {aty}, {bty}) outs({filled} : {oty}) -> {oty}")
        return v


def linalg_graph(blocks):
    x, w, wup, wdown = t(ROWS, HIDDEN), t(HIDDEN), t(HIDDEN, 2 * FFN), t(FFN, HIDDEN)
    g = Linalg()
    h = "%h0"
    for _ in range(blocks):
        s = g.binary("arith.addf", h, h, x)
        ms = g.row_mean_square(s, x)
        # mean + eps, rsqrt, per row; then normalize and scale.
        inv = g.fresh()
        init = g.empty(t(ROWS))
        g.lines.append(
            f"  {inv} = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], "
            f"iterator_types = [\"parallel\"]}} ins({ms} : {t(ROWS)}) outs({init} : {t(ROWS)}) {{\n"
            f"  ^bb0(%a0: f32, %o: f32):\n    %c = arith.constant 3.906250e-03 : f32\n    %e = arith.constant 1.0e-06 : f32\n"
            f"    %m = arith.mulf %a0, %c : f32\n    %p = arith.addf %m, %e : f32\n    %r = math.rsqrt %p : f32\n"
            f"    linalg.yield %r : f32\n  }} -> {t(ROWS)}")
        n = g.binary("arith.mulf", s, inv, x, bmap=RED2, bty=t(ROWS))
        n = g.binary("arith.mulf", n, "%w", x, bmap=COL2, bty=w)
        u = g.matmul(n, "%wup", x, wup, t(ROWS, 2 * FFN))
        gate, val = g.fresh(), g.fresh()
        g.lines.append(f"  {gate} = tensor.extract_slice {u}[0, 0] [{ROWS}, {FFN}] [1, 1] : {t(ROWS, 2 * FFN)} to {t(ROWS, FFN)}")
        g.lines.append(f"  {val} = tensor.extract_slice {u}[0, {FFN}] [{ROWS}, {FFN}] [1, 1] : {t(ROWS, 2 * FFN)} to {t(ROWS, FFN)}")
        neg = g.unary(["arith.negf {}"], gate, t(ROWS, FFN))
        ex = g.unary(["math.exp {}"], neg, t(ROWS, FFN))
        den = g.unary(["arith.addf {}, %o"], ex, t(ROWS, FFN))
        act = g.binary("arith.divf", gate, den, t(ROWS, FFN))
        m = g.binary("arith.mulf", act, val, t(ROWS, FFN))
        d = g.matmul(m, "%wdown", t(ROWS, FFN), wdown, x)
        h = g.binary("arith.addf", s, d, x)
    head = f"func.func @model(%h0: {x}, %w: {w}, %wup: {wup}, %wdown: {wdown}) -> {x} {{"
    return "\n".join([head] + g.lines + [f"  return {h} : {x}", "}"]) + "\n"


def count_ops(path, tool, pipeline):
    """Ops in the function body, nested regions included."""
    out = subprocess.run([tool, path, *pipeline, "--mlir-print-op-generic"],
                         capture_output=True, text=True, check=True).stdout
    names = re.findall(r'"([a-z_]+\.[a-z_.]+)"\(', out)
    return sum(1 for n in names if n not in ("builtin.module", "func.func", "func.return"))


def timed(tool, path, args):
    """Wall time of the named passes, from --mlir-timing."""
    res = subprocess.run([tool, path, *args, "--mlir-timing", "-o", os.devnull],
                         capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"{tool} failed:\n{res.stderr[-2000:]}")
    total = re.search(r"^\s*([\d.]+) \(\s*[\d.]+%\)\s+Total", res.stderr, re.M)
    passes = {}
    for m in re.finditer(r"^\s*([\d.]+) \(\s*[\d.]+%\)\s+(\S+)$", res.stderr, re.M):
        passes[m.group(2)] = passes.get(m.group(2), 0.0) + float(m.group(1))
    return float(total.group(1)), passes


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=600)
    ap.add_argument("--fusion-opt", default=os.path.join(root, "build/bin/fusion-opt"))
    ap.add_argument("--mlir-opt", default="/usr/lib/llvm-22/bin/mlir-opt")
    ap.add_argument("--keep", help="directory to keep the generated inputs in")
    args = ap.parse_args()

    tmp = args.keep or tempfile.mkdtemp()
    os.makedirs(tmp, exist_ok=True)
    fusion_in = os.path.join(tmp, "model.fusion.mlir")
    linalg_in = os.path.join(tmp, "model.linalg.mlir")
    with open(fusion_in, "w") as f:
        f.write(fusion_graph(args.blocks))
    with open(linalg_in, "w") as f:
        f.write(linalg_graph(args.blocks))

    primitive = count_ops(fusion_in, args.fusion_opt, ["--fusion-decompose", "--canonicalize", "--cse"])
    linalg_ops = count_ops(linalg_in, args.mlir_opt, [])
    fusion_total, fusion_passes = timed(args.fusion_opt, fusion_in, ["--fusion-pipeline"])
    linalg_total, linalg_passes = timed(args.mlir_opt, linalg_in, ["--linalg-fuse-elementwise-ops"])
    fuse_time = sum(v for k, v in fusion_passes.items() if k.startswith("FusionFuse"))

    kernels = subprocess.run([args.fusion_opt, fusion_in, "--fusion-pipeline"],
                             capture_output=True, text=True, check=True).stdout.count("fusion.kernel")
    print(f"graph: {args.blocks} blocks, {primitive} ops after decomposition "
          f"({linalg_ops} ops in the linalg form), {kernels} kernels after fusion")
    print(f"{'tool':44} {'fusion passes (s)':>18} {'whole run (s)':>14}")
    print(f"{'fusion-opt --fusion-pipeline':44} {fuse_time:18.3f} {fusion_total:14.3f}")
    print(f"{'mlir-opt --linalg-fuse-elementwise-ops':44} "
          f"{linalg_passes.get('LinalgElementwiseOpFusionPass', 0.0):18.3f} {linalg_total:14.3f}")


if __name__ == "__main__":
    main()
