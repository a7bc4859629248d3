# The C++ call path (python/fusion/launch.cpp), which fusion.cuda takes for
# calls like one checked before, run here on a CPU library with CPU torch
# tensors (the same code; only the stream is CUDA's): a call is served only
# when its inputs have a remembered signature and start on 16-byte
# boundaries, and outputs passed in only when they fit (small calls' outputs
# share one allocation, apart; large calls' do not); everything else
# comes back as None for the checked path. Served calls match float64 on
# fresh inputs (allocated outputs, and passed outputs poisoned with NaN);
# an error the runtime reports comes back as False; a function with more
# arguments than the C++ path calls is not served.
#
# REQUIRES: torch-compile
# RUN: rm -rf %t && mkdir -p %t
# RUN: env FUSION_CACHE_DIR=%t/cache %fusion_python %s %fusion_obj_root %t

import ctypes
import os
import sys

import torch

from fusion import cpu, launch, testing

build_dir, work_dir = sys.argv[1:3]
source = os.path.join(work_dir, "calls.mlir")
many = 40  # arguments of @many: more than the C++ path calls
with open(source, "w") as f:
    f.write("""
func.func @add_exp(%a: tensor<?x8xf32>, %b: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?xf32>) {
  %0 = fusion.add %a, %b : tensor<?x8xf32>
  %1 = fusion.exp %0 : tensor<?x8xf32>
  %2 = fusion.reduce_sum %0 axes = [1] : tensor<?x8xf32> -> tensor<?xf32>
  return %1, %2 : tensor<?x8xf32>, tensor<?xf32>
}
""")
    arguments = ", ".join(f"%a{i}: tensor<4xf32>" for i in range(many - 1))
    f.write(f"func.func @many({arguments}) -> tensor<4xf32> {{\n"
            "  %0 = fusion.add %a0, %a1 : tensor<4xf32>\n"
            "  return %0 : tensor<4xf32>\n}\n")
library = os.path.join(work_dir, "calls.so")
cpu.build(source, library, build_dir)
signatures = cpu.read_signatures(library)
lib = ctypes.CDLL(library)

if launch.extension() is None:
    print("FAIL the C++ call path was not built")
    sys.exit(1)


def known_calls(name):
    inputs, outputs, _ = signatures[name]
    dtypes = [torch.float32] * len(outputs)
    return launch.KnownCalls(getattr(lib, "_mlir_ciface_" + name), None,
                             lib.fusion_cpu_last_error, [len(t.shape) for t in inputs + outputs],
                             len(inputs), dtypes)


def reference(a, b):
    s = a.double() + b.double()
    return s.exp(), s.sum(1)


failures = []


def expect(name, ok, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {name} {detail}")
    if not ok:
        failures.append(name)


calls = known_calls("add_exp")
expect("add_exp is served from C++", bool(calls))
a, b = torch.randn(5, 8), torch.randn(5, 8)
expect("an unknown call is not served", calls.call((a, b), None) is None)

# What the checked path does for it, then remembers.
calls.remember((a, b), [(5, 8), (5,)], torch.device("cpu"))
for attempt in range(2):
    a, b = torch.randn(5, 8), torch.randn(5, 8)
    made = calls.call((a, b), None)
    expect(f"a known call is served ({attempt})", isinstance(made, tuple) and len(made) == 2)
    if isinstance(made, tuple):
        for got, want, what in zip(made, reference(a, b), ("exp", "sum")):
            testing.check(f"known call {attempt} {what}", got.numpy(), want.numpy(), "f32", failures)

# Outputs of a small call share one allocation, apart; a large call's
# (over 1 MiB in all) are allocated each alone. Either way, independent.
for rows in (5, 40000):
    a, b = torch.randn(rows, 8), torch.randn(rows, 8)
    calls.remember((a, b), [(rows, 8), (rows,)], torch.device("cpu"))
    made = calls.call((a, b), None)
    if not isinstance(made, tuple):
        expect(f"{rows} rows: served", False)
        continue
    want = reference(a, b)
    for got, ref, what in zip(made, want, ("exp", "sum")):
        testing.check(f"{rows} rows {what}", got.numpy(), ref.numpy(), "f32", failures)
    shared = made[0].untyped_storage().data_ptr() == made[1].untyped_storage().data_ptr()
    expect(f"{rows} rows: outputs {'share' if rows == 5 else 'do not share'} an allocation",
           shared == (rows == 5))
    expect(f"{rows} rows: outputs on 16-byte boundaries",
           all(t.data_ptr() % 16 == 0 for t in made))
    made[0].fill_(float("nan"))
    testing.check(f"{rows} rows: sum untouched by a write to exp", made[1].numpy(),
                  want[1].numpy(), "f32", failures)

# Outputs passed in, poisoned: written in place and returned themselves.
a, b = torch.randn(5, 8), torch.randn(5, 8)
given = (torch.full((5, 8), float("nan")), torch.full((5,), float("nan")))
made = calls.call((a, b), given)
expect("passed outputs are the results", isinstance(made, tuple) and all(
    x is y for x, y in zip(made, given)))
for got, want, what in zip(given, reference(a, b), ("exp", "sum")):
    testing.check(f"passed outputs {what}", got.numpy(), want.numpy(), "f32", failures)

# Not served: another shape, a view off a 16-byte boundary, other strides,
# another dtype, a non-tensor, too few inputs, outputs that do not fit.
flat = torch.randn(5 * 8 + 1)
not_served = {
    "another shape": ((torch.randn(6, 8), torch.randn(6, 8)), None),
    "an input off a boundary": ((flat[1:].view(5, 8), b), None),
    "other strides": ((torch.randn(8, 5).t(), b), None),
    "another dtype": ((a.double(), b), None),
    "a non-tensor": ((a, 1.0), None),
    "too few inputs": ((a,), None),
    "an output of another shape": ((a, b), (torch.empty(5, 8), torch.empty(4))),
    "an output of another dtype": ((a, b), (torch.empty(5, 8), torch.empty(5, dtype=torch.float64))),
    "a strided output": ((a, b), (torch.empty(8, 5).t(), torch.empty(5))),
    "an output off a boundary": ((a, b), (torch.empty(5 * 8 + 1)[1:].view(5, 8), torch.empty(5))),
    "too few outputs": ((a, b), (torch.empty(5, 8),)),
}
for what, (inputs, outputs) in not_served.items():
    expect(f"not served: {what}", calls.call(inputs, outputs) is None)

# A runtime error comes back as False (a signature remembered with sizes
# the compiled function refuses: the checked path never remembers such).
calls.remember((torch.randn(3, 8), torch.randn(4, 8)), [(3, 8), (3,)], torch.device("cpu"))
expect("a refused call comes back as False",
       calls.call((torch.randn(3, 8), torch.randn(4, 8)), None) is False)
error = lib.fusion_cpu_last_error
error.restype = ctypes.c_char_p
message = error()
expect("the runtime kept the error", bool(message), (message or b"").decode())
lib.fusion_cpu_clear_error()
expect("the known call still runs after it",
       isinstance(calls.call((torch.randn(5, 8), torch.randn(5, 8)), None), tuple))

expect(f"@many ({many} arguments) is not served from C++", not known_calls("many"))

print(f"{len(failures)} failures: {failures}")
sys.exit(1 if failures else 0)
