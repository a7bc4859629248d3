//===- DropOutputResults.cpp - Void destination-passing functions ---------===//

#include "fusion/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSIONDROPOUTPUTRESULTS
#include "fusion/Conversion/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;

namespace {
struct DropOutputResultsPass
    : fusion::impl::FusionDropOutputResultsBase<DropOutputResultsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    SymbolUserMap users(symbols, module);
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isExternal())
        continue;
      auto ret =
          cast<func::ReturnOp>(function.getBody().front().getTerminator());
      // A result is dropped when it is one of the function's arguments.
      llvm::BitVector drop(ret.getNumOperands());
      for (OpOperand &operand : ret->getOpOperands())
        if (auto arg = dyn_cast<BlockArgument>(operand.get());
            arg && arg.getOwner() == &function.getBody().front())
          drop.set(operand.getOperandNumber());
      if (drop.none())
        continue;
      for (Operation *user : users.getUsers(function)) {
        auto call = dyn_cast<func::CallOp>(user);
        if (!call) {
          user->emitOpError("uses a destination-passing function whose "
                            "results are being dropped");
          return signalPassFailure();
        }
        // Callers read the output argument they passed instead.
        for (int i = drop.find_first(); i >= 0; i = drop.find_next(i)) {
          auto arg = cast<BlockArgument>(ret.getOperand(i));
          call.getResult(i).replaceAllUsesWith(
              call.getOperand(arg.getArgNumber()));
        }
        OpBuilder builder(call);
        SmallVector<Type> kept;
        for (auto [i, type] : llvm::enumerate(call.getResultTypes()))
          if (!drop.test(i))
            kept.push_back(type);
        auto newCall =
            func::CallOp::create(builder, call.getLoc(), call.getCalleeAttr(),
                                 kept, call.getOperands());
        unsigned next = 0;
        for (auto [i, result] : llvm::enumerate(call.getResults()))
          if (!drop.test(i))
            result.replaceAllUsesWith(newCall.getResult(next++));
        call.erase();
      }
      ret->eraseOperands(drop);
      if (failed(function.eraseResults(drop)))
        return signalPassFailure();
    }
  }
};
} // namespace
