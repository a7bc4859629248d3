//===- Pipelines.h - Fusion's pass pipelines --------------------*- C++ -*-===//

#ifndef FUSION_PIPELINES_PIPELINES_H
#define FUSION_PIPELINES_PIPELINES_H

#include "fusion/Conversion/Passes.h"
#include "fusion/Dialect/Fusion/Transforms/KernelFusion.h"

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;

namespace fusion {

/// Options of `fusion-pipeline`; they reach the fusion passes unchanged.
struct FusionPipelineOptions
    : public PassPipelineOptions<FusionPipelineOptions> {
  PassOptions::Option<int64_t> maxOps{
      *this, "max-ops", llvm::cl::desc("Most compute ops in one kernel"),
      llvm::cl::init(128)};
  PassOptions::Option<int64_t> maxParams{
      *this, "max-params",
      llvm::cl::desc("Most kernel parameters (inputs plus results)"),
      llvm::cl::init(32)};
  PassOptions::Option<int64_t> maxLiveValues{
      *this, "max-live-values",
      llvm::cl::desc("Most values live at once per thread"),
      llvm::cl::init(64)};
  PassOptions::Option<int64_t> maxRowElements{
      *this, "max-row-elements",
      llvm::cl::desc("Longest row a row_reduction kernel keeps on chip"),
      llvm::cl::init(32768)};
  PassOptions::Option<int64_t> maxRecomputeOps{
      *this, "max-recompute-ops",
      llvm::cl::desc("Largest producer recomputed in each consumer"),
      llvm::cl::init(8)};
  PassOptions::Option<MatmulEpilogue> matmulEpilogue{
      *this, "matmul-epilogue",
      llvm::cl::desc("Which elementwise ops join a matmul: its epilogue, "
                     "and with any its operands' prologues"),
      llvm::cl::init(MatmulEpilogue::library), matmulEpilogueValues()};
  PassOptions::Option<bool> horizontal{
      *this, "horizontal", llvm::cl::desc("Run fusion-fuse-horizontal"),
      llvm::cl::init(true)};
  PassOptions::Option<AttentionKernels> attention{
      *this, "attention",
      llvm::cl::desc("Which attentions fusion-fuse-attention (run first) "
                     "makes kernels of"),
      llvm::cl::init(AttentionKernels::all), attentionKernelsValues()};
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("The GPU whose attention strategies attention=gpu asks "
                     "of"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<bool> emitRemarks{
      *this, "emit-remarks",
      llvm::cl::desc("Remarks on every edge left unfused"),
      llvm::cl::init(false)};
};

/// The options both lowerings take for building their kernels.
template <typename Derived>
struct KernelBuildingOptions : public PassPipelineOptions<Derived> {
  template <typename T>
  using Option = typename PassPipelineOptions<Derived>::template Option<T>;

  Option<bool> fuse{
      *this, "fuse",
      llvm::cl::desc("Fuse (true) or build one kernel per op (false)"),
      llvm::cl::init(true)};
  Option<MatmulEpilogue> matmulEpilogue{
      *this, "matmul-epilogue",
      llvm::cl::desc("Which elementwise ops join a matmul: its epilogue, "
                     "and with any its operands' prologues (with fuse)"),
      llvm::cl::init(MatmulEpilogue::library), matmulEpilogueValues()};
};

/// Options of `fusion-to-cpu`.
struct FusionToCpuOptions : public KernelBuildingOptions<FusionToCpuOptions> {
  PassOptions::Option<bool> countTraffic{
      *this, "count-traffic",
      llvm::cl::desc("Count each kernel's external traffic at run time "
                     "(needs libfusion_cpu_runtime)"),
      llvm::cl::init(false)};
};

/// Options of `fusion-to-nvvm`.
struct FusionToNvvmOptions
    : public KernelBuildingOptions<FusionToNvvmOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("Target GPU (sm_90 for an H100/H200)"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What the GPU module becomes: isa (PTX), bin (cubin) "
                     "or fatbin"),
      llvm::cl::init("fatbin")};
  PassOptions::Option<int> optLevel{
      *this, "opt-level",
      llvm::cl::desc("LLVM optimization level for the device code"),
      llvm::cl::init(3)};
  PassOptions::Option<MatmulBackend> matmulBackend{
      *this, "matmul-backend",
      llvm::cl::desc("How matmul kernels run"),
      llvm::cl::init(MatmulBackend::automatic), matmulBackendValues()};
  PassOptions::Option<bool> matmulTf32{
      *this, "matmul-tf32",
      llvm::cl::desc("Library f32 matmuls may use TF32 tensor cores "
                     "(faster, about 1e-3 relative error)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> launchDependents{
      *this, "launch-dependents",
      llvm::cl::desc("Kernels (sm_90 and newer) launch as programmatic "
                     "dependents of the kernel before them "
                     "(fusion-launch-dependents; not yet measured, off)"),
      llvm::cl::init(false)};
};

/// fuse-attention, decompose, canonicalize, cse, fuse-producer-consumer,
/// fuse-reductions, fuse-horizontal, canonicalize, cse.
void buildFusionPipeline(OpPassManager &pm,
                         const FusionPipelineOptions &options);

/// The CPU path: kernels (fused or not) outlined into functions, lowered
/// through linalg, bufferization and loops to the LLVM dialect, with a
/// destination-passing C interface (`_mlir_ciface_<function>`).
void buildFusionToCpuPipeline(OpPassManager &pm,
                              const FusionToCpuOptions &options);

/// The attention kernels each lowering forms: the CPU computes any op by
/// op; the GPU only those its attention strategy runs (the others would run
/// per_element, so there they stay their products and softmax).
inline constexpr AttentionKernels kCpuAttentionKernels = AttentionKernels::all;
inline constexpr AttentionKernels kGpuAttentionKernels = AttentionKernels::gpu;

/// The kernels both lowerings start from: fusion-pipeline when `fuse`
/// (with the `attention` kernels), otherwise one kernel per primitive op
/// (decompose, canonicalize, cse, fusion-outline), so the unfused program
/// goes through the same code. `chip` is the GPU of `attention=gpu`.
void buildFusionKernels(OpPassManager &pm, bool fuse,
                        MatmulEpilogue matmulEpilogue,
                        AttentionKernels attention, StringRef chip = "sm_90");

/// Registers `fusion-pipeline`.
void registerFusionPipelines();

/// Registers `fusion-to-cpu`.
void registerFusionToCpuPipeline();

/// The GPU path: one launch per kernel (fusion-kernels-to-gpu), then
/// upstream's NVVM lowering to PTX/cubin embedded in host code.
void buildFusionToNvvmPipeline(OpPassManager &pm,
                               const FusionToNvvmOptions &options);

/// Registers `fusion-to-nvvm`.
void registerFusionToNvvmPipeline();

} // namespace fusion
} // namespace mlir

#endif // FUSION_PIPELINES_PIPELINES_H
