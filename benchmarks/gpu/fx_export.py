#!/usr/bin/env python3
"""On the GPU machine (torch 2.x, no MLIR): traces the front end's test
blocks (fusion.torch_blocks) with fusion.fx and writes, per block, the
fusion module, its inputs, parameters and the module's own outputs into
$OUT/fx_export.tgz. Back on the development machine,
`python3 benchmarks/gpu/fx_check.py <dir>` compiles the modules and compares.
"""

import io
import os
import sys
import tarfile

import numpy as np
import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from fusion import fx, torch_blocks  # noqa: E402


def main():
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    out = os.environ.get("OUT", ".")
    with tarfile.open(os.path.join(out, "fx_export.tgz"), "w:gz") as tar:
        def add(name, data):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))

        for name, module, inputs, tolerance in torch_blocks.blocks():
            text, params = fx.import_module(module, inputs, name=name)
            with torch.no_grad():
                expected = module.eval()(*inputs)
            expected = expected if isinstance(expected, tuple) else (expected,)
            arrays = {f"input{i}": t.numpy() for i, t in enumerate(inputs)}
            arrays.update({f"param{i}": p.numpy() for i, p in enumerate(params)})
            arrays.update({f"expected{i}": e.numpy() for i, e in enumerate(expected)})
            buffer = io.BytesIO()
            np.savez(buffer, tolerance=np.array(tolerance), **arrays)
            add(f"{name}.mlir", text.encode())
            add(f"{name}.npz", buffer.getvalue())
            print(f"{name}: traced with torch {torch.__version__}, {len(params)} parameters")


if __name__ == "__main__":
    main()
