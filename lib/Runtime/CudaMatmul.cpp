//===- CudaMatmul.cpp - Library matmuls through cuBLASLt ------------------===//
//
// fusion_cuda_matmul_{f32,f16,bf16} (include/fusion/Runtime/CudaMatmul.h):
// one row-major batched product with its epilogue, as cuBLASLt calls.
// Slightly over 600 lines: the loader, the plan cache, the tuner and the
// entry points share the cache's keys and lifetime.
//
// cuBLASLt is column-major: the row-major D[M, N] = A[M, K] B[K, N] is the
// column-major D^T[N, M] = B^T[N, K] A^T[K, M], so B is passed as the
// library's A and A as its B, with m = N and n = M; a bias over the N
// columns is then the library's bias over the m rows.
//
// Batch dimensions: each operand's stride per dimension of D (0 where it
// broadcasts); adjacent dimensions that every operand steps through evenly
// collapse into one strided batch, the rest are loops of calls.
//
// Per shape (sizes, strides, alignments, epilogue) the matmul descriptor,
// the layouts and the algorithm are built once and cached: the first call
// times the heuristic's best candidates (cublasLtMatmulAlgoGetHeuristic) on
// its own operands and keeps the fastest by a margin (its first choice is
// not always the fastest; tune() says when it is kept untimed);
// FUSION_MATMUL_AUTOTUNE=0 keeps the first choice, as does a call during
// stream capture. Calls run on the caller's stream (fusion_cuda_set_stream).
// A workspace is allocated once per stream, on its first use; a stream
// first used while it is captured into a CUDA graph (where nothing may be
// allocated) runs without one. cuBLASLt is loaded on first use
// (libcublasLt.so.13), so modules without library matmuls do not need it. Every
// status is checked and reported like the driver's errors.
//
//===----------------------------------------------------------------------===//

#include "CudaRuntimeSupport.h"

#include "fusion/Runtime/CudaMatmul.h"

#include <cublasLt.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

using fusion::cuda::ensureContext;
using fusion::cuda::reportError;

namespace {

/// The cuBLASLt entry points, resolved from the shared library.
struct CublasLt {
#define FUSION_CUBLASLT_FUNCTIONS(X)                                           \
  X(cublasLtCreate)                                                            \
  X(cublasLtGetStatusName)                                                     \
  X(cublasLtMatmulDescCreate)                                                  \
  X(cublasLtMatmulDescSetAttribute)                                            \
  X(cublasLtMatrixLayoutCreate)                                                \
  X(cublasLtMatrixLayoutSetAttribute)                                          \
  X(cublasLtMatmulPreferenceCreate)                                            \
  X(cublasLtMatmulPreferenceSetAttribute)                                      \
  X(cublasLtMatmulPreferenceDestroy)                                           \
  X(cublasLtMatmulAlgoGetHeuristic)                                            \
  X(cublasLtMatmul)
#define FUSION_DECLARE(name) decltype(&::name) name = nullptr;
  FUSION_CUBLASLT_FUNCTIONS(FUSION_DECLARE)
#undef FUSION_DECLARE
  cublasLtHandle_t handle = nullptr;
};

/// cuBLASLt, loaded and initialized once; null (reported) if unavailable.
const CublasLt *getCublasLt() {
  static const CublasLt *library = []() -> const CublasLt * {
    const char *names[] = {"libcublasLt.so.13",
                           "/usr/local/cuda/lib64/libcublasLt.so.13"};
    void *handle = nullptr;
    for (const char *name : names)
      if ((handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!handle) {
      const char *error = dlerror();
      reportError("loading cuBLASLt (libcublasLt.so.13)",
                  error ? error : "not found");
      return nullptr;
    }
    auto *lt = new CublasLt;
#define FUSION_RESOLVE(name)                                                   \
  lt->name = reinterpret_cast<decltype(lt->name)>(dlsym(handle, #name));       \
  if (!lt->name) {                                                             \
    reportError("loading cuBLASLt", "no symbol " #name);                       \
    return nullptr;                                                            \
  }
    FUSION_CUBLASLT_FUNCTIONS(FUSION_RESOLVE)
#undef FUSION_RESOLVE
    if (!ensureContext())
      return nullptr;
    cublasStatus_t status = lt->cublasLtCreate(&lt->handle);
    if (status != CUBLAS_STATUS_SUCCESS) {
      reportError("cublasLtCreate", lt->cublasLtGetStatusName(status));
      return nullptr;
    }
    return lt;
  }();
  return library;
}

/// Reports a failed cuBLASLt call; true on success.
bool checkStatus(const CublasLt &lt, cublasStatus_t status, const char *call) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return true;
  const char *name = lt.cublasLtGetStatusName(status);
  reportError(call, name ? name : "unknown cuBLAS status");
  return false;
}

#define LT_CHECK(lt, expr) checkStatus((lt), (lt).expr, #expr)

/// One operand as MLIR's memref descriptor holds it.
struct Tensor {
  char *data = nullptr;
  std::vector<int64_t> sizes, strides;

  int64_t rank() const { return static_cast<int64_t>(sizes.size()); }
  int64_t rows() const { return sizes[rank() - 2]; }
  int64_t cols() const { return sizes[rank() - 1]; }
};

Tensor readDescriptor(int64_t rank, void *descriptor, int64_t elementBytes) {
  // {allocated, aligned, offset, sizes[rank], strides[rank]}, all 64-bit.
  auto *words = static_cast<int64_t *>(descriptor);
  Tensor t;
  t.data = reinterpret_cast<char *>(words[1]) + words[2] * elementBytes;
  t.sizes.assign(words + 3, words + 3 + rank);
  t.strides.assign(words + 3 + rank, words + 3 + 2 * rank);
  return t;
}

/// The largest power of two (up to 256) that divides `address`: what the
/// algorithm may assume about a pointer.
uint32_t alignmentOf(const void *address) {
  auto value = reinterpret_cast<uintptr_t>(address);
  uint32_t alignment = 256;
  while (alignment > 1 && value % alignment)
    alignment /= 2;
  return alignment;
}

/// The leading dimension of a matrix operand and whether it is stored
/// transposed (its columns contiguous, as in a transposed view of a
/// row-major matrix, which the library reads with op = T): the stride
/// between rows, or between columns when transposed, which must leave them
/// apart (any value when there is one).
bool matrixLayout(const Tensor &t, int64_t &ld, bool &transposed) {
  int64_t rows = t.rows(), cols = t.cols();
  int64_t rowStride = t.strides[t.rank() - 2];
  int64_t colStride = t.strides[t.rank() - 1];
  transposed = cols > 1 && colStride != 1;
  if (!transposed) {
    ld = rows > 1 ? rowStride : std::max<int64_t>(1, cols);
    return ld >= std::max<int64_t>(1, cols);
  }
  if (rows > 1 && rowStride != 1)
    return false;
  ld = colStride;
  return ld >= std::max<int64_t>(1, rows);
}

/// The leading dimension of a row-major matrix (C and D: not transposed).
bool leadingDimension(const Tensor &t, int64_t &ld) {
  bool transposed;
  return matrixLayout(t, ld, transposed) && !transposed;
}

/// Everything a cached plan depends on.
using PlanKey = std::vector<int64_t>;

/// The descriptors and algorithm of one shape.
struct Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  /// The heuristic's candidates, best first; the chosen one first once
  /// tuned.
  std::vector<cublasLtMatmulAlgo_t> algos;
  bool tuned = false;
};

/// Candidates the first call of a shape times.
constexpr int kCandidates = 64;

constexpr size_t kWorkspaceBytes = 32 << 20;

std::mutex mutex;
std::map<PlanKey, std::unique_ptr<Plan>> plans;
std::map<CUstream, CUdeviceptr> workspaces;

/// The workspace of `stream` and its size: allocated on the stream's first
/// use, none when that use is during stream capture.
bool getWorkspace(CUstream stream, CUdeviceptr &workspace, size_t &bytes) {
  auto it = workspaces.find(stream);
  if (it != workspaces.end()) {
    workspace = it->second;
    bytes = kWorkspaceBytes;
    return true;
  }
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  if (!CUDA_CHECK(cuStreamIsCapturing(stream, &capture)))
    return false;
  if (capture != CU_STREAM_CAPTURE_STATUS_NONE) {
    workspace = 0;
    bytes = 0;
    return true;
  }
  if (!CUDA_CHECK(cuMemAlloc(&workspace, kWorkspaceBytes)))
    return false;
  workspaces[stream] = workspace;
  bytes = kWorkspaceBytes;
  return true;
}

/// One library call's shapes, in the library's column-major terms.
struct CallShape {
  cudaDataType_t type;
  int32_t flags;
  int64_t m, n, k, lda, ldb, ldc, ldd;
  int64_t batch, strideA, strideB, strideC, strideD;
  uint32_t alignA, alignB, alignC, alignD, alignBias;
  size_t workspaceBytes;
  /// The library's A or B is stored transposed (op = T).
  bool transA = false, transB = false;
};

std::unique_ptr<Plan> buildPlan(const CublasLt &lt, const CallShape &s,
                                const void *bias) {
  auto plan = std::make_unique<Plan>();
  cublasComputeType_t compute =
      s.type == CUDA_R_32F && !(s.flags & FUSION_MATMUL_TF32)
          ? CUBLAS_COMPUTE_32F
          : (s.type == CUDA_R_32F ? CUBLAS_COMPUTE_32F_FAST_TF32
                                  : CUBLAS_COMPUTE_32F);
  if (!LT_CHECK(lt, cublasLtMatmulDescCreate(&plan->desc, compute, CUDA_R_32F)))
    return nullptr;
  bool relu = s.flags & FUSION_MATMUL_RELU, gelu = s.flags & FUSION_MATMUL_GELU;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  if (s.flags & FUSION_MATMUL_BIAS)
    epilogue = relu   ? CUBLASLT_EPILOGUE_RELU_BIAS
               : gelu ? CUBLASLT_EPILOGUE_GELU_BIAS
                      : CUBLASLT_EPILOGUE_BIAS;
  else if (relu || gelu)
    epilogue = relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_GELU;
  if (!LT_CHECK(lt, cublasLtMatmulDescSetAttribute(
                        plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                        sizeof(epilogue))))
    return nullptr;
  // The heuristic reads the bias pointer's alignment.
  if ((s.flags & FUSION_MATMUL_BIAS) &&
      !LT_CHECK(lt, cublasLtMatmulDescSetAttribute(
                        plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                        sizeof(bias))))
    return nullptr;

  auto layout = [&](cublasLtMatrixLayout_t &l, int64_t rows, int64_t cols,
                    int64_t ld, int64_t stride) {
    if (!LT_CHECK(lt, cublasLtMatrixLayoutCreate(&l, s.type, rows, cols, ld)))
      return false;
    if (s.batch == 1)
      return true;
    int32_t count = static_cast<int32_t>(s.batch);
    return LT_CHECK(lt, cublasLtMatrixLayoutSetAttribute(
                            l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                            sizeof(count))) &&
           LT_CHECK(lt, cublasLtMatrixLayoutSetAttribute(
                            l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                            &stride, sizeof(stride)));
  };
  // A stored transposed is described as stored (k x m, n x k) and read with
  // op = T.
  for (auto [attribute, transposed] :
       {std::pair{CUBLASLT_MATMUL_DESC_TRANSA, s.transA},
        std::pair{CUBLASLT_MATMUL_DESC_TRANSB, s.transB}}) {
    cublasOperation_t op = transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (transposed &&
        !LT_CHECK(lt, cublasLtMatmulDescSetAttribute(plan->desc, attribute, &op,
                                                     sizeof(op))))
      return nullptr;
  }
  if (!(s.transA ? layout(plan->a, s.k, s.m, s.lda, s.strideA)
                 : layout(plan->a, s.m, s.k, s.lda, s.strideA)) ||
      !(s.transB ? layout(plan->b, s.n, s.k, s.ldb, s.strideB)
                 : layout(plan->b, s.k, s.n, s.ldb, s.strideB)) ||
      !layout(plan->c, s.m, s.n, s.ldc, s.strideC) ||
      !layout(plan->d, s.m, s.n, s.ldd, s.strideD))
    return nullptr;

  cublasLtMatmulPreference_t preference = nullptr;
  if (!LT_CHECK(lt, cublasLtMatmulPreferenceCreate(&preference)))
    return nullptr;
  size_t workspaceBytes = s.workspaceBytes;
  bool ok =
      LT_CHECK(lt, cublasLtMatmulPreferenceSetAttribute(
                       preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                       &workspaceBytes, sizeof(workspaceBytes)));
  std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> alignments[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, s.alignA},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, s.alignB},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, s.alignC},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, s.alignD}};
  for (auto [attribute, value] : alignments)
    ok = ok && LT_CHECK(lt, cublasLtMatmulPreferenceSetAttribute(
                                preference, attribute, &value, sizeof(value)));
  cublasLtMatmulHeuristicResult_t results[kCandidates] = {};
  int found = 0;
  ok = ok &&
       LT_CHECK(lt, cublasLtMatmulAlgoGetHeuristic(
                        lt.handle, plan->desc, plan->a, plan->b, plan->c,
                        plan->d, preference, kCandidates, results, &found));
  lt.cublasLtMatmulPreferenceDestroy(preference);
  if (!ok)
    return nullptr;
  if (found == 0) {
    reportError("cublasLtMatmulAlgoGetHeuristic",
                "no algorithm for m=" + std::to_string(s.m) +
                    " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k));
    return nullptr;
  }
  for (int i = 0; i < found; ++i)
    if (results[i].state == CUBLAS_STATUS_SUCCESS)
      plan->algos.push_back(results[i].algo);
  if (plan->algos.empty()) {
    reportError("cublasLtMatmulAlgoGetHeuristic", "no usable algorithm");
    return nullptr;
  }
  return plan;
}

/// Whether tuning may run: not disabled, and `stream` is not being
/// captured into a graph (timing would break the capture).
bool mayTune(CUstream stream) {
  static const bool enabled = [] {
    const char *value = std::getenv("FUSION_MATMUL_AUTOTUNE");
    return !value || std::string(value) != "0";
  }();
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  return enabled && CUDA_CHECK(cuStreamIsCapturing(stream, &capture)) &&
         capture == CU_STREAM_CAPTURE_STATUS_NONE;
}

/// Times `plan`'s candidates with `run` and moves the fastest to the
/// front. Before each timed call the L2 cache is flushed (a program's other
/// kernels evict the operands between its matmuls; back-to-back calls of
/// one matmul would favour algorithms that profit from a warm cache).
/// Rounds go over all candidates in turn, so a clock that drifts during
/// tuning favours none; a candidate's time is its median round, and the
/// heuristic's first choice is kept unless another is faster by kMargin.
/// Every run computes the same product into D: the call's result is
/// unchanged.
///
/// Not tuned either: a product whose output fits in L2 and is a large part
/// of its traffic (`outputBytes` at least a quarter of `operandBytes`): its
/// consumer then reads much of it from L2, which depends on the algorithm
/// in a way timing the product alone does not see (on the H200, 4096^3
/// bf16 with a bias epilogue followed by a gelu kernel: 0.213 ms with the
/// heuristic's choice, 0.219-0.231 ms with one 1-4% faster alone).
bool tune(Plan &plan, CUstream stream, int64_t outputBytes,
          int64_t operandBytes,
          const std::function<bool(const cublasLtMatmulAlgo_t &)> &run) {
  constexpr int kRounds = 5;
  constexpr float kMargin = 0.99f;
  plan.tuned = true;
  if (plan.algos.size() < 2 || !mayTune(stream))
    return true;
  CUdevice device;
  int l2Bytes = 0;
  if (!CUDA_CHECK(cuCtxGetDevice(&device)) ||
      !CUDA_CHECK(cuDeviceGetAttribute(
          &l2Bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, device)))
    return false;
  if (outputBytes <= l2Bytes && 4 * outputBytes >= operandBytes)
    return true;
  // Candidates that cannot run (their warm-up fails) are dropped.
  std::vector<cublasLtMatmulAlgo_t> usable;
  for (const cublasLtMatmulAlgo_t &algo : plan.algos)
    if (run(algo))
      usable.push_back(algo);
  if (usable.size() < 2)
    return true;
  CUdeviceptr flush = 0;
  size_t flushBytes = 2 * static_cast<size_t>(l2Bytes);
  bool ok = CUDA_CHECK(cuMemAlloc(&flush, flushBytes));
  std::vector<CUevent> events(2 * usable.size() * kRounds);
  for (CUevent &event : events)
    ok = ok && CUDA_CHECK(cuEventCreate(&event, CU_EVENT_DEFAULT));
  for (int round = 0; ok && round < kRounds; ++round)
    for (size_t i = 0; ok && i < usable.size(); ++i) {
      size_t e = 2 * (round * usable.size() + i);
      ok = CUDA_CHECK(cuMemsetD8Async(flush, round, flushBytes, stream)) &&
           CUDA_CHECK(cuEventRecord(events[e], stream)) && run(usable[i]) &&
           CUDA_CHECK(cuEventRecord(events[e + 1], stream));
    }
  ok = ok && CUDA_CHECK(cuEventSynchronize(events.back()));
  std::vector<float> median(usable.size());
  for (size_t i = 0; ok && i < usable.size(); ++i) {
    std::vector<float> times(kRounds);
    for (int round = 0; ok && round < kRounds; ++round) {
      size_t e = 2 * (round * usable.size() + i);
      ok = CUDA_CHECK(
          cuEventElapsedTime(&times[round], events[e], events[e + 1]));
    }
    std::nth_element(times.begin(), times.begin() + kRounds / 2, times.end());
    median[i] = times[kRounds / 2];
  }
  for (CUevent event : events)
    if (event)
      cuEventDestroy(event);
  if (flush)
    cuMemFree(flush);
  if (!ok)
    return false;
  size_t best = std::min_element(median.begin(), median.end()) - median.begin();
  // usable[0] is the heuristic's first choice when it runs.
  if (median[best] < kMargin * median[0])
    std::swap(usable[0], usable[best]);
  plan.algos = std::move(usable);
  return true;
}

/// The stride of each dimension of `out` (a batch shape) in `t`'s batch
/// dimensions, aligned from the right; 0 where `t` broadcasts. False if a
/// size neither matches nor is 1.
bool batchStrides(const Tensor &t, const std::vector<int64_t> &out,
                  std::vector<int64_t> &strides) {
  int64_t batchRank = t.rank() - 2;
  int64_t shift = static_cast<int64_t>(out.size()) - batchRank;
  strides.assign(out.size(), 0);
  for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i) {
    int64_t j = i - shift;
    if (j < 0 || t.sizes[j] == 1)
      continue;
    if (t.sizes[j] != out[i])
      return false;
    strides[i] = t.strides[j];
  }
  return true;
}

std::string shapeString(const Tensor &t) {
  std::string text = "[";
  for (size_t i = 0; i < t.sizes.size(); ++i)
    text += (i ? "x" : "") + std::to_string(t.sizes[i]);
  return text + "]";
}

} // namespace

/// The entries' common body; `type` and `bytes` describe every operand.
static void matmul(cudaDataType_t type, int64_t bytes, int64_t aRank,
                   void *aDesc, int64_t bRank, void *bDesc, int64_t cRank,
                   void *cDesc, int64_t biasRank, void *biasDesc, int64_t dRank,
                   void *dDesc, int32_t flags, float alpha) {
  const char *entry = FUSION_CUDA_MATMUL_ENTRY;
  if (aRank < 2 || bRank < 2 || dRank < 2) {
    reportError(entry, "operands of rank below 2");
    return;
  }
  Tensor a = readDescriptor(aRank, aDesc, bytes);
  Tensor b = readDescriptor(bRank, bDesc, bytes);
  Tensor d = readDescriptor(dRank, dDesc, bytes);
  bool hasResidual = flags & FUSION_MATMUL_RESIDUAL;
  bool hasBias = flags & FUSION_MATMUL_BIAS;
  Tensor c = hasResidual ? readDescriptor(cRank, cDesc, bytes) : d;
  Tensor bias = hasBias ? readDescriptor(biasRank, biasDesc, bytes) : Tensor();

  // Sizes that must agree, checked before anything runs.
  int64_t m = d.rows(), n = d.cols(), k = a.cols();
  // Built only for an error message.
  auto shapes = [&] {
    return "A " + shapeString(a) + ", B " + shapeString(b) + ", D " +
           shapeString(d);
  };
  if (a.rows() != m || b.rows() != k || b.cols() != n) {
    reportError(entry, "mismatched sizes: " + shapes());
    return;
  }
  if (hasResidual && c.sizes != d.sizes) {
    reportError(entry, "the residual " + shapeString(c) +
                           " is not the product's shape " + shapeString(d));
    return;
  }
  if (hasBias) {
    int64_t count = 1;
    for (int64_t size : bias.sizes)
      count *= size;
    if (bias.sizes.empty() || bias.sizes.back() != n || count != n) {
      reportError(entry, "the bias " + shapeString(bias) +
                             " is not one row of " + std::to_string(n) +
                             " columns");
      return;
    }
  }
  std::vector<int64_t> batchShape(d.sizes.begin(), d.sizes.end() - 2);
  std::vector<int64_t> strideA, strideB, strideC, strideD;
  if (!batchStrides(a, batchShape, strideA) ||
      !batchStrides(b, batchShape, strideB) ||
      !batchStrides(c, batchShape, strideC) ||
      !batchStrides(d, batchShape, strideD) ||
      static_cast<int64_t>(batchShape.size()) < std::max(aRank, bRank) - 2) {
    reportError(entry, "batch dimensions do not broadcast: " + shapes());
    return;
  }
  int64_t lda, ldb, ldc, ldd;
  bool transposedA, transposedB;
  if (!matrixLayout(a, lda, transposedA) ||
      !matrixLayout(b, ldb, transposedB) || !leadingDimension(c, ldc) ||
      !leadingDimension(d, ldd)) {
    reportError(entry, "an operand's rows are not contiguous: " + shapes());
    return;
  }
  int64_t total = m * n;
  for (int64_t size : batchShape)
    total *= size;
  if (total == 0)
    return;
  if (k == 0) {
    // An empty contraction: the product is 0, and so are relu(0) and
    // gelu(0). With a residual or bias the library is not asked (it
    // wants K > 0): that case is reported, not computed.
    if (hasResidual || hasBias) {
      reportError(entry, "K = 0 (an empty contraction) with a residual or "
                         "bias is not supported");
      return;
    }
    if (!ensureContext())
      return;
    // D is the call's own output buffer: dense, row-major.
    CUDA_CHECK(cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(d.data), 0,
                               static_cast<size_t>(total * bytes),
                               fusion::cuda::getCallerStream()));
    return;
  }

  // Collapse the innermost batch dimensions every operand steps through
  // evenly into one strided batch (`batch` matrices, `step` elements
  // apart); the dimensions outside it are loops of calls.
  const std::vector<int64_t> *strides[] = {&strideA, &strideB, &strideC,
                                           &strideD};
  int64_t inner = static_cast<int64_t>(batchShape.size()), batch = 1;
  int64_t step[4] = {0, 0, 0, 0};
  for (; inner > 0; --inner) {
    int64_t dim = inner - 1, size = batchShape[dim];
    if (size == 1)
      continue;
    bool even = true;
    for (int i = 0; i < 4; ++i)
      even &= batch == 1 || (*strides[i])[dim] == batch * step[i];
    if (!even)
      break;
    if (batch == 1)
      for (int i = 0; i < 4; ++i)
        step[i] = (*strides[i])[dim];
    batch *= size;
  }

  const CublasLt *lt = getCublasLt();
  if (!lt || !ensureContext())
    return;
  CUstream stream = fusion::cuda::getCallerStream();
  std::lock_guard<std::mutex> lock(mutex);
  CUdeviceptr workspace;
  size_t workspaceBytes;
  if (!getWorkspace(stream, workspace, workspaceBytes))
    return;
  CallShape shape = {type,
                     flags,
                     n,
                     m,
                     k,
                     ldb,
                     lda,
                     ldc,
                     ldd,
                     batch,
                     step[1],
                     step[0],
                     step[2],
                     step[3],
                     alignmentOf(b.data),
                     alignmentOf(a.data),
                     alignmentOf(c.data),
                     alignmentOf(d.data),
                     hasBias ? alignmentOf(bias.data) : 256u,
                     workspaceBytes};
  // In the library's column-major terms A is our B and B our A.
  shape.transA = transposedB;
  shape.transB = transposedA;
  PlanKey key = {shape.transA,    shape.transB,
                 shape.type,      shape.flags,
                 shape.m,         shape.n,
                 shape.k,         shape.lda,
                 shape.ldb,       shape.ldc,
                 shape.ldd,       shape.batch,
                 shape.strideA,   shape.strideB,
                 shape.strideC,   shape.strideD,
                 shape.alignA,    shape.alignB,
                 shape.alignC,    shape.alignD,
                 shape.alignBias, static_cast<int64_t>(workspaceBytes)};

  std::unique_ptr<Plan> &plan = plans[key];
  if (!plan && !(plan = buildPlan(*lt, shape, bias.data))) {
    plans.erase(key);
    return;
  }
  if (hasBias) {
    const void *pointer = bias.data;
    if (!LT_CHECK(*lt, cublasLtMatmulDescSetAttribute(
                           plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                           &pointer, sizeof(pointer))))
      return;
  }
  float beta = hasResidual ? 1.0f : 0.0f;
  // One call per index of the outer batch dimensions.
  auto runAll = [&](const cublasLtMatmulAlgo_t &algo, bool report) {
    std::vector<int64_t> index(inner, 0);
    while (true) {
      int64_t offA = 0, offB = 0, offC = 0, offD = 0;
      for (int64_t dim = 0; dim < inner; ++dim) {
        offA += index[dim] * strideA[dim];
        offB += index[dim] * strideB[dim];
        offC += index[dim] * strideC[dim];
        offD += index[dim] * strideD[dim];
      }
      cublasStatus_t status = lt->cublasLtMatmul(
          lt->handle, plan->desc, &alpha, b.data + offB * bytes, plan->a,
          a.data + offA * bytes, plan->b, &beta, c.data + offC * bytes, plan->c,
          d.data + offD * bytes, plan->d, &algo,
          reinterpret_cast<void *>(workspace), workspaceBytes, stream);
      if (status != CUBLAS_STATUS_SUCCESS)
        return report ? checkStatus(*lt, status, "cublasLtMatmul") : false;
      int64_t dim = inner - 1;
      while (dim >= 0 && ++index[dim] == batchShape[dim])
        index[dim--] = 0;
      if (dim < 0)
        return true;
    }
  };
  int64_t matrices = total / (m * n);
  if (!plan->tuned &&
      !tune(*plan, stream, total * bytes, matrices * (m + n) * k * bytes,
            [&](const cublasLtMatmulAlgo_t &algo) {
              return runAll(algo, /*report=*/false);
            }))
    return;
  runAll(plan->algos.front(), /*report=*/true);
}

#define FUSION_MATMUL_ENTRY(suffix, type, bytes)                               \
  extern "C" void fusion_cuda_matmul_##suffix(                                 \
      int64_t aRank, void *a, int64_t bRank, void *b, int64_t cRank, void *c,  \
      int64_t biasRank, void *bias, int64_t dRank, void *d, int32_t flags,     \
      float alpha) {                                                           \
    matmul(type, bytes, aRank, a, bRank, b, cRank, c, biasRank, bias, dRank,   \
           d, flags, alpha);                                                   \
  }
FUSION_MATMUL_ENTRY(f32, CUDA_R_32F, 4)
FUSION_MATMUL_ENTRY(f16, CUDA_R_16F, 2)
FUSION_MATMUL_ENTRY(bf16, CUDA_R_16BF, 2)
