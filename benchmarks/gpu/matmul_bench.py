#!/usr/bin/env python3
"""Times the matmul-bearing programs on the GPU machine, side by side in one
run: Fusion (library matmuls with fused epilogues, called through
fusion.cuda with preallocated outputs, and as called, which allocates and
NaN-poisons its outputs), the same programs with Fusion's generated matmuls
(matmul-backend=generated matmul-epilogue=any: tensor-core kernels with
any epilogue fused where they apply), with any epilogue fused and the
library where a kernel is one (matmul-backend=auto matmul-epilogue=any),
torch eager and torch.compile. Median of
triton.testing.do_bench; TFLOP/s counts 2*M*N*K per product. The decode
row (MLP block at 16 tokens) also gives the host time per call: 1000
calls timed with a host clock (the larger of host and GPU time), and the
median of 50 single calls each started with the GPU idle (the host's own
time). Prints a table last and writes
matmul_bench.json into $OUT.

    python3 matmul_bench.py [PROGRAM...]

times only the programs named (e.g. `autocast_linear`), and
FUSION_BENCH_GENERATED=STEM takes the generated variant from STEM.so (a
build from before a codegen change), writing matmul_bench.STEM.json."""

import json
import os
import sys
import time

import torch
import torch.nn.functional as F
import triton.testing

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from fusion import cuda  # noqa: E402


def rms(s, w):
    sf = s.float()
    return (sf * torch.rsqrt(sf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(s.dtype)


def mlp_block(x, r, w, w_up, w_down):
    s = x + r
    gate, value = (rms(s, w) @ w_up).chunk(2, -1)
    return s, (F.silu(gate) * value) @ w_down


def autocast_linear(x, w):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        return x @ w


def gated_halves(x, w):
    gate, value = (x @ w).chunk(2, -1)
    return F.silu(gate) * value


EAGER = {
    "matmul_plain": lambda a, b: a @ b,
    "matmul_plain_4096": lambda a, b: a @ b,
    "matmul_bias_gelu": lambda a, b, bias: F.gelu(a @ b + bias),
    "matmul_bias_gelu_tanh": lambda a, b, bias: F.gelu(a @ b + bias, approximate="tanh"),
    "gated_pair": lambda x, wg, wu: F.silu(x @ wg) * (x @ wu),
    "gated_halves": gated_halves,
    "mlp_block": mlp_block,
    "autocast_linear": autocast_linear,
    "scaled_linear": lambda x, s, w: (x * s) @ w,
}

# name, function in the bench module, dynamic size, FLOPs.
PROGRAMS = [
    ("matmul_plain", "matmul_plain", None, 2 * 8192 ** 3),
    ("matmul_plain_4096", "matmul_plain_4096", None, 2 * 4096 ** 3),
    ("matmul_bias_gelu", "matmul_bias_gelu", None, 2 * 4096 ** 3),
    ("matmul_bias_gelu_tanh", "matmul_bias_gelu_tanh", None, 2 * 4096 ** 3),
    ("gated_pair", "gated_pair", None, 2 * 4096 * 4096 * 22016),
    ("gated_halves", "gated_halves", None, 2 * 4096 * 4096 * 22016),
    ("mlp_block[4096]", "mlp_block", 4096, 2 * 4096 * 4096 * 22016 + 2 * 4096 * 11008 * 4096),
    ("mlp_block[16]", "mlp_block", 16, 2 * 16 * 4096 * 22016 + 2 * 16 * 11008 * 4096),
    ("autocast_linear[4096]", "autocast_linear", 4096, 2 * 4096 ** 3),
    ("autocast_linear[16]", "autocast_linear", 16, 2 * 16 * 4096 ** 2),
    ("scaled_linear[4096]", "scaled_linear", 4096, 2 * 4096 ** 3),
    ("scaled_linear[16]", "scaled_linear", 16, 2 * 16 * 4096 ** 2),
]


def inputs_for(fn, name, size):
    right = {"mlp_block": (3, 4), "gated_pair": (1, 2),
             "scaled_linear": (2,)}.get(name, (1,))
    dtypes = {"f32": torch.float32, "bf16": torch.bfloat16}
    xs = []
    for i, t in enumerate(fn.inputs):
        shape = [size if d is None else d for d in t.shape]
        x = torch.empty(shape, device="cuda", dtype=dtypes[t.element]).uniform_(-1, 1)
        if i in right:
            x *= (3 / max(1, shape[-2])) ** 0.5
        xs.append(x)
    return xs


def median_ms(f):
    return triton.testing.do_bench(f, warmup=50, rep=300, return_mode="median")


def host_us_per_call(f, calls=1000):
    f()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        f()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / calls * 1e6


def host_us_idle(f, calls=50):
    f()
    times = []
    for _ in range(calls):
        torch.cuda.synchronize()
        start = time.perf_counter()
        f()
        times.append((time.perf_counter() - start) * 1e6)
    times.sort()
    return times[calls // 2]


def main():
    module = cuda.load(os.path.join(here, "matmul_bench.fused.so"))
    generated_stem = os.environ.get("FUSION_BENCH_GENERATED", "matmul_bench.fused.generated")
    generated = cuda.load(os.path.join(here, generated_stem + ".so"))
    only = set(sys.argv[1:])
    auto_any = cuda.load(os.path.join(here, "matmul_bench.fused.auto_any.so"))
    rows, results = [], []
    for label, name, size, flops in PROGRAMS:
        if only and name not in only:
            continue
        fn = module.functions[name]
        xs = inputs_for(fn, name, size)
        outs = fn(*xs)
        times = {"fusion": median_ms(lambda: fn(*xs, outputs=outs)),
                 "fusion_as_called": median_ms(lambda: fn(*xs)),
                 "fusion_generated": median_ms(lambda: generated.functions[name](*xs, outputs=outs)),
                 "fusion_auto_any": median_ms(lambda: auto_any.functions[name](*xs, outputs=outs)),
                 "eager": median_ms(lambda: EAGER[name](*xs))}
        compiled = torch.compile(EAGER[name])
        compiled(*xs)
        times["torch.compile"] = median_ms(lambda: compiled(*xs))
        entry = dict(program=label, flops=flops, ms=times,
                     tflops={k: flops / v / 1e9 for k, v in times.items()})
        if label == "mlp_block[16]":
            entry["host_us_per_call"] = {
                "fusion": host_us_per_call(lambda: fn(*xs, outputs=outs)),
                "fusion_as_called": host_us_per_call(lambda: fn(*xs)),
                "eager": host_us_per_call(lambda: EAGER[name](*xs)),
                "torch.compile": host_us_per_call(lambda: compiled(*xs))}
            entry["host_us_idle"] = {
                "fusion": host_us_idle(lambda: fn(*xs, outputs=outs)),
                "eager": host_us_idle(lambda: EAGER[name](*xs)),
                "torch.compile": host_us_idle(lambda: compiled(*xs))}
        results.append(entry)
        ratio = times["torch.compile"] / times["fusion"]
        rows.append(f"{label:24} ms  " + "  ".join(f"{k} {v:8.4f}" for k, v in times.items())
                    + f"   TFLOP/s fusion {flops / times['fusion'] / 1e9:6.1f}"
                    f" generated {flops / times['fusion_generated'] / 1e9:6.1f}"
                    f" torch.compile {flops / times['torch.compile'] / 1e9:6.1f}"
                    f"  ({ratio:.3f}x torch.compile)")
        if "host_us_per_call" in entry:
            rows.append(f"{'':24} host us/call  " + "  ".join(
                f"{k} {v:7.1f}" for k, v in entry["host_us_per_call"].items()))
            rows.append(f"{'':24} host us, GPU idle  " + "  ".join(
                f"{k} {v:7.1f}" for k, v in entry["host_us_idle"].items()))
    out_dir = os.environ.get("OUT", ".")
    json_name = ("matmul_bench.json" if generated_stem == "matmul_bench.fused.generated"
                 else f"matmul_bench.{generated_stem}.json")
    with open(os.path.join(out_dir, json_name), "w") as f:
        json.dump(dict(device=torch.cuda.get_device_name(), results=results), f, indent=1)
    print(torch.cuda.get_device_name())
    print("\n".join(rows))


if __name__ == "__main__":
    main()
