"""Elementwise math before a reshape read by a reduction, fused into the
reduction's kernel by fusion-hoist-reshapes, timed against the kernels the
pipeline made before it (two: the math written out, then the reduction) and
against PyTorch eager and torch.compile, all in one run.

    python3 hoist_reshapes_bench.py --module > m.mlir          # here
    fusion-compile m.mlir --target=cuda -o after.so
    fusion-opt m.mlir --fusion-fuse-attention --fusion-decompose=elementwise=false \
      --canonicalize --cse --fusion-fuse-producer-consumer --fusion-fuse-reductions \
      --fusion-fuse-horizontal --canonicalize --cse -o before.mlir
    fusion-compile before.mlir --target=cuda --no-fuse -o before.so
    python3 hoist_reshapes_bench.py before.so after.so         # there

AFTER is the module through the pipeline; BEFORE is the IR the fusion
passes give without fusion-hoist-reshapes, compiled as it is (--no-fuse
adds nothing to kernels already formed), so its kernels are the previous
pipeline's. Each build is checked first against PyTorch in float64
(outputs poisoned), then timed by triton's do_bench (median); bytes are each
input read once and the output written once. Writes $OUT/hoist_reshapes.json."""

import json
import os
import sys

import torch
import torch.nn.functional as F
import triton

from fusion import cuda

MODULE = """
func.func @residual_rms(%x: tensor<4x2048x4096xbf16>, %r: tensor<4x2048x4096xbf16>, %g: tensor<4096xbf16>) -> tensor<8192x4096xbf16> {
  %s = fusion.add %x, %r : tensor<4x2048x4096xbf16>
  %v = fusion.reshape %s : tensor<4x2048x4096xbf16> -> tensor<8192x4096xbf16>
  %n = fusion.rms_norm %v, %g epsilon = 1.0e-05 : tensor<8192x4096xbf16>, tensor<4096xbf16>
  return %n : tensor<8192x4096xbf16>
}
func.func @gelu_heads_rows(%x: tensor<8192x4096xbf16>, %b: tensor<4096xbf16>) -> tensor<8192x32x128xbf16> {
  %a = fusion.add %x, %b : (tensor<8192x4096xbf16>, tensor<4096xbf16>) -> tensor<8192x4096xbf16>
  %g = fusion.gelu %a : tensor<8192x4096xbf16>
  %h = fusion.reshape %g : tensor<8192x4096xbf16> -> tensor<8192x32x128xbf16>
  %n = fusion.softmax %h axis = 2 : tensor<8192x32x128xbf16>
  return %n : tensor<8192x32x128xbf16>
}
"""


def residual_rms(x, r, g):
    h = (x + r).view(-1, x.shape[-1])
    return F.rms_norm(h, (h.shape[-1],), g, 1e-5)


def gelu_heads_rows(x, b):
    return torch.softmax(F.gelu(x + b).view(x.shape[0], 32, 128), -1)


def reference(name, args):
    a = [t.double() for t in args]
    if name == "residual_rms":
        h = (a[0] + a[1]).reshape(-1, a[0].shape[-1])
        return h * torch.rsqrt((h * h).mean(-1, keepdim=True) + 1e-5) * a[2]
    return torch.softmax(F.gelu(a[0] + a[1]).reshape(a[0].shape[0], 32, 128), -1)


def main():
    if sys.argv[1:] == ["--module"]:
        print(MODULE)
        return
    before_path, after_path = sys.argv[1:3]
    builds = {"fusion_before": before_path, "fusion": after_path}
    gen = torch.Generator(device="cuda").manual_seed(int.from_bytes(os.urandom(4), "little"))

    def randn(*shape):
        return torch.randn(*shape, device="cuda", dtype=torch.bfloat16, generator=gen)

    programs = {
        "residual_rms": ((randn(4, 2048, 4096), randn(4, 2048, 4096), randn(4096)),
                         residual_rms),
        "gelu_heads_rows": ((randn(8192, 4096), randn(4096)), gelu_heads_rows),
    }
    results, failed = {"device": torch.cuda.get_device_name(), "checks": {}, "times_us": {}}, 0
    for name, (args, eager) in programs.items():
        expected = reference(name, args)
        for label, path in builds.items():
            got = cuda.load(path, debug=True).functions[name](*args)
            got = got[0] if isinstance(got, (list, tuple)) else got
            error = float((got.double() - expected).norm() / expected.norm())
            ok = bool(torch.isfinite(got).all()) and error <= 1e-2
            failed += not ok
            results["checks"][f"{label} {name}"] = {"ok": ok, "relative_error": error}
            print(f"{'ok  ' if ok else 'FAIL'} {label} {name}: relative error {error:.2e} (bf16 tolerance 1e-2)")
    for name, (args, eager) in programs.items():
        compiled = torch.compile(eager, dynamic=False)
        row = {}
        for label, path in builds.items():
            f = cuda.load(path).functions[name]
            result = f(*args)
            outs = list(result) if isinstance(result, (list, tuple)) else [result]
            row[label] = triton.testing.do_bench(lambda: f(*args, outputs=outs),
                                                 return_mode="median") * 1e3
        row["eager"] = triton.testing.do_bench(lambda: eager(*args), return_mode="median") * 1e3
        row["torch.compile"] = triton.testing.do_bench(lambda: compiled(*args),
                                                       return_mode="median") * 1e3
        moved = sum(t.numel() * t.element_size() for t in args) + outs[0].numel() * 2
        row["fusion_GBps"] = moved / row["fusion"] / 1e3
        results["times_us"][name] = row
        print(f"{name:16s} us: " + "  ".join(f"{k} {v:.1f}" for k, v in row.items()))
    with open(os.path.join(os.environ.get("OUT", "."), "hoist_reshapes.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(f"hoist reshapes checks: {len(results['checks']) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
