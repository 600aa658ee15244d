// Lowering of one trace call (prims.X, torch.X, Tensor.X) to Fusion nodes, and the reader's name scope.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "frontend/parser.h"
#include "ir/ir.h"

namespace vf {

// What the reader knows while it walks a trace: the fusion being built and what each name holds.
struct TraceScope {
  struct Binding {
    Value* value = nullptr;
    int defined_line = 0;
    int deleted_line = 0;  // 0 while alive
  };

  Fusion& fusion;
  std::string file;
  std::unordered_map<std::string, Binding> names;

  template <typename... Args>
  [[noreturn]] void fail(int line, int column, Args&&... args) const {
    throw TraceError(file, line, column, detail::concat(std::forward<Args>(args)...));
  }
  template <typename... Args>
  [[noreturn]] void fail(const Expr& at, Args&&... args) const {
    fail(at.line, at.column, std::forward<Args>(args)...);
  }
  // The value a name holds; TraceError if undefined or deleted.
  Value* lookup(const std::string& name, int line, int column) const;
};

// A number literal (int, float, bool, unary minus, float('inf'/'nan')) or nothing.
std::optional<Scalar> literal_number(const TraceScope& scope, const Expr& e);

// Lowers `call` (an Expr of kind Call) into nodes whose results take output_names. Returns the
// results. Throws TraceError at the call for unsupported ops, wrong arguments and errors raised by
// Fusion::add_node (whose message is kept).
std::vector<Value*> lower_call(TraceScope& scope, const Expr& call, const std::vector<std::string>& output_names);

// A torch-level function the reader accepts besides the prims (torch.permute, Tensor.view, ...):
// its name and how a trace calls it.
struct TorchSpelling {
  std::string_view name;  // "permute"
  std::string callee;     // "torch.permute" (also read: ltorch.permute, Tensor.permute, torch.Tensor.permute)
  int outputs = 1;        // the results a call gives (frexp: 2)
};
std::vector<TorchSpelling> torch_spellings();

}  // namespace vf
