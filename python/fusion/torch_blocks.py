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


class MaskedHeads(nn.Module):
    """Causal attention written out GPT-2 style, at a fixed size: heads split
    by view and transpose, the future masked with -inf by masked_fill from
    a boolean buffer, dropout (identity in eval mode), heads merged by
    transpose and reshape, the rows flattened and a batch axis put back."""

    def __init__(self, d, heads, batch, length):
        super().__init__()
        self.shape = (batch, length, heads, d // heads)
        self.q, self.k, self.v, self.out = (nn.Linear(d, d) for _ in range(4))
        self.register_buffer("future", torch.ones(length, length).triu(1).bool())

    def forward(self, x):
        b, s, h, e = self.shape
        q, k, v = (t.view(b, s, h, e).transpose(1, 2) for t in (self.q(x), self.k(x), self.v(x)))
        scores = torch.matmul(q, k.transpose(-2, -1)) * e ** -0.5
        scores = scores.masked_fill(self.future, float("-inf"))
        p = nn.functional.dropout(torch.softmax(scores, dim=-1), 0.1, self.training)
        y = torch.matmul(p, v).transpose(1, 2).reshape(b, s, h * e)
        return self.out(y).flatten(0, 1).unsqueeze(0)


class SplitHeads(nn.Module):
    """GPT-2's attention written out, at a fixed size: one projection split
    into q, k and v, the causal mask sliced from a larger boolean buffer,
    the future removed by torch.where and by masked_fill of the inverted
    mask, basic indexing (an Ellipsis slice, an integer that drops an
    axis), and the output chunked in two halves that gate each other."""

    def __init__(self, d, heads, batch, length):
        super().__init__()
        self.shape = (batch, length, heads, d // heads)
        self.c_attn = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d // 2, d)
        self.register_buffer("bias", torch.ones(length + 5, length + 5).tril().bool())

    def forward(self, x):
        b, s, h, e = self.shape
        q, k, v = self.c_attn(x).split(h * e, dim=2)
        q, k, v = (t.view(b, s, h, e).transpose(1, 2) for t in (q, k, v))
        mask = self.bias[:s, :s]
        scores = torch.matmul(q, k.transpose(-2, -1)) * e ** -0.5
        scores = torch.where(mask, scores, torch.full_like(scores, -1e4))
        scores = scores.masked_fill(~mask, float("-inf"))
        y = torch.matmul(torch.softmax(scores, dim=-1), v)
        y = y + q[..., : e // 2].sum(-1, keepdim=True) + k[:, :, -1].mean(-1)[..., None, None]
        a, g = y.chunk(2, dim=-1)
        return self.proj((a * torch.sigmoid(g)).transpose(1, 2).reshape(b, s, h * e // 2))


class GroupedHeads(nn.Module):
    """Grouped-query attention written out as Llama does it, at a fixed
    size: 4 query heads over 2 key/value heads, K repeated by
    repeat_interleave, V by the expand-and-reshape of `repeat_kv`."""

    def __init__(self, d, heads, kv_heads, batch, length):
        super().__init__()
        self.shape = (batch, length, heads, kv_heads, d // heads)
        self.q = nn.Linear(d, d)
        self.kv = nn.Linear(d, 2 * kv_heads * (d // heads))

    def forward(self, x):
        b, s, h, g, e = self.shape
        q = self.q(x).view(b, s, h, e).transpose(1, 2)
        kv = self.kv(x).chunk(2, dim=-1)
        k, v = (t.view(b, s, g, e).transpose(1, 2) for t in (kv[0], kv[1]))
        k = k.repeat_interleave(h // g, dim=1)
        v = v[:, :, None, :, :].expand(b, g, h // g, s, e).reshape(b, h, s, e)
        p = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) * e ** -0.5, dim=-1)
        return torch.matmul(p, v).transpose(1, 2).reshape(b, s, h * e)


def randn(*shape):
    return torch.randn(*shape) * 1.5


def blocks():
    blocks = [
        ("prenorm_mlp", PreNormMLP(64, 256), (randn(4, 16, 64),), 1e-4),
        ("layernorm_gelu", LayerNormGelu(96), (randn(8, 96),), 1e-5),
        ("rmsnorm_residual", RMSNormResidual(128), (randn(6, 128), randn(6, 128)), 1e-5),
        ("attention_scores", SoftmaxAttentionScores(), (randn(2, 32, 64), randn(2, 32, 64)), 1e-4),
        ("masked_heads", MaskedHeads(32, 4, 2, 16), (randn(2, 16, 32),), 1e-4),
        ("split_heads", SplitHeads(32, 4, 2, 16), (randn(2, 16, 32),), 1e-4),
        ("grouped_heads", GroupedHeads(32, 4, 2, 2, 16), (randn(2, 16, 32),), 1e-4),
    ]
    for block in blocks:
        for p in block[1].parameters():  # not the default init: random biases, scales
            with torch.no_grad():
                p.add_(torch.randn_like(p) * 0.1)
    return blocks


# -- torch.compile(backend="fusion") ------------------------------------------
# The backend's blocks (tests on the CPU, benchmarks/gpu/compile_check.py on
# the GPU): each runs at several sequence lengths, so Dynamo makes them
# dynamic after the first.

class RMSNormMLP(nn.Module):
    """x + down(silu(gate(h)) * up(h)), h = rms_norm(x) * weight: a
    Llama-style MLP block."""

    def __init__(self, d, hidden, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps
        self.gate = nn.Linear(d, hidden, bias=False)
        self.up = nn.Linear(d, hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight
        return x + self.down(nn.functional.silu(self.gate(h)) * self.up(h))


class AttentionProjections(nn.Module):
    """One head of attention with its projections:
    out(softmax(q k^T / sqrt(d)) v), q, k, v = x Wq, x Wk, x Wv."""

    def __init__(self, d):
        super().__init__()
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.out = nn.Linear(d, d)
        self.scale = d ** -0.5

    def forward(self, x):
        scores = torch.matmul(self.q(x), self.k(x).transpose(-2, -1)) * self.scale
        return self.out(torch.matmul(torch.softmax(scores, dim=-1), self.v(x)))


class MultiHeadAttention(AttentionProjections):
    """The same with heads split by view and merged by reshape: each a
    fusion.reshape, at the static first length and the dynamic ones after
    it (the batch and length stay whole dimensions)."""

    def __init__(self, d, heads):
        super().__init__(d)
        self.heads = heads
        self.scale = (d // heads) ** -0.5

    def forward(self, x):
        b, s, d = x.shape

        def split(t):
            return t.view(b, s, self.heads, d // self.heads).transpose(1, 2)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) * self.scale, dim=-1)
        return self.out(torch.matmul(scores, v).transpose(1, 2).reshape(b, s, d))


class FusedProjectionAttention(nn.Module):
    """GPT-2-style attention: one projection for q, k and v split along the
    features (Tensor.split of a tensor of dynamic length), heads by view,
    F.scaled_dot_product_attention, the output projection."""

    def __init__(self, d, heads):
        super().__init__()
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.heads = heads

    def forward(self, x):
        b, s, d = x.shape

        def split(t):
            return t.view(b, s, self.heads, d // self.heads).transpose(1, 2)

        q, k, v = self.qkv(x).split(d, dim=2)
        y = nn.functional.scaled_dot_product_attention(split(q), split(k), split(v))
        return self.out(y.transpose(1, 2).reshape(b, s, d))


class GroupedQueryAttention(nn.Module):
    """Llama-style grouped-query heads: K and V projected to fewer heads,
    K repeated as Hugging Face's `repeat_kv` does (`[:, :, None]`, expand,
    reshape), V by `repeat_interleave`, then
    F.scaled_dot_product_attention and the output projection."""

    def __init__(self, d, heads, kv_heads):
        super().__init__()
        self.heads, self.kv_heads, self.head = heads, kv_heads, d // heads
        self.q, self.o = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, kv_heads * self.head, bias=False)
        self.v = nn.Linear(d, kv_heads * self.head, bias=False)

    def forward(self, x):
        b, s, d = x.shape
        groups = self.heads // self.kv_heads
        q = self.q(x).view(b, s, self.heads, self.head).transpose(1, 2)
        k = self.k(x).view(b, s, self.kv_heads, self.head).transpose(1, 2)
        v = self.v(x).view(b, s, self.kv_heads, self.head).transpose(1, 2)
        k = k[:, :, None].expand(b, self.kv_heads, groups, s, self.head).reshape(
            b, self.heads, s, self.head)
        v = v.repeat_interleave(groups, dim=1)
        y = nn.functional.scaled_dot_product_attention(q, k, v)
        return self.o(y.transpose(1, 2).reshape(b, s, d))


def rotate_half(x):
    """Hugging Face's rotary helper: the halves of the last axis swapped,
    the new first half negated (a torch.cat)."""
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rotate_every_two(x):
    """GPT-J's interleaved rotary helper: pairs of neighbours rotated,
    written with strided slices, torch.stack and flatten."""
    return torch.stack((-x[..., 1::2], x[..., ::2]), dim=-1).flatten(-2)


class RotaryAttention(AttentionProjections):
    """Heads with rotary position embeddings applied to q and k (cos and
    sin given per position, as Llama's rotary module computes them), then
    F.scaled_dot_product_attention."""

    def __init__(self, d, heads, rotate=rotate_half):
        super().__init__(d)
        self.heads, self.rotate = heads, rotate

    def forward(self, x, cos, sin):
        b, s, d = x.shape

        def split(t):
            return t.view(b, s, self.heads, d // self.heads).transpose(1, 2)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        q, k = q * cos + self.rotate(q) * sin, k * cos + self.rotate(k) * sin
        y = nn.functional.scaled_dot_product_attention(q, k, v)
        return self.out(y.transpose(1, 2).reshape(b, s, d))


def rotary_inputs(batch, length, d, heads, base=10000.0):
    """x and the rotary cos and sin ([batch, length, head size]) at
    positions 0 .. length - 1."""
    head = d // heads
    inverse = 1.0 / base ** (torch.arange(0, head, 2).float() / head)
    angles = torch.outer(torch.arange(length).float(), inverse)
    angles = torch.cat((angles, angles), dim=-1).expand(batch, length, head)
    return randn(batch, length, d), angles.cos().contiguous(), angles.sin().contiguous()


class LlamaDecoderBlock(nn.Module):
    """A Llama decoder layer: h = x + attention(rms_norm(x)) with rotary q
    and k, grouped-query heads (`repeat_kv`) and causal
    F.scaled_dot_product_attention, then h + the SwiGLU MLP of
    rms_norm(h)."""

    def __init__(self, d, heads, kv_heads, hidden, eps=1e-6):
        super().__init__()
        self.heads, self.kv_heads, self.head, self.eps = heads, kv_heads, d // heads, eps
        self.attention_norm = nn.Parameter(torch.ones(d))
        self.mlp_norm = nn.Parameter(torch.ones(d))
        self.q, self.o = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, kv_heads * self.head, bias=False)
        self.v = nn.Linear(d, kv_heads * self.head, bias=False)
        self.gate = nn.Linear(d, hidden, bias=False)
        self.up = nn.Linear(d, hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)

    def norm(self, x, weight):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * weight

    def forward(self, x, cos, sin):
        b, s, d = x.shape
        groups = self.heads // self.kv_heads
        n = self.norm(x, self.attention_norm)
        q = self.q(n).view(b, s, self.heads, self.head).transpose(1, 2)
        k = self.k(n).view(b, s, self.kv_heads, self.head).transpose(1, 2)
        v = self.v(n).view(b, s, self.kv_heads, self.head).transpose(1, 2)
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k = k[:, :, None].expand(b, self.kv_heads, groups, s, self.head).reshape(
            b, self.heads, s, self.head)
        v = v[:, :, None].expand(b, self.kv_heads, groups, s, self.head).reshape(
            b, self.heads, s, self.head)
        y = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        h = x + self.o(y.transpose(1, 2).reshape(b, s, d))
        m = self.norm(h, self.mlp_norm)
        return h + self.down(nn.functional.silu(self.gate(m)) * self.up(m))


class GatedHalvesMLP(nn.Module):
    """x + down(silu(h[..., :hidden]) * h[..., hidden:]), h = x W: the gated
    MLP as one projection indexed in halves."""

    def __init__(self, d, hidden):
        super().__init__()
        self.hidden = hidden
        self.up = nn.Linear(d, 2 * hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        h = self.up(x)
        return x + self.down(nn.functional.silu(h[..., :self.hidden]) * h[..., self.hidden:])


class LayerNormGeluBlock(nn.Module):
    """gelu(fc(layer_norm(x))), tanh-approximated gelu."""

    def __init__(self, d, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc = nn.Linear(d, hidden)

    def forward(self, x):
        return nn.functional.gelu(self.fc(self.norm(x)), approximate="tanh")


def adamw_step(p, g, m, v, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.01, step=10):
    """One AdamW step written as torch.optim's single-tensor path does it:
    every update in place."""
    p.mul_(1 - lr * weight_decay)
    m.mul_(beta1).add_(g, alpha=1 - beta1)
    v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
    bias1, bias2 = 1 - beta1 ** step, 1 - beta2 ** step
    denom = (v.sqrt() / bias2 ** 0.5).add_(eps)
    p.addcdiv_(m, denom, value=-lr / bias1)
    return p


def compile_blocks(d=64, batch=2, heads=4):
    """(name, module, make_inputs(seq), tolerance) of the backend's test
    blocks with fresh random parameters; make_inputs gives f32 CPU tensors
    of `batch` sequences; the attention blocks have `heads` heads (half as
    many K and V heads where grouped); tolerances are relative (f32; the
    blocks with products sum in another order)."""
    kv_heads = max(1, heads // 2)
    blocks = [
        ("rmsnorm_mlp", RMSNormMLP(d, 3 * d), lambda s: (randn(batch, s, d),), 1e-4),
        ("attention_projections", AttentionProjections(d), lambda s: (randn(batch, s, d),), 1e-4),
        ("layernorm_gelu_block", LayerNormGeluBlock(d, 2 * d), lambda s: (randn(batch, s, d),), 1e-4),
        ("multi_head_attention", MultiHeadAttention(d, heads), lambda s: (randn(batch, s, d),), 1e-4),
        ("fused_projection_attention", FusedProjectionAttention(d, heads),
         lambda s: (randn(batch, s, d),), 1e-4),
        ("gated_halves_mlp", GatedHalvesMLP(d, 2 * d), lambda s: (randn(batch, s, d),), 1e-4),
        ("grouped_query_attention", GroupedQueryAttention(d, heads, kv_heads),
         lambda s: (randn(batch, s, d),), 1e-4),
        ("rotary_attention", RotaryAttention(d, heads),
         lambda s: rotary_inputs(batch, s, d, heads), 1e-4),
        ("interleaved_rotary_attention", RotaryAttention(d, heads, rotate_every_two),
         lambda s: rotary_inputs(batch, s, d, heads), 1e-4),
        ("llama_decoder_block", LlamaDecoderBlock(d, heads, kv_heads, 3 * d),
         lambda s: rotary_inputs(batch, s, d, heads), 1e-4),
    ]
    for block in blocks:
        for p in block[1].parameters():
            with torch.no_grad():
                p.add_(torch.randn_like(p) * 0.1)
    return blocks
