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

// A plan's optional fields after `cluster`: `, split = N` (printed when
// not 1) and `, passes = [...]` (when there are inputs), in that order.
static ParseResult parsePlanTail(AsmParser &parser, int64_t &split,
                                 SmallVector<int64_t> &passes) {
  split = 1;
  if (failed(parser.parseOptionalComma()))
    return success();
  if (succeeded(parser.parseOptionalKeyword("split"))) {
    if (parser.parseEqual() || parser.parseInteger(split))
      return failure();
    if (failed(parser.parseOptionalComma()))
      return success();
  }
  if (parser.parseKeyword("passes") || parser.parseEqual() ||
      parser.parseLSquare())
    return failure();
  return parser.parseCommaSeparatedList([&]() -> ParseResult {
    return parser.parseInteger(passes.emplace_back());
  }) ? failure() : parser.parseRSquare();
}

static void printPlanTail(AsmPrinter &printer, int64_t split,
                          ArrayRef<int64_t> passes) {
  if (split != 1)
    printer << ", split = " << split;
  if (!passes.empty()) {
    printer << ", passes = [";
    llvm::interleaveComma(passes, printer);
    printer << "]";
  }
}

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
                       ArrayRef<int64_t> passes, int64_t split) {
  if (threads < 1 || threads > 1024)
    return emitError() << "a plan's threads must be in [1, 1024], got "
                       << threads;
  if (vector < 1 || vector > 16 || !llvm::isPowerOf2_64(vector))
    return emitError() << "a plan's vector must be 1, 2, 4, 8 or 16, got "
                       << vector;
  bool clusterStrategy = strategy == KernelStrategy::cluster_rows ||
                         strategy == KernelStrategy::attention_rows;
  if ((strategy == KernelStrategy::cluster_rows && cluster < 2) ||
      (!clusterStrategy && cluster != 1) || cluster < 1 || cluster > 16)
    return emitError() << "a plan's cluster is 2 to 16 for cluster_rows, 1 to "
                          "16 for attention_rows and 1 otherwise, got "
                       << cluster << " for " << stringifyKernelStrategy(strategy);
  bool rowStrategy = strategy == KernelStrategy::rows ||
                     strategy == KernelStrategy::cluster_rows;
  bool rowStorage = row == RowStorage::registers ||
                    row == RowStorage::streamed || row == RowStorage::staged;
  bool attentionRows = strategy == KernelStrategy::attention_rows;
  if ((rowStrategy && !rowStorage) ||
      (!rowStrategy && row != RowStorage::none &&
       !(attentionRows && row == RowStorage::staged)))
    return emitError() << "a plan's row is registers, streamed or staged for "
                          "rows and cluster_rows, none or staged for "
                          "attention_rows, none otherwise";
  if (split < 1 || (split > 1 && strategy != KernelStrategy::columns &&
                    strategy != KernelStrategy::split_reduction &&
                    strategy != KernelStrategy::matmul_wgmma &&
                    strategy != KernelStrategy::attention_rows))
    return emitError() << "a plan's split is at least 1, and 1 for every "
                          "strategy but columns, split_reduction, "
                          "matmul_wgmma and attention_rows, got "
                       << split << " for " << stringifyKernelStrategy(strategy);
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
