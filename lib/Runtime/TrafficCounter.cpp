//===- TrafficCounter.cpp - Bytes each kernel moves, counted on the CPU ---===//
//
// The runtime side of fusion-count-traffic. Each kernel's accesses to its
// external buffers are recorded by address; an address counts once per
// kernel and direction, so the totals are the bytes the kernel must move.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace {
struct KernelCounters {
  /// address -> element bytes, for reads and for writes.
  std::unordered_map<uintptr_t, int64_t> reads, writes;
};

std::mutex mutex;
std::vector<KernelCounters> counters;

int64_t total(const std::unordered_map<uintptr_t, int64_t> &accesses) {
  int64_t bytes = 0;
  for (const auto &entry : accesses)
    bytes += entry.second;
  return bytes;
}
} // namespace

extern "C" {

/// Called by instrumented kernels for every access to an external buffer.
void fusion_traffic_record(int64_t kernel, int64_t address, int64_t bytes,
                           int32_t isWrite) {
  std::lock_guard<std::mutex> lock(mutex);
  if (kernel < 0)
    return;
  if (static_cast<size_t>(kernel) >= counters.size())
    counters.resize(kernel + 1);
  auto &accesses = isWrite ? counters[kernel].writes : counters[kernel].reads;
  accesses[static_cast<uintptr_t>(address)] = bytes;
}

/// Forgets everything recorded so far.
void fusion_traffic_reset() {
  std::lock_guard<std::mutex> lock(mutex);
  counters.clear();
}

/// Distinct bytes kernel `kernel` read (isWrite = 0) or wrote (isWrite = 1)
/// since the last reset; 0 for a kernel that never ran.
int64_t fusion_traffic_bytes(int64_t kernel, int32_t isWrite) {
  std::lock_guard<std::mutex> lock(mutex);
  if (kernel < 0 || static_cast<size_t>(kernel) >= counters.size())
    return 0;
  return total(isWrite ? counters[kernel].writes : counters[kernel].reads);
}

/// Prints every kernel's counted bytes and the total, for programs run by
/// mlir-runner (kernels are numbered as fusion-report numbers them).
void fusion_traffic_report() {
  std::lock_guard<std::mutex> lock(mutex);
  int64_t read = 0, written = 0;
  for (size_t kernel = 0; kernel < counters.size(); ++kernel) {
    int64_t r = total(counters[kernel].reads);
    int64_t w = total(counters[kernel].writes);
    if (!r && !w)
      continue;
    std::printf("fusion traffic: kernel %zu read %lld B, wrote %lld B\n",
                kernel, static_cast<long long>(r), static_cast<long long>(w));
    read += r;
    written += w;
  }
  std::printf("fusion traffic: total %lld B (read %lld B, wrote %lld B)\n",
              static_cast<long long>(read + written),
              static_cast<long long>(read), static_cast<long long>(written));
  std::fflush(stdout);
}

} // extern "C"
