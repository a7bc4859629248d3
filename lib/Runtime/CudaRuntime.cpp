//===- CudaRuntime.cpp - The mgpu* ABI over the CUDA driver API -----------===//
//
// What the host code of `fusion-to-nvvm` (upstream gpu-to-llvm) calls:
// module load/unload, function lookup, kernel launch, streams and device
// memory. Every CUDA error is reported on stderr with the call and the
// error's name, and kept: fusion_cuda_last_error() returns the first one
// since the last fusion_cuda_clear_error(), so a caller can raise it.
//
// Library matmuls (cuBLASLt) are in CudaMatmul.cpp.
//
// Loaded modules are cached by their image (the host code loads the module
// around every launch); they are unloaded when the process ends. Launches,
// allocations and library calls run on the caller's stream, which the
// caller sets before each call (fusion_cuda_set_stream), without waiting.
// Kernels of a module built with fusion-launch-dependents launch as
// programmatic dependents of the kernel before them in the stream. The
// arrival counters of split launches are kept per stream, zero between
// launches (fusion_cuda_arrival_counters).
//
//===----------------------------------------------------------------------===//

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "CudaRuntimeSupport.h"
#include "SizeMismatch.h"

namespace {
std::mutex mutex;
std::string firstError;
std::unordered_map<const void *, CUmodule> modules;
/// Modules that `fusion-launch-dependents` built (they define the global
/// `fusion_launch_dependents`), and their kernels: each waits for the grids
/// before it at entry, so it may launch as a programmatic dependent of the
/// kernel before it in the stream.
std::unordered_set<CUmodule> dependentModules;
std::unordered_set<CUfunction> launchDependents;
/// Whether any is loaded: until one is, a launch takes no lock to ask.
std::atomic<bool> anyDependentModule{false};
/// The stream this thread's calls run on (null: the legacy default stream).
thread_local CUstream callerStream = nullptr;
} // namespace

CUstream fusion::cuda::getCallerStream() { return callerStream; }

void fusion::cuda::reportError(const std::string &call,
                               const std::string &what) {
  std::fprintf(stderr, "fusion-cuda-runtime: %s failed: %s\n", call.c_str(),
               what.c_str());
  std::lock_guard<std::mutex> lock(mutex);
  if (firstError.empty())
    firstError = call + " failed: " + what;
}

bool fusion::cuda::check(CUresult result, const char *call) {
  if (result == CUDA_SUCCESS)
    return true;
  const char *name = nullptr;
  if (cuGetErrorName(result, &name) != CUDA_SUCCESS || !name)
    name = "unknown CUDA error";
  reportError(call, name);
  return false;
}

bool fusion::cuda::ensureContext() {
  static bool initialized = CUDA_CHECK(cuInit(0));
  if (!initialized)
    return false;
  CUcontext current = nullptr;
  if (!CUDA_CHECK(cuCtxGetCurrent(&current)))
    return false;
  if (current)
    return true;
  CUdevice device;
  CUcontext primary;
  return CUDA_CHECK(cuDeviceGet(&device, 0)) &&
         CUDA_CHECK(cuDevicePrimaryCtxRetain(&primary, device)) &&
         CUDA_CHECK(cuCtxSetCurrent(primary));
}

namespace {
using fusion::cuda::check;
using fusion::cuda::ensureContext;

CUmodule loadModule(const void *data, bool jit, int optLevel) {
  if (!ensureContext())
    return nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = modules.find(data);
    if (it != modules.end())
      return it->second;
  }
  CUmodule module = nullptr;
  if (jit) {
    CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL};
    void *values[] = {
        reinterpret_cast<void *>(static_cast<intptr_t>(optLevel))};
    if (!CUDA_CHECK(cuModuleLoadDataEx(&module, data, 1, options, values)))
      return nullptr;
  } else if (!CUDA_CHECK(cuModuleLoadData(&module, data))) {
    return nullptr;
  }
  CUdeviceptr marker = 0;
  size_t bytes = 0;
  // Without the marker the lookup answers CUDA_ERROR_NOT_FOUND: not an error.
  bool dependents =
      cuModuleGetGlobal(&marker, &bytes, module, "fusion_launch_dependents") ==
      CUDA_SUCCESS;
  std::lock_guard<std::mutex> lock(mutex);
  if (dependents) {
    dependentModules.insert(module);
    anyDependentModule = true;
  }
  // Another thread may have loaded the same image meanwhile; keep one.
  return modules.emplace(data, module).first->second;
}

/// Functions allowed more than the default 48 KiB of dynamic shared
/// memory, and how much.
std::unordered_map<CUfunction, int32_t> sharedAllowed;

/// Lets `function` take `bytes` of dynamic shared memory (launches past
/// 48 KiB fail without it).
bool allowDynamicShared(CUfunction function, int32_t bytes) {
  if (bytes <= 48 * 1024)
    return true;
  std::lock_guard<std::mutex> lock(mutex);
  int32_t &allowed = sharedAllowed[function];
  if (allowed >= bytes)
    return true;
  if (!CUDA_CHECK(cuFuncSetAttribute(
          function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes)))
    return false;
  allowed = bytes;
  return true;
}

/// FUSION_CUDA_LAUNCH_DEPENDENTS=0 launches every kernel after the end of
/// the one before it, as for modules without the marker (for comparing).
bool launchDependentsEnabled() {
  static const bool enabled = [] {
    const char *value = std::getenv("FUSION_CUDA_LAUNCH_DEPENDENTS");
    return !value || std::string(value) != "0";
  }();
  return enabled;
}

bool launchesAsDependent(CUfunction function) {
  if (!anyDependentModule || !launchDependentsEnabled())
    return false;
  std::lock_guard<std::mutex> lock(mutex);
  return launchDependents.count(function) != 0;
}

/// Every launch: a cluster shape where `clusterX` is not 0, and programmatic
/// stream serialization for kernels that wait for their prerequisites
/// (cuLaunchKernelEx); a plain launch without either.
void launch(void *function, const char *call, intptr_t clusterX,
            intptr_t clusterY, intptr_t clusterZ, intptr_t gridX,
            intptr_t gridY, intptr_t gridZ, intptr_t blockX, intptr_t blockY,
            intptr_t blockZ, int32_t sharedMemory, void *stream, void **params,
            void **extra) {
  if (!function) {
    check(CUDA_ERROR_INVALID_HANDLE,
          (std::string(call) + " (no function)").c_str());
    return;
  }
  auto kernel = static_cast<CUfunction>(function);
  if (!allowDynamicShared(kernel, sharedMemory))
    return;
  CUlaunchAttribute attributes[2] = {};
  unsigned count = 0;
  if (clusterX != 0) {
    CUlaunchAttribute &cluster = attributes[count++];
    cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster.value.clusterDim.x = static_cast<unsigned>(clusterX);
    cluster.value.clusterDim.y = static_cast<unsigned>(clusterY);
    cluster.value.clusterDim.z = static_cast<unsigned>(clusterZ);
  }
  if (launchesAsDependent(kernel)) {
    CUlaunchAttribute &dependent = attributes[count++];
    dependent.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    dependent.value.programmaticStreamSerializationAllowed = 1;
  }
  if (count == 0) {
    check(cuLaunchKernel(kernel, gridX, gridY, gridZ, blockX, blockY, blockZ,
                         sharedMemory, static_cast<CUstream>(stream), params,
                         extra),
          call);
    return;
  }
  CUlaunchConfig config = {};
  config.gridDimX = static_cast<unsigned>(gridX);
  config.gridDimY = static_cast<unsigned>(gridY);
  config.gridDimZ = static_cast<unsigned>(gridZ);
  config.blockDimX = static_cast<unsigned>(blockX);
  config.blockDimY = static_cast<unsigned>(blockY);
  config.blockDimZ = static_cast<unsigned>(blockZ);
  config.sharedMemBytes = static_cast<unsigned>(sharedMemory);
  config.hStream = static_cast<CUstream>(stream);
  config.attrs = attributes;
  config.numAttrs = count;
  check(cuLaunchKernelEx(&config, kernel, params, extra), call);
}

/// A memref<?xi32> as the host code passes it to and takes it from a
/// function declared with llvm.emit_c_interface.
struct CountersMemRef {
  int32_t *allocated;
  int32_t *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
};

/// Arrival counters per (context, stream), all zero between launches: a
/// kernel counting on them sets each counter it used back to zero. The
/// largest buffer asked for so far; smaller ones, replaced, are kept,
/// since a call on another thread may still be queueing launches on them.
struct StreamCounters {
  CUdeviceptr buffer = 0;
  int64_t count = 0;
};
std::map<std::pair<CUcontext, CUstream>, StreamCounters> streamCounters;
std::vector<CUdeviceptr> replacedCounters;
/// Counters allocated for one call under CUDA graph capture: the graph
/// may be replayed on any stream, beside calls on the captured one, so it
/// gets its own, freed after its launches (graph memory nodes).
std::unordered_set<CUdeviceptr> capturedCounters;

/// `count` zeroed counters allocated on `stream`, or 0 (the error kept).
CUdeviceptr allocateZeroedCounters(int64_t count, CUstream stream) {
  CUdeviceptr buffer = 0;
  if (!CUDA_CHECK(cuMemAllocAsync(&buffer, count * sizeof(int32_t), stream)))
    return 0;
  if (!CUDA_CHECK(cuMemsetD32Async(buffer, 0, count, stream))) {
    CUDA_CHECK(cuMemFreeAsync(buffer, stream));
    return 0;
  }
  return buffer;
}

/// The counters a call on the caller's stream counts arrivals on.
CUdeviceptr arrivalCounters(int64_t count) {
  if (count <= 0 || !ensureContext())
    return 0;
  CUstream stream = callerStream;
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  if (!CUDA_CHECK(cuStreamIsCapturing(stream, &capture)))
    return 0;
  if (capture != CU_STREAM_CAPTURE_STATUS_NONE) {
    CUdeviceptr buffer = allocateZeroedCounters(count, stream);
    std::lock_guard<std::mutex> lock(mutex);
    if (buffer)
      capturedCounters.insert(buffer);
    return buffer;
  }
  CUcontext context = nullptr;
  if (!CUDA_CHECK(cuCtxGetCurrent(&context)))
    return 0;
  std::pair<CUcontext, CUstream> key{context, stream};
  {
    std::lock_guard<std::mutex> lock(mutex);
    StreamCounters &counters = streamCounters[key];
    if (counters.count >= count)
      return counters.buffer;
  }
  // Grown to a power of two (at least a page of counters), so a stream
  // rarely allocates more than once. Allocated outside the lock: a failed
  // check takes it to keep the error.
  int64_t grown = 1024;
  while (grown < count)
    grown *= 2;
  CUdeviceptr buffer = allocateZeroedCounters(grown, stream);
  if (!buffer)
    return 0;
  std::lock_guard<std::mutex> lock(mutex);
  StreamCounters &counters = streamCounters[key];
  if (counters.count >= grown) {
    // Another thread grew them meanwhile.
    replacedCounters.push_back(buffer);
    return counters.buffer;
  }
  if (counters.buffer)
    replacedCounters.push_back(counters.buffer);
  counters = {buffer, grown};
  return buffer;
}

} // namespace

extern "C" {

void *mgpuModuleLoad(void *data, size_t /*size*/) {
  return loadModule(data, /*jit=*/false, 0);
}

void *mgpuModuleLoadJIT(void *data, int optLevel) {
  return loadModule(data, /*jit=*/true, optLevel);
}

/// Modules stay cached for the next launch; see the file comment.
void mgpuModuleUnload(void * /*module*/) {}

void *mgpuModuleGetFunction(void *module, const char *name) {
  CUfunction function = nullptr;
  if (!module)
    return nullptr;
  if (!CUDA_CHECK(
          cuModuleGetFunction(&function, static_cast<CUmodule>(module), name)))
    return nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (dependentModules.count(static_cast<CUmodule>(module)))
    launchDependents.insert(function);
  return function;
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedMemory, void *stream,
                      void **params, void **extra, size_t /*paramsCount*/) {
  launch(function, "mgpuLaunchKernel", 0, 0, 0, gridX, gridY, gridZ, blockX,
         blockY, blockZ, sharedMemory, stream, params, extra);
}

// Launches in clusters (wide rows split over the blocks of a cluster).
void mgpuLaunchClusterKernel(void *function, intptr_t clusterX,
                             intptr_t clusterY, intptr_t clusterZ,
                             intptr_t gridX, intptr_t gridY, intptr_t gridZ,
                             intptr_t blockX, intptr_t blockY, intptr_t blockZ,
                             int32_t sharedMemory, void *stream, void **params,
                             void **extra) {
  launch(function, "mgpuLaunchClusterKernel", clusterX, clusterY, clusterZ,
         gridX, gridY, gridZ, blockX, blockY, blockZ, sharedMemory, stream,
         params, extra);
}

/// Sets the stream the calling thread's next calls run on (a CUstream, e.g.
/// PyTorch's current stream; null for the legacy default stream).
void fusion_cuda_set_stream(void *stream) {
  callerStream = static_cast<CUstream>(stream);
}

// The host code asks for a stream around every launch: it gets the caller's,
// so the call is ordered with the caller's work on it (and can be captured
// into a CUDA graph). A launch returns without waiting, as a PyTorch op
// does. FUSION_CUDA_SYNCHRONOUS=1 makes every launch wait (for debugging:
// errors then surface at the launch that caused them; not during capture).
void *mgpuStreamCreate() {
  ensureContext();
  return callerStream;
}

void mgpuStreamDestroy(void * /*stream*/) {}

void mgpuStreamSynchronize(void *stream) {
  static const bool synchronous = [] {
    const char *value = std::getenv("FUSION_CUDA_SYNCHRONOUS");
    return value && std::string(value) == "1";
  }();
  if (synchronous)
    CUDA_CHECK(cuStreamSynchronize(static_cast<CUstream>(stream)));
}

void *mgpuMemAlloc(uint64_t size, void *stream, bool /*hostShared*/) {
  if (!ensureContext())
    return nullptr;
  // The device's default pool keeps what is freed (release threshold: all)
  // instead of returning it to the driver at every synchronization, so the
  // intermediates of the next call reuse it rather than mapping new memory.
  static const bool keepFreedMemory = [] {
    CUdevice device;
    CUmemoryPool pool;
    cuuint64_t threshold = ~cuuint64_t(0);
    return CUDA_CHECK(cuCtxGetDevice(&device)) &&
           CUDA_CHECK(cuDeviceGetDefaultMemPool(&pool, device)) &&
           CUDA_CHECK(cuMemPoolSetAttribute(
               pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
  }();
  (void)keepFreedMemory;
  // Stream-ordered on the caller's stream, like the launches around it.
  CUdeviceptr pointer = 0;
  if (size && !CUDA_CHECK(cuMemAllocAsync(&pointer, size,
                                          static_cast<CUstream>(stream))))
    return nullptr;
  return reinterpret_cast<void *>(pointer);
}

void mgpuMemFree(void *pointer, void *stream) {
  // Freed after the launches queued before it have run.
  if (pointer)
    CUDA_CHECK(cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(pointer),
                              static_cast<CUstream>(stream)));
}

void mgpuMemcpy(void *dst, void *src, size_t size, void *stream) {
  CUDA_CHECK(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                           reinterpret_cast<CUdeviceptr>(src), size,
                           static_cast<CUstream>(stream)));
}

/// `count` 32-bit words at `dst` set to `value`, in stream order (the
/// arrival counts of split reductions).
void mgpuMemset32(void *dst, uint32_t value, size_t count, void *stream) {
  if (count)
    CUDA_CHECK(cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                count, static_cast<CUstream>(stream)));
}

/// `count` i32 arrival counters, all zero, kept for the caller's stream
/// (the split reductions' and split products' workspaces): every launch
/// that counts on them leaves them zero, so no call zeroes them. Under
/// CUDA graph capture, counters of the call's own. Null where they cannot
/// be allocated, as mgpuMemAlloc answers (the error kept).
void _mlir_ciface_fusion_cuda_arrival_counters(CountersMemRef *result,
                                               int64_t count) {
  auto *buffer = reinterpret_cast<int32_t *>(arrivalCounters(count));
  *result = {buffer, buffer, 0, count, 1};
}

/// After the launches of a call that counted on `counters`: frees those
/// allocated for it under capture; the stream's own stay.
void _mlir_ciface_fusion_cuda_release_arrival_counters(
    CountersMemRef *counters) {
  auto buffer = reinterpret_cast<CUdeviceptr>(counters->allocated);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!capturedCounters.erase(buffer))
      return;
  }
  CUDA_CHECK(cuMemFreeAsync(buffer, callerStream));
}

void mgpuSetDefaultDevice(int32_t /*device*/) {}

/// A call whose sizes disagree (fusion-guard-sizes): it returns without
/// running anything.
void fusion_size_mismatch(int64_t arg, int64_t dim, int64_t size,
                          int64_t expectedArg, int64_t expectedDim,
                          int64_t expectedSize, int64_t numInputs) {
  fusion::cuda::reportError(
      "size check",
      fusion::describeSizeMismatch(arg, dim, size, expectedArg, expectedDim,
                                   expectedSize, numInputs));
}

/// Multiprocessors of the current context's device: a persistent launch's
/// grid, a block per multiprocessor. 1 where the device cannot be asked
/// (the error is kept), which still runs every block's work.
int64_t fusion_cuda_multiprocessors() {
  static std::unordered_map<CUdevice, int64_t> counts;
  if (!ensureContext())
    return 1;
  CUdevice device;
  if (!CUDA_CHECK(cuCtxGetDevice(&device)))
    return 1;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = counts.find(device);
    if (it != counts.end())
      return it->second;
  }
  // Asked outside the lock: a failed check takes it to keep the error.
  int count = 0;
  if (!CUDA_CHECK(cuDeviceGetAttribute(
          &count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device)) ||
      count < 1)
    return 1;
  std::lock_guard<std::mutex> lock(mutex);
  return counts.emplace(device, count).first->second;
}

/// The first error since the last clear, or null.
const char *fusion_cuda_last_error() {
  std::lock_guard<std::mutex> lock(mutex);
  return firstError.empty() ? nullptr : firstError.c_str();
}

void fusion_cuda_clear_error() {
  std::lock_guard<std::mutex> lock(mutex);
  firstError.clear();
}

} // extern "C"
