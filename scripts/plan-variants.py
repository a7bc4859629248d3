#!/usr/bin/env python3
"""Variants of a program's kernels under hand-written plans, for measuring
which plan a shape should get (benchmarks/gpu/plan_sweep.py times them on
the GPU machine).

Fuses and plans every function of SOURCE, then writes, for each function
and each combination of the given threads, cluster sizes and row storage,
a copy whose kernel carries that plan (function and kernel renamed
`<name>_c<cluster>_t<threads>[_v<vector>][_streamed]`; the vector is named
only where --vectors gives more than the planned one). Kernels planned
`columns` or `split_reduction` keep their strategy and vector and vary
threads and `split` instead (`<name>_t<threads>_s<split>`; --splits gives
numbers, `planned`, or factors of the planned split such as `x2`). Combinations the
planner's checks refuse for the kernel are left out and listed. Functions
of more than one kernel are left out. Compile the output with
fusion-compile. With --streamed and --staged, each plan also with its row
streamed and staged in shared memory (named `_streamed`, `_staged`).

  scripts/plan-variants.py SOURCE -o VARIANTS.mlir \\
      [--threads 64,128,256,512] [--clusters 1,2,4,8] [--streamed] \\
      [--staged] [--vectors planned,1,8] [--splits planned,x2,x0.5]
"""

import argparse
import itertools
import os
import re
import subprocess
import sys


def run(tool, args, text):
    result = subprocess.run([tool] + args, input=text, capture_output=True, text=True)
    return result.returncode, result.stdout, result.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--threads", default="64,128,256,512")
    parser.add_argument("--clusters", default="1")
    parser.add_argument("--streamed", action="store_true",
                        help="also the streamed variant of each")
    parser.add_argument("--staged", action="store_true",
                        help="also the staged variant of each")
    parser.add_argument("--vectors", default="planned",
                        help="vector widths: numbers, or planned (the planner's)")
    parser.add_argument("--splits", default="planned",
                        help="splits of columns and split_reduction kernels: numbers, "
                             "planned, or factors of the planned one (x2)")
    parser.add_argument("--build", default=os.environ.get(
        "FUSION_BUILD_DIR", os.path.join(os.path.dirname(__file__), "..", "build")))
    args = parser.parse_args()
    opt = os.path.join(args.build, "bin", "fusion-opt")

    code, planned, err = run(opt, ["--fusion-pipeline", "--fusion-plan-kernels"],
                             open(args.source).read())
    if code:
        sys.exit(f"fusion-opt failed on {args.source}:\n{err}")
    functions = re.findall(r"(  func\.func @(\w+)\(.*?\n  \}\n)", planned, re.S)
    candidates, variants, refused = [], [], []
    for text, name in functions:
        kernels = re.findall(r'fusion\.kernel \w+ "(\w+)"', text)
        if len(kernels) != 1:
            refused.append(f"{name}: {len(kernels)} kernels")
            continue
        plan = re.search(r"#fusion\.plan<(\w+), threads = \d+, vector = (\d+), "
                         r"row = \w+, cluster = \d+, (?:split = (\d+), )?passes = (\[[^\]]*\])>",
                         text)
        strategy, planned, split, passes = plan.groups()
        if strategy in ("columns", "split_reduction"):
            splits = list(dict.fromkeys(
                int(split) if s == "planned" else max(1, round(int(split) * float(s[1:])))
                if s.startswith("x") else int(s) for s in args.splits.split(",")))
            for threads, cut in itertools.product(map(int, args.threads.split(",")), splits):
                label = f"{name}_t{threads}_s{cut}"
                candidates.append((label, kernels[0], name, re.sub(
                    r"#fusion\.plan<[^>]*>",
                    f"#fusion.plan<{strategy}, threads = {threads}, vector = {planned}, "
                    f"row = none, cluster = 1, split = {cut}, passes = {passes}>", text)))
            continue
        vectors = list(dict.fromkeys(
            planned if v == "planned" else v for v in args.vectors.split(",")))
        rows = (["registers"] + (["streamed"] if args.streamed else [])
                + (["staged"] if args.staged else []))
        for cluster, threads, vector, row in itertools.product(
                map(int, args.clusters.split(",")), map(int, args.threads.split(",")),
                vectors, rows):
            strategy = "cluster_rows" if cluster > 1 else "rows"
            label = (f"{name}_c{cluster}_t{threads}"
                     + (f"_v{vector}" if len(vectors) > 1 else "")
                     + ("" if row == "registers" else f"_{row}"))
            candidates.append((label, kernels[0], name, re.sub(
                r"#fusion\.plan<[^>]*>",
                f"#fusion.plan<{strategy}, threads = {threads}, vector = {vector}, "
                f"row = {row}, cluster = {cluster}, passes = {passes}>", text)))
    for label, kernel, name, variant in candidates:
        variant = variant.replace(f"@{name}(", f"@{label}(").replace(
            f'"{kernel}"', f'"{label}_k0"')
        # The planner's checks decide whether it fits. (The passes are
        # copied: they feed the traffic report, not the lowering.)
        code, _, err = run(opt, ["--fusion-plan-kernels"], "module {\n" + variant + "}\n")
        if code:
            message = err.strip().splitlines()[0] if err.strip() else "refused"
            refused.append(f"{label}: {message}")
            continue
        variants.append(variant)
    with open(args.output, "w") as f:
        f.write("module {\n" + "".join(variants) + "}\n")
    print(f"{len(variants)} variants written to {args.output}")
    for line in refused:
        print(f"left out: {line}")


if __name__ == "__main__":
    main()
