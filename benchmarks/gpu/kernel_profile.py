"""torch.profiler's view of GPU work: the activities (kernels, memsets,
copies) of calls back to back, each kernel's mean time a call, and one
call's timeline with the idle time before each activity. Shared by
matmul_kernel_times.py and reduction_kernel_times.py."""

import collections

import torch


def profile(call, calls):
    """The GPU activities of `calls` calls back to back (after warm-up),
    ordered by start: (name, start us, duration us)."""
    for _ in range(5):
        call()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            call()
        torch.cuda.synchronize()
    return sorted(((event.name, event.time_range.start, event.device_time)
                   for event in prof.events()
                   if event.device_type == torch.autograd.DeviceType.CUDA),
                  key=lambda activity: activity[1])


def kernel_times(activities, calls):
    """{kernel name: (launches a call, mean us a call)}."""
    totals, counts = collections.defaultdict(float), collections.defaultdict(int)
    for name, _, duration in activities:
        totals[name] += duration
        counts[name] += 1
    return {name: (counts[name] / calls, totals[name] / calls) for name in totals}


def timeline(activities, calls):
    """One call's activities from the middle of the run, each with the GPU
    idle time before it, and the mean span and busy time of a call."""
    per_call = len(activities) // calls
    span = (activities[-1][1] + activities[-1][2] - activities[0][1]) / calls
    busy = sum(a[2] for a in activities) / calls
    middle = (calls // 2) * per_call
    rows = []
    for i in range(middle, middle + per_call):
        name, start, duration = activities[i]
        previous = activities[i - 1]
        rows.append(dict(name=name, idle_before_us=start - previous[1] - previous[2],
                         us=duration))
    return dict(span_us=span, busy_us=busy, activities=rows)


def add_arguments(parser):
    """The options profile_variants takes: --calls N, --flush, --once."""
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--flush", action="store_true")
    parser.add_argument("--once", action="store_true")


def profile_variants(variants, calls, cache=None, once=False):
    """Each (label, call) of `variants` profiled `calls` times back to back:
    ({label: kernel_times}, {label: timeline}). With `cache` (a device
    buffer) zeroed before each call, as do_bench empties the L2. With
    `once`, one call of each inside an NVTX range `measured`, after `cache`
    is zeroed, for ncu (`--nvtx --nvtx-include "measured/"`), and two
    empty dicts."""
    results, timelines = {}, {}
    for label, call in variants:
        if once:
            for _ in range(3):
                call()  # warm-up (profile warms up itself)
            if cache is not None:
                cache.zero_()
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_push("measured")
            call()
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
            continue
        step = (lambda c=call: (cache.zero_(), c())) if cache is not None else call
        activities = profile(step, calls)
        results[label] = kernel_times(activities, calls)
        timelines[label] = timeline(activities, calls)
    return results, timelines


def print_report(label, results, timelines):
    """Prints each variant's kernels (slowest first) and one call's
    timeline; `results` and `timelines` map a variant to kernel_times and
    timeline."""
    for who, kernels in results.items():
        total = sum(t for _, t in kernels.values())
        print(f"{label} {who}: {total:.1f} us of kernels a call")
        for kernel, (launches, t) in sorted(kernels.items(), key=lambda kv: -kv[1][1]):
            print(f"  {t:9.1f} us  x{launches:g}  {kernel[:110]}")
    for who, line in timelines.items():
        print(f"{label} {who}: a call spans {line['span_us']:.1f} us back to back, "
              f"the GPU busy {line['busy_us']:.1f} us of it; one call:")
        for a in line["activities"]:
            print(f"  idle {a['idle_before_us']:6.1f} us, then {a['us']:7.1f} us  {a['name'][:90]}")
