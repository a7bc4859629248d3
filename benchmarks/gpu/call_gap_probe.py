"""do_bench's time of a col_sum_bf16 call against the same call measured
with the GPU kept busy ahead of it (a sleep kernel), both after an L2
flush: whether the gap is host time or GPU time."""
import os, sys, torch, triton.testing
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from fusion import cuda
m = cuda.load(os.path.join(here, "reductions_full.fused.so"))
fn = m.functions["col_sum_bf16"]
x = torch.empty(16384, 4096, dtype=torch.bfloat16, device="cuda").uniform_(-2, 2)
out = fn(x)
flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
print("do_bench median us:", 1e3 * triton.testing.do_bench(lambda: fn(x, outputs=out), warmup=25, rep=200, return_mode="median"))
for busy in (False, True):
    times = []
    for _ in range(50):
        flush.zero_()
        if busy:
            torch.cuda._sleep(200000)  # keeps the GPU busy while the host queues the call
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(x, outputs=out); e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) * 1e3)
    times.sort()
    print(f"after flush, GPU busy ahead={busy}: median {times[len(times)//2]:.1f} us")
import time
torch.cuda.synchronize(); t = time.perf_counter()
for _ in range(100):
    fn(x, outputs=out)
print(f"host time per call (queued, GPU behind): {(time.perf_counter() - t) * 1e4:.1f} us")
torch.cuda.synchronize()
