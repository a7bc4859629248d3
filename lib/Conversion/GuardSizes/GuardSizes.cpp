//===- GuardSizes.cpp - Check a call's dynamic sizes before it runs -------===//
//
// A call whose sizes disagree (two `?x8` operands of an add given 7 and 3
// rows) would read and write out of bounds. The lowered function checks
// them first and, on a mismatch, reports it through the runtime and returns
// without touching memory.
//
//===----------------------------------------------------------------------===//

#include "fusion/Conversion/Passes.h"
#include "fusion/Dialect/Fusion/Analysis/DynamicDims.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSIONGUARDSIZES
#include "fusion/Conversion/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

/// The runtime's report of one mismatch (lib/Runtime/SizeMismatch.cpp).
static constexpr llvm::StringLiteral kReportName = "fusion_size_mismatch";

static func::FuncOp getOrDeclareReport(ModuleOp module) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(kReportName))
    return existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Type i64 = b.getI64Type();
  auto report =
      func::FuncOp::create(b, module.getLoc(), kReportName,
                           b.getFunctionType(SmallVector<Type>(7, i64), {}));
  report.setPrivate();
  return report;
}

/// Checks `checks` at the entry of `function` and runs its body only when
/// they hold.
static LogicalResult guard(func::FuncOp function, ArrayRef<SizeCheck> checks,
                           int64_t numInputs, func::FuncOp report) {
  Block &entry = function.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(entry.getTerminator());
  if (!ret || ret.getNumOperands() != 0 || !function.getBody().hasOneBlock())
    return function.emitOpError(
        "size checks need a one-block function that returns nothing");
  Location loc = function.getLoc();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Type i64 = b.getI64Type();
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, v);
  };
  auto sizeOf = [&](int64_t arg, int64_t dim) -> FailureOr<Value> {
    if (arg >= int64_t(entry.getNumArguments()))
      return failure();
    auto type = dyn_cast<MemRefType>(entry.getArgument(arg).getType());
    if (!type || dim >= type.getRank())
      return failure();
    Value size = memref::DimOp::create(b, loc, entry.getArgument(arg), dim);
    return arith::IndexCastOp::create(b, loc, i64, size).getResult();
  };

  Value allAgree = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  for (const SizeCheck &check : checks) {
    ArrayRef<std::pair<int64_t, int64_t>> members = check.members;
    int64_t expectedArg = -1, expectedDim = -1;
    Value expected;
    if (check.staticSize >= 0) {
      expected = constant(check.staticSize);
    } else {
      std::tie(expectedArg, expectedDim) = members.front();
      FailureOr<Value> size = sizeOf(expectedArg, expectedDim);
      if (failed(size))
        return function.emitOpError("size check names a missing dimension");
      expected = *size;
      members = members.drop_front();
    }
    for (auto [arg, dim] : members) {
      FailureOr<Value> size = sizeOf(arg, dim);
      if (failed(size))
        return function.emitOpError("size check names a missing dimension");
      Value differs = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                            *size, expected);
      scf::IfOp mismatch = scf::IfOp::create(b, loc, differs);
      {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(mismatch.thenBlock());
        func::CallOp::create(b, loc, report,
                             ValueRange{constant(arg), constant(dim), *size,
                                        constant(expectedArg),
                                        constant(expectedDim), expected,
                                        constant(numInputs)});
      }
      Value agrees = arith::XOrIOp::create(
          b, loc, differs,
          arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
      allAgree = arith::AndIOp::create(b, loc, allAgree, agrees);
    }
  }
  // The body runs only when every size agrees.
  auto body = scf::IfOp::create(b, loc, allAgree);
  Block *then = body.thenBlock();
  then->getOperations().splice(then->begin(), entry.getOperations(),
                               std::next(Block::iterator(body)),
                               Block::iterator(ret));
  return success();
}

namespace {
struct GuardSizesPass : fusion::impl::FusionGuardSizesBase<GuardSizesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    for (func::FuncOp function : functions) {
      Attribute attr = function->getAttr(kSizeChecksAttrName);
      if (!attr)
        continue;
      function->removeAttr(kSizeChecksAttrName);
      FailureOr<FunctionSizeChecks> checks = decodeSizeChecks(attr);
      if (failed(checks)) {
        function.emitOpError("has a malformed ") << kSizeChecksAttrName;
        return signalPassFailure();
      }
      if (function.isExternal())
        continue;
      if (failed(guard(function, checks->checks, checks->numInputs,
                       getOrDeclareReport(module))))
        return signalPassFailure();
    }
  }
};
} // namespace
