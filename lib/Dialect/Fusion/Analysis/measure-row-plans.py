#!/usr/bin/env python3
"""Measures the row plans of RowPlans.def (beside this script) on the GPU
machine and writes the table from the measurements.

A row kernel's plan is looked up by its class (the passes over a row a
streamed plan makes: OnePass, only reductions read the rows, online sums
in their max's pass, like logsumexp; TwoPass, a pass of reductions then
the one that writes, like softmax; ThreePass, more, like layernorm), how
its columns may be read (Whole vectors; Shiftable: a width no vector
divides, in shifted vectors or elements; Elements only; Dynamic: a length
known at run time, streamed, width 0 in the table), its element size, and
the row width. This script takes a kernel of each class (logsumexp,
softmax, layernorm) at sample widths and a dynamic length (run at 16384),
in bf16 and f32, over thousands of rows (kernels of fewer rows than the
chip has multiprocessors take the planner's rule), and makes a variant of
it under every plan the planner's checks accept (scripts/plan-variants.py);
from the times benchmarks/gpu/plan_sweep.py measures it keeps, per
sample, the rule's plan where that is within TIE of the fastest, else the
smallest block within TIE, never a plan ptxas spills. An entry serves the
widths from the sample before it (plans hold less of a shorter row);
widths beyond the last sample take the planner's rule.

  1. here:  measure-row-plans.py variants -o DIR [--classes OnePass,...]
            [--widths 4096,...,dynamic]
            (DIR/row_plans.fused.so and its signature file: carry DIR and
            benchmarks/gpu's plan_sweep.py with the fusion package)
  2. there: python3 plan_sweep.py row_plans.fused.so
            (writes plan_sweep.json into $OUT)
  3. here:  measure-row-plans.py table SWEEP.json... --variants DIR/row_plans.mlir...
            [--replacing NEWER.json...] [-o RowPlans.def]
            (variants of an earlier sweep: `variants --mlir-only`; the
            samples of a --replacing sweep take only its plans)
"""

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
from fusion import cuda  # noqa: E402

CLASSES = ("OnePass", "TwoPass", "ThreePass")
COLUMNS = ("Whole", "Shiftable", "Elements", "Dynamic")
VARIANT = re.compile(r"(OnePass|TwoPass|ThreePass)_(bf16|f32)_(\d+|dynamic)_c(\d+)_t(\d+)"
                     r"(?:_v(\d+))?(?:_(streamed|staged))?$")

BYTES = {"bf16": 2, "f32": 4}
LANES = {"bf16": 8, "f32": 4}
# Sample widths: rows of whole vectors, and widths no vector divides
# (common vocabulary sizes among them).
WHOLE_WIDTHS = (1024, 4096, 8192, 16384, 32768, 65536, 131072, 262144)
ODD_WIDTHS = (1023, 4095, 16383, 32001, 50257, 100277, 131073)
# Rows of dynamic length (None) are measured at plan_sweep.py's dynamic size.
DYNAMIC_WIDTH = 16384
# About this many bytes of input a sample, as the benchmark's workloads.
SAMPLE_BYTES = 1 << 28
THREADS = "64,128,256,512"
# Plans within this fraction of a sample's fastest are taken as equal.
TIE = 0.02
CHIP = "sm_90"
CLUSTERS = "1,2,4,8"
# Where rows are kept, in the order ties prefer them.
ROWS = ("registers", "staged", "streamed")


def kernel(row_class, dtype, h):
    """A sample of `row_class` over rows of `h` (None: dynamic)."""
    rows = max(1, SAMPLE_BYTES // ((h or DYNAMIC_WIDTH) * BYTES[dtype]))
    name = f"{row_class}_{dtype}_{h or 'dynamic'}"
    h = h or "?"
    t = f"tensor<{rows}x{h}x{dtype}>"
    if row_class == "TwoPass":
        return f"""func.func @{name}(%x: {t}) -> {t} {{
  %0 = fusion.softmax %x axis = 1 : {t}
  return %0 : {t}
}}
"""
    if row_class == "ThreePass":
        w = f"tensor<{h}x{dtype}>"
        return f"""func.func @{name}(%x: {t}, %g: {w}, %b: {w}) -> {t} {{
  %0 = fusion.layer_norm %x, %g, %b epsilon = 1.0e-05 : {t}, {w}, {w}
  return %0 : {t}
}}
"""
    f = f"tensor<{rows}x{h}xf32>"
    convert = "" if dtype == "f32" else f"  %x32 = fusion.convert %x : {t} to {f}\n"
    operand = "%x" if dtype == "f32" else "%x32"
    return f"""func.func @{name}(%x: {t}) -> tensor<{rows}xf32> {{
{convert}  %0 = fusion.logsumexp {operand} axis = 1 : {f} -> tensor<{rows}xf32>
  return %0 : tensor<{rows}xf32>
}}
"""


def variants(args):
    os.makedirs(args.output, exist_ok=True)
    texts = []
    widths = [None if w == "dynamic" else int(w) for w in args.widths.split(",")]
    for row_class in args.classes.split(","):
        for dtype in BYTES:
            for h in widths:
                source = os.path.join(args.output, f"{row_class}_{dtype}_{h}.mlir")
                with open(source, "w") as f:
                    f.write(kernel(row_class, dtype, h))
                out = source[:-len(".mlir")] + ".variants.mlir"
                whole = h and h % LANES[dtype] == 0
                vectors = "planned" if not h or whole else f"1,{LANES[dtype]}"
                subprocess.run(
                    [sys.executable, os.path.join(ROOT, "scripts", "plan-variants.py"),
                     source, "-o", out, "--threads", THREADS,
                     "--clusters", CLUSTERS if h else "1",
                     "--streamed", *(["--staged"] if h else []),
                     "--vectors", vectors, "--build", args.build],
                    check=True, stdout=subprocess.DEVNULL)
                body = open(out).read()
                texts.append(body[len("module {\n"):-len("}\n")])
                os.remove(source)
                os.remove(out)
    module = os.path.join(args.output, "row_plans.mlir")
    with open(module, "w") as f:
        f.write("module {\n" + "".join(texts) + "}\n")
    count = sum(t.count("func.func") for t in texts)
    if args.mlir_only:
        print(f"{count} variants in {module}")
        return
    library = cuda.compile(module, args.build, args.output, chip=CHIP)
    print(f"{count} variants in {library}")


def spills(variants, function, build, work_dir):
    """Whether ptxas spills registers of `function` of the variants module
    (or gives it a stack frame)."""
    text = re.search(rf"(  func\.func @{function}\(.*?\n  \}}\n)", variants, re.S).group(1)
    source = os.path.join(work_dir, function + ".mlir")
    with open(source, "w") as f:
        f.write("module {\n" + text + "}\n")
    resources = cuda.kernel_resources(source, build, os.path.join(work_dir, function))
    return any(r["stack"] or r["spill_stores"] or r["spill_loads"] for r in resources.values())


def rule_plan(row_class, dtype, h, build, work_dir):
    """(threads, cluster, row, vectors) of the planner's rule for a sample."""
    source = os.path.join(work_dir, f"{row_class}_{dtype}_{h}.rule.mlir")
    with open(source, "w") as f:
        f.write(kernel(row_class, dtype, h))
    planned = subprocess.run(
        [os.path.join(build, "bin", "fusion-opt"), source, "--fusion-pipeline",
         "--fusion-plan-kernels=measured-row-plans=false"],
        check=True, capture_output=True, text=True).stdout
    m = re.search(r"#fusion\.plan<\w+, threads = (\d+), vector = (\d+), row = (\w+), "
                  r"cluster = (\d+)", planned)
    threads, vector, row, cluster = m.groups()
    return int(threads), int(cluster), row, "true" if int(vector) > 1 else "false"


def table(args):
    sweeps = [json.load(open(path)) for path in args.sweeps + args.replacing]
    replacing = range(len(args.sweeps), len(sweeps))
    variants = "".join(open(path).read() for path in args.variants)
    # A sample that a --replacing sweep measured takes only that sweep's
    # plans (the last such sweep's): its plans compare within one run.
    candidates, measured_in = {}, {}
    for index in replacing:
        for result in sweeps[index]["results"]:
            m = VARIANT.match(result["function"])
            if m:
                measured_in[m.group(1, 2, 3)] = index
    for index, result in ((i, r) for i, sweep in enumerate(sweeps) for r in sweep["results"]):
        m = VARIANT.match(result["function"])
        if not m or measured_in.get(m.group(1, 2, 3), index) != index:
            continue
        row_class, dtype, h, cluster, threads, vector, row = m.groups()
        h = 0 if h == "dynamic" else int(h)
        vectors = vector is None or int(vector) > 1
        plan = dict(function=result["function"], threads=int(threads), cluster=int(cluster),
                    row=row or "registers",
                    vectors="true" if vectors else "false", gbs=round(result["gbs"]))
        keys = ["Dynamic"] if not h else ["Whole"] if h % LANES[dtype] == 0 else (
            ["Shiftable", "Elements"] if not vectors else ["Shiftable"])
        for columns in keys:
            candidates.setdefault((row_class, columns, dtype, h), []).append(plan)
    # Of each sample's plans that ptxas compiles without spilling and
    # within TIE of the fastest (closer is the sweep's noise): the rule's
    # plan where it is one of them (the table changes plans where that
    # measured a gain), else the smallest block (threads in the cluster,
    # then held, staged, streamed).
    best, spilled, rules = {}, {}, {}

    def fits(plan):
        name = plan["function"]
        if name not in spilled:
            spilled[name] = spills(variants, name, args.build, work_dir)
        return not spilled[name]

    with tempfile.TemporaryDirectory() as work_dir:
        for key, plans in candidates.items():
            fastest = next((p for p in sorted(plans, key=lambda p: -p["gbs"]) if fits(p)), None)
            if fastest is None:
                continue
            sample = (key[0], key[2], key[3])
            if sample not in rules:
                rules[sample] = rule_plan(*sample, args.build, work_dir)
            rule = rules[sample]
            ties = sorted((p for p in plans if p["gbs"] >= (1 - TIE) * fastest["gbs"]),
                          key=lambda p: ((p["threads"], p["cluster"], p["row"], p["vectors"]) != rule,
                                         p["threads"] * p["cluster"], ROWS.index(p["row"]),
                                         -p["gbs"]))
            best[key] = next(p for p in ties if fits(p))
    for name in sorted(n for n, s in spilled.items() if s):
        print(f"left out (spills): {name}")
    lines = [f"""//===- RowPlans.def - Row plans measured on the GPU -------------*- C++ -*-===//
//
// The row plans the planner takes for {CHIP} (KernelPlan.cpp), measured by
// measure-row-plans.py beside this file on {sweeps[0]['device']}
// (written {datetime.date.today().isoformat()} from the sweeps results.md
// names): per class of row kernel, how its
// columns may be read, its element size in bytes, and rows up to a width
// (from the previous entry's), the plan of a logsumexp (OnePass), a
// softmax (TwoPass) or a layernorm (ThreePass) at that width, over
// thousands of rows, of those within {round(TIE * 100)}% of the fastest that do not spill
// registers: the planner's rule's plan, else the smallest block. GBS is
// what it measured (effective GB/s), for the record. Regenerate, do not
// edit.
//
//===----------------------------------------------------------------------===//

#ifndef ROW_PLANS_CHIP
#define ROW_PLANS_CHIP(CHIP)
#endif
#ifndef ROW_PLAN
#define ROW_PLAN(CLASS, COLUMNS, BYTES, MAX_WIDTH, THREADS, CLUSTER, ROW, VECTORS, GBS)
#endif

// The chip the plans were measured on; other chips take the rule.
ROW_PLANS_CHIP("{CHIP}")

// ROW_PLAN(CLASS, COLUMNS, BYTES, MAX_WIDTH, THREADS, CLUSTER, ROW, VECTORS, GBS)"""]
    for key in sorted(best, key=lambda k: (CLASSES.index(k[0]), COLUMNS.index(k[1]),
                                           BYTES[k[2]], k[3])):
        p = best[key]
        lines.append(f"ROW_PLAN({key[0]}, {key[1]}, {BYTES[key[2]]}, {key[3]}, {p['threads']}, "
                     f"{p['cluster']}, {p['row']}, {p['vectors']}, {p['gbs']})")
    lines.append("\n#undef ROW_PLANS_CHIP\n#undef ROW_PLAN\n")
    with open(args.output, "w") as f:
        f.write("\n".join(lines))
    print(f"{len(best)} entries written to {args.output}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    v = sub.add_parser("variants", help="compile the sample kernels under every plan")
    v.add_argument("-o", "--output", required=True, help="directory")
    v.add_argument("--classes", default=",".join(CLASSES))
    v.add_argument("--mlir-only", action="store_true",
                   help="write the variants' module without compiling it (the "
                        "table step's --variants for an earlier sweep)")
    v.add_argument("--widths", default=",".join(map(str, WHOLE_WIDTHS + ODD_WIDTHS + ("dynamic",))))
    v.add_argument("--build", default=os.environ.get(
        "FUSION_BUILD_DIR", os.path.join(ROOT, "build")))
    t = sub.add_parser("table", help="write the table from plan_sweep.json")
    t.add_argument("sweeps", nargs="+", help="plan_sweep.py's json files")
    t.add_argument("--replacing", nargs="*", default=[],
                   help="sweeps whose samples take only their plans")
    t.add_argument("--variants", required=True, nargs="+",
                   help="the variants' row_plans.mlir files")
    t.add_argument("--build", default=os.environ.get(
        "FUSION_BUILD_DIR", os.path.join(ROOT, "build")))
    t.add_argument("-o", "--output", default=os.path.join(HERE, "RowPlans.def"))
    args = parser.parse_args()
    variants(args) if args.step == "variants" else table(args)


if __name__ == "__main__":
    main()
