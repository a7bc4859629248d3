//===- CpuErrors.cpp - Errors a CPU library reports to its caller ---------===//
//
// A compiled function that refuses a call (its sizes disagree) reports why
// here and returns; fusion_cpu_last_error() gives the first message since
// the last fusion_cpu_clear_error(), so a caller can raise it.
//
//===----------------------------------------------------------------------===//

#include "SizeMismatch.h"

#include <cstdint>
#include <mutex>
#include <string>

namespace {
std::mutex mutex;
std::string firstError;
} // namespace

extern "C" {

void fusion_size_mismatch(int64_t arg, int64_t dim, int64_t size,
                          int64_t expectedArg, int64_t expectedDim,
                          int64_t expectedSize, int64_t numInputs) {
  std::lock_guard<std::mutex> lock(mutex);
  if (firstError.empty())
    firstError = fusion::describeSizeMismatch(
        arg, dim, size, expectedArg, expectedDim, expectedSize, numInputs);
}

const char *fusion_cpu_last_error() {
  std::lock_guard<std::mutex> lock(mutex);
  return firstError.empty() ? nullptr : firstError.c_str();
}

void fusion_cpu_clear_error() {
  std::lock_guard<std::mutex> lock(mutex);
  firstError.clear();
}

} // extern "C"
