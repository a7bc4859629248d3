#!/usr/bin/env python3
"""Fuzz the compiler the way a new user and an attacker would.

    scripts/fuzz.py sweep  [--limit N] [--jobs J]           # valid variants compile on both targets
    scripts/fuzz.py mutate [--count N] [--seed S] [--jobs J] # mutated inputs never crash fusion-opt
    scripts/fuzz.py graphs [--count N] [--seed S]           # random graphs agree with numpy

Both start from the programs of the test suite (every `// -----` chunk of
test/**/*.mlir that is valid and uses fusion ops, diagnostics tests left
out).

`sweep` makes each program's variants: every static size (or `?`) replaced
everywhere by 0, 1, 3 or `?`, and every float type swapped for the others.
A variant the verifier accepts is a valid program; it must go through
`fusion-to-cpu` and `fusion-to-nvvm` (fused and one kernel per op, and
fused with the generated matmuls and any epilogue) without
an error, except a located error that names an unsupported feature
("... is not supported ..."), which is counted apart.

`mutate` applies one to three random edits (numbers, types, op names,
SSA names, lines, characters) to a program and runs it through the CPU and
GPU pipelines (the latter also with the generated matmuls) in batches
(`--split-input-file`); diagnostics are expected, a crash (signal,
assertion, LLVM ERROR, stack dump) is a failure. Crashing inputs are
written to --out.

`graphs` is the random-graph differential test of the suite
(test/Integration/CPU/random-graphs.py) at scale: graphs compiled fused and
unfused for the CPU in modules of --chunk, each checked by
fusion.random_graphs.GraphChecker against numpy.

Each prints its counts and exits 1 on any failure.
"""

import argparse
import concurrent.futures
import glob
import os
import random
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRASH_MARKERS = ("PLEASE submit a bug report", "Assertion", "LLVM ERROR",
                 "Stack dump", "UNREACHABLE")
UNSUPPORTED = "is not supported"
PIPELINES = {
    "cpu": ["--fusion-to-cpu"],
    "gpu": ["--fusion-to-nvvm=format=isa"],
    "gpu-unfused": ["--fusion-to-nvvm=fuse=0 format=isa"],
    # The tensor-core matmuls (sm_90) with any epilogue and prologue fused.
    "gpu-generated": ["--fusion-to-nvvm=format=isa matmul-backend=generated "
                      "matmul-epilogue=any"],
}


def find_tool(build_dir):
    path = os.path.join(build_dir, "bin", "fusion-opt")
    if not os.path.exists(path):
        sys.exit(f"no fusion-opt in {build_dir}/bin: build first")
    return path


def run(tool, text, args, timeout=120):
    """(return code, stderr) of fusion-opt on `text`; -999 on a timeout."""
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        result = subprocess.run([tool, path, *args, "-o", os.devnull],
                                capture_output=True, text=True, timeout=timeout)
        return result.returncode, result.stderr
    except subprocess.TimeoutExpired:
        return -999, "timeout"
    finally:
        os.unlink(path)


def crashed(code, stderr):
    return code < 0 or code == -999 or any(m in stderr for m in CRASH_MARKERS)


def seed_programs(tool):
    """The valid fusion programs of the test suite, one per chunk."""
    chunks = []
    for path in sorted(glob.glob(os.path.join(ROOT, "test", "**", "*.mlir"), recursive=True)):
        with open(path) as f:
            text = f.read()
        if "expected-" in text:
            continue  # diagnostics tests: their programs are meant to fail
        for chunk in text.split("// -----"):
            body = "\n".join(line for line in chunk.splitlines()
                             if not line.lstrip().startswith("//"))
            if "func.func" in body and "fusion." in body:
                chunks.append((os.path.relpath(path, ROOT), body.strip() + "\n"))
    valid = []
    for name, body in chunks:
        if run(tool, body, [])[0] == 0:
            valid.append((name, body))
    return valid


# ----------------------------------------------------------------------------
# sweep
# ----------------------------------------------------------------------------

TENSOR = re.compile(r"tensor<([^<>]*)>")
FLOATS = ("f32", "f16", "bf16")


def _map_tensor_types(text, fn):
    return TENSOR.sub(lambda m: "tensor<" + fn(m.group(1)) + ">", text)


HAND_PLAN = re.compile(r" ?\{plan = #fusion\.plan<[^>]*>\}")


def variants(text):
    """(description, text) of each variant of one program. Plans written by
    hand are dropped: a plan is made for one shape, and one that does not fit
    the new shape is an error by design (the planner plans the variant)."""
    text = HAND_PLAN.sub("", text)
    sizes, floats = set(), set()
    for inner in TENSOR.findall(text):
        parts = inner.split("x")
        sizes.update(p for p in parts[:-1] if p)
        if parts[-1] in FLOATS:
            floats.add(parts[-1])
    out = []
    for size in sorted(sizes):
        for new in ("0", "1", "3", "?"):
            if new == size:
                continue

            def resize(inner, size=size, new=new):
                parts = inner.split("x")
                return "x".join([new if p == size else p for p in parts[:-1]] + parts[-1:])
            out.append((f"size {size} -> {new}", _map_tensor_types(text, resize)))
    for old in sorted(floats):
        for new in FLOATS:
            if new != old:
                def retype(inner, old=old, new=new):
                    parts = inner.split("x")
                    return "x".join(parts[:-1] + [new if parts[-1] == old else parts[-1]])
                out.append((f"type {old} -> {new}", _map_tensor_types(text, retype)))
    return out


def sweep_one(tool, item):
    name, description, text = item
    if run(tool, text, [])[0] != 0:
        return "invalid", None
    for pipeline, args in PIPELINES.items():
        code, stderr = run(tool, text, args)
        if code == 0:
            continue
        if crashed(code, stderr):
            return "crash", f"{name} [{description}] {pipeline}: crash\n{stderr[-1500:]}"
        if UNSUPPORTED in stderr:
            return "unsupported", f"{name} [{description}] {pipeline}: {stderr.strip()[:300]}"
        return "error", f"{name} [{description}] {pipeline}:\n{stderr.strip()[:1500]}\n--- program:\n{text}"
    return "ok", None


def sweep(args, tool):
    programs = seed_programs(tool)
    items = [(name, d, t) for name, text in programs for d, t in variants(text)]
    random.Random(args.seed).shuffle(items)
    if args.limit:
        items = items[:args.limit]
    counts = {"ok": 0, "invalid": 0, "unsupported": 0, "error": 0, "crash": 0}
    reports = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for status, report in pool.map(lambda i: sweep_one(tool, i), items):
            counts[status] += 1
            if report and status != "unsupported":
                reports.append(report)
            elif report:
                print("unsupported:", report)
    for report in reports:
        print("FAIL:", report, "\n")
    valid = len(items) - counts["invalid"]
    print(f"sweep: {len(programs)} programs, {len(items)} variants, {valid} valid: "
          f"{counts['ok']} compiled for {', '.join(PIPELINES)}, "
          f"{counts['unsupported']} refused as unsupported, {counts['error']} errors, "
          f"{counts['crash']} crashes")
    return 1 if counts["error"] or counts["crash"] else 0


# ----------------------------------------------------------------------------
# mutate
# ----------------------------------------------------------------------------

NUMBERS = ["0", "1", "-1", "2", "3", "7", "64", "4096", "65536", "2147483647",
           "2147483648", "4294967296", "9223372036854775807", "-9223372036854775808",
           "1.0e+38", "1.0e-45", "nan", "0x7FC00000", "?"]
TYPES = ["f32", "f16", "bf16", "f64", "i1", "i8", "i32", "i64", "index", "f8E4M3FN"]
OPS = ["add", "sub", "mul", "div", "max", "min", "pow", "neg", "abs", "exp", "log",
       "tanh", "erf", "sigmoid", "relu", "silu", "gelu", "sqrt", "rsqrt", "reciprocal",
       "square", "cmp", "select", "convert", "constant", "reduce_sum", "reduce_max",
       "reduce_min", "reduce_mean", "rms_norm", "layer_norm", "softmax", "logsumexp",
       "slice", "transpose", "reshape", "iota", "matmul", "kernel", "yield"]
NUMBER = re.compile(r"(?<![%\w])-?\d+(\.\d+)?(e[+-]?\d+)?")
TYPE = re.compile(r"\b(f32|f16|bf16|i1|index|i64|i32)\b")
OP = re.compile(r"fusion\.(\w+)")
SSA = re.compile(r"%[\w.]+")


def mutate_once(rng, text):
    kind = rng.randrange(9)
    if kind == 0:  # a number
        spots = list(NUMBER.finditer(text))
        if spots:
            m = rng.choice(spots)
            return text[:m.start()] + rng.choice(NUMBERS) + text[m.end():]
    elif kind == 1:  # an element type
        spots = list(TYPE.finditer(text))
        if spots:
            m = rng.choice(spots)
            return text[:m.start()] + rng.choice(TYPES) + text[m.end():]
    elif kind == 2:  # an op name
        spots = list(OP.finditer(text))
        if spots:
            m = rng.choice(spots)
            return text[:m.start(1)] + rng.choice(OPS) + text[m.end(1):]
    elif kind == 3:  # an SSA name for another
        spots = list(SSA.finditer(text))
        if len(spots) > 1:
            m, other = rng.sample(spots, 2)
            return text[:m.start()] + other.group() + text[m.end():]
    elif kind in (4, 5):  # drop or duplicate a line
        lines = text.splitlines()
        if len(lines) > 2:
            i = rng.randrange(1, len(lines) - 1)
            if kind == 4:
                del lines[i]
            else:
                lines.insert(i, lines[i])
            return "\n".join(lines) + "\n"
    elif kind == 6:  # a dimension of a tensor type
        spots = list(TENSOR.finditer(text))
        if spots:
            m = rng.choice(spots)
            parts = m.group(1).split("x")
            if len(parts) > 1:
                parts[rng.randrange(len(parts) - 1)] = rng.choice(["0", "1", "3", "?", "65536"])
            elif rng.random() < 0.5:
                parts.insert(0, rng.choice(["1", "?", "5"]))
            return text[:m.start()] + "tensor<" + "x".join(parts) + ">" + text[m.end():]
    elif kind == 7:  # a character deleted, or one inserted
        if text:
            i = rng.randrange(len(text))
            if rng.random() < 0.5:
                return text[:i] + text[i + 1:]
            return text[:i] + rng.choice("()[]{}<>,:=%x?-0123456789\"") + text[i:]
    else:  # an attribute list cut short or an axis out of range
        spots = [m for m in re.finditer(r"\[([-\d, ]+)\]", text)]
        if spots:
            m = rng.choice(spots)
            values = [v.strip() for v in m.group(1).split(",") if v.strip()]
            choice = rng.randrange(3)
            if choice == 0 and values:
                values.pop()
            elif choice == 1:
                values.append(rng.choice(["0", "1", "-1", "5", "9223372036854775807"]))
            else:
                values.reverse()
            return text[:m.start()] + "[" + ", ".join(values) + "]" + text[m.end():]
    return text


def mutant(rng, programs):
    _, text = rng.choice(programs)
    for _ in range(rng.randint(1, 3)):
        text = mutate_once(rng, text)
    return text


def run_batch(tool, batch, pipeline):
    """The mutants of `batch` that crash `pipeline` (each confirmed alone)."""
    text = "\n// -----\n".join(batch)
    code, stderr = run(tool, text, ["--split-input-file", *PIPELINES[pipeline]], timeout=600)
    if not crashed(code, stderr):
        return []
    return [m for m in batch if crashed(*run(tool, m, PIPELINES[pipeline]))]


def mutate(args, tool):
    programs = seed_programs(tool)
    rng = random.Random(args.seed)
    batches = []
    remaining = args.count
    while remaining > 0:
        size = min(args.batch, remaining)
        batches.append([mutant(rng, programs) for _ in range(size)])
        remaining -= size
    crashes = []
    jobs = [(b, p) for b in batches for p in ("cpu", "gpu", "gpu-generated")]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for found in pool.map(lambda job: run_batch(tool, *job), jobs):
            crashes.extend(found)
    if crashes:
        os.makedirs(args.out, exist_ok=True)
        for i, text in enumerate(crashes):
            path = os.path.join(args.out, f"crash-{i}.mlir")
            with open(path, "w") as f:
                f.write(text)
            print(f"FAIL: crash, input in {path}")
    print(f"mutate: {len(programs)} programs, {args.count} mutants through fusion-to-cpu "
          f"and fusion-to-nvvm, also with the generated matmuls (seed {args.seed}): "
          f"{len(crashes)} crashes")
    return 1 if crashes else 0


# ----------------------------------------------------------------------------
# graphs
# ----------------------------------------------------------------------------

def graphs(args, tool):
    """The random-graph differential test at scale: --count graphs in
    chunks of --chunk, each chunk one module compiled fused and unfused for
    the CPU, every graph checked by random_graphs.GraphChecker (numpy
    reference, infinities and NaNs, run-time sizes 0 and 1, a size off by
    one)."""
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import numpy as np
    from fusion import cpu, random_graphs

    rng = np.random.default_rng(args.seed)
    checker = random_graphs.GraphChecker(rng)
    work = tempfile.mkdtemp(prefix="fusion-fuzz-graphs-")
    done = 0
    while done < args.count:
        count = min(args.chunk, args.count - done)
        chunk = [random_graphs.random_graph(args.seed * 1000000 + done + i) for i in range(count)]
        source = os.path.join(work, f"graphs{done}.mlir")
        with open(source, "w") as f:
            f.write("\n".join(g.mlir for g in chunk))
        modules = {label: cpu.compile(source, args.build, fuse=(label == "fused"), debug=True,
                                      work_dir=work)
                   for label in ("fused", "unfused")}
        for g in chunk:
            def run(inputs, g=g):
                results = []
                for label, module in modules.items():
                    try:
                        results.append((label, module.functions[g.name](*inputs)))
                    except cpu.SizeMismatchError as e:
                        results.append((label, e))
                return results
            rows, width = int(rng.integers(1, 12)), int(rng.choice([1, 3, 37, g.width]))
            checker.check_graph(g, modules["fused"].functions[g.name].inputs, run, rows, width)
        done += count
        print(f"graphs: {done} of {args.count}, {len(checker.failures)} failures so far", flush=True)
    for line in checker.failures:
        print("FAIL:", line)
    print(f"graphs: {args.count} random graphs (seed {args.seed}), fused and unfused on the CPU: "
          f"{checker.summary()}, {len(checker.failures)} failures")
    return 1 if checker.failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["sweep", "mutate", "graphs"])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--limit", type=int, default=0, help="sweep: variants to try (0: all)")
    parser.add_argument("--count", type=int, default=1000, help="mutate: mutants to try")
    parser.add_argument("--batch", type=int, default=250, help="mutate: mutants per fusion-opt run")
    parser.add_argument("--out", default="fuzz-crashes", help="mutate: where crashing inputs go")
    parser.add_argument("--chunk", type=int, default=500, help="graphs: graphs per module")
    args = parser.parse_args()
    tool = find_tool(args.build)
    mode = {"sweep": sweep, "mutate": mutate, "graphs": graphs}[args.mode]
    sys.exit(mode(args, tool))


if __name__ == "__main__":
    main()
