//===- KernelsToGPU.cpp - One GPU launch per fused kernel -----------------===//
//
// Turns every public function of fusion kernels into a destination-passing
// function on device buffers, with one gpu.launch per fusion.kernel (or a
// library call). How each kernel runs is its plan (`#fusion.plan`, from
// fusion-plan-kernels, or made here with the same options for kernels that
// have none); the strategy the plan names emits the launch (Strategies.h).
// This file owns the host side: buffers, allocations, copies of results.
//
//===----------------------------------------------------------------------===//

#include "LibraryMatmulCall.h"
#include "Strategies.h"

#include "fusion/Conversion/Passes.h"
#include "fusion/Dialect/Fusion/Analysis/DynamicDims.h"
#include "fusion/Dialect/Fusion/Analysis/KernelPlan.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "fusion/Dialect/Fusion/Transforms/KernelFusion.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSIONKERNELSTOGPU
#include "fusion/Conversion/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::codegen;

namespace {

/// The launch of `kernel` by the strategy its plan names.
static LogicalResult emitKernel(OpBuilder &b, KernelOp kernel,
                                const KernelBuffers &buffers) {
  Location loc = kernel.getLoc();
  KernelPlanAttr plan = kernel.getPlanAttr();
  switch (plan.getStrategy()) {
  case KernelStrategy::elementwise:
    return emitElementwise(b, loc, kernel, plan, buffers);
  case KernelStrategy::rows:
  case KernelStrategy::cluster_rows:
    return emitRows(b, loc, kernel, plan, buffers);
  case KernelStrategy::columns:
    return emitColumns(b, loc, kernel, plan, buffers);
  case KernelStrategy::split_reduction:
    return emitSplitReduction(b, loc, kernel, plan, buffers);
  case KernelStrategy::matmul_tiles:
    return emitMatmulTiles(b, loc, kernel, plan, buffers);
  case KernelStrategy::matmul_wgmma:
    return emitMatmulWgmma(b, loc, kernel, plan, buffers);
  case KernelStrategy::per_element:
    return emitPerElement(b, loc, kernel, plan, buffers);
  case KernelStrategy::attention_rows:
    return emitAttentionRows(b, loc, kernel, plan, buffers);
  case KernelStrategy::attention_tiles:
    return emitAttentionTiles(b, loc, kernel, plan, buffers);
  case KernelStrategy::library_matmul:
    break;
  }
  return kernel.emitOpError("has a library_matmul plan that was not turned "
                            "into a library call");
}

static MemRefType bufferType(Type tensorType) {
  auto t = cast<RankedTensorType>(tensorType);
  return MemRefType::get(t.getShape(), t.getElementType());
}

/// A device buffer holding `constant`'s value, copied from a host global
/// made for it (as bufferization does for a constant on the CPU path).
static Value copyConstantToDevice(OpBuilder &b, ConstantOp constant) {
  Location loc = constant.getLoc();
  auto module = constant->getParentOfType<ModuleOp>();
  auto type = bufferType(constant.getType());
  std::string name;
  for (unsigned i = 0;; ++i) {
    name = "__fusion_constant_" + std::to_string(i);
    if (!module.lookupSymbol(name))
      break;
  }
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    memref::GlobalOp::create(b, loc, name, b.getStringAttr("private"), type,
                             constant.getValue(), /*constant=*/true,
                             /*alignment=*/IntegerAttr());
  }
  Value host = memref::GetGlobalOp::create(b, loc, type, name);
  Type tokenType = gpu::AsyncTokenType::get(b.getContext());
  auto alloc =
      gpu::AllocOp::create(b, loc, type, tokenType,
                           ValueRange{startToken(b, loc)}, {}, ValueRange{});
  waitFor(b, loc, alloc.getAsyncToken());
  waitFor(b, loc,
          gpu::MemcpyOp::create(b, loc, tokenType,
                                ValueRange{startToken(b, loc)},
                                alloc.getMemref(), host)
              .getAsyncToken());
  return alloc.getMemref();
}

/// `buffer` (contiguous, row-major) as a buffer of `type`: the same
/// elements under another shape, no copy. The k-th dynamic size of `type`
/// is the buffer's k-th (fusion.reshape's rule); strides are row-major.
static Value viewAs(OpBuilder &b, Location loc, Value buffer,
                    MemRefType type) {
  SmallVector<Value> dynamicSizes;
  for (int64_t d :
       getDynamicDims(cast<MemRefType>(buffer.getType()).getShape()))
    dynamicSizes.push_back(memref::DimOp::create(b, loc, buffer, d));
  SmallVector<OpFoldResult> sizes(type.getRank()), strides(type.getRank());
  for (int64_t d = 0, k = 0; d < type.getRank(); ++d)
    sizes[d] = type.isDynamicDim(d) ? OpFoldResult(dynamicSizes[k++])
                                    : OpFoldResult(b.getIndexAttr(
                                          type.getDimSize(d)));
  OpFoldResult stride = b.getIndexAttr(1);
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    strides[d] = stride;
    if (d == 0)
      break;
    std::optional<int64_t> s = getConstantIntValue(stride),
                           n = getConstantIntValue(sizes[d]);
    if (s && n)
      stride = b.getIndexAttr(*s * *n);
    else
      stride = arith::MulIOp::create(
                   b, loc, getValueOrCreateConstantIndexOp(b, loc, stride),
                   getValueOrCreateConstantIndexOp(b, loc, sizes[d]))
                   .getResult();
  }
  return memref::ReinterpretCastOp::create(b, loc, type, buffer,
                                           b.getIndexAttr(0), sizes, strides);
}

/// The matmul kernels that run as library calls.
using LibraryCalls = DenseMap<Operation *, LibraryMatmulCall>;

/// Rebuilds `function` on device buffers: inputs, then one output buffer
/// per result; every kernel becomes a launch, or a library call.
static LogicalResult convertFunction(func::FuncOp function,
                                     const LibraryCalls &libraryCalls,
                                     bool tf32, bool launchDependents) {
  Location loc = function.getLoc();
  MLIRContext *context = function.getContext();
  Type tokenType = gpu::AsyncTokenType::get(context);
  SmallVector<Type> argTypes;
  for (Type t : function.getArgumentTypes()) {
    if (!isa<RankedTensorType>(t))
      return function.emitOpError("GPU functions take tensors only");
    argTypes.push_back(bufferType(t));
  }
  for (Type t : function.getResultTypes())
    argTypes.push_back(bufferType(t));

  OpBuilder b(function);
  auto converted = func::FuncOp::create(
      b, loc, function.getName(), FunctionType::get(context, argTypes, {}));
  converted->setAttr("llvm.emit_c_interface", UnitAttr::get(context));
  if (Attribute checks = function->getAttr(kSizeChecksAttrName))
    converted->setAttr(kSizeChecksAttrName, checks);
  Block *entry = converted.addEntryBlock();
  b.setInsertionPointToStart(entry);

  Block &body = function.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  unsigned numInputs = function.getNumArguments();
  DenseMap<Value, Value> buffers;
  for (auto [arg, buffer] :
       llvm::zip(body.getArguments(), entry->getArguments()))
    buffers[arg] = buffer;
  // A kernel result returned by the function, or reshaped and returned
  // (a view of it: the same elements in the same order), is written straight
  // into the output buffer, viewed in its shape (its first return only).
  DenseMap<Value, Value> returnedInto;
  SmallVector<bool> returnedInPlace(ret.getNumOperands(), false);
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    Value root = value;
    while (auto reshape = root.getDefiningOp<ReshapeOp>())
      root = reshape.getX();
    if (!root.getDefiningOp<KernelOp>() || returnedInto.count(root))
      continue;
    Value out = entry->getArgument(numInputs + i);
    returnedInto[root] =
        root == value ? out : viewAs(b, loc, out, bufferType(root.getType()));
    returnedInPlace[i] = true;
  }

  // Buffers of the function's inputs (and views of them), which no kernel
  // of the function writes; whether the last launch was a kernel of the
  // function (KernelBuffers::settled).
  DenseSet<Value> inputBuffers(entry->getArguments().begin(),
                               entry->getArguments().begin() + numInputs);
  bool afterOwnKernel = false;
  SmallVector<Value> allocations;
  for (Operation &op : body.without_terminator()) {
    if (auto constant = dyn_cast<ConstantOp>(op)) {
      // Splat constants live inside the kernels; a constant that is a
      // kernel input (not a splat) or a result gets a device buffer.
      if (constant->use_empty())
        continue;
      Value buffer = copyConstantToDevice(b, constant);
      buffers[constant.getResult()] = buffer;
      allocations.push_back(buffer);
      continue;
    }
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      Value source = buffers.lookup(reshape.getX());
      if (!source)
        return reshape.emitOpError("reshapes a value that is not a device "
                                   "buffer (only function arguments, "
                                   "constants and kernel results are)");
      buffers[reshape.getResult()] = viewAs(b, reshape.getLoc(), source,
                                            bufferType(reshape.getType()));
      if (inputBuffers.contains(source))
        inputBuffers.insert(buffers[reshape.getResult()]);
      continue;
    }
    auto kernel = dyn_cast<KernelOp>(op);
    if (!kernel)
      return op.emitOpError("cannot run on the GPU outside a fusion.kernel "
                            "(run the fusion passes first)");
    KernelBuffers kb;
    for (Value input : kernel.getInputs()) {
      Value buffer = buffers.lookup(input);
      if (!buffer)
        return kernel.emitOpError("an input is not a device buffer (only "
                                  "function arguments and kernel results "
                                  "are)");
      kb.inputs.push_back(buffer);
      kb.settled.push_back(launchDependents && afterOwnKernel &&
                           inputBuffers.contains(buffer));
    }
    for (auto [result, yielded] :
         llvm::zip(kernel.getResults(), kernel.getYield().getValues())) {
      Value buffer = returnedInto.lookup(result);
      if (!buffer) {
        auto type = bufferType(result.getType());
        SmallVector<Value> sizes;
        for (int64_t d = 0; d < type.getRank(); ++d) {
          if (!type.isDynamicDim(d))
            continue;
          std::optional<std::pair<Value, int64_t>> source =
              traceDynamicDim(yielded, d);
          if (!source || !buffers.count(source->first))
            return kernel.emitOpError("cannot size dynamic dimension ")
                   << d << " of result " << result.getResultNumber();
          sizes.push_back(memref::DimOp::create(b, loc, buffers[source->first],
                                                source->second));
        }
        // The host lowering handles the asynchronous forms: wait on each.
        auto alloc = gpu::AllocOp::create(b, loc, type, tokenType,
                                          ValueRange{startToken(b, loc)}, sizes,
                                          ValueRange{});
        waitFor(b, loc, alloc.getAsyncToken());
        buffer = alloc.getMemref();
        allocations.push_back(buffer);
      }
      buffers[result] = buffer;
      kb.outputs.push_back(buffer);
    }
    // A library's kernels may let the next one start before the grids
    // before them are done.
    auto call = libraryCalls.find(kernel);
    afterOwnKernel = call == libraryCalls.end();
    if (!afterOwnKernel)
      emitLibraryMatmulCall(b, kernel.getLoc(), call->second, kb.inputs,
                            kb.outputs[0], tf32);
    else if (failed(emitKernel(b, kernel, kb)))
      return failure();
  }
  // Results not written in place (function arguments, repeats) are copied.
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    Value out = entry->getArgument(numInputs + i);
    Value buffer = buffers.lookup(value);
    if (!returnedInPlace[i] && buffer != out)
      waitFor(b, loc,
              gpu::MemcpyOp::create(b, loc, tokenType,
                                    ValueRange{startToken(b, loc)}, out, buffer)
                  .getAsyncToken());
  }
  for (Value allocation : allocations)
    waitFor(b, loc,
            gpu::DeallocOp::create(b, loc, tokenType,
                                   ValueRange{startToken(b, loc)}, allocation)
                .getAsyncToken());
  func::ReturnOp::create(b, loc);
  function.erase();
  return success();
}

struct KernelsToGPUPass
    : fusion::impl::FusionKernelsToGPUBase<KernelsToGPUPass> {
  using Base::Base;

  /// A plan for every kernel that has none (with this pass's options, as
  /// fusion-plan-kernels makes it); plans written by hand are checked.
  LogicalResult planKernels(ModuleOp module) {
    OpPassManager pm(ModuleOp::getOperationName());
    FusionPlanKernelsOptions options;
    options.chip = chip;
    options.matmulBackend = matmulBackend;
    options.maxRowElements = maxRowElements;
    pm.addPass(createFusionPlanKernels(options));
    return runPipeline(pm, module);
  }

  /// The kernels planned as library calls, read before the bodies are
  /// decomposed (a library epilogue names gelu, not its expansion).
  FailureOr<LibraryCalls> selectLibraryCalls(ModuleOp module) {
    LibraryCalls calls;
    WalkResult result = module.walk([&](KernelOp kernel) {
      if (kernel.getPlanAttr().getStrategy() !=
          KernelStrategy::library_matmul)
        return WalkResult::advance();
      std::string reason;
      FailureOr<LibraryMatmulCall> call = getLibraryMatmulCall(kernel, reason);
      if (failed(call)) {
        kernel.emitOpError("is not one library call: ") << reason;
        return WalkResult::interrupt();
      }
      calls[kernel] = *call;
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return failure();
    return calls;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    eraseFusionOptions(module);
    if (failed(planKernels(module)))
      return signalPassFailure();
    FailureOr<LibraryCalls> libraryCalls = selectLibraryCalls(module);
    if (failed(libraryCalls))
      return signalPassFailure();
    // Kernels hold primitive ops only, but for the softmax of an attention
    // kernel whose strategy computes it online, and the elementwise
    // composites (gelu, silu, sigmoid), which the strategies evaluate whole
    // (ScalarOps), as the CPU path does: their math then sees the precision
    // their result is rounded to (getMathPrecision).
    RewritePatternSet patterns(&getContext());
    populateDecomposePatterns(patterns, /*elementwise=*/false,
                              [](Operation *op) {
                                auto kernel = op->getParentOfType<KernelOp>();
                                return kernel && kernel.getPlanAttr() &&
                                       llvm::is_contained(
                                           {KernelStrategy::attention_rows,
                                            KernelStrategy::attention_tiles},
                                           kernel.getPlanAttr().getStrategy());
                              });
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      return signalPassFailure();
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(&getContext()));
    for (auto function :
         llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      if (function.isExternal() || !function.isPublic())
        continue;
      if (failed(convertFunction(function, *libraryCalls, matmulTf32,
                                 launchDependents)))
        return signalPassFailure();
    }
    module.walk(useGpuMathForms);
  }
};

} // namespace
