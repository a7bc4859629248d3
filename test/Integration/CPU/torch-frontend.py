# The PyTorch front end on real torch.nn blocks: each is traced with torch.fx
# into a fusion module, compiled for the CPU (fused) with fusion-compile and
# run on fresh random inputs; the results must match the module's own output
# (f32: 1e-5 relative, blocks with matmuls 1e-4: the sums run in another
# order). An op the dialect does not cover is an error naming it.
#
# REQUIRES: torch
# RUN: %torch_python %s %fusion_obj_root %t

import os
import sys

import numpy as np
import torch
from torch import nn

from fusion import cpu, fx

build_dir, work = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
seed = int.from_bytes(os.urandom(4), "little")
torch.manual_seed(seed)
print(f"torch {torch.__version__}, seed {seed}")


class PreNormMLP(nn.Module):
    """x + fc2(gelu(fc1(layer_norm(x)))): a transformer MLP block."""

    def __init__(self, d, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, d)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return x + self.drop(self.fc2(self.act(self.fc1(self.norm(x)))))


class LayerNormGelu(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d, eps=1e-5)

    def forward(self, x):
        return nn.functional.gelu(self.norm(x), approximate="tanh")


class RMSNormResidual(nn.Module):
    """(x + residual, rms_norm(x + residual) * weight), the norm computed on a
    bf16 round trip of the sum as mixed-precision code does."""

    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(d) + 0.5)
        self.eps = eps

    def forward(self, x, residual):
        s = x + residual
        h = s.bfloat16().float()
        n = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return s, n * self.weight


class SoftmaxAttentionScores(nn.Module):
    """softmax(q @ k^T / sqrt(d)) over the last axis."""

    def forward(self, q, k):
        return torch.softmax(torch.matmul(q, k.transpose(-1, -2)) * 0.125, dim=-1)


def randn(*shape):
    return torch.randn(*shape) * 1.5


blocks = [
    ("prenorm_mlp", PreNormMLP(64, 256), (randn(4, 16, 64),), 1e-4),
    ("layernorm_gelu", LayerNormGelu(96), (randn(8, 96),), 1e-5),
    ("rmsnorm_residual", RMSNormResidual(128), (randn(6, 128), randn(6, 128)), 1e-5),
    ("attention_scores", SoftmaxAttentionScores(), (randn(2, 32, 64), randn(2, 32, 64)), 1e-4),
]
for block in blocks:
    for p in block[1].parameters():  # not the default init: random biases, scales
        with torch.no_grad():
            p.add_(torch.randn_like(p) * 0.1)

failures = 0
for name, module, inputs, tolerance in blocks:
    text, params = fx.import_module(module, inputs, name=name)
    source = os.path.join(work, f"{name}.mlir")
    with open(source, "w") as f:
        f.write(text)
    compiled = cpu.compile(source, build_dir, fuse=True, work_dir=work)
    report = cpu.report(source, build_dir, fuse=True)["functions"][0]
    with torch.no_grad():
        expected = module.eval()(*inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = compiled.functions[name](*[t.numpy() for t in inputs], *[p.numpy() for p in params])
    for i, (g, e) in enumerate(zip(got, expected)):
        e = e.double().numpy()
        error = float(np.linalg.norm(g - e) / max(np.linalg.norm(e), 1e-30))
        ok = np.isfinite(g).all() and error <= tolerance
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name:18} output {i}: rel. error {error:.1e} "
              f"(tolerance {tolerance:g}); {report['kernels']} kernels, "
              f"{report['unfused_launches']} unfused launches")

# An op the dialect does not cover is named in the error.
try:
    fx.import_module(lambda x: torch.cumsum(x, 0), (randn(4, 4),), name="bad")
    print("FAIL cumsum was accepted")
    failures += 1
except fx.UnsupportedOpError as e:
    ok = "cumsum" in str(e)
    failures += not ok
    print(f"{'ok  ' if ok else 'FAIL'} unsupported op: {e}")

print(f"{failures} failures")
sys.exit(1 if failures else 0)
