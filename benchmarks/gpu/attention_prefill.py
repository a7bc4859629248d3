#!/usr/bin/env python3
"""Prefill attention on the GPU machine (attention_tiles: a block per 128
query rows on the sm_90 tensor cores, the softmax online): MODULE compiled
into the bundle as attention_prefill.fused.so. Checks against PyTorch in
float64 at ragged sequence lengths (query and key lengths dynamic, equal
and not), outputs poisoned first; then the time per call (and that of
attention_prefill.before.so, a build from before a codegen change, where
present, or $FUSION_BENCH_BEFORE) beside torch's scaled_dot_product_attention (its flash backend,
where the program has no score math SDPA cannot fuse), the same math eager
and under torch.compile. bf16, batch 2, 16 heads, preallocated outputs,
median of triton.testing.do_bench; TFLOP/s counts the two products
(4 B H Sq Sk D). Candidate builds attention_prefill.variant.<label>.so,
where present, are checked and timed beside it. Prints a table last and
writes attention_prefill.json into $OUT. Causal programs (the mask from
positions, fusion.iota, so that blocks past a row block's last key are
skipped): one static-shaped function per length, and one for every length
(prefill_causal_dynamic, the positions sized by Q and K: checked at the
same lengths, timed as fusion_dynamic_lengths), beside SDPA with
is_causal.

    python3 attention_prefill.py            # on the GPU machine, from the bundle
    python3 attention_prefill.py --checks   # the checks only (for compute-sanitizer)
    python3 attention_prefill.py --checks 3000   # those up to 3000 rows or keys (racecheck)
    python3 attention_prefill.py --module   # the module's text (for the bundle)
    python3 attention_prefill.py --programs prefill,prefill_d64 --lengths 4096 --no-peers
                                            # those only, beside SDPA, not eager or torch.compile
"""

import glob
import os
import sys

BATCH, HEADS = 2, 16
CAP = 30.0


def _attention(name, dim, body, extra_args="", extra_types=""):
    t = f"tensor<{BATCH}x{HEADS}x?x{dim}xbf16>"
    s = f"tensor<{BATCH}x{HEADS}x?x?x"
    # The softmax in bf16, or (as fx spells scaled_dot_product_attention)
    # in f32 with the probabilities converted for the product.
    if name in F32_SOFTMAX:
        softmax = f"""  %pf = fusion.softmax %t axis = 3 : {s}f32>
  %p = fusion.convert %pf : {s}f32> to {s}bf16>"""
    else:
        softmax = f"""  %tb = fusion.convert %t : {s}f32> to {s}bf16>
  %p = fusion.softmax %tb axis = 3 : {s}bf16>"""
    return f"""
func.func @{name}(%q: {t}, %k: {t}, %v: {t}{extra_args}) -> {t} {{
  %kt = fusion.transpose %k permutation = [0, 1, 3, 2] : {t} -> tensor<{BATCH}x{HEADS}x{dim}x?xbf16>
  %s = fusion.matmul %q, %kt : ({t}, tensor<{BATCH}x{HEADS}x{dim}x?xbf16>) -> {s}bf16>
  %sf = fusion.convert %s : {s}bf16> to {s}f32>
{body}
{softmax}
  %o = fusion.matmul %p, %v : ({s}bf16>, {t}) -> {t}
  return %o : {t}
}}
"""


# Programs spelled as fx imports scaled_dot_product_attention: the scores
# rounded once (the product's type), the softmax in f32.
F32_SOFTMAX = {"prefill_f32_softmax"}


def _scaled(dim):
    s = f"tensor<{BATCH}x{HEADS}x?x?xf32>"
    return f"""  %c = fusion.constant dense<{dim ** -0.5}> : tensor<f32>
  %t = fusion.mul %sf, %c : ({s}, tensor<f32>) -> {s}"""


def _softcap(dim):
    s = f"tensor<{BATCH}x{HEADS}x?x?xf32>"
    return f"""  %c = fusion.constant dense<{dim ** -0.5 / CAP}> : tensor<f32>
  %cap = fusion.constant dense<{CAP}> : tensor<f32>
  %d = fusion.mul %sf, %c : ({s}, tensor<f32>) -> {s}
  %th = fusion.tanh %d : {s}
  %t = fusion.mul %th, %cap : ({s}, tensor<f32>) -> {s}"""


def _bias(dim):
    s = f"tensor<{BATCH}x{HEADS}x?x?xf32>"
    return f"""  %c = fusion.constant dense<{dim ** -0.5}> : tensor<f32>
  %d = fusion.mul %sf, %c : ({s}, tensor<f32>) -> {s}
  %t = fusion.add %d, %bias : ({s}, tensor<1x{HEADS}x?x?xf32>) -> {s}"""


def _own_bias(dim):
    s = f"tensor<{BATCH}x{HEADS}x?x?x"
    return f"""  %c = fusion.constant dense<{dim ** -0.5}> : tensor<f32>
  %d = fusion.mul %sf, %c : ({s}f32>, tensor<f32>) -> {s}f32>
  %bf = fusion.convert %bias : {s}bf16> to {s}f32>
  %t = fusion.add %d, %bf : ({s}f32>, {s}f32>) -> {s}f32>"""


def _heads_bias(dim):
    s = f"tensor<{BATCH}x{HEADS}x?x?x"
    b = f"tensor<{BATCH}x1x?x?x"
    return f"""  %c = fusion.constant dense<{dim ** -0.5}> : tensor<f32>
  %d = fusion.mul %sf, %c : ({s}f32>, tensor<f32>) -> {s}f32>
  %bf = fusion.convert %bias : {b}bf16> to {b}f32>
  %t = fusion.add %d, %bf : ({s}f32>, {b}f32>) -> {s}f32>"""


# name -> (head size, score math); `bias` takes an additive bias per head
# (an ALiBi-like or causal mask, f32, broadcast over the batch).
PROGRAMS = {
    "prefill": (128, _scaled),
    "prefill_d64": (64, _scaled),
    "prefill_softcap": (128, _softcap),
    "prefill_bias": (128, _bias),
    "prefill_f32_softmax": (128, _scaled),
}

# Grouped-query heads: KV_HEADS heads of K and V, each read by a group of
# query heads (a size-1 axis of K and V that the scores broadcast over).
KV_HEADS = 4
_GROUP = HEADS // KV_HEADS
_GQA = f"""
func.func @prefill_gqa(%q: tensor<{BATCH}x{KV_HEADS}x{_GROUP}x?x128xbf16>, %k: tensor<{BATCH}x{KV_HEADS}x1x?x128xbf16>, %v: tensor<{BATCH}x{KV_HEADS}x1x?x128xbf16>) -> tensor<{BATCH}x{KV_HEADS}x{_GROUP}x?x128xbf16> {{
  %kt = fusion.transpose %k permutation = [0, 1, 2, 4, 3] : tensor<{BATCH}x{KV_HEADS}x1x?x128xbf16> -> tensor<{BATCH}x{KV_HEADS}x1x128x?xbf16>
  %s = fusion.matmul %q, %kt : (tensor<{BATCH}x{KV_HEADS}x{_GROUP}x?x128xbf16>, tensor<{BATCH}x{KV_HEADS}x1x128x?xbf16>) -> tensor<{BATCH}x{KV_HEADS}x{_GROUP}x?x?xbf16>
  %c = fusion.constant dense<{128 ** -0.5}> : tensor<bf16>
  %t = fusion.mul %s, %c : (tensor<{BATCH}x{KV_HEADS}x{_GROUP}x?x?xbf16>, tensor<bf16>) -> tensor<{BATCH}x{KV_HEADS}x{_GROUP}x?x?xbf16>
  %p = fusion.softmax %t axis = 4 : tensor<{BATCH}x{KV_HEADS}x{_GROUP}x?x?xbf16>
  %o = fusion.matmul %p, %v : (tensor<{BATCH}x{KV_HEADS}x{_GROUP}x?x?xbf16>, tensor<{BATCH}x{KV_HEADS}x1x?x128xbf16>) -> tensor<{BATCH}x{KV_HEADS}x{_GROUP}x?x128xbf16>
  return %o : tensor<{BATCH}x{KV_HEADS}x{_GROUP}x?x128xbf16>
}}
"""
PROGRAMS["prefill_gqa"] = (128, None)
# The log-sum-exp of each row of scores as a second result (what training
# keeps for the backward pass).
_T = f"tensor<{BATCH}x{HEADS}x?x128xbf16>"
_S = f"tensor<{BATCH}x{HEADS}x?x?xbf16>"
_LSE = f"""
func.func @prefill_lse(%q: {_T}, %k: {_T}, %v: {_T}) -> ({_T}, tensor<{BATCH}x{HEADS}x?xbf16>) {{
  %kt = fusion.transpose %k permutation = [0, 1, 3, 2] : {_T} -> tensor<{BATCH}x{HEADS}x128x?xbf16>
  %s = fusion.matmul %q, %kt : ({_T}, tensor<{BATCH}x{HEADS}x128x?xbf16>) -> {_S}
  %c = fusion.constant dense<{128 ** -0.5}> : tensor<bf16>
  %t = fusion.mul %s, %c : ({_S}, tensor<bf16>) -> {_S}
  %l = fusion.logsumexp %t axis = 3 : {_S} -> tensor<{BATCH}x{HEADS}x?xbf16>
  %p = fusion.softmax %t axis = 3 : {_S}
  %o = fusion.matmul %p, %v : ({_S}, {_T}) -> {_T}
  return %o, %l : {_T}, tensor<{BATCH}x{HEADS}x?xbf16>
}}
"""
PROGRAMS["prefill_lse"] = (128, None)
# A bf16 bias of each batch's own at D = 64 (a bias of another type and
# width in shared memory).
_OWN_BIAS = _attention("prefill_bias_d64", 64, _own_bias(64),
                       extra_args=f", %bias: tensor<{BATCH}x{HEADS}x?x?xbf16>")
PROGRAMS["prefill_bias_d64"] = (64, None)
# A bf16 bias of each batch's own shared by the heads (the heads innermost
# in the tiles' order).
_HEADS_BIAS = _attention("prefill_bias_heads", 128, _heads_bias(128),
                         extra_args=f", %bias: tensor<{BATCH}x1x?x?xbf16>")
PROGRAMS["prefill_bias_heads"] = (128, None)


TOLERANCE = 1e-2  # bf16 output, relative norm error
# (query length, key length): ragged, dynamic, equal and not. At (2000,
# 1999) and (4096, 4096) a D = 64 plan of 512 threads launches its three
# warpgroups (fewer waves of blocks on an H200), at the others two.
CHECK_LENGTHS = ((1, 1), (7, 7), (127, 129), (128, 128), (200, 77), (1000, 1000),
                 (100, 3000), (2000, 1999), (4096, 4096))


# Causal attention with the mask computed from positions (fusion.iota): key
# j is seen by query row i where j <= i + offset (offset 0: PyTorch's
# is_causal; Sk - Sq: queries the last rows of the keys' sequence): a
# static-shaped function per (Sq, Sk, offset), and PyTorch's is_causal in
# one function for every (Sq, Sk), the positions sized by Q's and K's
# lengths (CAUSAL_DYNAMIC).
CAUSAL_DYNAMIC = "prefill_causal_dynamic"


def causal_name(sq, sk, offset=0):
    if sq is None:
        return CAUSAL_DYNAMIC
    return f"prefill_causal_{sq}x{sk}" + (f"_shift{offset}" if offset else "")


def _causal(sq=None, sk=None, offset=0, dim=128):
    """The function named causal_name(sq, sk, offset); dynamic lengths
    where sq and sk are None."""
    sq_, sk_ = ("?", "?") if sq is None else (sq, sk)
    q, kv = f"tensor<{BATCH}x{HEADS}x{sq_}x{dim}xbf16>", f"tensor<{BATCH}x{HEADS}x{sk_}x{dim}xbf16>"
    kt = f"tensor<{BATCH}x{HEADS}x{dim}x{sk_}xbf16>"
    s = f"tensor<{BATCH}x{HEADS}x{sq_}x{sk_}x"
    limit = "%row" if not offset else "%last"
    shift = "" if not offset else f"""
  %shift = fusion.constant dense<{float(offset)}> : tensor<f32>
  %last = fusion.add %row, %shift : (tensor<{sq_}x1xf32>, tensor<f32>) -> tensor<{sq_}x1xf32>"""

    def sized(source, t):  # an iota's size: from Q or K where dynamic
        return f" size_of %{source}[2] : {t} ->" if sq is None else " :"
    return f"""
func.func @{causal_name(sq, sk, offset)}(%q: {q}, %k: {kv}, %v: {kv}) -> {q} {{
  %kt = fusion.transpose %k permutation = [0, 1, 3, 2] : {kv} -> {kt}
  %s = fusion.matmul %q, %kt : ({q}, {kt}) -> {s}bf16>
  %sf = fusion.convert %s : {s}bf16> to {s}f32>
  %c = fusion.constant dense<{dim ** -0.5}> : tensor<f32>
  %t = fusion.mul %sf, %c : ({s}f32>, tensor<f32>) -> {s}f32>
  %tb = fusion.convert %t : {s}f32> to {s}bf16>
  %row = fusion.iota dimension = 0{sized("q", q)} tensor<{sq_}x1xf32>
  %key = fusion.iota dimension = 1{sized("k", kv)} tensor<1x{sk_}xf32>{shift}
  %seen = fusion.cmp le, %key, {limit} : (tensor<1x{sk_}xf32>, tensor<{sq_}x1xf32>) -> tensor<{sq_}x{sk_}xi1>
  %ninf = fusion.constant dense<0xFF80> : tensor<bf16>
  %m = fusion.select %seen, %tb, %ninf : (tensor<{sq_}x{sk_}xi1>, {s}bf16>, tensor<bf16>) -> {s}bf16>
  %p = fusion.softmax %m axis = 3 : {s}bf16>
  %o = fusion.matmul %p, %v : ({s}bf16>, {kv}) -> {q}
  return %o : {q}
}}
"""


BENCH_LENGTHS = (1024, 4096, 16384)
CAUSAL_CHECKS = tuple((sq, sk, 0) for sq, sk in CHECK_LENGTHS) + ((100, 3000, 2900),
                                                                  (300, 1000, 700))
CAUSAL = sorted(set(CAUSAL_CHECKS) | {(n, n, 0) for n in BENCH_LENGTHS})

MODULE = "".join(
    _attention(name, dim, math(dim),
               extra_args=f", %bias: tensor<1x{HEADS}x?x?xf32>" if name == "prefill_bias" else "")
    for name, (dim, math) in PROGRAMS.items() if math) + _GQA + _LSE + _OWN_BIAS + _HEADS_BIAS + "".join(
        _causal(*case) for case in CAUSAL) + _causal()



def main(checks_only=False, max_length=None, programs=None, lengths=None, peers=True):
    import torch
    import torch.nn.functional as F
    import triton.testing

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    from fusion import cuda
    from attention_decode import finish, timing_line

    fused = cuda.load(os.path.join(here, "attention_prefill.fused.so"))
    checked = cuda.load(os.path.join(here, "attention_prefill.fused.so"), debug=True)
    before_path = os.environ.get("FUSION_BENCH_BEFORE",
                                 os.path.join(here, "attention_prefill.before.so"))
    before = cuda.load(before_path) if os.path.exists(before_path) else None
    # Candidate builds (attention_prefill.variant.<label>.so: other strategy
    # constants), checked and timed like the fused build.
    variant_paths = {
        os.path.basename(p)[len("attention_prefill.variant."):-3]: p
        for p in sorted(glob.glob(os.path.join(here, "attention_prefill.variant.*.so")))}
    checked_builds = {"": checked, **{label: cuda.load(p, debug=True)
                                      for label, p in variant_paths.items()}}
    variants = {label: cuda.load(p) for label, p in variant_paths.items()}
    programs = list(PROGRAMS) if programs is None else programs
    lengths = BENCH_LENGTHS if lengths is None else lengths
    results, lines = {"checks": {}, "times_us": {}}, []

    def inputs(name, sq, sk, seed):
        dim = PROGRAMS[name][0]
        g = torch.Generator(device="cuda").manual_seed(seed)

        def rand(*shape):
            return torch.randn(*shape, device="cuda", generator=g).bfloat16()
        if name == "prefill_gqa":
            return [rand(BATCH, KV_HEADS, _GROUP, sq, dim), rand(BATCH, KV_HEADS, 1, sk, dim),
                    rand(BATCH, KV_HEADS, 1, sk, dim)]
        args = [rand(BATCH, HEADS, sq, dim), rand(BATCH, HEADS, sk, dim),
                rand(BATCH, HEADS, sk, dim)]
        if name in ("prefill_bias", "prefill_bias_d64", "prefill_bias_heads"):
            # Causal (aligned at the end, as when queries are the last
            # tokens) with an ALiBi-like slope per head; every row keeps a key.
            i = torch.arange(sq, device="cuda")[:, None] + (sk - sq)
            j = torch.arange(sk, device="cuda")[None, :]
            slopes = 2.0 ** (-8.0 * torch.arange(1, HEADS + 1, device="cuda") / HEADS)
            bias = -slopes[:, None, None] * (i - j).abs()
            bias = torch.where(j <= i.clamp(min=0), bias, float("-inf"))
            bias[:, :, 0] = torch.where(torch.isinf(bias[:, :, 0]), 0.0, bias[:, :, 0])
            if name == "prefill_bias":
                args.append(bias[None].float().contiguous())
            elif name == "prefill_bias_heads":
                args.append((bias[:1] + 0.5 * torch.randn(BATCH, 1, sq, sk, device="cuda",
                                                          generator=g)).bfloat16().contiguous())
            else:
                args.append((bias + 0.5 * torch.randn(BATCH, HEADS, sq, sk, device="cuda",
                                                      generator=g)).bfloat16().contiguous())
        return args

    def reference(name, q, k, v, bias=None):
        dim = PROGRAMS[name][0]
        s = q.double() @ k.double().transpose(-1, -2) * dim ** -0.5
        if name == "prefill_softcap":
            s = torch.tanh(s / CAP) * CAP
        if bias is not None:
            s = s + bias.double()
        return torch.softmax(s, -1) @ v.double()

    def record(name, ok, detail):
        results["checks"][name] = dict(ok=ok, detail=detail)
        lines.append(f"{'ok  ' if ok else 'FAIL'} {name:48} {detail}")

    def checked_lengths(sq, sk):
        return max_length is None or max(sq, sk) <= max_length

    for (label, build), name in ((b, n) for b in checked_builds.items()
                                  for n in programs if n in PROGRAMS):
        for sq, sk in filter(lambda c: checked_lengths(*c), CHECK_LENGTHS):
            for seed in (1, 2):
                args = inputs(name, sq, sk, 1000 * sq + sk + seed)
                outs = [torch.full_like(args[0], float("nan"))]
                if name == "prefill_lse":
                    outs.append(torch.full(args[0].shape[:-1], float("nan"),
                                           dtype=torch.bfloat16, device="cuda"))
                build.functions[name](*args, outputs=outs)
                torch.cuda.synchronize()
                refs = [reference(name, *args)]
                if name == "prefill_lse":
                    s = args[0].double() @ args[1].double().transpose(-1, -2) * 128 ** -0.5
                    refs.append(torch.logsumexp(s, -1))
                errs = []
                for out, ref in zip(outs, refs):
                    o = out.double()
                    errs.append(float("inf") if torch.isnan(o).any() else float(
                        (o - ref).norm() / ref.norm()))
                err = max(errs)
                record(f"{label + ' ' if label else ''}{name} q={sq} k={sk} seed={seed}",
                       err <= TOLERANCE,
                       "rel.err " + " ".join(f"{e:.1e}" for e in errs))

    def causal_reference(q, k, v, offset):
        s = q.double() @ k.double().transpose(-1, -2) * 128 ** -0.5
        i = torch.arange(q.shape[-2], device="cuda")[:, None]
        j = torch.arange(k.shape[-2], device="cuda")[None, :]
        return torch.softmax(s.masked_fill(j > i + offset, float("-inf")), -1) @ v.double()

    causal_checks = [c for c in CAUSAL_CHECKS if checked_lengths(*c[:2])]
    if "prefill_causal" not in programs:
        causal_checks = []
    for (label, build), (sq, sk, offset) in (
            (b, c) for b in checked_builds.items() for c in causal_checks):
        name = causal_name(sq, sk, offset)
        for seed in (1, 2):
            args = inputs("prefill", sq, sk, 1000 * sq + sk + seed)
            out = torch.full_like(args[0], float("nan"))
            build.functions[name](*args, outputs=[out])
            torch.cuda.synchronize()
            ref = causal_reference(*args, offset)
            o = out.double()
            err = float("inf") if torch.isnan(o).any() else float((o - ref).norm() / ref.norm())
            record(f"{label + ' ' if label else ''}{name} seed={seed}", err <= TOLERANCE,
                   f"rel.err {err:.1e}")
    # The dynamic-length function at every checked (Sq, Sk) (offset 0).
    dynamic_checks = [(sq, sk) for sq, sk, offset in causal_checks if offset == 0]
    for (label, build), (sq, sk) in (
            (b, c) for b in checked_builds.items() for c in dynamic_checks):
        if CAUSAL_DYNAMIC not in build.functions:
            continue
        for seed in (1, 2):
            args = inputs("prefill", sq, sk, 1000 * sq + sk + seed + 7)
            out = torch.full_like(args[0], float("nan"))
            build.functions[CAUSAL_DYNAMIC](*args, outputs=[out])
            torch.cuda.synchronize()
            ref = causal_reference(*args, 0)
            o = out.double()
            err = float("inf") if torch.isnan(o).any() else float((o - ref).norm() / ref.norm())
            record(f"{label + ' ' if label else ''}{CAUSAL_DYNAMIC} q={sq} k={sk} seed={seed}",
                   err <= TOLERANCE, f"rel.err {err:.1e}")

    if checks_only:
        print("\n".join(lines))
        failed = sum(not c["ok"] for c in results["checks"].values())
        print(f"attention prefill checks: {len(results['checks']) - failed} passed, {failed} failed")
        sys.exit(1 if failed else 0)

    def eager_fn(name):
        dim = PROGRAMS[name][0]

        def f(q, k, v, bias=None):
            s = (q @ k.transpose(-1, -2)).float() * dim ** -0.5
            if name == "prefill_softcap":
                s = torch.tanh(s / CAP) * CAP
            if bias is not None:
                s = s + bias
            return torch.softmax(s, -1).bfloat16() @ v
        return f

    def median_us(f):
        return triton.testing.do_bench(f, return_mode="median") * 1e3

    def fusion_times(name, args, out):
        row = {"fusion": median_us(lambda: fused.functions[name](*args, outputs=out))}
        if before and name in before.functions:
            row["fusion_before"] = median_us(
                lambda: before.functions[name](*args, outputs=out))
        for label, library in variants.items():
            row[f"fusion_{label}"] = median_us(
                lambda: library.functions[name](*args, outputs=out))
        return row

    for name in programs:
        if name not in PROGRAMS or name == "prefill_lse":
            continue  # checked above; timed as `prefill`, causal below
        eager = eager_fn(name)
        # Every program's eager function is one code object to Dynamo: a
        # fresh cache each, or past its recompile limit (8) torch.compile
        # silently runs eager.
        # dynamic=False: each length compiled for its own shape, as a user
        # calling one shape gets it (not the dynamic-shape recompile a
        # second length triggers).
        torch._dynamo.reset()
        compiled = torch.compile(eager, dynamic=False) if peers else None
        dim = PROGRAMS[name][0]
        for length in lengths:
            # The unfused peers materialize B H S^2 scores: past 4096 only
            # the plain programs (SDPA) are timed beside Fusion.
            if length > 4096 and name in ("prefill_softcap", "prefill_bias", "prefill_bias_d64",
                                          "prefill_bias_heads"):
                continue
            args = inputs(name, length, length, 7)
            q, k, v = args[:3]
            out = [torch.empty_like(q)]
            row = fusion_times(name, args, out)
            if peers and length <= 4096:
                row["eager"] = median_us(lambda: eager(*args))
                row["torch.compile"] = median_us(lambda: compiled(*args))
            if name in ("prefill", "prefill_d64", "prefill_f32_softmax"):
                row["sdpa"] = median_us(
                    lambda: F.scaled_dot_product_attention(q, k, v, scale=dim ** -0.5))
            elif name == "prefill_gqa":
                qs = q.reshape(BATCH, HEADS, length, dim)
                ks = k.reshape(BATCH, KV_HEADS, length, dim)
                vs = v.reshape(BATCH, KV_HEADS, length, dim)
                row["sdpa (gqa)"] = median_us(
                    lambda: F.scaled_dot_product_attention(qs, ks, vs, scale=dim ** -0.5,
                                                           enable_gqa=True))
            elif name == "prefill_bias":
                bias = args[3].bfloat16()
                row["sdpa (bias)"] = median_us(
                    lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=bias,
                                                           scale=dim ** -0.5))
            flops = 4 * BATCH * HEADS * length * length * dim
            results["times_us"][f"{name}[{length}]"] = row
            lines.append(timing_line(f"{name}[{length}]", row,
                                     f"{flops / row['fusion'] / 1e6:.0f} TFLOP/s"))
    # Causal (key j seen by row i where j <= i): FLOPs of the half computed.
    def causal_eager(q, k, v):
        s = (q @ k.transpose(-1, -2)).float() * 128 ** -0.5
        n = q.shape[-2]
        seen = torch.ones(n, n, dtype=torch.bool, device="cuda").tril()
        return torch.softmax(s.masked_fill(~seen, float("-inf")), -1).bfloat16() @ v
    causal_compiled = torch.compile(causal_eager, dynamic=False) if peers else None
    for length in lengths if "prefill_causal" in programs else ():
        name = causal_name(length, length)
        if name not in fused.functions:
            continue
        q, k, v = args = inputs("prefill", length, length, 7)
        out = [torch.empty_like(q)]
        row = fusion_times(name, args, out)
        if CAUSAL_DYNAMIC in fused.functions:
            row["fusion_dynamic_lengths"] = median_us(
                lambda: fused.functions[CAUSAL_DYNAMIC](*args, outputs=out))
        if peers and length <= 4096:
            row["eager"] = median_us(lambda: causal_eager(*args))
            row["torch.compile"] = median_us(lambda: causal_compiled(*args))
        row["sdpa (causal)"] = median_us(
            lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=128 ** -0.5))
        flops = 2 * BATCH * HEADS * length * length * 128
        results["times_us"][f"prefill_causal[{length}]"] = row
        lines.append(timing_line(f"prefill_causal[{length}]", row,
                                 f"{flops / row['fusion'] / 1e6:.0f} TFLOP/s (causal half)"))
    finish("attention_prefill", results, lines)


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", action="store_true", help="print the module and stop")
    parser.add_argument("--checks", nargs="?", const=0, type=int, metavar="MAX_LENGTH",
                        help="the checks only (those up to MAX_LENGTH rows or keys)")
    parser.add_argument("--programs", default=",".join([*PROGRAMS, "prefill_causal"]))
    parser.add_argument("--lengths", default=",".join(map(str, BENCH_LENGTHS)),
                        help="sequence lengths timed")
    parser.add_argument("--no-peers", action="store_true",
                        help="time SDPA beside Fusion, not eager or torch.compile")
    options = parser.parse_args()
    if options.module:
        print(MODULE)
    else:
        main(checks_only=options.checks is not None,
             max_length=options.checks or None,
             programs=options.programs.split(","),
             lengths=[int(n) for n in options.lengths.split(",")],
             peers=not options.no_peers)
