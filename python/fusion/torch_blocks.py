"""torch.nn blocks the PyTorch front end is checked on (tests here with
torch 1.13, and benchmarks/gpu/fx_export.py with the GPU machine's torch
2.x): `blocks()` gives (name, module, example inputs, tolerance) with fresh
random parameters and inputs."""

import torch
from torch import nn


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


def blocks():
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
    return blocks
