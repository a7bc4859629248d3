//===- SizeMismatch.h - The message of a failed size check ------*- C++ -*-===//
//
// Both runtimes implement `fusion_size_mismatch`, which the entry checks of
// fusion-guard-sizes call; they word it the same way.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_LIB_RUNTIME_SIZEMISMATCH_H
#define FUSION_LIB_RUNTIME_SIZEMISMATCH_H

#include <cstdint>
#include <string>

namespace fusion {

/// "argument 1 dimension 0 has size 3, but argument 0 dimension 0 has size
/// 7": arguments at or after `numInputs` are outputs; `expectedArg` -1
/// means the program's static size.
inline std::string describeSizeMismatch(int64_t arg, int64_t dim, int64_t size,
                                        int64_t expectedArg,
                                        int64_t expectedDim,
                                        int64_t expectedSize,
                                        int64_t numInputs) {
  auto name = [&](int64_t a, int64_t d) {
    std::string s = a < numInputs ? "argument " + std::to_string(a)
                                  : "output " + std::to_string(a - numInputs);
    return s + " dimension " + std::to_string(d);
  };
  std::string message =
      name(arg, dim) + " has size " + std::to_string(size) + ", but ";
  if (expectedArg < 0)
    return message + "the program needs " + std::to_string(expectedSize) +
           " there";
  return message + name(expectedArg, expectedDim) + " has size " +
         std::to_string(expectedSize) + " and the two must be equal";
}

} // namespace fusion

#endif // FUSION_LIB_RUNTIME_SIZEMISMATCH_H
