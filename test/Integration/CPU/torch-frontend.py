# The PyTorch front end on real torch.nn blocks (an MLP, norms, attention
# written out GPT-2 style with views, splits, indexing and masks): each is
# traced with torch.fx
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

from fusion import cpu, fx, testing, torch_blocks

build_dir, work = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
seed = testing.fresh_seed()
torch.manual_seed(seed)
print(f"torch {torch.__version__}")


blocks = torch_blocks.blocks()
failures = 0
for name, module, inputs, tolerance in blocks:
    text, params = fx.import_module(module, inputs, name=name)
    source = os.path.join(work, f"{name}.mlir")
    with open(source, "w") as f:
        f.write(text)
    compiled = cpu.compile(source, build_dir, fuse=True, work_dir=work, debug=True)
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

def refused(label, fn, words):
    """Whether importing `fn` raises UnsupportedOpError saying `words`."""
    try:
        fx.import_module(fn, (torch.randn(4, 4),), name="bad")
        print(f"FAIL {label}: accepted")
        return False
    except fx.UnsupportedOpError as e:
        ok = words in str(e)
        print(f"{'ok  ' if ok else 'FAIL'} {label}: {e}")
        return ok


# An op the dialect does not cover is named in the error; indexing by a
# tensor (a boolean mask here) is not basic indexing.
failures += not refused("unsupported op", lambda x: torch.cumsum(x, 0), "cumsum")
failures += not refused("indexing by a tensor", lambda x: x[x > 0], "indexing by")

print(f"{failures} failures")
sys.exit(1 if failures else 0)
