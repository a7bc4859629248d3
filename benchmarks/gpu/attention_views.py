#!/usr/bin/env python3
"""Attention whose Q, K and V are heads of one projection, on the GPU
machine (attention_tiles reading views in place): MODULE compiled into the
bundle as attention_views.fused.so. Each function takes the projection
`[B, S, 3 H D]` (GPT-2's `c_attn` output) and slices, views and transposes
it into Q, K and V `[B, H, S, D]` as fx imports `split`, `view` and
`transpose(1, 2)` (and one function moves the heads back and merges
them, `transpose(1, 2).reshape(B, S, H D)`, before an output projection);
fusion-fuse-attention lets the attention kernel read
them where they lie (4-D tensor maps of strided views), where the build
before wrote them out first (a slice kernel and a transpose kernel). The
softmax in f32, its probabilities converted for the product, as fx spells
scaled_dot_product_attention; a causal variant takes its positions' sizes
from Q; `views_gqa` takes Q, K and V `[B, S, heads, D]` with 4 K/V heads
for 16 query heads, in the grouped form fx imports repeat_kv as, and
returns `[B, S, H D]`.

Checks against PyTorch in float64 at ragged lengths, outputs poisoned
first; then the time per call (triton.testing.do_bench, preallocated
outputs) of this build, attention_views.before.so (the same module built
before the change) where present, and scaled_dot_product_attention on the
same strided views (its flash backend reads them in place). bf16, batch 2,
16 heads. Writes attention_views.json into $OUT.

    python3 attention_views.py              # on the GPU machine, from the bundle
    python3 attention_views.py --checks     # the checks only (for compute-sanitizer)
    python3 attention_views.py --module     # the module's text (for the bundle)
"""

import os
import sys

BATCH, HEADS = 2, 16
CHECK_LENGTHS = (1, 7, 127, 128, 200, 1000, 2000, 4096)
BENCH_LENGTHS = (1024, 4096)
TOLERANCE = 1e-2  # bf16 output, relative norm error
# name -> (head size, causal, output as [B, S, H D]: the heads moved back
# after the sequence and merged, as before an output projection)
PROGRAMS = {"views_d128": (128, False, False), "views_d64": (64, False, False),
            "views_causal": (128, True, False), "views_out": (128, False, True)}


def _function(name, dim, causal, merged):
    width = HEADS * dim
    x = f"tensor<{BATCH}x?x{3 * width}xbf16>"
    part = f"tensor<{BATCH}x?x{width}xbf16>"
    split = f"tensor<{BATCH}x?x{HEADS}x{dim}xbf16>"
    t = f"tensor<{BATCH}x{HEADS}x?x{dim}xbf16>"
    kt = f"tensor<{BATCH}x{HEADS}x{dim}x?xbf16>"
    s = f"tensor<{BATCH}x{HEADS}x?x?x"
    heads = ""
    for i, h in enumerate("qkv"):
        heads += f"""
  %{h}0 = fusion.slice %x offsets = [0, 0, {i * width}] sizes = [{BATCH}, -1, {width}] strides = [1, 1, 1] : {x} -> {part}
  %{h}1 = fusion.reshape %{h}0 : {part} -> {split}
  %{h} = fusion.transpose %{h}1 permutation = [0, 2, 1, 3] : {split} -> {t}"""
    scores = "%sc"
    mask = ""
    if causal:
        mask = f"""
  %row = fusion.iota dimension = 0 size_of %q[2] : {t} -> tensor<?x1xf32>
  %key = fusion.iota dimension = 1 size_of %q[2] : {t} -> tensor<1x?xf32>
  %seen = fusion.cmp le, %key, %row : (tensor<1x?xf32>, tensor<?x1xf32>) -> tensor<?x?xi1>
  %ninf = fusion.constant dense<0xFF800000> : tensor<f32>
  %m = fusion.select %seen, %sc, %ninf : (tensor<?x?xi1>, {s}f32>, tensor<f32>) -> {s}f32>"""
        scores = "%m"
    result, back = t, ""
    if merged:
        result = part
        back = f"""
  %ot = fusion.transpose %o permutation = [0, 2, 1, 3] : {t} -> {split}
  %om = fusion.reshape %ot : {split} -> {part}"""
    return f"""
func.func @{name}(%x: {x}) -> {result} {{{heads}
  %kt = fusion.transpose %k permutation = [0, 1, 3, 2] : {t} -> {kt}
  %s = fusion.matmul %q, %kt : ({t}, {kt}) -> {s}bf16>
  %sf = fusion.convert %s : {s}bf16> to {s}f32>
  %c = fusion.constant dense<{dim ** -0.5}> : tensor<f32>
  %sc = fusion.mul %sf, %c : ({s}f32>, tensor<f32>) -> {s}f32>{mask}
  %pf = fusion.softmax {scores} axis = 3 : {s}f32>
  %p = fusion.convert %pf : {s}f32> to {s}bf16>
  %o = fusion.matmul %p, %v : ({s}bf16>, {t}) -> {t}{back}
  return {"%om" if merged else "%o"} : {result}
}}
"""


# Grouped-query heads as fx imports a Llama attention whose K and V are
# repeated (repeat_kv): Q, K and V `[B, S, heads, D]` moved before the
# sequence, Q's heads split into KV_HEADS groups and K and V given a size-1
# group axis (the reshapes fusion-fuse-attention moves under the
# transposes), causal; the output's heads moved back after the sequence and
# merged, `[B, S, H D]`, as before the output projection.
KV_HEADS = 4
GQA = "views_gqa"


def _grouped(dim=128):
    group = HEADS // KV_HEADS
    q = f"tensor<{BATCH}x?x{HEADS}x{dim}xbf16>"
    kv = f"tensor<{BATCH}x?x{KV_HEADS}x{dim}xbf16>"
    q4 = f"tensor<{BATCH}x{HEADS}x?x{dim}xbf16>"
    kv4 = f"tensor<{BATCH}x{KV_HEADS}x?x{dim}xbf16>"
    q5 = f"tensor<{BATCH}x{KV_HEADS}x{group}x?x{dim}xbf16>"
    kv5 = f"tensor<{BATCH}x{KV_HEADS}x1x?x{dim}xbf16>"
    kt = f"tensor<{BATCH}x{KV_HEADS}x1x{dim}x?xbf16>"
    s = f"tensor<{BATCH}x{KV_HEADS}x{group}x?x?x"
    merged = f"tensor<{BATCH}x?x{HEADS * dim}xbf16>"
    return f"""
func.func @{GQA}(%xq: {q}, %xk: {kv}, %xv: {kv}) -> {merged} {{
  %q4 = fusion.transpose %xq permutation = [0, 2, 1, 3] : {q} -> {q4}
  %k4 = fusion.transpose %xk permutation = [0, 2, 1, 3] : {kv} -> {kv4}
  %v4 = fusion.transpose %xv permutation = [0, 2, 1, 3] : {kv} -> {kv4}
  %q = fusion.reshape %q4 : {q4} -> {q5}
  %k = fusion.reshape %k4 : {kv4} -> {kv5}
  %v = fusion.reshape %v4 : {kv4} -> {kv5}
  %kt = fusion.transpose %k permutation = [0, 1, 2, 4, 3] : {kv5} -> {kt}
  %s = fusion.matmul %q, %kt : ({q5}, {kt}) -> {s}bf16>
  %sf = fusion.convert %s : {s}bf16> to {s}f32>
  %c = fusion.constant dense<{dim ** -0.5}> : tensor<f32>
  %sc = fusion.mul %sf, %c : ({s}f32>, tensor<f32>) -> {s}f32>
  %row = fusion.iota dimension = 0 size_of %q[3] : {q5} -> tensor<?x1xf32>
  %key = fusion.iota dimension = 1 size_of %k[3] : {kv5} -> tensor<1x?xf32>
  %seen = fusion.cmp le, %key, %row : (tensor<1x?xf32>, tensor<?x1xf32>) -> tensor<?x?xi1>
  %ninf = fusion.constant dense<0xFF800000> : tensor<f32>
  %m = fusion.select %seen, %sc, %ninf : (tensor<?x?xi1>, {s}f32>, tensor<f32>) -> {s}f32>
  %pf = fusion.softmax %m axis = 4 : {s}f32>
  %p = fusion.convert %pf : {s}f32> to {s}bf16>
  %o = fusion.matmul %p, %v : ({s}bf16>, {kv5}) -> {q5}
  %o4 = fusion.reshape %o : {q5} -> {q4}
  %ot = fusion.transpose %o4 permutation = [0, 2, 1, 3] : {q4} -> {q}
  %om = fusion.reshape %ot : {q} -> {merged}
  return %om : {merged}
}}
"""


MODULE = "".join(_function(name, *program) for name, program in PROGRAMS.items()) + _grouped()


def main(checks_only=False):
    import torch
    import torch.nn.functional as F
    import triton.testing

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    from fusion import cuda
    from attention_decode import finish, timing_line

    fused = cuda.load(os.path.join(here, "attention_views.fused.so"))
    checked = cuda.load(os.path.join(here, "attention_views.fused.so"), debug=True)
    before_path = os.path.join(here, "attention_views.before.so")
    before = cuda.load(before_path) if os.path.exists(before_path) else None
    results, lines = {"checks": {}, "times_us": {}}, []

    def projection(dim, length, seed):
        g = torch.Generator(device="cuda").manual_seed(seed)
        return torch.randn(BATCH, length, 3 * HEADS * dim, device="cuda",
                           generator=g).bfloat16()

    def heads(x, dim):
        # q, k, v: [B, H, S, D] views of x (as the model's split, view and
        # transpose make them).
        b, length = x.shape[:2]
        return [t.view(b, length, HEADS, dim).transpose(1, 2)
                for t in x.split(HEADS * dim, dim=2)]

    def output_of(name, length):
        dim, _, merged = PROGRAMS[name]
        shape = (BATCH, length, HEADS * dim) if merged else (BATCH, HEADS, length, dim)
        return torch.full(shape, float("nan"), dtype=torch.bfloat16, device="cuda")

    def attend(q, k, v, dim, causal):
        # float64 attention of [B, H, S, D] q, k, v.
        s = q @ k.transpose(-1, -2) * dim ** -0.5
        if causal:
            n = q.shape[-2]
            s = s.masked_fill(~torch.ones(n, n, dtype=torch.bool, device="cuda").tril(),
                              float("-inf"))
        return torch.softmax(s, -1) @ v

    def merge_heads(o):
        # [B, H, S, D] -> [B, S, H D], as before an output projection.
        return o.transpose(1, 2).reshape(o.shape[0], o.shape[2], -1)

    def reference(name, x):
        dim, causal, merged = PROGRAMS[name]
        o = attend(*(t.double() for t in heads(x, dim)), dim, causal)
        return merge_heads(o) if merged else o

    def grouped_inputs(length, seed):
        g = torch.Generator(device="cuda").manual_seed(seed)
        return [torch.randn(BATCH, length, h, 128, device="cuda", generator=g).bfloat16()
                for h in (HEADS, KV_HEADS, KV_HEADS)]

    def grouped_reference(xq, xk, xv):
        group = HEADS // KV_HEADS
        k, v = (t.double().transpose(1, 2).repeat_interleave(group, 1) for t in (xk, xv))
        return merge_heads(attend(xq.double().transpose(1, 2), k, v, 128, True))

    def check(name, label, args, out, ref):
        # `out` poisoned, `name` called into it, against float64 `ref`.
        checked.functions[name](*args, outputs=[out])
        torch.cuda.synchronize()
        o = out.double()
        err = float("inf") if torch.isnan(o).any() else float((o - ref).norm() / ref.norm())
        results["checks"][label] = dict(ok=err <= TOLERANCE, detail=f"rel.err {err:.1e}")
        lines.append(f"{'ok  ' if err <= TOLERANCE else 'FAIL'} {label}".ljust(53)
                     + f"rel.err {err:.1e}")

    for length in CHECK_LENGTHS:
        for seed in (1, 2):
            args = grouped_inputs(length, 1000 * length + seed + 3)
            out = torch.full((BATCH, length, HEADS * 128), float("nan"), dtype=torch.bfloat16,
                             device="cuda")
            check(GQA, f"{GQA} s={length} seed={seed}", args, out, grouped_reference(*args))
    for name, (dim, _, _) in PROGRAMS.items():
        for length in CHECK_LENGTHS:
            for seed in (1, 2):
                x = projection(dim, length, 1000 * length + seed)
                check(name, f"{name} s={length} seed={seed}", [x], output_of(name, length),
                      reference(name, x))
    if checks_only:
        finish("attention_views", results, lines)

    def median_us(f):
        return triton.testing.do_bench(f, warmup=25, rep=200, return_mode="median") * 1e3

    def time(name, length, args, out, peer, sdpa, flops, rate):
        # This build, the one before where present, and SDPA (`peer`).
        row = {"fusion": median_us(lambda: fused.functions[name](*args, outputs=[out]))}
        if before is not None:
            row["fusion_before"] = median_us(lambda: before.functions[name](*args, outputs=[out]))
        row[peer] = median_us(sdpa)
        results["times_us"][f"{name}[{length}]"] = row
        lines.append(timing_line(f"{name}[{length}]", row,
                                 f"{flops / row['fusion'] / 1e6:.0f} TFLOP/s{rate}"))

    for name, (dim, causal, merged) in PROGRAMS.items():
        for length in BENCH_LENGTHS:
            x = projection(dim, length, 7)
            q, k, v = heads(x, dim)

            def sdpa():
                o = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=dim ** -0.5)
                return merge_heads(o) if merged else o
            time(name, length, [x], output_of(name, length), "sdpa (views)", sdpa,
                 4 * BATCH * HEADS * length * length * dim // (2 if causal else 1), "")
    for length in BENCH_LENGTHS:
        args = grouped_inputs(length, 7)
        q, k, v = (t.transpose(1, 2) for t in args)
        time(GQA, length, args,
             torch.empty(BATCH, length, HEADS * 128, dtype=torch.bfloat16, device="cuda"),
             "sdpa (views, gqa)",
             lambda: merge_heads(F.scaled_dot_product_attention(
                 q, k, v, is_causal=True, scale=128 ** -0.5, enable_gqa=True)),
             2 * BATCH * HEADS * length * length * 128, " (causal half)")
    finish("attention_views", results, lines)


if __name__ == "__main__":
    if "--module" in sys.argv:
        sys.stdout.write(MODULE)
    else:
        main(checks_only="--checks" in sys.argv)
