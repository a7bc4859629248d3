#!/usr/bin/env python3
"""Decode attention on the GPU machine (attention_rows: a block per query
row and range of keys, the softmax online) for 8 sequences (`decode`), one
sequence (`decode_one`: 32 query rows, fewer than the multiprocessors, so
keys are cut into ranges) and grouped heads with a soft-cap and a padding
mask (`decode_gqa_softcap`): MODULE compiled into the bundle
as attention_decode.fused.so (attention kernels) and
attention_decode.unfused.so (an op per kernel); candidate builds
attention_decode.variant.<label>.so, where present, are checked and timed
beside it. Checks against PyTorch in
float64 at key lengths from 1 to 16384 (ragged, dynamic), outputs poisoned
first; then the time per call (and that of attention_decode.before.so, a
build from before a codegen change, where present) beside torch's
scaled_dot_product_attention
(SDPA; with enable_gqa for grouped heads), the same math eager and under
torch.compile, and Fusion unfused. bf16, head size 128, preallocated
outputs, median of triton.testing.do_bench; GB/s counts K and V read once
and Q and the output once. Prints a table last and writes
attention_decode.json into $OUT.

    python3 attention_decode.py            # on the GPU machine, from the bundle
    python3 attention_decode.py --checks   # the checks only (for compute-sanitizer)
    python3 attention_decode.py --module   # the module's text (for the bundle)
    python3 attention_decode.py --programs decode_one --lengths 1024,8192
                                           # checks and times of those only
"""

import glob
import json
import os
import sys

BATCH, HEADS, KV_HEADS, DIM = 8, 32, 8, 128
# One sequence (decode_one): fewer query rows (32) than multiprocessors,
# so the plan cuts each row's keys into ranges.
ONE = 1
SCALE = DIM ** -0.5
CAP = 30.0


def _decode(name, batch):
    return f"""
func.func @{name}(%q: tensor<{batch}x{HEADS}x1x{DIM}xbf16>, %k: tensor<{batch}x{HEADS}x?x{DIM}xbf16>, %v: tensor<{batch}x{HEADS}x?x{DIM}xbf16>) -> tensor<{batch}x{HEADS}x1x{DIM}xbf16> {{
  %kt = fusion.transpose %k permutation = [0, 1, 3, 2] : tensor<{batch}x{HEADS}x?x{DIM}xbf16> -> tensor<{batch}x{HEADS}x{DIM}x?xbf16>
  %s = fusion.matmul %q, %kt : (tensor<{batch}x{HEADS}x1x{DIM}xbf16>, tensor<{batch}x{HEADS}x{DIM}x?xbf16>) -> tensor<{batch}x{HEADS}x1x?xbf16>
  %c = fusion.constant dense<{SCALE}> : tensor<f32>
  %sf = fusion.convert %s : tensor<{batch}x{HEADS}x1x?xbf16> to tensor<{batch}x{HEADS}x1x?xf32>
  %t = fusion.mul %sf, %c : (tensor<{batch}x{HEADS}x1x?xf32>, tensor<f32>) -> tensor<{batch}x{HEADS}x1x?xf32>
  %tb = fusion.convert %t : tensor<{batch}x{HEADS}x1x?xf32> to tensor<{batch}x{HEADS}x1x?xbf16>
  %p = fusion.softmax %tb axis = 3 : tensor<{batch}x{HEADS}x1x?xbf16>
  %o = fusion.matmul %p, %v : (tensor<{batch}x{HEADS}x1x?xbf16>, tensor<{batch}x{HEADS}x?x{DIM}xbf16>) -> tensor<{batch}x{HEADS}x1x{DIM}xbf16>
  return %o : tensor<{batch}x{HEADS}x1x{DIM}xbf16>
}}"""


MODULE = _decode("decode", BATCH) + _decode("decode_one", ONE) + f"""
func.func @decode_gqa_softcap(%q: tensor<{BATCH}x{KV_HEADS}x{HEADS // KV_HEADS}x1x{DIM}xbf16>, %k: tensor<{BATCH}x{KV_HEADS}x1x?x{DIM}xbf16>, %v: tensor<{BATCH}x{KV_HEADS}x1x?x{DIM}xbf16>, %mask: tensor<{BATCH}x1x1x1x?xf32>) -> tensor<{BATCH}x{KV_HEADS}x{HEADS // KV_HEADS}x1x{DIM}xbf16> {{
  %kt = fusion.transpose %k permutation = [0, 1, 2, 4, 3] : tensor<{BATCH}x{KV_HEADS}x1x?x{DIM}xbf16> -> tensor<{BATCH}x{KV_HEADS}x1x{DIM}x?xbf16>
  %s = fusion.matmul %q, %kt : (tensor<{BATCH}x{KV_HEADS}x{HEADS // KV_HEADS}x1x{DIM}xbf16>, tensor<{BATCH}x{KV_HEADS}x1x{DIM}x?xbf16>) -> tensor<{BATCH}x{KV_HEADS}x{HEADS // KV_HEADS}x1x?xbf16>
  %sf = fusion.convert %s : tensor<{BATCH}x{KV_HEADS}x{HEADS // KV_HEADS}x1x?xbf16> to tensor<{BATCH}x{KV_HEADS}x{HEADS // KV_HEADS}x1x?xf32>
  %c = fusion.constant dense<{SCALE / CAP}> : tensor<f32>
  %cap = fusion.constant dense<{CAP}> : tensor<f32>
  %d = fusion.mul %sf, %c : (tensor<{BATCH}x{KV_HEADS}x{HEADS // KV_HEADS}x1x?xf32>, tensor<f32>) -> tensor<{BATCH}x{KV_HEADS}x{HEADS // KV_HEADS}x1x?xf32>
  %th = fusion.tanh %d : tensor<{BATCH}x{KV_HEADS}x{HEADS // KV_HEADS}x1x?xf32>
  %capped = fusion.mul %th, %cap : (tensor<{BATCH}x{KV_HEADS}x{HEADS // KV_HEADS}x1x?xf32>, tensor<f32>) -> tensor<{BATCH}x{KV_HEADS}x{HEADS // KV_HEADS}x1x?xf32>
  %m = fusion.add %capped, %mask : (tensor<{BATCH}x{KV_HEADS}x{HEADS // KV_HEADS}x1x?xf32>, tensor<{BATCH}x1x1x1x?xf32>) -> tensor<{BATCH}x{KV_HEADS}x{HEADS // KV_HEADS}x1x?xf32>
  %mb = fusion.convert %m : tensor<{BATCH}x{KV_HEADS}x{HEADS // KV_HEADS}x1x?xf32> to tensor<{BATCH}x{KV_HEADS}x{HEADS // KV_HEADS}x1x?xbf16>
  %p = fusion.softmax %mb axis = 4 : tensor<{BATCH}x{KV_HEADS}x{HEADS // KV_HEADS}x1x?xbf16>
  %o = fusion.matmul %p, %v : (tensor<{BATCH}x{KV_HEADS}x{HEADS // KV_HEADS}x1x?xbf16>, tensor<{BATCH}x{KV_HEADS}x1x?x{DIM}xbf16>) -> tensor<{BATCH}x{KV_HEADS}x{HEADS // KV_HEADS}x1x{DIM}xbf16>
  return %o : tensor<{BATCH}x{KV_HEADS}x{HEADS // KV_HEADS}x1x{DIM}xbf16>
}}
"""

TOLERANCE = 1e-2  # bf16 output, relative norm error


def timing_line(name, row, rate):
    """A program's times beside its peers' (keys not starting with
    "fusion"), with `rate` (Fusion's throughput, as text) and the ratio to
    the best peer."""
    peers = {k: v for k, v in row.items() if not k.startswith("fusion")}
    best = min(peers.values()) if peers else float("nan")
    return (f"     {name} us: " + "  ".join(f"{k} {v:.1f}" for k, v in row.items())
            + f"  | fusion {rate}, {best / row['fusion']:.2f}x the best peer")


def finish(title, results, lines):
    """Writes `results` to $OUT/<title>.json, prints the device and `lines`
    and the checks' count, and exits with 1 where a check failed."""
    import torch
    results["device"] = torch.cuda.get_device_name()
    with open(os.path.join(os.environ.get("OUT", "."), f"{title}.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(results["device"])
    print("\n".join(lines))
    failed = sum(not c["ok"] for c in results["checks"].values())
    print(f"{title.replace('_', ' ')} checks: {len(results['checks']) - failed} passed, "
          f"{failed} failed")
    sys.exit(1 if failed else 0)
CHECK_LENGTHS = (1, 7, 33, 1000, 4097, 16384)
PROGRAMS = ("decode", "decode_one", "decode_gqa_softcap")
BENCH_LENGTHS = (1024, 4096, 16384)


def main(checks_only=False, programs=PROGRAMS, lengths=BENCH_LENGTHS):
    import torch
    import torch.nn.functional as F
    import triton.testing

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    from fusion import cuda

    fused = cuda.load(os.path.join(here, "attention_decode.fused.so"))
    unfused = cuda.load(os.path.join(here, "attention_decode.unfused.so"))
    # A build from before a codegen change, timed beside it.
    before_path = os.path.join(here, "attention_decode.before.so")
    before = cuda.load(before_path) if os.path.exists(before_path) else None
    # Candidate builds (attention_decode.variant.<label>.so: other plans or
    # strategy constants), checked and timed like the fused build.
    variant_paths = {
        os.path.basename(p)[len("attention_decode.variant."):-3]: p
        for p in sorted(glob.glob(os.path.join(here, "attention_decode.variant.*.so")))}
    checked = {"": cuda.load(os.path.join(here, "attention_decode.fused.so"), debug=True),
               **{label: cuda.load(p, debug=True) for label, p in variant_paths.items()}}
    variants = {label: cuda.load(p) for label, p in variant_paths.items()}
    group = HEADS // KV_HEADS
    results, lines = {"checks": {}, "times_us": {}}, []

    def inputs(name, length, seed):
        g = torch.Generator(device="cuda").manual_seed(seed)
        def rand(*shape):
            return torch.randn(*shape, device="cuda", generator=g).bfloat16()
        if name in ("decode", "decode_one"):
            batch = BATCH if name == "decode" else ONE
            return (rand(batch, HEADS, 1, DIM), rand(batch, HEADS, length, DIM),
                    rand(batch, HEADS, length, DIM))
        # Padding: each sequence's keys past its own length masked (at
        # least one key kept).
        lengths = torch.randint(1, length + 1, (BATCH,), device="cuda", generator=g)
        keep = torch.arange(length, device="cuda")[None, :] < lengths[:, None]
        mask = torch.where(keep, 0.0, float("-inf")).view(BATCH, 1, 1, 1, length)
        return (rand(BATCH, KV_HEADS, group, 1, DIM), rand(BATCH, KV_HEADS, 1, length, DIM),
                rand(BATCH, KV_HEADS, 1, length, DIM), mask.float().contiguous())

    def reference(name, q, k, v, mask=None):
        s = q.double() @ k.double().transpose(-1, -2) * SCALE
        if name == "decode_gqa_softcap":
            s = torch.tanh(s / CAP) * CAP + mask.double()
        return torch.softmax(s, -1) @ v.double()

    def record(name, ok, detail):
        results["checks"][name] = dict(ok=ok, detail=detail)
        lines.append(f"{'ok  ' if ok else 'FAIL'} {name:44} {detail}")

    for label, library in checked.items():
        for name in programs:
            for length in CHECK_LENGTHS:
                for seed in (1, 2):
                    args = inputs(name, length, 1000 * length + seed)
                    (out,) = library.functions[name](*args)
                    torch.cuda.synchronize()
                    ref = reference(name, *args)
                    o = out.double()
                    err = float("inf") if torch.isnan(o).any() else float(
                        (o - ref).norm() / ref.norm())
                    record(f"{label + ' ' if label else ''}{name} keys={length} seed={seed}",
                           err <= TOLERANCE, f"rel.err {err:.1e}")

    def sdpa(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, scale=SCALE)

    if checks_only:
        print("\n".join(lines))
        failed = sum(not c["ok"] for c in results["checks"].values())
        print(f"attention decode checks: {len(results['checks']) - failed} passed, {failed} failed")
        sys.exit(1 if failed else 0)

    def eager_decode(q, k, v):
        s = (q @ k.transpose(-1, -2)).float() * SCALE
        return torch.softmax(s, -1).bfloat16() @ v

    def eager_softcap(q, k, v, mask):
        s = (q @ k.transpose(-1, -2)).float() * SCALE
        s = torch.tanh(s / CAP) * CAP + mask
        return torch.softmax(s, -1).bfloat16() @ v

    compiled = {"decode": torch.compile(eager_decode), "decode_one": torch.compile(eager_decode),
                "decode_gqa_softcap": torch.compile(eager_softcap)}
    eager = {"decode": eager_decode, "decode_one": eager_decode,
             "decode_gqa_softcap": eager_softcap}

    def median_us(f):
        return triton.testing.do_bench(f, return_mode="median") * 1e3

    for name in programs:
        for length in lengths:
            args = inputs(name, length, 7)
            q, k, v = args[:3]
            bytes_moved = sum(t.numel() * t.element_size() for t in (q, k, v)) + q.numel() * 2
            out = [torch.empty_like(q)]
            row = {
                "fusion": median_us(lambda: fused.functions[name](*args, outputs=out)),
                "fusion_unfused": median_us(lambda: unfused.functions[name](*args, outputs=out)),
                **({"fusion_before": median_us(lambda: before.functions[name](*args, outputs=out))}
                   if before else {}),
                **{f"fusion_{label}": median_us(lambda: library.functions[name](*args, outputs=out))
                   for label, library in variants.items()},
                "eager": median_us(lambda: eager[name](*args)),
                "torch.compile": median_us(lambda: compiled[name](*args)),
            }
            if name != "decode_gqa_softcap":
                row["sdpa"] = median_us(lambda: sdpa(q, k, v))
            else:
                # SDPA has no soft-cap: its grouped-head attention with the
                # same mask, for the speed of the library path.
                qs = q.reshape(BATCH, HEADS, 1, DIM)
                ks, vs = k.reshape(BATCH, KV_HEADS, length, DIM), v.reshape(BATCH, KV_HEADS, length, DIM)
                ms = args[3].reshape(BATCH, 1, 1, length).bfloat16()
                row["sdpa (no cap)"] = median_us(
                    lambda: F.scaled_dot_product_attention(qs, ks, vs, attn_mask=ms, scale=SCALE,
                                                           enable_gqa=True))
            results["times_us"][f"{name}[{length}]"] = row
            lines.append(timing_line(f"{name}[{length}]", row,
                                     f"{bytes_moved / row['fusion'] / 1e3:.0f} GB/s"))
    finish("attention_decode", results, lines)


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", action="store_true", help="print the module and stop")
    parser.add_argument("--checks", action="store_true", help="the checks only")
    parser.add_argument("--programs", default=",".join(PROGRAMS))
    parser.add_argument("--lengths", default=",".join(map(str, BENCH_LENGTHS)),
                        help="key lengths timed")
    options = parser.parse_args()
    if options.module:
        print(MODULE)
    else:
        main(checks_only=options.checks, programs=options.programs.split(","),
             lengths=[int(n) for n in options.lengths.split(",")])
