//===- FusionDialect.cpp - The fusion dialect -----------------------------===//

#include "fusion/Dialect/Fusion/IR/FusionDialect.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::fusion;

#include "fusion/Dialect/Fusion/IR/FusionDialect.cpp.inc"
#include "fusion/Dialect/Fusion/IR/FusionEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "fusion/Dialect/Fusion/IR/FusionAttrs.cpp.inc"

void FusionDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "fusion/Dialect/Fusion/IR/FusionAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "fusion/Dialect/Fusion/IR/FusionOps.cpp.inc"
      >();
}

LogicalResult
KernelPlanAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       KernelStrategy strategy, int64_t threads,
                       int64_t vector, RowStorage row, int64_t cluster,
                       ArrayRef<int64_t> passes) {
  if (threads < 1 || threads > 1024)
    return emitError() << "a plan's threads must be in [1, 1024], got "
                       << threads;
  if (vector < 1 || vector > 16 || !llvm::isPowerOf2_64(vector))
    return emitError() << "a plan's vector must be 1, 2, 4, 8 or 16, got "
                       << vector;
  if ((strategy == KernelStrategy::cluster_rows) != (cluster > 1) ||
      cluster < 1 || cluster > 16)
    return emitError() << "a plan's cluster is 2 to 16 for cluster_rows and 1 "
                          "otherwise, got "
                       << cluster << " for " << stringifyKernelStrategy(strategy);
  bool rowStrategy = strategy == KernelStrategy::rows ||
                     strategy == KernelStrategy::cluster_rows;
  if (rowStrategy != (row != RowStorage::none))
    return emitError() << "a plan's row is registers or streamed for rows and "
                          "cluster_rows, none otherwise";
  if (llvm::any_of(passes, [](int64_t p) { return p < 1; }))
    return emitError() << "a plan reads each input at least once";
  return success();
}

Operation *FusionDialect::materializeConstant(OpBuilder &builder,
                                              Attribute value, Type type,
                                              Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}
