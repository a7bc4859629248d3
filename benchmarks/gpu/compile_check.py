#!/usr/bin/env python3
"""torch.compile(model, backend="fusion") on the GPU machine.

The GPU machine has no MLIR, so the backend's libraries are compiled here
first, ahead of time, from the same models traced on meta tensors:

    python3 benchmarks/gpu/compile_check.py prepare BUILD_DIR CACHE_DIR [BLOCK...]   # here
    # there, from the bundle (FUSION_BUILD_DIR: a copy of fusion-compile,
    # which only identifies the libraries; LD_LIBRARY_PATH: the runtime):
    FUSION_CACHE_DIR=fusion-cache FUSION_BUILD_DIR=. LD_LIBRARY_PATH=. python3 compile_check.py
    # ... compile_check.py llama_decoder_block adamw_step   # those only

There: the backend's blocks in bf16 at three sequence lengths (the first
static, then Dynamo's dynamic sizes) and an in-place AdamW step in f32,
against PyTorch in float64 with outputs poisoned first (bf16: relative
error 1e-2, attention 5e-2; f32: 1e-5); every part must come from the cache (a compile
there fails and would show as a fallback); a compiled block captured in a
CUDA graph and replayed with a new input; then the time per call of the
eager model, torch.compile's default backend (inductor) and Fusion, the
way users call them. Writes compile_check.json into $OUT.
"""

import copy
import io
import json
import logging
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import fusion.backend  # noqa: E402
from fusion import torch_blocks  # noqa: E402

D = 1024
BATCH = 4
HEADS = 8  # head size 128, as the GPU's prefill attention kernels take
SEQUENCES = (512, 1024, 2048)
ADAMW_SIZE = 1 << 24
TOLERANCE = {torch.bfloat16: 1e-2, torch.float32: 1e-5}
# Attention in bf16: scores are dot products of 1024 rounded elements, and
# the softmax sharpens their error (eager PyTorch is 1.6-2.4e-2 off float64).
ATTENTION_TOLERANCE = 5e-2


def blocks(only=()):
    """The blocks named in `only` (all when empty)."""
    torch.manual_seed(0)  # the same parameters' shapes in both modes; values do not matter
    return [(name, module, make_inputs)
            for name, module, make_inputs, _ in torch_blocks.compile_blocks(D, BATCH, HEADS)
            if not only or name in only]


def inputs_on(make_inputs, seq, device):
    """The block's inputs at length `seq`, bf16 on `device` (empty on meta)."""
    return [torch.empty_like(t, device="meta", dtype=torch.bfloat16) if device == "meta"
            else t.to(device, torch.bfloat16) for t in make_inputs(seq)]


def adamw_inputs(device):
    p, g, m, v = (torch.randn(ADAMW_SIZE, device=device) for _ in range(4))
    return p, g, m, v.abs()


def prepare(build_dir, cache_dir, only=()):
    """Traces every model of the check (those named in `only`, when not
    empty) on meta tensors and compiles each part for sm_90 into
    `cache_dir`."""
    os.environ["FUSION_CACHE_DIR"] = cache_dir
    backend = fusion.backend.make_backend(build_dir=build_dir, ahead_of_time="sm_90")
    with torch.no_grad():
        for name, module, make_inputs in blocks(only):
            torch._dynamo.reset()
            module = module.to("meta", torch.bfloat16).eval()
            compiled = torch.compile(module, backend=backend)
            for seq in SEQUENCES:
                compiled(*inputs_on(make_inputs, seq, "meta"))
    if not only:
        torch._dynamo.reset()
        torch.compile(torch_blocks.adamw_step, backend=backend)(*adamw_inputs("meta"))
    print(f"prepared {len(os.listdir(cache_dir))} libraries in {cache_dir}")


def relative_error(got, expected):
    got = got.double()
    if not torch.isfinite(got).all():
        return float("inf")
    return float((got - expected).norm() / expected.norm())


def median_ms(f):
    import triton.testing
    return triton.testing.do_bench(f, warmup=25, rep=200, return_mode="median")


def check(only=()):
    records = io.StringIO()
    logging.getLogger("fusion").addHandler(logging.StreamHandler(records))
    logging.getLogger("fusion").setLevel(logging.INFO)
    checked = fusion.backend.make_backend(debug=True)  # poisons outputs
    fast = fusion.backend.make_backend()
    results, timings, failures = [], [], 0

    def record(name, ok, **fields):
        nonlocal failures
        failures += not ok
        results.append(dict(name=name, ok=bool(ok), **fields))
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {fields}")

    def log_lines():
        lines = records.getvalue().splitlines()
        records.seek(0)
        records.truncate()
        return lines

    with torch.no_grad():
        for name, module, make_inputs in blocks(only):
            torch._dynamo.reset()
            module = module.to("cuda", torch.bfloat16).eval()
            reference = copy.deepcopy(module).double()
            compiled = torch.compile(module, backend=checked)
            for seq in SEQUENCES:
                x = inputs_on(make_inputs, seq, "cuda")
                expected = reference(*[t.double() for t in x])
                error = relative_error(compiled(*x), expected)
                eager = relative_error(module(*x), expected)
                tolerance = ATTENTION_TOLERANCE if "attention" in name or "decoder" in name \
                    else TOLERANCE[torch.bfloat16]
                record(f"{name} seq {seq}", error <= tolerance, error=error, eager_error=eager,
                       tolerance=tolerance)
            lines = log_lines()
            fallbacks = [line for line in lines if "run with PyTorch" in line or "runs with PyTorch" in line]
            record(f"{name}: every part from the cache, no op left to PyTorch",
                   not fallbacks and not any("fusion-compile" in line for line in lines),
                   log=lines)

            # CUDA graph: capture the compiled block, replay with a new input.
            if name == "rmsnorm_mlp":
                run = torch.compile(module, backend=fast)
                x = torch.randn(BATCH, SEQUENCES[-1], D, device="cuda").bfloat16()
                side = torch.cuda.Stream()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):
                    for _ in range(3):
                        run(x)
                torch.cuda.current_stream().wait_stream(side)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    y = run(x)
                fresh = torch.randn_like(x)
                x.copy_(fresh)
                y.fill_(float("nan"))
                graph.replay()
                torch.cuda.synchronize()
                error = relative_error(y, reference(fresh.double()))
                record("rmsnorm_mlp captured in a CUDA graph, replayed with a new input",
                       error <= TOLERANCE[torch.bfloat16], error=error)
                log_lines()

            # Time per call at the last length, as users call each.
            x = inputs_on(make_inputs, SEQUENCES[-1], "cuda")
            torch._dynamo.reset()
            inductor = torch.compile(module)
            ours = torch.compile(module, backend=fast)
            for f in (inductor, ours):
                for seq in SEQUENCES:  # the same sequence of sizes: dynamic graphs
                    f(*inputs_on(make_inputs, seq, "cuda"))
            row = dict(name=name, shape=[BATCH, SEQUENCES[-1], D],
                       eager_ms=median_ms(lambda: module(*x)),
                       inductor_ms=median_ms(lambda: inductor(*x)),
                       fusion_ms=median_ms(lambda: ours(*x)))
            timings.append(row)
            log_lines()

        # AdamW in place, f32.
        torch._dynamo.reset()
        if only and "adamw_step" not in only:
            return finish(results, timings, failures)
        p, g, m, v = adamw_inputs("cuda")
        expected = [t.double() for t in (p, g, m, v)]
        torch_blocks.adamw_step(*expected)
        returned = torch.compile(torch_blocks.adamw_step, backend=checked)(p, g, m, v)
        errors = {label: relative_error(got, want) for label, got, want in
                  (("p", p, expected[0]), ("m", m, expected[2]), ("v", v, expected[3]))}
        lines = log_lines()
        record("adamw_step in place", returned is p and max(errors.values()) <= TOLERANCE[torch.float32]
               and not [line for line in lines if "PyTorch" in line], errors=errors, log=lines)
        torch._dynamo.reset()
        inductor = torch.compile(torch_blocks.adamw_step)
        ours = torch.compile(torch_blocks.adamw_step, backend=fast)
        args = adamw_inputs("cuda")
        for f in (inductor, ours):
            f(*args)
        # Minimal traffic: read p, g, m, v, write p, m, v (f32).
        moved = 7 * ADAMW_SIZE * 4
        row = dict(name="adamw_step", shape=[ADAMW_SIZE],
                   eager_ms=median_ms(lambda: torch_blocks.adamw_step(*args)),
                   inductor_ms=median_ms(lambda: inductor(*args)),
                   fusion_ms=median_ms(lambda: ours(*args)))
        row["fusion_gbs"] = moved / row["fusion_ms"] / 1e6
        row["inductor_gbs"] = moved / row["inductor_ms"] / 1e6
        timings.append(row)

    return finish(results, timings, failures)


def finish(results, timings, failures):
    """Prints the checks' count and the table, writes the JSON; returns the
    number of failures."""
    print(f"\n{sum(r['ok'] for r in results)} of {len(results)} checks passed")
    print(f"\n{'model':24} {'eager ms':>9} {'inductor':>9} {'fusion':>9} {'vs inductor':>12}")
    for row in timings:
        print(f"{row['name']:24} {row['eager_ms']:9.3f} {row['inductor_ms']:9.3f} "
              f"{row['fusion_ms']:9.3f} {row['inductor_ms'] / row['fusion_ms']:11.2f}x")
    out = os.environ.get("OUT", ".")
    with open(os.path.join(out, "compile_check.json"), "w") as f:
        json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                       checks=results, timings=timings), f, indent=1)
    return failures


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "prepare":
        prepare(*sys.argv[2:4], only=set(sys.argv[4:]))
    else:
        sys.exit(1 if check(set(sys.argv[1:])) else 0)
