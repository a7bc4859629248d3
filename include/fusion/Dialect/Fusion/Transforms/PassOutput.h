//===- PassOutput.h - Where reporting passes write ------------*- C++ -*-===//
//
// fusion-report and fusion-view write to a file named by their `output`
// option, or to standard error for "-".
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_DIALECT_FUSION_TRANSFORMS_PASSOUTPUT_H
#define FUSION_DIALECT_FUSION_TRANSFORMS_PASSOUTPUT_H

#include "mlir/IR/Operation.h"
#include "llvm/Support/ToolOutputFile.h"

#include <memory>

namespace mlir::fusion {

/// An output stream for `path` ("-": standard error). On failure, emits an
/// error on `op` prefixed with `pass` and returns failure.
class PassOutput {
public:
  LogicalResult open(StringRef path, Operation *op, StringRef pass);
  raw_ostream &os() { return file ? file->os() : llvm::errs(); }
  /// Keeps the file (call once everything is written).
  void keep() {
    if (file)
      file->keep();
  }

private:
  std::unique_ptr<llvm::ToolOutputFile> file;
};

} // namespace mlir::fusion

#endif // FUSION_DIALECT_FUSION_TRANSFORMS_PASSOUTPUT_H
