"""Whether the dirty L2 lines do_bench's flush (a 256 MB zero_) leaves
behind cost the next call: the call timed after the flush, and after the
flush followed by a read of another 256 MB buffer (clean lines)."""
import os, sys, torch
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from fusion import cuda
m = cuda.load(os.path.join(here, "reductions_full.fused.so"))
for name, shape, dtype in (("col_sum_bf16", (16384, 4096), torch.bfloat16), ("sum_all", (64 << 20,), torch.float32)):
    fn = m.functions[name]
    x = torch.empty(shape, dtype=dtype, device="cuda").uniform_(-2, 2)
    out = fn(x)
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    other = torch.ones(64 << 20, dtype=torch.float32, device="cuda")
    for clean in (False, True):
        times = []
        for _ in range(50):
            flush.zero_()
            if clean:
                other.sum()
            torch.cuda._sleep(200000)
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record(); fn(x, outputs=out); e.record()
            torch.cuda.synchronize()
            times.append(s.elapsed_time(e) * 1e3)
        times.sort()
        nbytes = x.numel() * x.element_size()
        t = times[len(times) // 2]
        print(f"{name}: after flush{' + clean read' if clean else ''}: median {t:.1f} us, {nbytes / t / 1e3:.0f} GB/s")
