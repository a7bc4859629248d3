#!/usr/bin/env python3
"""Runs each workload of one variant once, for ncu to count the DRAM bytes
of every kernel, and compares the counts with fusion-report's prediction:

    ncu --clock-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum \
        --csv python3 run_traffic.py full fused > fused.csv
    python3 run_traffic.py --compare fused.csv full fused

The prediction is report_<scale>.<variant>.json in the bundle (bytes as the
sm_90 kernel plans move them: a streamed row once per pass; scale
`streamed` is softmax over rows the plan streams, `reductions_full` the
reduction workloads). Inputs are
initialized before the measured calls; only kernels named after a workload
are counted."""

import csv
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)


def run(scale, variant):
    import torch
    from fusion import cuda
    dtypes = {"f32": torch.float32, "bf16": torch.bfloat16}
    # `reductions_<scale>`: the reduction workloads (reductions.py).
    stem = scale if scale.startswith("reductions_") else f"workloads_{scale}"
    module = cuda.load(os.path.join(here, f"{stem}.{variant}.so"))
    for name, fn in module.functions.items():
        if any(d is None for t in fn.inputs for d in t.shape):
            continue
        xs = [torch.empty(t.shape, dtype=dtypes[t.element], device="cuda").uniform_(-2, 2)
              for t in fn.inputs]
        outs = [torch.empty(shape, dtype=dtypes[t.element], device="cuda")
                for shape, t in zip(fn.output_shapes(xs), fn.outputs)]
        torch.cuda.synchronize()
        fn(*xs, outputs=outs)
        torch.cuda.synchronize()


def decode(scale):
    """Calls the decode workload (16 rows), fused and unfused, for ncu to
    time each kernel (gpu__time_duration)."""
    import torch
    from fusion import cuda
    for variant in ("fused", "unfused"):
        module = cuda.load(os.path.join(here, f"workloads_{scale}.{variant}.so"))
        fn = module.add_rmsnorm_decode
        xs = [torch.empty([16 if d is None else d for d in t.shape], dtype=torch.bfloat16,
                          device="cuda").uniform_(-2, 2) for t in fn.inputs]
        outs = [torch.empty(shape, dtype=torch.bfloat16, device="cuda")
                for shape in fn.output_shapes(xs)]
        for _ in range(3):  # the last call is the one to read
            fn(*xs, outputs=outs)
        torch.cuda.synchronize()


def decode_times(csv_path):
    """Prints the GPU time of each decode kernel from an ncu csv."""
    times = {}
    with open(csv_path) as f:
        lines = [l for l in f if l.startswith('"')]
    for row in csv.DictReader(lines):
        if not row["Kernel Name"].startswith("add_rmsnorm_decode"):
            continue
        unit = row.get("Metric Unit", "ns")
        scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1, "usecond": 1, "ms": 1e3, "msecond": 1e3}[unit]
        times.setdefault(row["Kernel Name"], []).append(float(row["Metric Value"].replace(",", "")) * scale)
    # Fused and unfused kernels share names: the fused module ran first
    # (three calls of one kernel), then the unfused one.
    out_dir = os.environ.get("OUT", ".")
    with open(os.path.join(out_dir, "decode_kernel_times.json"), "w") as f:
        json.dump(times, f, indent=1)
    for name, values in times.items():
        print(f"decode kernel {name:28} GPU time per launch (us): " + " ".join(f"{v:.2f}" for v in values))


L2_BYTES = 60 * 2**20


def compare(csv_path, scale, variant):
    with open(os.path.join(here, f"report_{scale}.{variant}.json")) as f:
        report = json.load(f)
    names = {k["name"]: f["name"] for f in report["functions"] for k in f["kernel_list"]}
    counted = {}
    with open(csv_path) as f:
        lines = [l for l in f if l.startswith('"')]
    units = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9}
    for row in csv.DictReader(lines):
        # (A row kernel of dynamic length may run as <kernel>_elements.)
        function = names.get(row["Kernel Name"].removesuffix("_elements"))
        if function is None:
            continue  # not one of ours (input initialization)
        value = float(row["Metric Value"].replace(",", "")) * units.get(row.get("Metric Unit", "byte"), 1)
        counted[function] = counted.get(function, 0.0) + value
    rows = []
    for func in report["functions"]:
        if func["bytes"] is None or func["name"] not in counted:
            continue
        measured = counted[func["name"]]
        rows.append(dict(workload=func["name"], variant=variant, predicted=func["bytes"],
                         measured=measured, ratio=measured / func["bytes"],
                         launches=func["launches"]))
    out_dir = os.environ.get("OUT", ".")
    with open(os.path.join(out_dir, f"traffic_{scale}_{variant}.json"), "w") as f:
        json.dump(rows, f, indent=1)
    for r in rows:
        # What a kernel leaves dirty in L2 (60 MB on the H200) is written
        # back after its counters stop: a shortfall of at most that much per
        # launch is "L2", not a wrong prediction (measured on 2026-11-30:
        # counting L2 write sectors instead overcounts writes by about 1.25x).
        short = r["predicted"] - r["measured"]
        flag = ("ok  " if abs(r["ratio"] - 1) <= 0.05 else
                "L2  " if 0 < short <= L2_BYTES * r["launches"] else "OFF ")
        print(f"{flag} {r['workload']:20} {r['variant']:8} predicted {r['predicted'] / 1e6:10.1f} MB  "
              f"ncu DRAM {r['measured'] / 1e6:10.1f} MB  ratio {r['ratio']:.3f}")


if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        compare(*sys.argv[2:5])
    elif sys.argv[1] == "--decode":
        decode(sys.argv[2])
    elif sys.argv[1] == "--decode-times":
        decode_times(sys.argv[2])
    else:
        run(*sys.argv[1:3])
