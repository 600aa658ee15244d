// The lowering of one trace call to IR nodes (lower_call.cpp: the prims, the view spellings and the
// tables; lower_indexing.cpp: the gathers, scatters and their composites): argument binding,
// literal decoding and node emission at the call's line.
#pragma once

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "frontend/lower_call.h"

namespace vf::detail {

constexpr int64_t kMaxNumel = int64_t{1} << 48;  // larger shapes are rejected before any arithmetic

class CallLowering {
 public:
  CallLowering(TraceScope& scope, const Expr& call, std::string name, const std::vector<std::string>& output_names)
      : scope_(scope), call_(call), name_(std::move(name)), output_names_(output_names) {}

  std::vector<Value*> prim(OpKind op);
  std::vector<Value*> torch(const std::string& fn);

  // The torch-level spellings (kTorchSpellings).
  std::vector<Value*> permute();
  std::vector<Value*> reshape();
  std::vector<Value*> expand();
  std::vector<Value*> unsqueeze();
  std::vector<Value*> cat();
  std::vector<Value*> index_select();
  std::vector<Value*> take_along_dim();
  std::vector<Value*> gather();
  std::vector<Value*> nll_loss_backward();
  std::vector<Value*> argmax() { return arg_extreme(OpKind::Amax); }
  std::vector<Value*> argmin() { return arg_extreme(OpKind::Amin); }
  std::vector<Value*> arg_extreme(OpKind extreme);
  std::vector<Value*> index_add();
  std::vector<Value*> torch_scatter_add();
  std::vector<Value*> torch_index_add();
  std::vector<Value*> index_add_of(const Expr& a, const Expr& index_at, const Expr& value_at, const Expr& dim_at,
                                   std::string_view what);
  std::vector<Value*> embedding_backward();
  std::vector<Value*> cumsum();
  std::vector<Value*> std_dev();
  std::vector<Value*> matmul();
  std::vector<Value*> linear();
  std::vector<Value*> frexp();
  std::vector<Value*> slice_prim_impl();
  std::vector<Value*> squeeze();
  std::vector<Value*> transpose();
  std::vector<Value*> flatten();

 private:
  template <typename... Args>
  [[noreturn]] void fail(const Expr& at, Args&&... args) const {
    scope_.fail(at, name_, ": ", std::forward<Args>(args)...);
  }

  // Positional and keyword arguments matched to params; the first `required` must be given.
  std::vector<const Expr*> bind(std::vector<std::string_view> params, size_t required) const {
    std::vector<const Expr*> out(params.size(), nullptr);
    auto signature = [&] {
      std::string s;
      for (size_t i = 0; i < params.size(); ++i) s += (i ? ", " : "") + std::string(params[i]);
      return s;
    };
    if (call_.items.size() > params.size())
      fail(*call_.items[params.size()], "takes at most ", params.size(), " argument(s) (", signature(), "), got ",
           call_.items.size());
    for (size_t i = 0; i < call_.items.size(); ++i) out[i] = call_.items[i].get();
    for (const auto& [key, value] : call_.keywords) {
      auto it = std::find(params.begin(), params.end(), key);
      if (it == params.end()) {
        if (key == "device") continue;  // placement is decided by the runtime
        fail(*value, "unexpected keyword argument '", key, "' (expected one of: ", signature(), ")");
      }
      size_t i = static_cast<size_t>(it - params.begin());
      if (out[i]) fail(*value, "argument '", key, "' is given twice");
      out[i] = value.get();
    }
    for (size_t i = 0; i < required; ++i)
      if (!out[i]) fail(call_, "missing argument '", params[i], "' (expected ", required, " argument(s): ", signature(), "), got ", call_.items.size() + call_.keywords.size());
    return out;
  }

  // var's dims and correction (1 when not given).
  VarAttrs var_attrs(const Expr& dims, const Expr* correction) const {
    VarAttrs attrs{int_list(dims, "dims", true), 1.0};
    if (correction) {
      std::optional<Scalar> c = literal_number(scope_, *correction);
      if (!c || c->kind == ScalarKind::Bool) fail(*correction, "expected a number for correction");
      attrs.correction = c->as_double();
    }
    return attrs;
  }

  int64_t integer(const Expr& e, std::string_view what) const {
    std::optional<Scalar> v = literal_number(scope_, e);
    if (!v || v->kind != ScalarKind::Int) fail(e, "expected an int for ", what);
    return v->i;
  }
  std::vector<int64_t> int_list(const Expr& e, std::string_view what, bool allow_single) const {
    if (allow_single && e.kind != Expr::Kind::Tuple && e.kind != Expr::Kind::List) return {integer(e, what)};
    if (e.kind != Expr::Kind::Tuple && e.kind != Expr::Kind::List) fail(e, "expected a tuple of ints for ", what);
    std::vector<int64_t> out;
    for (const auto& item : e.items) out.push_back(integer(*item, what));
    return out;
  }
  // Ints from argument `from` on: either one tuple/list, or the remaining positional ints.
  std::vector<int64_t> int_varargs(size_t from, std::string_view what) const {
    if (call_.items.size() <= from) fail(call_, "missing ", what);
    if (call_.items.size() == from + 1) return int_list(*call_.items[from], what, true);
    std::vector<int64_t> out;
    for (size_t i = from; i < call_.items.size(); ++i) out.push_back(integer(*call_.items[i], what));
    return out;
  }
  // The tensor of a call whose other arguments are positional ints (Tensor.view(t, 2, 8)).
  Value* varargs_tensor() const {
    if (call_.items.empty()) fail(call_, "missing argument 'a' (expected a tensor and sizes)");
    if (!call_.keywords.empty())
      fail(*call_.keywords[0].second, "unexpected keyword argument '", call_.keywords[0].first, "'");
    return tensor(*call_.items[0]);
  }
  Shape shape(const std::vector<int64_t>& sizes, const Expr& at, bool allow_minus_one) const {
    int64_t numel = 1;
    for (int64_t s : sizes) {
      if (s == -1 && allow_minus_one) continue;
      if (s < 0) fail(at, "sizes must be >= 0", allow_minus_one ? " (or -1)" : "", ", got ", shape_to_string(sizes));
      if (s > kMaxNumel || (s > 0 && numel > kMaxNumel / s))
        fail(at, "shape ", shape_to_string(sizes), " is too large (more than 2^48 elements)");
      numel *= s;
    }
    return sizes;
  }
  Value* operand(const Expr& e) const {
    if (e.kind == Expr::Kind::Name) return scope_.lookup(e.text, e.line, e.column);
    if (std::optional<Scalar> v = literal_number(scope_, e)) return scope_.fusion.add_constant(*v);
    fail(e, "expected a name or a number as an operand");
  }
  Value* tensor(const Expr& e) const {
    Value* v = operand(e);
    if (!v->is_tensor) fail(e, "expected a tensor, got '", v->name, "' of type ", v->type_string());
    return v;
  }
  DType dtype(const Expr& e) const {
    std::string dotted = e.dotted_name();
    size_t dot = dotted.rfind('.');
    std::string prefix = dot == std::string::npos ? "" : dotted.substr(0, dot);
    if (prefix == "dtypes" || prefix == "torch" || prefix == "thunder.dtypes")
      if (std::optional<DType> d = dtype_from_long_name(dotted.substr(dot + 1))) return *d;
    fail(e, "expected a dtype such as dtypes.float32, found '", dotted.empty() ? "an expression" : dotted, "'");
  }
  static bool is_none(const Expr* e) { return !e || e->kind == Expr::Kind::None; }
  int64_t wrap_dim(int64_t d, int64_t rank, const Expr& at) const {
    int64_t n = std::max<int64_t>(rank, 1);
    if (d < -n || d >= n) fail(at, "dim ", d, " is out of range for a tensor of rank ", rank);
    return d < 0 ? d + n : d;
  }

  // A node of the call's results, named output_names_, reported at the call when it is wrong.
  std::vector<Value*> emit(OpKind op, std::vector<Value*> inputs, OpAttrs attrs) const {
    return add_at_call(op, std::move(inputs), std::move(attrs), output_names_);
  }

  // One node of a call written as several: named after the call's result and `what`
  // (`t7__classes`), so that it cannot take a name the trace defines later.
  Value* emit_step(OpKind op, std::vector<Value*> inputs, OpAttrs attrs, std::string_view what) const {
    std::vector<std::string> names;
    if (output_names_.size() == 1) names.push_back(output_names_[0] + "__" + std::string(what));
    return add_at_call(op, std::move(inputs), std::move(attrs), std::move(names)).at(0);
  }

  // A 0-D or 1-D index spread over `shape` along dim (an index_add's index as a scatter_add's).
  Value* spread_index(Value* index, const Shape& shape, int64_t dim) const {
    if (shape.empty()) return index;
    return emit_step(OpKind::BroadcastInDim, {index}, BroadcastAttrs{shape, index->rank() == 1 ? std::vector<int64_t>{dim}
                                                                                             : std::vector<int64_t>{}},
                     "index_of");
  }

  std::vector<Value*> add_at_call(OpKind op, std::vector<Value*> inputs, OpAttrs attrs,
                                  std::vector<std::string> names) const {
    try {
      return scope_.fusion.add_node(op, std::move(inputs), std::move(attrs), std::move(names), call_.line);
    } catch (const TraceError&) {
      throw;
    } catch (const UserError& e) {
      scope_.fail(call_, e.what());
    }
  }

  // emit() with attributes from `make`, whose UserError (a torch spelling's check) is reported at the call.
  template <class Make>
  std::vector<Value*> emit_with(OpKind op, std::vector<Value*> inputs, const Make& make) const {
    try {
      return emit(op, std::move(inputs), make());
    } catch (const TraceError&) {
      throw;
    } catch (const UserError& e) {
      scope_.fail(call_, e.what());
    }
  }

  TraceScope& scope_;
  const Expr& call_;
  std::string name_;
  const std::vector<std::string>& output_names_;
};

}  // namespace vf::detail
