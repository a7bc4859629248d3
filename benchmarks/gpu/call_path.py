#!/usr/bin/env python3
"""The Python call path on the GPU machine (call_path.mlir, compiled into
the bundle): calls on PyTorch's current stream (ordered with the user's work
on a side stream), capture into a CUDA graph and replay with new inputs in
the same buffers, a three-kernel function with a library matmul, known
calls (made from C++, fusion.launch) beside checked ones, checked against
PyTorch in float64; then host time per call: one kernel, called as users
call it (outputs allocated) and with preallocated outputs, through the C++
path and through the checked Python path alone (FUSION_CALLS=python),
replayed in a CUDA graph, and the floors (the entry alone, an empty kernel
launched through ctypes, torch.add). Prints a table last; call_path.json
into $OUT."""

import json
import os
import sys
import time

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from fusion import cpu, cuda, launch  # noqa: E402

TOLERANCE = 1e-2  # bf16 outputs, relative norm error


def reference(x, g, w):
    x, g, w = x.double(), g.double(), w.double()
    n = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * g
    p = n @ w
    return p * torch.sigmoid(p)


def error(out, ref):
    out = out.double()
    if torch.isnan(out).any():
        return float("inf")
    return float((out - ref).norm() / ref.norm())


def inputs(rows):
    return (torch.randn(rows, 1024, device="cuda").bfloat16(),
            torch.rand(1024, device="cuda").bfloat16() + 0.5,
            (torch.randn(1024, 512, device="cuda") / 32).bfloat16())


def median_host_us(f, calls, sync_each):
    f()
    torch.cuda.synchronize()
    times = []
    for _ in range(calls):
        if sync_each:
            torch.cuda.synchronize()
        start = time.perf_counter()
        f()
        times.append((time.perf_counter() - start) * 1e6)
    torch.cuda.synchronize()
    times.sort()
    return times[len(times) // 2]


def bare_launch():
    """A call that launches an empty kernel with cuLaunchKernel through
    ctypes on PyTorch's current stream: the floor of a launch from Python."""
    import ctypes
    driver = ctypes.CDLL("libcuda.so.1")
    ptx = (b".version 8.0\n.target sm_90\n.address_size 64\n"
           b".visible .entry empty() { ret; }\n")
    module, function = ctypes.c_void_p(), ctypes.c_void_p()
    assert driver.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(ptx)) == 0
    assert driver.cuModuleGetFunction(ctypes.byref(function), module, b"empty") == 0
    launch_kernel = driver.cuLaunchKernel
    launch_kernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
    stream = torch.cuda.current_stream().cuda_stream
    return lambda: launch_kernel(function, 1, 1, 1, 32, 1, 1, 0, stream, None, None)


def main():
    module = cuda.load(os.path.join(here, "call_path.fused.so"))
    debug = cuda.load(os.path.join(here, "call_path.fused.so"), debug=True)
    f = module.functions["norm_matmul_silu"]
    results, lines = {}, []

    def record(name, ok, detail):
        results[name] = dict(ok=ok, detail=detail)
        lines.append(f"{'ok  ' if ok else 'FAIL'} {name:40} {detail}")

    # Checked with poisoned outputs, then as users call it.
    for mod, label in ((debug, "debug (poisoned outputs)"), (module, "as called")):
        x, g, w = inputs(77)
        (y,) = mod.functions["norm_matmul_silu"](x, g, w)
        torch.cuda.synchronize()
        e = error(y, reference(x, g, w))
        record(f"three kernels, {label}", e <= TOLERANCE, f"rel.err {e:.1e}")

    # Views that start inside a vector (x[1:] of a flat buffer): inputs are
    # copied to an aligned buffer, an output so placed is refused.
    x, g, w = inputs(77)
    flat = torch.empty(x.numel() + 1, dtype=x.dtype, device="cuda")
    shifted = flat[1:].view(x.shape)
    shifted.copy_(x)
    (y,) = debug.functions["norm_matmul_silu"](shifted, g, w)
    torch.cuda.synchronize()
    e = error(y, reference(x, g, w))
    record("input view off a 16-byte boundary", e <= TOLERANCE, f"rel.err {e:.1e}")
    out = torch.empty(y.numel() + 1, dtype=y.dtype, device="cuda")[1:].view(y.shape)
    try:
        f(x, g, w, outputs=[out])
        record("output view off a 16-byte boundary", False, "accepted")
    except cpu.SignatureError as ex:
        record("output view off a 16-byte boundary", True, f"refused: {ex}")

    # Known calls (made from C++): a call like one checked before (the same
    # dtypes, shapes, strides and device) skips the signature checks, but
    # not the alignment of its buffers nor a changed signature. Outputs
    # passed in are poisoned; allocated ones cannot be (checked anyway).
    x, g, w = inputs(77)
    f(x, g, w)
    x2 = torch.randn_like(x)
    poisoned = torch.full((77, 512), float("nan"), dtype=torch.bfloat16, device="cuda")
    (y,) = f(x2, g, w, outputs=[poisoned])
    torch.cuda.synchronize()
    e = error(y, reference(x2, g, w))
    record("known call, new input, poisoned output", e <= TOLERANCE and y is poisoned,
           f"rel.err {e:.1e}")
    (y,) = f(x2, g, w)
    torch.cuda.synchronize()
    e = error(y, reference(x2, g, w))
    record("known call, new input, allocated output", e <= TOLERANCE, f"rel.err {e:.1e}")
    flat = torch.empty(x.numel() + 8, dtype=x.dtype, device="cuda")
    shifted = flat[1:1 + x.numel()].view(x.shape)
    shifted.copy_(x2)
    (y,) = f(shifted, g, w)
    torch.cuda.synchronize()
    e = error(y, reference(x2, g, w))
    record("known call, input view off a boundary", e <= TOLERANCE, f"rel.err {e:.1e}")
    try:
        f(x.float(), g, w)
        record("known shapes, wrong dtype", False, "accepted")
    except cpu.SignatureError as ex:
        record("known shapes, wrong dtype", True, f"refused: {ex}")

    # A side stream: a long sleep, then the input is overwritten, then the
    # call. Run on another stream, the call would read the old input. First
    # a new signature (the checked Python path), then a known one (C++).
    for rows, path in ((64, "checked call"), (64, "known call")):
        x, g, w = inputs(rows)
        new = torch.randn_like(x)
        side = torch.cuda.Stream()
        torch.cuda.synchronize()
        with torch.cuda.stream(side):
            torch.cuda._sleep(500_000_000)
            x.copy_(new)
            (y,) = f(x, g, w)
        side.synchronize()
        e = error(y, reference(new, g, w))
        record(f"{path} ordered on torch.cuda.stream(s)", e <= TOLERANCE, f"rel.err {e:.1e}")

    # CUDA graph: warm up on a side stream, capture, replay with new inputs
    # copied into the captured buffers.
    xs, gs, ws = inputs(32)
    warm = torch.cuda.Stream()
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm):
        for _ in range(3):
            f(xs, gs, ws)
    torch.cuda.current_stream().wait_stream(warm)
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            (ys,) = f(xs, gs, ws)
        for attempt in range(3):
            x, g, w = inputs(32)
            xs.copy_(x), gs.copy_(g), ws.copy_(w)
            ys.fill_(float("nan"))
            graph.replay()
            torch.cuda.synchronize()
            e = error(ys, reference(x, g, w))
            record(f"CUDA graph replay {attempt + 1}", e <= TOLERANCE, f"rel.err {e:.1e}")
    except Exception as ex:  # reported as a failure, not hidden
        record("CUDA graph capture", False, f"error: {str(ex).splitlines()[0][:120]}")

    # The one-kernel decode function (two outputs, sharing one allocation
    # when made from C++): a checked call, then known calls on new inputs.
    dec = module.functions["add_rmsnorm_decode"]
    for attempt in range(3):
        xd = torch.randn(16, 4096, device="cuda").bfloat16()
        rd = torch.randn_like(xd)
        wd = torch.rand(4096, device="cuda").bfloat16()
        sd, yd = dec(xd, rd, wd)
        torch.cuda.synchronize()
        s64 = xd.double() + rd.double()
        y64 = s64 * torch.rsqrt(s64.pow(2).mean(-1, keepdim=True) + 1e-6) * wd.double()
        e = max(error(sd, s64), error(yd, y64))
        record(f"decode call {attempt + 1} ({'checked' if attempt == 0 else 'known'})",
               e <= TOLERANCE, f"rel.err {e:.1e}")

    # Host time per call: one kernel, 16x4096 bf16, through the C++ path
    # (known calls) and through the checked Python path only
    # (FUSION_CALLS=python, the path where the C++ one cannot be built).
    record("known calls are made from C++", launch.extension() is not None and bool(f._known),
           f"fusion_launch {'built' if launch.extension() else 'not built'}")
    launch.extension.cache_clear()
    os.environ["FUSION_CALLS"] = "python"
    python_only = cuda.load(os.path.join(here, "call_path.fused.so"))
    del os.environ["FUSION_CALLS"]
    launch.extension.cache_clear()
    a = torch.randn(16, 4096, device="cuda").bfloat16()
    r = torch.randn_like(a)
    wn = torch.rand(4096, device="cuda").bfloat16()
    timings = {}
    for label, mod in (("C++", module), ("Python", python_only)):
        d = mod.functions["add_rmsnorm_decode"]
        outs = d(a, r, wn)
        timings.update({
            f"{label}: as called, GPU idle": median_host_us(lambda: d(a, r, wn), 200, True),
            f"{label}: outputs=, GPU idle": median_host_us(lambda: d(a, r, wn, outputs=outs), 200, True),
            f"{label}: as called, back to back": median_host_us(lambda: d(a, r, wn), 2000, False),
            f"{label}: outputs=, back to back": median_host_us(
                lambda: d(a, r, wn, outputs=outs), 2000, False),
        })
    # Three kernels (a row kernel, a library matmul, an elementwise kernel).
    x3, g3, w3 = inputs(16)
    f(x3, g3, w3)
    timings["C++: three kernels as called, back to back"] = median_host_us(
        lambda: f(x3, g3, w3), 2000, False)
    # The floors: the compiled function's entry alone through ctypes (its
    # descriptors filled by a checked call before), an empty kernel through
    # cuLaunchKernel from ctypes, and a one-kernel PyTorch op.
    d = python_only.functions["add_rmsnorm_decode"]
    d(a, r, wn, outputs=outs)
    pointers = d._arguments()[1]
    timings["compiled entry alone (ctypes), back to back"] = median_host_us(
        lambda: d._entry(*pointers), 2000, False)
    bare = bare_launch()
    timings["empty kernel, cuLaunchKernel (ctypes), back to back"] = median_host_us(
        bare, 2000, False)
    timings["torch.add (one PyTorch kernel), back to back"] = median_host_us(
        lambda: torch.add(a, r), 2000, False)
    d = module.functions["add_rmsnorm_decode"]
    graph1 = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph1):
        d(a, r, wn, outputs=outs)
    timings["graph replay, back to back"] = median_host_us(graph1.replay, 2000, False)
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(1000):
        graph1.replay()
    stop.record()
    torch.cuda.synchronize()
    timings["graph replay, GPU time per replay"] = start.elapsed_time(stop) * 1e3 / 1000
    for k, v in timings.items():
        lines.append(f"     decode one kernel: {k:36} {v:7.2f} us")
    out_dir = os.environ.get("OUT", ".")
    with open(os.path.join(out_dir, "call_path.json"), "w") as fh:
        json.dump(dict(checks=results, host_us=timings, device=torch.cuda.get_device_name()), fh, indent=1)
    print(torch.cuda.get_device_name())
    print("\n".join(lines))
    failed = sum(not v["ok"] for v in results.values())
    print(f"call path checks: {len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
