//===- CudaRuntimeSupport.h - Shared by the CUDA runtime's files -*- C++ -*-===//
//
// Error reporting and the device context, used by the mgpu* ABI
// (CudaRuntime.cpp) and the library matmuls (CudaMatmul.cpp) alike.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_LIB_RUNTIME_CUDARUNTIMESUPPORT_H
#define FUSION_LIB_RUNTIME_CUDARUNTIMESUPPORT_H

#include <cuda.h>

#include <string>

namespace fusion::cuda {

/// Reports a failed call on stderr ("fusion-cuda-runtime: CALL failed:
/// WHAT") and keeps the first such message for fusion_cuda_last_error().
void reportError(const std::string &call, const std::string &what);

/// Reports `result` of the driver call `call` if it failed; true on success.
bool check(CUresult result, const char *call);

/// The stream the calling thread's calls run on (fusion_cuda_set_stream).
CUstream getCallerStream();

/// Makes the device's primary context current on this thread (PyTorch
/// uses the same one); false (reported) when there is none.
bool ensureContext();

} // namespace fusion::cuda

#define CUDA_CHECK(expr) ::fusion::cuda::check((expr), #expr)

#endif // FUSION_LIB_RUNTIME_CUDARUNTIMESUPPORT_H
