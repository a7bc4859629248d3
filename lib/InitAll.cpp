//===- InitAll.cpp - Register everything Fusion provides ------------------===//

#include "fusion/InitAll.h"

#include "fusion/Conversion/Passes.h"
#include "fusion/Dialect/Fusion/IR/FusionDialect.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"
#include "fusion/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdint>
#include <cstdlib>

namespace {
/// Result numbers past any operation's: the parser allocates a slot for
/// each number up to the one used.
constexpr uint64_t kMaxResultNumber = uint64_t(1) << 20;
} // namespace

void fusion::registerDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::fusion::FusionDialect>();
}

void fusion::registerPasses() {
  mlir::fusion::registerFusionPasses();
  mlir::fusion::registerFusionConversionPasses();
}

void fusion::registerPipelines() { mlir::fusion::registerFusionPipelines(); }

void fusion::setDefaultCudaPath() {
  if (!std::getenv("CUDA_HOME") && !std::getenv("CUDA_ROOT") &&
      !std::getenv("CUDA_PATH") && llvm::sys::fs::exists("/usr/local/cuda"))
    setenv("CUDA_HOME", "/usr/local/cuda", /*overwrite=*/0);
}

bool fusion::reportKnownParserCrashes(llvm::SourceMgr &sourceMgr) {
  llvm::StringRef text =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBuffer();
  bool found = false;
  llvm::SmallVector<llvm::StringRef, 2> match;
  // Whether `at` is inside a line comment.
  auto inComment = [&](llvm::StringRef at) {
    size_t offset = at.data() - text.data();
    size_t lineStart = text.rfind('\n', offset);
    lineStart = lineStart == llvm::StringRef::npos ? 0 : lineStart + 1;
    return text.slice(lineStart, offset).contains("//");
  };
  // Reports each match of `pattern` outside comments that `crashes` takes.
  auto scan =
      [&](const char *pattern,
          llvm::function_ref<bool(llvm::ArrayRef<llvm::StringRef>)> crashes,
          const char *message) {
        llvm::Regex regex(pattern);
        for (llvm::StringRef rest = text; regex.match(rest, &match);) {
          if (!inComment(match[0]) && crashes(match)) {
            sourceMgr.PrintMessage(llvm::SMLoc::getFromPointer(match[0].data()),
                                   llvm::SourceMgr::DK_Error, message);
            found = true;
          }
          rest = rest.drop_front(match[0].end() - rest.begin());
        }
      };
  scan(
      "array<[[:space:]]*index[[:space:]]*:",
      [](llvm::ArrayRef<llvm::StringRef>) { return true; },
      "dense arrays of 'index' are not supported (use i64: MLIR 22's "
      "parser cannot read them)");
  // A use of result N (`%x#N`): the parser makes room for N results before
  // it checks N against the operation's, so a huge N exhausts the memory.
  scan(
      "%[[:alnum:]_.$-]+#([0-9]+)",
      [](llvm::ArrayRef<llvm::StringRef> m) {
        uint64_t number;
        return m[1].getAsInteger(10, number) || number >= kMaxResultNumber;
      },
      "reference to invalid result number (MLIR 22's parser cannot read "
      "one this large)");
  return found;
}
