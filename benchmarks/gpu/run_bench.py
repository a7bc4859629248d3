#!/usr/bin/env python3
"""Times every workload on the GPU machine, side by side in one run: Fusion
fused (with preallocated outputs, and as called: outputs allocated by the
call) and unfused, torch eager, torch.compile, and a device-to-device copy
(the ceiling). Median of triton.testing.do_bench; effective GB/s = the
workload's minimal bytes / median time; beside it, a copy of the
workload's bytes timed the same way (fixed costs weigh more on small
workloads). With FUSION_BENCH_BEFORE set to
another build of the same workloads (a library compiled before a codegen
change), it is timed too, as `fusion_before`. XLA (jax.jit on the same
buffers) runs on its own stream, so it is timed by queued calls, each
after the same L2 flush do_bench makes (`xla`), and for reference without
it (`xla_unflushed`, not a peer: no other column is timed so). Prints a
table last and writes bench_<scale>.json into $OUT."""

import json
import os
import sys

import torch
import triton.testing

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from fusion import cuda  # noqa: E402
import workloads  # noqa: E402

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def eager(name):
    def rms(s, w):
        sf = s.float()
        return (sf * torch.rsqrt(sf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(s.dtype)
    return {
        "ew_chain4": lambda x, w: torch.clamp(x * 2 + 1, min=0) * w,
        "ew_chain8": lambda x, w: x / (torch.exp(-(torch.clamp(x * 2 + 1, min=0) * w)) + 1),
        "bias_gelu": lambda x, b: torch.nn.functional.gelu(x + b, approximate="tanh"),
        "silu_mul": lambda x: (lambda g, u: torch.nn.functional.silu(g) * u)(*x.chunk(2, -1)),
        "add_rmsnorm": lambda x, r, w: (lambda s: (s, rms(s, w)))(x + r),
        "add_rmsnorm_decode": lambda x, r, w: (lambda s: (s, rms(s, w)))(x + r),
        "layernorm": lambda x, g, b: torch.nn.functional.layer_norm(x, x.shape[-1:], g, b, 1e-5),
        "softmax": lambda x: torch.softmax(x.float(), -1).to(x.dtype),
        "softmax_wide": lambda x: torch.softmax(x.float(), -1).to(x.dtype),
        "logsumexp": lambda x: torch.logsumexp(x.float(), -1),
        "adamw": lambda p, g, m, v: (lambda m1, v1: (p * 0.99999 - 1e-3 * (m1 / 0.1) / (torch.sqrt(v1 / 0.001) + 1e-8), m1, v1))(0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g),
    }[name]


def xla(name):
    """The workload in JAX, for jax.jit (None where JAX is missing)."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None

    def rms(s, w):
        sf = s.astype(jnp.float32)
        return (sf * jax.lax.rsqrt(jnp.mean(sf * sf, -1, keepdims=True) + 1e-6) * w.astype(jnp.float32)).astype(s.dtype)

    def layernorm(x, g, b):
        xf = x.astype(jnp.float32)
        m = xf.mean(-1, keepdims=True)
        v = ((xf - m) ** 2).mean(-1, keepdims=True)
        return ((xf - m) * jax.lax.rsqrt(v + 1e-5) * g.astype(jnp.float32) + b.astype(jnp.float32)).astype(x.dtype)

    def silu_mul(x):
        g, u = jnp.split(x, 2, axis=-1)
        return (jax.nn.silu(g.astype(jnp.float32)) * u.astype(jnp.float32)).astype(x.dtype)

    fns = {
        "ew_chain4": lambda x, w: jnp.maximum(x * 2 + 1, 0) * w,
        "ew_chain8": lambda x, w: x / (jnp.exp(-(jnp.maximum(x * 2 + 1, 0) * w)) + 1),
        "bias_gelu": lambda x, b: jax.nn.gelu((x + b).astype(jnp.float32), approximate=True).astype(x.dtype),
        "silu_mul": silu_mul,
        "add_rmsnorm": lambda x, r, w: (lambda s: (s, rms(s, w)))(x + r),
        "add_rmsnorm_decode": lambda x, r, w: (lambda s: (s, rms(s, w)))(x + r),
        "layernorm": layernorm,
        "softmax": lambda x: jax.nn.softmax(x.astype(jnp.float32), -1).astype(x.dtype),
        "softmax_wide": lambda x: jax.nn.softmax(x.astype(jnp.float32), -1).astype(x.dtype),
        "logsumexp": lambda x: jax.nn.logsumexp(x.astype(jnp.float32), -1),
        "adamw": lambda p, g, m, v: (lambda m1, v1: (p * 0.99999 - 1e-3 * (m1 / 0.1) / (jnp.sqrt(v1 / 0.001) + 1e-8), m1, v1))(0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g),
    }
    return jax.jit(fns[name])


def time_xla(name, xs, flush=True):
    """Median ms per call of jax.jit, 40 queued calls per sample. With
    `flush`, each call follows a 256 MiB write, as each call do_bench times
    does (the L2 emptied of the inputs and left dirty, which the call then
    pays to write back: about 10 us on a 128 MiB workload), and the median
    of the writes alone, timed the same way, is subtracted."""
    import time
    import jax
    import jax.numpy as jnp
    f = xla(name)
    if f is None:
        return None
    args = [jax.dlpack.from_dlpack(x) for x in xs]
    write = jax.jit(lambda: jnp.zeros((64 << 20,), jnp.int32))

    def median(step):
        jax.block_until_ready(step())
        samples = []
        for _ in range(15):
            start = time.perf_counter()
            for _ in range(40):
                out = step()
            jax.block_until_ready(out)
            samples.append((time.perf_counter() - start) / 40 * 1e3)
        samples.sort()
        return samples[len(samples) // 2]

    if not flush:
        return median(lambda: f(*args))
    return median(lambda: (write(), f(*args))) - median(write)


def minimal_bytes(fn, xs, outs):
    return sum(x.numel() * x.element_size() for x in list(xs) + list(outs))


def median_ms(f):
    return triton.testing.do_bench(f, warmup=25, rep=200, return_mode="median")


def main():
    # `reductions`: the reduction workloads of reductions.py (full scale,
    # dynamic sizes at the full row count); else the benchmark at `scale`.
    scale = sys.argv[1] if len(sys.argv) > 1 else "full"
    names = sys.argv[2:] or None
    global eager, xla
    stem, dynamic_size = f"workloads_{scale}", 16
    if scale == "reductions":
        import reductions
        eager, xla = reductions.eager, reductions.xla
        stem, dynamic_size = "reductions_full", reductions.SCALES["full"]["r"]
    fused = cuda.load(os.path.join(here, f"{stem}.fused.so"))
    unfused = cuda.load(os.path.join(here, f"{stem}.unfused.so"))
    before = os.environ.get("FUSION_BENCH_BEFORE")
    before = cuda.load(before) if before else None
    big = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(big)
    copy_ms = median_ms(lambda: dst.copy_(big))
    copy_gbs = 2 * big.numel() / copy_ms / 1e6
    rows, results = [], []
    for name, fn in fused.functions.items():
        if names and name not in names:
            continue
        dyn = dynamic_size == 16 and any(d is None for t in fn.inputs for d in t.shape)
        xs = [torch.empty([dynamic_size if d is None else d for d in t.shape], dtype=DTYPES[t.element],
                          device="cuda").uniform_(-2, 2) for t in fn.inputs]
        if name == "adamw":
            xs[3] = xs[3].abs()
        outs = fn(*xs)
        nbytes = minimal_bytes(fn, xs, outs)
        times = {}
        times["fusion"] = median_ms(lambda: fn(*xs, outputs=outs))
        times["fusion_as_called"] = median_ms(lambda: fn(*xs))
        if before and name in before.functions:
            times["fusion_before"] = median_ms(lambda: before.functions[name](*xs, outputs=outs))
        times["fusion_unfused"] = median_ms(lambda: unfused.functions[name](*xs))
        times["eager"] = median_ms(lambda: eager(name)(*xs))
        try:
            # A call of a few microseconds is bound by JAX's dispatch when
            # queued, and the difference of two such times means nothing:
            # those (the dynamic decode) are timed without the flush.
            t = time_xla(name, xs, flush=not dyn)
            if t is not None:
                times["xla"] = t
                times["xla_unflushed"] = time_xla(name, xs, flush=False)
        except Exception as e:  # reported, not hidden
            print(f"jax.jit failed on {name}: {e}")
        try:
            compiled = torch.compile(eager(name))
            compiled(*xs)
            times["torch.compile"] = median_ms(lambda: compiled(*xs))
        except Exception as e:  # reported, not hidden
            print(f"torch.compile failed on {name}: {e}")
        # A copy moving the workload's bytes (half read, half written),
        # timed the same way: what fixed costs (launch, the L2 that
        # do_bench's flush leaves dirty) leave of the ceiling at this size.
        # Not a peer: reported beside the 1 GiB copy, never in its place.
        half = torch.empty(nbytes // 2, dtype=torch.uint8, device="cuda")
        half_dst = torch.empty_like(half)
        same_copy_gbs = 2 * half.numel() / median_ms(lambda: half_dst.copy_(half)) / 1e6
        del half, half_dst
        entry = dict(workload=name, bytes=nbytes, ms=times,
                     gbs={k: nbytes / v / 1e6 for k, v in times.items()},
                     copy_of_these_bytes_gbs=same_copy_gbs)
        results.append(entry)
        if dyn:
            rows.append(f"{name:20} us/call " + "  ".join(f"{k} {v*1e3:8.1f}" for k, v in times.items()))
        else:
            peers = [times[k] for k in ("torch.compile", "xla", "eager") if k in times]
            ratio = min(peers) / times["fusion"] if peers else float("nan")
            rows.append(f"{name:20} GB/s   " + "  ".join(f"{k} {nbytes / v / 1e6:7.0f}" for k, v in times.items())
                        + f"  ({100 * nbytes / times['fusion'] / 1e6 / copy_gbs:.0f}% of copy,"
                        f" {ratio:.2f}x the best peer; a copy of these bytes {same_copy_gbs:.0f},"
                        f" {100 * nbytes / times['fusion'] / 1e6 / same_copy_gbs:.0f}% of it)")
    out_dir = os.environ.get("OUT", ".")
    with open(os.path.join(out_dir, f"bench_{scale}.json"), "w") as f:
        json.dump(dict(copy_gbs=copy_gbs, device=torch.cuda.get_device_name(), results=results), f, indent=1)
    print(f"{torch.cuda.get_device_name()}: device-to-device copy {copy_gbs:.0f} GB/s")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
