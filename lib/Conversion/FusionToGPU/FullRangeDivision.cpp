//===- FullRangeDivision.cpp - div.full.f32 in GPU launches ---------------===//
//
// f32 divisions in launches become `div.full.f32` (full range, at most 2
// ulp; Triton's default) instead of the IEEE `div.rn.f32` that arith.divf
// lowers to, a long instruction sequence per element (sigmoid and silu
// divide for every element); those marked `afn` (by a logistic denominator
// in an op rounded to bf16 or f16: ScalarOps' MathPrecision) become
// `div.approx.f32` (at most 2 ulp for divisors in [2^-126, 2^126], 0 past
// that, where the quotient is below the smallest normal times the
// dividend). Vectors are divided lane by lane, as LLVM would. The CPU path
// keeps IEEE division.
//
//===----------------------------------------------------------------------===//

#include "Strategies.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::codegen;

void codegen::useFullRangeDivision(gpu::LaunchOp launch) {
  launch.getBody().walk([](arith::DivFOp div) {
    Type type = div.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return;
    OpBuilder b(div);
    Location loc = div.getLoc();
    bool approximate =
        bitEnumContainsAll(div.getFastmath(), arith::FastMathFlags::afn);
    StringAttr name = b.getStringAttr(approximate ? "llvm.nvvm.div.approx.f"
                                                  : "llvm.nvvm.div.full");
    auto divide = [&](Value lhs, Value rhs) -> Value {
      return LLVM::CallIntrinsicOp::create(b, loc, b.getF32Type(), name,
                                           ValueRange{lhs, rhs})
          .getResult(0);
    };
    Value result;
    if (auto vector = dyn_cast<VectorType>(type)) {
      SmallVector<Value> lanes;
      for (int64_t lane = 0; lane < vector.getNumElements(); ++lane)
        lanes.push_back(
            divide(vector::ExtractOp::create(b, loc, div.getLhs(), lane),
                   vector::ExtractOp::create(b, loc, div.getRhs(), lane)));
      result = vector::FromElementsOp::create(b, loc, vector, lanes);
    } else {
      result = divide(div.getLhs(), div.getRhs());
    }
    div.replaceAllUsesWith(result);
    div.erase();
  });
}
