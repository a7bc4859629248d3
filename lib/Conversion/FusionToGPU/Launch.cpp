//===- Launch.cpp - Launches and index arithmetic for GPU strategies ------===//

#include "Launch.h"

#include "fusion/Conversion/ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::codegen;

Value codegen::indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

llvm::MaybeAlign codegen::vectorAlignment(Type element, int64_t width) {
  int64_t bytes = std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
  return llvm::Align(std::min<int64_t>(16, bytes * width));
}

SmallVector<Value> codegen::delinearize(OpBuilder &b, Location loc, Value flat,
                                      ArrayRef<Value> sizes) {
  SmallVector<Value> index(sizes.size());
  for (int64_t d = sizes.size() - 1; d >= 0; --d) {
    index[d] = d == 0 ? flat : arith::RemUIOp::create(b, loc, flat, sizes[d]);
    if (d > 0)
      flat = arith::DivUIOp::create(b, loc, flat, sizes[d]);
  }
  return index;
}

SmallVector<Value> codegen::sizesOf(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    sizes.push_back(type.isDynamicDim(d)
                        ? memref::DimOp::create(b, loc, buffer, d).getResult()
                        : indexConst(b, loc, type.getDimSize(d)));
  return sizes;
}

Value codegen::product(OpBuilder &b, Location loc, ArrayRef<Value> values) {
  Value p = indexConst(b, loc, 1);
  for (Value v : values)
    p = arith::MulIOp::create(b, loc, p, v);
  return p;
}

Value codegen::collapseToFlat(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  if (type.getRank() == 1)
    return buffer;
  ReassociationIndices all =
      llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  // Dynamic if any size is (even beside a 0), as the verifier requires;
  // the inferred type would be a static 0.
  int64_t flatSize = 1;
  for (int64_t d : type.getShape())
    flatSize = ShapedType::isDynamic(d) || ShapedType::isDynamic(flatSize)
                   ? ShapedType::kDynamic
                   : flatSize * d;
  auto flatType = MemRefType::get({flatSize}, type.getElementType());
  return memref::CollapseShapeOp::create(b, loc, flatType, buffer,
                                         ArrayRef<ReassociationIndices>{all});
}

LogicalResult codegen::emitLaunch(
    OpBuilder &b, Location loc, KernelOp kernel, Value blocks, int64_t threads,
    function_ref<LogicalResult(OpBuilder &, const LaunchIds &)> body,
    TypeRange shared, int64_t clusterBlocks, int64_t dynamicShared,
    StringRef nameSuffix) {
  Value one = indexConst(b, loc, 1);
  // A grid is at most 2^31 - 1 blocks wide; grid-stride loops cover more.
  blocks = arith::MinUIOp::create(b, loc, blocks,
                                  indexConst(b, loc, (int64_t(1) << 31) - 1));
  blocks = arith::MaxUIOp::create(b, loc, blocks, one);
  Value clusterX, clusterY, clusterZ;
  if (clusterBlocks) {
    clusterX = indexConst(b, loc, clusterBlocks);
    clusterY = clusterZ = one;
  }
  std::string name =
      (kernel.getName().value_or("fusion_kernel") + nameSuffix).str();
  auto launch = gpu::LaunchOp::create(
      b, loc, blocks, one, one, indexConst(b, loc, threads), one, one,
      dynamicShared ? arith::ConstantIntOp::create(b, loc, dynamicShared, 32)
                    : Value(),
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{}, shared, /*privateAttributions=*/{}, clusterX,
      clusterY, clusterZ,
      FlatSymbolRefAttr::get(b.getContext(), name + "_module"),
      FlatSymbolRefAttr::get(b.getContext(), name));
  OpBuilder::InsertionGuard guard(b);
  Block &entry = launch.getBody().front();
  // The builder leaves out the six cluster arguments (cluster ids and
  // sizes) that the verifier and the parser place after the first twelve.
  if (clusterBlocks)
    for (unsigned i = 0; i < 6; ++i)
      entry.insertArgument(gpu::LaunchOp::kNumConfigRegionAttributes + i,
                           b.getIndexType(), loc);
  b.setInsertionPointToStart(&entry);
  LaunchIds ids{launch.getBlockIds().x, launch.getThreadIds().x,
                launch.getGridSize().x, launch.getWorkgroupAttributions()};
  if (failed(body(b, ids)))
    return failure();
  gpu::TerminatorOp::create(b, loc);
  return success();
}

FailureOr<Value> codegen::multiprocessorCount(OpBuilder &b, Location loc) {
  auto module =
      b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  // Declared on first use; fails (with an error) where the module declares
  // the name with another type.
  FailureOr<func::FuncOp> entry = func::lookupOrCreateFnDecl(
      b, module, "fusion_cuda_multiprocessors", TypeRange{});
  if (failed(entry))
    return failure();
  Value count = func::CallOp::create(b, loc, *entry, ValueRange{}).getResult(0);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), count)
      .getResult();
}

Value codegen::startToken(OpBuilder &b, Location loc) {
  return gpu::WaitOp::create(b, loc, gpu::AsyncTokenType::get(b.getContext()),
                             ValueRange{})
      .getAsyncToken();
}

void codegen::waitFor(OpBuilder &b, Location loc, Value token) {
  gpu::WaitOp::create(b, loc, Type(), ValueRange{token});
}

void codegen::emitIf(OpBuilder &b, Location loc, Value condition,
                     function_ref<void()> body) {
  auto ifOp = scf::IfOp::create(b, loc, condition);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  body();
}

Value codegen::allocateScratch(OpBuilder &b, Location loc, MemRefType type,
                               ValueRange dynamicSizes) {
  auto alloc = gpu::AllocOp::create(
      b, loc, type, gpu::AsyncTokenType::get(b.getContext()),
      ValueRange{startToken(b, loc)}, dynamicSizes, ValueRange{});
  waitFor(b, loc, alloc.getAsyncToken());
  return alloc.getMemref();
}

Value codegen::allocateScratch(OpBuilder &b, Location loc, Type element,
                               Value count) {
  return allocateScratch(b, loc,
                         MemRefType::get({ShapedType::kDynamic}, element),
                         ValueRange{count});
}

void codegen::releaseScratch(OpBuilder &b, Location loc, Value buffer) {
  waitFor(b, loc,
          gpu::DeallocOp::create(b, loc,
                                 gpu::AsyncTokenType::get(b.getContext()),
                                 ValueRange{startToken(b, loc)}, buffer)
              .getAsyncToken());
}

/// The runtime's function `name` taking `inputs`, returning `results`,
/// with memrefs passed as descriptors (`_mlir_ciface_<name>`), declared on
/// first use.
static FailureOr<func::FuncOp> runtimeFunction(OpBuilder &b, StringRef name,
                                               TypeRange inputs,
                                               TypeRange results) {
  auto module =
      b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  auto type = b.getFunctionType(inputs, results);
  // Fails (with an error) where the module declares `name` with another
  // type.
  FailureOr<func::FuncOp> function = func::lookupFnDecl(module, name, type);
  if (failed(function))
    return failure();
  if (!*function)
    function = func::createFnDecl(b, module, name, type, /*setPrivate=*/true);
  (*function)->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                       b.getUnitAttr());
  return function;
}

FailureOr<Value> codegen::acquireArrivalCounters(OpBuilder &b, Location loc,
                                                 Value count) {
  auto type = MemRefType::get({ShapedType::kDynamic}, b.getI32Type());
  FailureOr<func::FuncOp> acquire = runtimeFunction(
      b, "fusion_cuda_arrival_counters", b.getIndexType(), type);
  if (failed(acquire))
    return failure();
  return func::CallOp::create(b, loc, *acquire, count).getResult(0);
}

LogicalResult codegen::releaseArrivalCounters(OpBuilder &b, Location loc,
                                              Value counters) {
  FailureOr<func::FuncOp> release =
      runtimeFunction(b, "fusion_cuda_release_arrival_counters",
                      counters.getType(), TypeRange{});
  if (failed(release))
    return failure();
  func::CallOp::create(b, loc, *release, counters);
  return success();
}

namespace {
/// Adds one to `arrivals[index]`; returns the count before it.
Value emitCount(OpBuilder &b, Location loc, Value arrivals, Value index) {
  return memref::AtomicRMWOp::create(
      b, loc, arith::AtomicRMWKind::addi,
      arith::ConstantIntOp::create(b, loc, 1, 32), arrivals, ValueRange{index});
}

/// Where every other arrival has counted (`before` equals `last`), sets the
/// counter back to zero: the next launch needs no memset.
void emitResetWhenLast(OpBuilder &b, Location loc, Value arrivals, Value index,
                       Value before, Value last) {
  emitIf(b, loc,
         arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, before, last),
         [&] {
           memref::AtomicRMWOp::create(
               b, loc, arith::AtomicRMWKind::assign,
               arith::ConstantIntOp::create(b, loc, 0, 32), arrivals,
               ValueRange{index});
         });
}
} // namespace

Value codegen::countArrival(OpBuilder &b, Location loc, Value arrivals,
                            Value index, Value slot, Value counts,
                            Value last) {
  auto fence = [&] {
    LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::acq_rel, "device");
  };
  fence();
  gpu::BarrierOp::create(b, loc);
  Value zero = indexConst(b, loc, 0);
  emitIf(b, loc, counts, [&] {
    Value before = emitCount(b, loc, arrivals, index);
    memref::StoreOp::create(b, loc, before, slot, ValueRange{zero});
    emitResetWhenLast(b, loc, arrivals, index, before, last);
  });
  gpu::BarrierOp::create(b, loc);
  Value isLast = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      memref::LoadOp::create(b, loc, slot, ValueRange{zero}), last);
  emitIf(b, loc, isLast, fence);
  return isLast;
}

Value codegen::countWarpArrival(OpBuilder &b, Location loc, Value arrivals,
                                Value index, Value lane, Value last) {
  auto fence = [&] {
    LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::acq_rel, "device");
  };
  fence();
  NVVM::SyncWarpOp::create(b, loc,
                           arith::ConstantIntOp::create(b, loc, -1, 32));
  Value zero = arith::ConstantIntOp::create(b, loc, 0, 32);
  auto count =
      scf::IfOp::create(b, loc, TypeRange{b.getI32Type()},
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              lane, indexConst(b, loc, 0)),
                        /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(count.thenBlock());
    Value before = emitCount(b, loc, arrivals, index);
    emitResetWhenLast(b, loc, arrivals, index, before, last);
    scf::YieldOp::create(b, loc, before);
    b.setInsertionPointToStart(count.elseBlock());
    scf::YieldOp::create(b, loc, zero);
  }
  // Lane 0's count to every lane.
  Value before =
      gpu::ShuffleOp::create(b, loc, count.getResult(0), zero,
                             arith::ConstantIntOp::create(b, loc, 32, 32),
                             gpu::ShuffleMode::IDX)
          .getShuffleResult();
  Value isLast =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, before, last);
  emitIf(b, loc, isLast, fence);
  return isLast;
}

Value codegen::elementAddress(OpBuilder &b, Location loc, Value buffer,
                              ArrayRef<Value> index) {
  int64_t elementBytes =
      cast<MemRefType>(buffer.getType()).getElementTypeBitWidth() / 8;
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
  Value linear = metadata.getOffset();
  for (auto [i, stride] : llvm::zip_equal(index, metadata.getStrides()))
    linear = arith::AddIOp::create(b, loc, linear,
                                   arith::MulIOp::create(b, loc, i, stride));
  return arith::AddIOp::create(
      b, loc, memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer),
      arith::MulIOp::create(b, loc, linear, indexConst(b, loc, elementBytes)));
}

llvm::SmallDenseSet<unsigned>
codegen::getInputsReadOnce(KernelPlanAttr plan, ValueRange inputs,
                           ArrayRef<int64_t> shape) {
  llvm::SmallDenseSet<unsigned> once;
  ArrayRef<int64_t> passes = plan.getPasses();
  for (auto [i, input] : llvm::enumerate(inputs))
    if (i < passes.size() && passes[i] == 1 &&
        cast<MemRefType>(input.getType()).getShape() == shape)
      once.insert(i);
  return once;
}

Value codegen::loadEvictFirst(OpBuilder &b, Location loc, VectorType type,
                              Value buffer, ArrayRef<Value> index) {
  Value address = arith::IndexCastUIOp::create(
      b, loc, b.getI64Type(), elementAddress(b, loc, buffer, index));
  // Inline PTX: neither MLIR's NVVM dialect nor LLVM 22's NVPTX backend has
  // a load with an L2 eviction policy. The address is a generic one of
  // global memory; the asm has side effects so that no load moves across
  // the launch's stores.
  Type i32 = b.getI32Type();
  auto words =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {i32, i32, i32, i32});
  auto load = LLVM::InlineAsmOp::create(
      b, loc, words, ValueRange{address},
      "{\n.reg .b64 g, policy;\ncvta.to.global.u64 g, $4;\n"
      "createpolicy.fractional.L2::evict_first.b64 policy, 1.0;\n"
      "ld.global.L1::no_allocate.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, "
      "[g], policy;\n}",
      "=r,=r,=r,=r,l", /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr());
  SmallVector<Value> lanes;
  for (int64_t i = 0; i < 4; ++i)
    lanes.push_back(LLVM::ExtractValueOp::create(b, loc, load.getResult(0), i));
  Value bits =
      vector::FromElementsOp::create(b, loc, VectorType::get({4}, i32), lanes);
  return vector::BitCastOp::create(b, loc, type, bits);
}

void codegen::prefetchToL2(OpBuilder &b, Location loc, Value buffer,
                           ArrayRef<Value> index, Value valid) {
  Value address = elementAddress(b, loc, buffer, index);
  emitIf(b, loc, valid, [&] {
    Value pointer = LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext()),
        arith::IndexCastUIOp::create(b, loc, b.getI64Type(), address)
            .getResult());
    NVVM::PrefetchOp::create(b, loc,
                             NVVM::PrefetchCacheLevelAttr::get(
                                 b.getContext(), NVVM::PrefetchCacheLevel::L2),
                             /*evictPriority=*/nullptr, pointer,
                             /*predicate=*/Value());
  });
}

void codegen::store(OpBuilder &b, Location loc, Value value, Value buffer,
                  ArrayRef<Value> index) {
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  value = roundTo(b, loc, value, element);
  if (auto vector = dyn_cast<VectorType>(value.getType()))
    vector::StoreOp::create(b, loc, value, buffer, index,
                            /*nontemporal=*/false,
                            vectorAlignment(element, vector.getNumElements()));
  else
    memref::StoreOp::create(b, loc, value, buffer, index);
}

std::pair<Value, Value> codegen::gridStride(OpBuilder &b, Location loc, Value bid,
                                          Value tid, Value grid,
                                          int64_t threads) {
  Value blockSize = indexConst(b, loc, threads);
  Value first = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, bid, blockSize), tid);
  Value stride = arith::MulIOp::create(b, loc, grid, blockSize);
  return {first, stride};
}

FailureOr<SmallVector<Value>> codegen::emitUnrolledLoop(
    OpBuilder &b, Location loc, Value from, Value to, int64_t stride,
    int64_t unrolled, ValueRange init,
    function_ref<FailureOr<SmallVector<Value>>(OpBuilder &, ArrayRef<Value>,
                                               ValueRange)>
        body) {
  auto loopOf = [&](Value first, Value last,
                    int64_t count, ValueRange accs) -> FailureOr<scf::ForOp> {
    auto loop = scf::ForOp::create(b, loc, first, last,
                                   indexConst(b, loc, stride * count), accs);
    // (Without loop-carried values the loop comes with its yield.)
    if (accs.empty())
      loop.getBody()->getTerminator()->erase();
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> indices;
    for (int64_t k = 0; k < count; ++k)
      indices.push_back(arith::AddIOp::create(
          b, loc, loop.getInductionVar(), indexConst(b, loc, k * stride)));
    FailureOr<SmallVector<Value>> next =
        body(b, indices, loop.getRegionIterArgs());
    if (failed(next))
      return failure();
    scf::YieldOp::create(b, loc, *next);
    return loop;
  };
  // The unrolled loop runs while its last index, i + reach, is below `to`;
  // the rest starts where it stopped.
  Value reach = indexConst(b, loc, stride * (unrolled - 1));
  Value unrolledEnd = arith::SelectOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, to, reach),
      arith::SubIOp::create(b, loc, to, reach), indexConst(b, loc, 0));
  FailureOr<scf::ForOp> main = loopOf(from, unrolledEnd, unrolled, init);
  if (failed(main))
    return failure();
  Value step = indexConst(b, loc, stride * unrolled);
  Value steps = arith::CeilDivUIOp::create(
      b, loc,
      arith::SubIOp::create(
          b, loc, arith::MaxUIOp::create(b, loc, unrolledEnd, from), from),
      step);
  Value restStart = arith::AddIOp::create(
      b, loc, from, arith::MulIOp::create(b, loc, steps, step));
  FailureOr<scf::ForOp> rest = loopOf(restStart, to, 1, main->getResults());
  if (failed(rest))
    return failure();
  return SmallVector<Value>(rest->getResults());
}
