# torch.compile(backend="fusion") on the CPU: the backend's blocks
# (torch_blocks.compile_blocks: MLPs, attention with its projections and
# views, q/k/v split from one projection, grouped-query and rotary heads, a
# Llama decoder layer with causal attention) at three sequence lengths,
# every op compiled, and an in-place AdamW step, against the same code in
# float64 (f32, relative error: 1e-4 for blocks with products, summed in
# another order; 1e-5 for the step). Also: Dynamo's dynamic sizes take one
# library (the third length compiles nothing), every attention block's
# scores, softmax and product form one attention kernel, a second process
# finds every library in the disk cache, unsupported ops are listed in one
# log line and run with PyTorch, a graph that writes its inputs and has an
# unsupported op runs whole with PyTorch, gradients fall back to PyTorch,
# bf16 runs; mm, bmm, addmm, baddbmm, nn.RMSNorm and F.rms_norm compile;
# scaled_dot_product_attention (causal from positions, float and boolean
# masks, grouped-query heads by enable_gqa) is one attention kernel, causal
# at dynamic lengths too (queries and keys of different lengths).
#
# REQUIRES: torch-compile
# RUN: rm -rf %t && mkdir -p %t
# RUN: env FUSION_CACHE_DIR=%t/cache %fusion_python %s %fusion_obj_root %t

import copy
import io
import logging
import os
import subprocess
import sys

import torch

import fusion.backend
from fusion import cpu, testing, torch_blocks

build_dir, work = sys.argv[1:3]
child = len(sys.argv) > 3  # the second process: the same blocks, cache only
seed = testing.fresh_seed()
torch.manual_seed(seed)
print(f"torch {torch.__version__}")
cache = os.environ["FUSION_CACHE_DIR"]
backend = fusion.backend.make_backend(build_dir=build_dir, debug=True)

records = io.StringIO()
handler = logging.StreamHandler(records)
logging.getLogger("fusion").addHandler(handler)
logging.getLogger("fusion").setLevel(logging.INFO)
failures = 0


def check(ok, what):
    global failures
    failures += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {what}")


def relative_error(got, expected):
    got, expected = got.double(), expected.double()
    return float((got - expected).norm() / max(float(expected.norm()), 1e-30))


def libraries():
    return sorted(e for e in os.listdir(cache) if not e.startswith("compiling-")) \
        if os.path.isdir(cache) else []


def log_lines():
    lines = records.getvalue().splitlines()
    records.seek(0)
    records.truncate()
    return lines


for name, module, make_inputs, tolerance in torch_blocks.compile_blocks():
    torch._dynamo.reset()
    module.eval()
    reference = copy.deepcopy(module).double()
    compiled = torch.compile(module, backend=backend)
    before = libraries()
    counts = []
    fallbacks = {}
    with torch.no_grad():
        for seq in (8, 11, 23):
            inputs = make_inputs(seq)
            got = compiled(*inputs)
            fallbacks[seq] = [line for line in log_lines() if "run with PyTorch" in line]
            expected = reference(*[x.double() for x in inputs])
            error = relative_error(got, expected)
            eager = relative_error(module(*inputs), expected)
            check(error <= tolerance and torch.isfinite(got).all(),
                  f"{name} seq {seq}: rel. error {error:.1e} (eager {eager:.1e}, tolerance {tolerance:g})")
            counts.append(len(libraries()))
    # Views included (multi_head_attention's), at the static first length
    # and the dynamic ones after it.
    every = [line for lines in fallbacks.values() for line in lines]
    check(not every, f"{name}: every op compiled ({every or 'no fallback'})")
    if not child:
        # Seq 8 static, seq 11 dynamic; seq 23 reuses the dynamic library.
        check(counts[2] == counts[1] > len(before),
              f"{name}: libraries after each length {counts} (from {len(before)}): the third compiled none")
    if not child and ("attention" in name or "decoder" in name):
        # The scores, their softmax and the product with V: one kernel.
        kinds = set()
        for entry in set(libraries()) - set(before):
            report = cpu.report(os.path.join(cache, entry, "part.mlir"), build_dir)
            kinds.update(k["kind"] for f in report["functions"] for k in f["kernel_list"])
        check("attention" in kinds, f"{name}: an attention kernel (kernels {sorted(kinds)})")

# AdamW, every update in place on p, m and v.
torch._dynamo.reset()
p, g, m, v = (torch.randn(1000) for _ in range(4))
v = v.abs()
expected = [t.double() for t in (p, g, m, v)]
torch_blocks.adamw_step(*expected)
step = torch.compile(torch_blocks.adamw_step, backend=backend)
returned = step(p, g, m, v)
for label, got, want in (("p", p, expected[0]), ("m", m, expected[2]), ("v", v, expected[3])):
    error = relative_error(got, want)
    check(error <= 1e-5, f"adamw {label} written in place: rel. error {error:.1e}")
check(returned is p, "adamw returns its input p itself")
# A second step: the kernel writes p, m and v itself (fusion-compile's
# in_place), nothing is copied back.
expected = [t.double() for t in (p, g, m, v)]
torch_blocks.adamw_step(*expected)
copies = []
plain_copy = torch.Tensor.copy_


def counted_copy(self, *args, **kwargs):
    copies.append(self.shape)
    return plain_copy(self, *args, **kwargs)


torch.Tensor.copy_ = counted_copy
try:
    step(p, g, m, v)
finally:
    torch.Tensor.copy_ = plain_copy
errors = [relative_error(got, want) for got, want in ((p, expected[0]), (m, expected[2]), (v, expected[3]))]
check(max(errors) <= 1e-5 and not copies,
      f"adamw step 2 written in place by the kernel: rel. errors {max(errors):.1e}, {len(copies)} copies")
lines = log_lines()
check(not [line for line in lines if "run with PyTorch" in line], "adamw: every op compiled")

if not child:
    # A graph that writes an input and has an op the dialect lacks runs
    # whole with PyTorch, correctly.
    torch._dynamo.reset()

    def write_then_scan(p, g):
        p.add_(g)
        return torch.cumsum(p * 2, 0)

    p, g = torch.randn(64), torch.randn(64)
    p_ref = p.clone()
    got = torch.compile(write_then_scan, backend=backend)(p, g)
    expected = write_then_scan(p_ref, g)
    lines = log_lines()
    check(torch.allclose(got, expected) and torch.allclose(p, p_ref),
          "a writing graph with cumsum: right result and write")
    check(any("cumsum" in line and "writes its inputs" in line for line in lines),
          f"... and the log says why it ran with PyTorch: {lines[-1:]}")

    # A view that merges two dynamic sizes (flatten of batch and length) is
    # not a fusion.reshape: it runs with PyTorch, listed in one line, and the
    # parts around it compile.
    torch._dynamo.reset()

    def flatten_rows(x):
        return torch.exp(x).flatten(0, 1) * 2

    flat = torch.compile(flatten_rows, backend=backend)
    with torch.no_grad():
        for seq in (8, 11):
            x = torch.randn(2, seq, 16)
            check(torch.allclose(flat(x), flatten_rows(x)), f"flatten_rows seq {seq}: right result")
    lines = [line for line in log_lines() if "run with PyTorch" in line]
    check(lines and "Tensor.flatten" in lines[-1] and all(len(f.splitlines()) == 1 for f in lines),
          f"flatten_rows, dynamic: unsupported ops listed in one line: {lines[-1:]}")

    # An in-place write through a view, or to a tensor a view was taken of,
    # would have to reach the other: such a graph runs with PyTorch,
    # correctly, and the log says why.
    def write_through_view(x):
        y = x.view(4, 4)
        y.mul_(2)
        return x + 1, y.exp()

    def write_viewed(x):
        y = x.transpose(0, 1)
        x.add_(1)
        return y * 3

    for fn, shape in ((write_through_view, (16,)), (write_viewed, (4, 4))):
        torch._dynamo.reset()
        x = torch.randn(*shape)
        x_ref = x.clone()
        with torch.no_grad():
            got = torch.compile(fn, backend=backend)(x)
        expected = fn(x_ref)
        got, expected = (t if isinstance(t, tuple) else (t,) for t in (got, expected))
        lines = log_lines()
        check(all(torch.allclose(a, b) for a, b in zip(got, expected)) and torch.equal(x, x_ref),
              f"{fn.__name__}: right results and writes")
        check(any("a view or viewed tensor" in line for line in lines),
              f"... and the log says why it ran with PyTorch: {lines[-1:]}")

    # Gradients: PyTorch runs the graph and backward works.
    torch._dynamo.reset()
    block = torch_blocks.LayerNormGeluBlock(32, 64)
    x = torch.randn(3, 5, 32)
    y = torch.compile(block, backend=backend)(x)
    y.sum().backward()
    lines = log_lines()
    check(y.requires_grad and block.fc.weight.grad is not None
          and any("gradients" in line for line in lines), "with gradients the graph runs with PyTorch")

    # bf16.
    torch._dynamo.reset()
    block = torch_blocks.LayerNormGeluBlock(64, 128).bfloat16().eval()
    reference = copy.deepcopy(block).double()
    x = torch.randn(4, 16, 64).bfloat16()
    with torch.no_grad():
        got = torch.compile(block, backend=backend)(x)
        error = relative_error(got, reference(x.double()))
        eager = relative_error(block(x), reference(x.double()))
    check(got.dtype == torch.bfloat16 and error <= 1e-2,
          f"bf16 layernorm_gelu_block: rel. error {error:.1e} (eager {eager:.1e}, tolerance 1e-2)")

    # scaled_dot_product_attention, static shapes: causal (the mask from
    # positions, none in memory), a float mask, a boolean one, grouped
    # heads (enable_gqa, or K and V repeated); each one attention kernel,
    # no op left to PyTorch.
    F = torch.nn.functional

    def sdpa_causal(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    def sdpa_masked(q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.3)

    def sdpa_grouped_causal(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)

    def sdpa_grouped_masked(q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)

    def repeat_kv(x, group):  # Hugging Face's
        b, heads, n, d = x.shape
        return x[:, :, None, :, :].expand(b, heads, group, n, d).reshape(b, heads * group, n, d)

    def sdpa_repeated_heads(q, k, v):
        # K repeated as repeat_kv does, V by repeat_interleave: read as
        # grouped heads, each once, no copy G times wider.
        return F.scaled_dot_product_attention(q, repeat_kv(k, 3), v.repeat_interleave(3, dim=1),
                                              is_causal=True)

    randn = torch_blocks.randn
    keep = torch.rand(24, 40) < 0.7
    keep[:, 0] = True  # every row sees a key
    sdpa_cases = [
        ("causal", sdpa_causal, (randn(2, 4, 24, 16), randn(2, 4, 24, 16), randn(2, 4, 24, 8))),
        ("float mask", sdpa_masked, (randn(2, 4, 24, 16), randn(2, 4, 40, 16), randn(2, 4, 40, 8),
                                     randn(24, 40))),
        ("boolean mask", sdpa_masked, (randn(2, 4, 24, 16), randn(2, 4, 40, 16),
                                       randn(2, 4, 40, 8), keep)),
        # Grouped-query heads by enable_gqa: 6 query heads on 2 K/V heads,
        # causal, and with a float mask per query head.
        ("enable_gqa causal", sdpa_grouped_causal,
         (randn(2, 6, 24, 16), randn(2, 2, 24, 16), randn(2, 2, 24, 8))),
        ("enable_gqa float mask per head", sdpa_grouped_masked,
         (randn(2, 6, 24, 16), randn(2, 2, 40, 16), randn(2, 2, 40, 8), randn(2, 6, 24, 40))),
        ("K and V heads repeated (repeat_kv, repeat_interleave)", sdpa_repeated_heads,
         (randn(2, 6, 24, 16), randn(2, 2, 24, 16), randn(2, 2, 24, 8))),
    ]
    for label, fn, inputs in sdpa_cases:
        torch._dynamo.reset()
        before = libraries()
        with torch.no_grad():
            got = torch.compile(fn, backend=backend, dynamic=False)(*inputs)
        expected = fn(*[x.double() if x.is_floating_point() else x for x in inputs])
        error = relative_error(got, expected)
        lines = log_lines()
        kinds = set()
        for entry in set(libraries()) - set(before):
            report = cpu.report(os.path.join(cache, entry, "part.mlir"), build_dir)
            kinds.update(k["kind"] for f in report["functions"] for k in f["kernel_list"])
        check(error <= 1e-4 and kinds == {"attention"}
              and not any("run with PyTorch" in line for line in lines),
              f"sdpa {label}: rel. error {error:.1e}, kernels {sorted(kinds)}, "
              f"fallbacks {[line for line in lines if 'run with PyTorch' in line]}")

    # Matrix products as PyTorch spells them besides matmul: mm, bmm, the
    # method, addmm (GPT-2's Conv1D) and baddbmm with beta and alpha.
    def products(x, w, b, p, q, c):
        return (torch.addmm(b, x, w), torch.mm(x, w), x.matmul(w), torch.bmm(p, q),
                torch.baddbmm(c, p, q, beta=0.5, alpha=2.0),
                torch.baddbmm(c, p, q, beta=0.0))

    torch._dynamo.reset()
    inputs = (randn(24, 16), randn(16, 8), randn(8), randn(3, 24, 16), randn(3, 16, 8),
              randn(3, 24, 8))
    with torch.no_grad():
        got = torch.compile(products, backend=backend, dynamic=False)(*inputs)
    expected = products(*[x.double() for x in inputs])
    errors = [relative_error(g, e) for g, e in zip(got, expected)]
    lines = [line for line in log_lines() if "run with PyTorch" in line]
    check(max(errors) <= 1e-5 and not lines,
          f"mm, bmm, addmm, baddbmm: rel. errors {[f'{e:.1e}' for e in errors]}, fallbacks {lines}")

    # RMSNorm as PyTorch 2.4+ spells it: nn.RMSNorm (a weight, eps None: the
    # dtype's), F.rms_norm without a weight, and with an f32 weight on bf16
    # (computed in f32, returned in bf16, as PyTorch does).
    if hasattr(torch.nn, "RMSNorm"):
        norm = torch.nn.RMSNorm(32)
        with torch.no_grad():
            norm.weight.add_(torch.randn(32) * 0.1)

        def rms_norms(x, xb, w):
            return (norm(x), F.rms_norm(x, (32,), eps=1e-5), F.rms_norm(xb, [32], w, 1e-6))

        torch._dynamo.reset()
        inputs = (randn(4, 9, 32), randn(4, 9, 32).bfloat16(), torch.rand(32) + 0.5)
        with torch.no_grad():
            got = torch.compile(rms_norms, backend=backend, dynamic=False)(*inputs)
            expected = [rms_norms(inputs[0].double(), inputs[1].double(), inputs[2].double())[i]
                        for i in range(3)]
        errors = [relative_error(g, e) for g, e in zip(got, expected)]
        lines = [line for line in log_lines() if "run with PyTorch" in line]
        check(max(errors[:2]) <= 1e-5 and errors[2] <= 1e-2 and got[2].dtype == torch.bfloat16
              and not lines,
              f"nn.RMSNorm, F.rms_norm: rel. errors {[f'{e:.1e}' for e in errors]}, "
              f"dtype {got[2].dtype}, fallbacks {lines}")

    # Causal with dynamic lengths (the positions sized by Q and K): the
    # first lengths static, then one library for every other length, queries
    # and keys of different lengths included; one attention kernel each, no
    # op left to PyTorch.
    torch._dynamo.reset()
    before = libraries()
    causal = torch.compile(sdpa_causal, backend=backend)
    counts = []
    for queries, keys in ((24, 24), (7, 19), (30, 5)):
        q, k, v = randn(2, 4, queries, 16), randn(2, 4, keys, 16), randn(2, 4, keys, 8)
        with torch.no_grad():
            got = causal(q, k, v)
        error = relative_error(got, sdpa_causal(q.double(), k.double(), v.double()))
        lines = [line for line in log_lines() if "run with PyTorch" in line]
        check(error <= 1e-4 and not lines,
              f"sdpa causal, dynamic lengths {queries}x{keys}: rel. error {error:.1e}, "
              f"fallbacks {lines}")
        counts.append(len(libraries()))
    kinds = set()
    for entry in set(libraries()) - set(before):
        report = cpu.report(os.path.join(cache, entry, "part.mlir"), build_dir)
        kinds.update(k["kind"] for f in report["functions"] for k in f["kernel_list"])
    # (The first library may be in the cache already: the static case above.)
    check(counts[2] == counts[1] > counts[0] and kinds == {"attention"},
          f"sdpa causal, dynamic lengths: libraries after each call {counts} (from "
          f"{len(before)}), kernels {sorted(kinds)}")

    # A second process compiles nothing: every library is in the cache.
    before = libraries()
    result = subprocess.run([sys.executable, __file__, build_dir, work, "child"],
                            capture_output=True, text=True)
    print("\n".join("  child: " + line for line in result.stdout.splitlines()))
    check(result.returncode == 0 and libraries() == before,
          f"a second process ran the blocks from the disk cache ({len(before)} libraries, "
          f"{len(libraries())} after)")

print(f"{failures} failures")
sys.exit(1 if failures else 0)
