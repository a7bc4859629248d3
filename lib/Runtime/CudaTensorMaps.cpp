//===- CudaTensorMaps.cpp - TMA tensor maps for generated matmuls ---------===//
//
// What the host code of a `matmul_wgmma` kernel calls before its launch
// (upstream nvgpu.tma.create.descriptor lowers to it): the CUtensorMap of a
// buffer, in device memory, where the kernel's TMA loads read it.
//
// Tensor maps are kept per context in a slab of device slots and reused
// while the buffer, its sizes and the box are the same, so a repeated call
// encodes and uploads nothing. A new map takes the next slot round-robin
// and is uploaded on the caller's stream, after the launches already queued
// there (which may still read the slot's previous map). A slot is only
// reused after `kSlots` other maps, so launches on other streams are safe
// while fewer than that many maps are made during one of them.
//
//===----------------------------------------------------------------------===//

#include <cuda.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "CudaRuntimeSupport.h"

namespace {
using fusion::cuda::check;

constexpr int kMaxRank = 5;
constexpr size_t kSlots = 4096;

/// Everything a tensor map encodes. Compared and hashed as bytes: `box`
/// has one unused entry so that no field is followed by padding.
struct TensorMapKey {
  void *address = nullptr;
  uint64_t dims[kMaxRank] = {}, strides[kMaxRank] = {};
  uint32_t box[kMaxRank + 1] = {};
  int64_t rank = 0, type = 0, interleave = 0, swizzle = 0, l2Promotion = 0,
          oobFill = 0;

  bool operator==(const TensorMapKey &other) const {
    return std::memcmp(this, &other, sizeof(*this)) == 0;
  }
};

static_assert(sizeof(TensorMapKey) ==
                  8 + 2 * 8 * kMaxRank + 4 * (kMaxRank + 1) + 6 * 8,
              "TensorMapKey has padding");

struct TensorMapHash {
  size_t operator()(const TensorMapKey &key) const {
    // FNV-1a over the key's bytes.
    const auto *bytes = reinterpret_cast<const unsigned char *>(&key);
    size_t hash = 1469598103934665603ull;
    for (size_t i = 0; i < sizeof(key); ++i)
      hash = (hash ^ bytes[i]) * 1099511628211ull;
    return hash;
  }
};

/// The tensor maps of one context.
struct Slab {
  CUdeviceptr slots = 0;
  size_t next = 0;
  std::unordered_map<TensorMapKey, size_t, TensorMapHash> slotOf;
  std::vector<TensorMapKey> keyOf = std::vector<TensorMapKey>(kSlots);
};

std::mutex mutex;
std::map<CUcontext, Slab> slabs;

/// Bytes per element of each CUtensorMapDataType, in enum order.
constexpr int64_t kElementBytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};

/// The ranked memref descriptor the host code passes: pointers, offset,
/// sizes then strides.
template <int Rank> struct RankedDescriptor {
  char *allocated, *aligned;
  int64_t offset, sizes[Rank], strides[Rank];
};

template <int Rank>
void readDescriptor(void *raw, int64_t elementBytes, TensorMapKey &key) {
  auto *descriptor = static_cast<RankedDescriptor<Rank> *>(raw);
  key.address = descriptor->aligned + descriptor->offset * elementBytes;
  // A tensor map lists dimensions innermost first, strides in bytes
  // without the innermost (which is one element).
  for (int i = 0; i < Rank; ++i)
    key.dims[i] = static_cast<uint64_t>(descriptor->sizes[Rank - 1 - i]);
  for (int i = 0; i + 1 < Rank; ++i)
    key.strides[i] =
        static_cast<uint64_t>(descriptor->strides[Rank - 2 - i] * elementBytes);
}
} // namespace

extern "C" void *mgpuTensorMapEncodeTiledMemref(
    int64_t rank, void *descriptor, int64_t type, int64_t interleave,
    int64_t swizzle, int64_t l2Promotion, int64_t oobFill, int64_t *box) {
  if (!fusion::cuda::ensureContext())
    return nullptr;
  if (rank < 1 || rank > kMaxRank || type < 0 ||
      type >= static_cast<int64_t>(std::size(kElementBytes))) {
    fusion::cuda::reportError("mgpuTensorMapEncodeTiledMemref",
                              "unsupported rank or element type");
    return nullptr;
  }
  TensorMapKey key;
  key.rank = rank;
  key.type = type;
  key.interleave = interleave;
  key.swizzle = swizzle;
  key.l2Promotion = l2Promotion;
  key.oobFill = oobFill;
  int64_t elementBytes = kElementBytes[type];
  switch (rank) {
  case 1:
    readDescriptor<1>(descriptor, elementBytes, key);
    break;
  case 2:
    readDescriptor<2>(descriptor, elementBytes, key);
    break;
  case 3:
    readDescriptor<3>(descriptor, elementBytes, key);
    break;
  case 4:
    readDescriptor<4>(descriptor, elementBytes, key);
    break;
  case 5:
    readDescriptor<5>(descriptor, elementBytes, key);
    break;
  }
  for (int64_t i = 0; i < rank; ++i)
    key.box[i] = static_cast<uint32_t>(box[rank - 1 - i]);
  // An empty tensor has no map (the driver refuses a size of 0); a kernel
  // reading it has no tile to load, so it never reads the map either.
  for (int64_t i = 0; i < rank; ++i)
    if (key.dims[i] == 0)
      return nullptr;

  CUcontext context = nullptr;
  if (!CUDA_CHECK(cuCtxGetCurrent(&context)))
    return nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  Slab &slab = slabs[context];
  auto found = slab.slotOf.find(key);
  if (found != slab.slotOf.end())
    return reinterpret_cast<void *>(slab.slots +
                                    found->second * sizeof(CUtensorMap));

  CUtensorMap map;
  uint32_t elementStrides[kMaxRank] = {1, 1, 1, 1, 1};
  if (!CUDA_CHECK(cuTensorMapEncodeTiled(
          &map, static_cast<CUtensorMapDataType>(type),
          static_cast<cuuint32_t>(rank), key.address, key.dims, key.strides,
          key.box, elementStrides,
          static_cast<CUtensorMapInterleave>(interleave),
          static_cast<CUtensorMapSwizzle>(swizzle),
          static_cast<CUtensorMapL2promotion>(l2Promotion),
          static_cast<CUtensorMapFloatOOBfill>(oobFill))))
    return nullptr;
  if (!slab.slots &&
      !CUDA_CHECK(cuMemAlloc(&slab.slots, kSlots * sizeof(CUtensorMap))))
    return nullptr;
  size_t slot = slab.next;
  slab.next = (slab.next + 1) % kSlots;
  // The slot's previous map, if any, is gone (a never-used slot's key, all
  // zeros, is no map's: sizes are never 0).
  auto previous = slab.slotOf.find(slab.keyOf[slot]);
  if (previous != slab.slotOf.end() && previous->second == slot)
    slab.slotOf.erase(previous);
  CUdeviceptr address = slab.slots + slot * sizeof(CUtensorMap);
  // From pageable memory: staged before the call returns, so `map` may go.
  if (!CUDA_CHECK(cuMemcpyHtoDAsync(address, &map, sizeof(map),
                                    fusion::cuda::getCallerStream())))
    return nullptr;
  slab.keyOf[slot] = key;
  slab.slotOf.emplace(key, slot);
  return reinterpret_cast<void *>(address);
}
