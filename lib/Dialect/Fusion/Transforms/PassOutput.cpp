//===- PassOutput.cpp - Where reporting passes write ----------------------===//

#include "fusion/Dialect/Fusion/Transforms/PassOutput.h"

#include "mlir/Support/FileUtilities.h"

using namespace mlir;
using namespace mlir::fusion;

LogicalResult PassOutput::open(StringRef path, Operation *op, StringRef pass) {
  if (path == "-")
    return success();
  std::string message;
  file = openOutputFile(path, &message);
  if (!file)
    return op->emitError(pass) << ": " << message;
  return success();
}
