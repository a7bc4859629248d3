//===- View.cpp - A Graphviz picture of the fusion decisions --------------===//
//
// Each function is a cluster of op nodes; each fusion.kernel a cluster inside
// it. Edges that leave a kernel carry the bytes they move through device
// memory, and between two kernels the reason they stayed apart, asked of the
// same fusion engine that made the decision.
//
//===----------------------------------------------------------------------===//

#include "fusion/Dialect/Fusion/Analysis/Traffic.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "fusion/Dialect/Fusion/Transforms/KernelFusion.h"
#include "fusion/Dialect/Fusion/Transforms/PassOutput.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::fusion {
#define GEN_PASS_DEF_FUSIONVIEW
#include "fusion/Dialect/Fusion/Transforms/Passes.h.inc"
} // namespace mlir::fusion

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// Escapes `text` for a double-quoted DOT string.
static std::string escape(StringRef text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

static std::string typeText(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    for (int64_t d : tensor.getShape())
      os << (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d))
         << "x";
    os << tensor.getElementType();
  } else {
    os << type;
  }
  return text;
}

static std::string bytesText(const ByteCount &bytes) {
  if (std::optional<int64_t> n = bytes.getStatic())
    return std::to_string(*n) + " B";
  return bytes.str() + " B";
}

/// Writes one function's graph.
class GraphWriter {
public:
  GraphWriter(raw_ostream &os, const FusionOptions &options)
      : os(os), options(options) {}

  void writeFunction(FunctionOpInterface function, unsigned index);

private:
  /// The node id of `op`, or of a function argument.
  std::string node(Operation *op) {
    auto [it, inserted] = ids.try_emplace(op, ids.size());
    return "n" + std::to_string(it->second);
  }
  std::string node(BlockArgument arg) {
    return "f" + std::to_string(functionIndex) + "_arg" +
           std::to_string(arg.getArgNumber());
  }
  /// The node that produces `value` as seen from outside kernels: the op
  /// inside the producing kernel that computes the yielded value.
  std::string source(Value value);
  void writeOp(Operation &op, StringRef indent);
  void writeEdge(StringRef from, StringRef to, StringRef label,
                 bool refused = false);

  raw_ostream &os;
  const FusionOptions &options;
  DenseMap<Operation *, unsigned> ids;
  unsigned functionIndex = 0;
};

std::string GraphWriter::source(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    // A kernel body argument: the kernel's input, seen from outside.
    if (auto kernel = dyn_cast<KernelOp>(arg.getOwner()->getParentOp()))
      return source(kernel.getInputs()[arg.getArgNumber()]);
    return node(arg);
  }
  Operation *op = value.getDefiningOp();
  if (auto kernel = dyn_cast<KernelOp>(op))
    return source(
        kernel.getYield().getOperand(cast<OpResult>(value).getResultNumber()));
  return node(op);
}

void GraphWriter::writeEdge(StringRef from, StringRef to, StringRef label,
                            bool refused) {
  os << "    " << from << " -> " << to;
  if (!label.empty() || refused) {
    os << " [label=\"" << escape(label) << "\"";
    if (refused)
      os << ", style=dashed, color=red, fontcolor=red";
    os << "]";
  }
  os << ";\n";
}

void GraphWriter::writeOp(Operation &op, StringRef indent) {
  std::string label = op.getName().getStringRef().str();
  if (op.getNumResults() == 1)
    label += "\n" + typeText(op.getResult(0).getType());
  os << indent << node(&op) << " [label=\"" << escape(label) << "\"";
  if (isa<ConstantOp>(op))
    os << ", shape=plaintext";
  os << "];\n";
}

/// The kernel's plan as a label line, when it has one.
static std::string planText(KernelOp kernel) {
  KernelPlanAttr plan = kernel.getPlanAttr();
  if (!plan)
    return "";
  std::string text = "\\nplan: " +
                     stringifyKernelStrategy(plan.getStrategy()).str() + ", " +
                     std::to_string(plan.getThreads()) + " threads, vector " +
                     std::to_string(plan.getVector());
  if (plan.getRow() != RowStorage::none)
    text += ", row " + stringifyRowStorage(plan.getRow()).str();
  if (plan.getCluster() > 1)
    text += ", cluster " + std::to_string(plan.getCluster());
  return text;
}

void GraphWriter::writeFunction(FunctionOpInterface function,
                                unsigned index) {
  functionIndex = index;
  std::string name = function.getName().str();
  os << "  subgraph cluster_f" << index << " {\n";
  os << "    label=\"func @" << escape(name) << "\";\n";
  Block &body = function.getFunctionBody().front();
  for (BlockArgument arg : body.getArguments())
    os << "    " << node(arg) << " [shape=ellipse, label=\"%arg"
       << arg.getArgNumber() << "\\n" << escape(typeText(arg.getType()))
       << "\"];\n";
  std::string returnNode = "f" + std::to_string(index) + "_return";
  os << "    " << returnNode << " [shape=ellipse, label=\"return\"];\n";

  // Nodes: ops outside kernels, and each kernel's ops in its cluster.
  for (Operation &op : body.without_terminator()) {
    auto kernel = dyn_cast<KernelOp>(op);
    if (!kernel) {
      writeOp(op, "    ");
      continue;
    }
    KernelTraffic traffic = getKernelTraffic(kernel);
    os << "    subgraph cluster_" << node(kernel) << " {\n";
    os << "      label=\"" << escape(kernel.getName().value_or("kernel"))
       << " (" << stringifyKernelKind(kernel.getKind()) << ")"
       << planText(kernel) << "\\nreads "
       << escape(bytesText(traffic.read)) << ", writes "
       << escape(bytesText(traffic.written)) << "\";\n";
    os << "      style=rounded; color=blue;\n";
    for (Operation &inner : kernel.getBodyBlock().without_terminator())
      writeOp(inner, "      ");
    os << "    }\n";
  }

  // Edges: inside kernels plain; into a kernel or an op from outside with
  // the bytes moved, and the refusal reason between two kernels.
  // The reasons of the budgets the fusion passes ran with, when recorded.
  FusionOptions decided = readFusionOptions(function, options);
  KernelFuser fuser(body, decided);
  auto edgesInto = [&](Operation &user) {
    for (Value operand : user.getOperands()) {
      std::string from = source(operand);
      auto arg = dyn_cast<BlockArgument>(operand);
      auto kernel = arg ? dyn_cast<KernelOp>(arg.getOwner()->getParentOp())
                        : KernelOp();
      if (!kernel) {
        // Inside one kernel (or between ops outside kernels).
        writeEdge(from, node(&user), "");
        continue;
      }
      Value input = kernel.getInputs()[arg.getArgNumber()];
      if (isSplatConstant(input)) {
        writeEdge(from, node(&user), "");
        continue;
      }
      std::string label = bytesText(ByteCount::ofType(input.getType()));
      auto producer = input.getDefiningOp<KernelOp>();
      if (!producer) {
        writeEdge(from, node(&user), label);
        continue;
      }
      writeEdge(from, node(&user),
                label + "\n" +
                    fuser.explainEdge(producer, kernel,
                                      FusionRules::Reductions),
                /*refused=*/true);
    }
  };
  for (Operation &op : body.without_terminator()) {
    if (auto kernel = dyn_cast<KernelOp>(op)) {
      for (Operation &inner : kernel.getBodyBlock().without_terminator())
        edgesInto(inner);
      continue;
    }
    for (Value operand : op.getOperands())
      writeEdge(source(operand), node(&op), "");
  }
  for (Value value : body.getTerminator()->getOperands())
    writeEdge(source(value), returnNode,
              value.getDefiningOp<KernelOp>()
                  ? bytesText(ByteCount::ofType(value.getType()))
                  : "");
  os << "  }\n";
}

struct ViewPass : fusion::impl::FusionViewBase<ViewPass> {
  using Base::Base;

  void runOnOperation() override {
    PassOutput out;
    if (failed(out.open(output, getOperation(), "fusion-view")))
      return signalPassFailure();
    raw_ostream *os = &out.os();
    FusionOptions options;
    options.maxRowElements = maxRowElements;
    options.matmulEpilogue = matmulEpilogue;
    *os << "digraph fusion {\n"
        << "  compound=true; rankdir=TB;\n"
        << "  node [shape=box, fontname=\"monospace\", fontsize=10];\n"
        << "  edge [fontname=\"monospace\", fontsize=9];\n";
    GraphWriter writer(*os, options);
    unsigned index = 0;
    getOperation().walk([&](FunctionOpInterface function) {
      if (!function.isExternal())
        writer.writeFunction(function, index++);
    });
    *os << "}\n";
    out.keep();
    markAllAnalysesPreserved();
  }
};

} // namespace
