// Lowering of trace calls: argument binding per prim signature, literal decoding, torch spellings.
#include "frontend/lower_call.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "frontend/torch_spellings.h"

namespace vf {

Value* TraceScope::lookup(const std::string& name, int line, int column) const {
  auto it = names.find(name);
  if (it == names.end()) fail(line, column, "undefined name '", name, "'");
  if (it->second.deleted_line)
    fail(line, column, "'", name, "' is used after 'del ", name, "' at line ", it->second.deleted_line);
  return it->second.value;
}

std::optional<Scalar> literal_number(const TraceScope& scope, const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::Bool: return Scalar::from_bool(e.bool_value);
    case Expr::Kind::Float: return Scalar::from_float(e.float_value);
    case Expr::Kind::Int:
      if (e.int_value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        scope.fail(e, "integer literal ", e.text, " does not fit in int64");
      return Scalar::from_int(static_cast<int64_t>(e.int_value));
    case Expr::Kind::Neg: {
      const Expr& x = *e.base;
      if (x.kind == Expr::Kind::Int) {  // -2^63 is representable; its magnitude alone is not
        if (x.int_value == uint64_t{1} << 63) return Scalar::from_int(std::numeric_limits<int64_t>::min());
        std::optional<Scalar> v = literal_number(scope, x);
        return Scalar::from_int(-v->i);
      }
      std::optional<Scalar> v = literal_number(scope, x);
      if (!v) return std::nullopt;
      if (v->kind == ScalarKind::Float) return Scalar::from_float(-v->f);
      return Scalar::from_int(-v->i);  // a bool's magnitude is 0 or 1
    }
    case Expr::Kind::Call: {
      if (e.base->dotted_name() != "float") return std::nullopt;
      if (e.items.size() != 1 || !e.keywords.empty() || e.items[0]->kind != Expr::Kind::String)
        scope.fail(e, "expected float('inf'), float('-inf') or float('nan')");
      const std::string& s = e.items[0]->text;
      double inf = std::numeric_limits<double>::infinity();
      if (s == "inf" || s == "infinity") return Scalar::from_float(inf);
      if (s == "-inf" || s == "-infinity") return Scalar::from_float(-inf);
      if (s == "nan") return Scalar::from_float(std::numeric_limits<double>::quiet_NaN());
      scope.fail(*e.items[0], "expected 'inf', '-inf' or 'nan' in float(...), found '", s, "'");
    }
    case Expr::Kind::Name: case Expr::Kind::Attribute: case Expr::Kind::Tuple: case Expr::Kind::List:
    case Expr::Kind::Dict: case Expr::Kind::String: case Expr::Kind::None:
      return std::nullopt;
  }
  return std::nullopt;
}

namespace {

constexpr int64_t kMaxNumel = int64_t{1} << 48;  // larger shapes are rejected before any arithmetic

class Lowering {
 public:
  Lowering(TraceScope& scope, const Expr& call, std::string name, const std::vector<std::string>& output_names)
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

std::vector<Value*> Lowering::prim(OpKind op) {
  switch (op_category(op)) {
    case OpCategory::Unary: {
      auto a = bind({"a"}, 1);
      return emit(op, {operand(*a[0])}, NoAttrs{});
    }
    case OpCategory::Binary: {
      auto a = bind({"a", "b"}, 2);
      return emit(op, {operand(*a[0]), operand(*a[1])}, NoAttrs{});
    }
    case OpCategory::Ternary: {
      auto a = op == OpKind::Where ? bind({"pred", "a", "b"}, 3) : bind({"start", "end", "weight"}, 3);
      return emit(op, {operand(*a[0]), operand(*a[1]), operand(*a[2])}, NoAttrs{});
    }
    case OpCategory::Cast: {
      auto a = bind({"a", "dtype"}, 2);
      return emit(op, {operand(*a[0])}, CastAttrs{dtype(*a[1])});
    }
    case OpCategory::Scatter: {
      auto a = bind({"a", "index", "value", "dim"}, 4);
      return emit(op, {tensor(*a[0]), tensor(*a[1]), tensor(*a[2])}, AxisAttrs{integer(*a[3], "dim")});
    }
    case OpCategory::Scan: {
      auto a = bind({"a", "dim"}, 2);
      return emit(op, {tensor(*a[0])}, AxisAttrs{integer(*a[1], "dim")});
    }
    case OpCategory::Reduction: {
      if (op == OpKind::Var || op == OpKind::VarMean) {
        auto a = bind({"a", "dims", "correction"}, 2);
        VarAttrs attrs{int_list(*a[1], "dims", true), 1.0};
        if (a[2]) {
          std::optional<Scalar> c = literal_number(scope_, *a[2]);
          if (!c || c->kind == ScalarKind::Bool) fail(*a[2], "expected a number for correction");
          attrs.correction = c->as_double();
        }
        return emit(op, {operand(*a[0])}, attrs);
      }
      auto a = bind({"a", "dims", "output_dtype"}, 2);
      if (a[2] && a[2]->kind != Expr::Kind::None) fail(*a[2], "output_dtype is not supported (expected None)");
      return emit(op, {operand(*a[0])}, DimsAttrs{int_list(*a[1], "dims", true)});
    }
    case OpCategory::Creation: {
      if (op == OpKind::Full) {
        auto a = bind({"shape", "fill_value", "device", "dtype"}, 2);
        std::optional<Scalar> value = literal_number(scope_, *a[1]);
        if (!value) fail(*a[1], "expected a number for fill_value");
        DType d = a[3] ? dtype(*a[3])
                  : value->kind == ScalarKind::Float ? DType::Float32
                  : value->kind == ScalarKind::Int   ? DType::Int64
                                                     : DType::Bool;
        return emit(op, {}, FullAttrs{shape(int_list(*a[0], "shape", true), *a[0], false), *value, d});
      }
      if (op == OpKind::UniformPhilox) {
        auto a = bind({"shape", "minval", "maxval", "device", "dtype", "seed", "offset"}, 3);
        UniformAttrs attrs{shape(int_list(*a[0], "shape", true), *a[0], false), 0, 1, DType::Float32};
        double* bounds[] = {&attrs.minval, &attrs.maxval};
        for (int k = 0; k < 2; ++k) {
          std::optional<Scalar> v = literal_number(scope_, *a[1 + k]);
          if (!v || v->kind == ScalarKind::Bool) fail(*a[1 + k], "expected a number for ", k ? "maxval" : "minval");
          *bounds[k] = v->as_double();
        }
        if (a[4]) attrs.dtype = dtype(*a[4]);
        if (!a[5] || !a[6]) fail(call_, "expected the seed= and offset= arguments");
        return emit(op, {operand(*a[5]), operand(*a[6])}, attrs);
      }
      auto a = bind({"length", "start", "step", "device", "dtype"}, 1);
      IotaAttrs attrs;
      attrs.length = integer(*a[0], "length");
      if (attrs.length > kMaxNumel) fail(*a[0], "length ", attrs.length, " is too large");
      if (a[1]) attrs.start = integer(*a[1], "start");
      if (a[2]) attrs.step = integer(*a[2], "step");
      if (a[4]) attrs.dtype = dtype(*a[4]);
      return emit(op, {}, attrs);
    }
    case OpCategory::View: case OpCategory::Movement:
      break;
  }
  switch (op) {
    case OpKind::Transpose: {
      auto a = bind({"a", "permutation"}, 2);
      return emit(op, {operand(*a[0])}, PermuteAttrs{int_list(*a[1], "permutation", false)});
    }
    case OpKind::Reshape: {
      auto a = bind({"a", "shape"}, 2);
      return emit(op, {operand(*a[0])}, ReshapeAttrs{shape(int_list(*a[1], "shape", true), *a[1], true)});
    }
    case OpKind::BroadcastInDim: {
      auto a = bind({"a", "shape", "broadcast_dimensions"}, 3);
      BroadcastAttrs attrs{shape(int_list(*a[1], "shape", false), *a[1], false),
                           int_list(*a[2], "broadcast_dimensions", false)};
      return emit(op, {operand(*a[0])}, attrs);
    }
    case OpKind::SlicePrim: {
      auto a = bind({"a", "start_indices", "end_indices", "strides"}, 3);
      SliceAttrs attrs{int_list(*a[1], "start_indices", false), int_list(*a[2], "end_indices", false), {}};
      if (a[3] && a[3]->kind != Expr::Kind::None) attrs.step = int_list(*a[3], "strides", false);
      for (int64_t s : attrs.step)
        if (s > kMaxNumel) fail(*a[3], "stride ", s, " is too large");
      return emit(op, {operand(*a[0])}, attrs);
    }
    case OpKind::Squeeze: case OpKind::Flip: {
      auto a = bind({"a", "dims"}, 2);
      return emit(op, {operand(*a[0])}, DimsAttrs{int_list(*a[1], "dims", true)});
    }
    case OpKind::Pad: {
      auto a = bind({"a", "padding_value", "padding_config"}, 3);
      const Expr& cfg = *a[2];
      if (cfg.kind != Expr::Kind::Tuple && cfg.kind != Expr::Kind::List)
        fail(cfg, "expected padding_config as a tuple of (lo, hi, dilation) tuples");
      PadAttrs attrs;
      for (const auto& dim : cfg.items) {
        std::vector<int64_t> v = int_list(*dim, "a (lo, hi, dilation) entry of padding_config", false);
        if (v.size() != 3) fail(*dim, "expected (lo, hi, dilation) with 3 ints, got ", v.size());
        for (int64_t x : v)
          if (x > kMaxNumel || x < -kMaxNumel) fail(*dim, "padding ", x, " is too large");
        attrs.config.push_back(PadDim{v[0], v[1], v[2]});
      }
      return emit(op, {tensor(*a[0]), operand(*a[1])}, attrs);
    }
    case OpKind::Cat: {
      auto a = bind({"tensors", "dim"}, 2);
      return emit(op, [&] {
        const Expr& list = *a[0];
        if (list.kind != Expr::Kind::Tuple && list.kind != Expr::Kind::List) fail(list, "expected a list of tensors");
        std::vector<Value*> ins;
        for (const auto& item : list.items) ins.push_back(tensor(*item));
        return ins;
      }(), AxisAttrs{integer(*a[1], "dim")});
    }
    case OpKind::Take: case OpKind::TakeAlongAxis: case OpKind::Gather: {
      auto a = bind({"a", "index", "dim"}, 3);
      return emit(op, {tensor(*a[0]), tensor(*a[1])}, AxisAttrs{integer(*a[2], "dim")});
    }
    default:
      VF_INTERNAL_ERROR("prim ", op_name(op), " is not a view or movement op");
  }
}

// torch.permute(t, dims) and Tensor.permute(t, *dims).
std::vector<Value*> Lowering::permute() {
  Value* t = varargs_tensor();
  return emit(OpKind::Transpose, {t}, PermuteAttrs{int_varargs(1, "dims")});
}

// torch.reshape and Tensor.view: -1 takes the remaining elements.
std::vector<Value*> Lowering::reshape() {
  Value* t = varargs_tensor();
  return emit(OpKind::Reshape, {t}, ReshapeAttrs{shape(int_varargs(1, "shape"), call_, true)});
}

std::vector<Value*> Lowering::expand() {
  Value* t = varargs_tensor();
  Shape sizes = shape(int_varargs(1, "sizes"), call_, true);
  return emit_with(OpKind::BroadcastInDim, {t}, [&] { return expand_as_broadcast(t->shape, sizes); });
}

std::vector<Value*> Lowering::unsqueeze() {
  auto a = bind({"a", "dim"}, 2);
  Value* t = tensor(*a[0]);
  const int64_t dim = integer(*a[1], "dim");
  return emit_with(OpKind::BroadcastInDim, {t}, [&] { return unsqueeze_as_broadcast(t->shape, dim); });
}

std::vector<Value*> Lowering::cat() {
  auto a = bind({"tensors", "dim"}, 1);
  const Expr& list = *a[0];
  if (list.kind != Expr::Kind::Tuple && list.kind != Expr::Kind::List) fail(list, "expected a list of tensors");
  std::vector<Value*> ins;
  for (const auto& item : list.items) ins.push_back(tensor(*item));
  return emit(OpKind::Cat, ins, AxisAttrs{a[1] ? integer(*a[1], "dim") : 0});
}

// torch.index_select(t, dim, index): prims.take.
std::vector<Value*> Lowering::index_select() {
  auto a = bind({"a", "dim", "index"}, 3);
  return emit(OpKind::Take, {tensor(*a[0]), tensor(*a[2])}, AxisAttrs{integer(*a[1], "dim")});
}

// torch.take_along_dim(t, indices, dim), with indices of t's shape outside dim: prims.take_along_axis.
std::vector<Value*> Lowering::take_along_dim() {
  auto a = bind({"a", "indices", "dim"}, 3);
  return emit(OpKind::TakeAlongAxis, {tensor(*a[0]), tensor(*a[1])}, AxisAttrs{integer(*a[2], "dim")});
}

// torch.gather(t, dim, index): prims.gather.
std::vector<Value*> Lowering::gather() {
  auto a = bind({"a", "dim", "index"}, 3);
  return emit(OpKind::Gather, {tensor(*a[0]), tensor(*a[2])}, AxisAttrs{integer(*a[1], "dim")});
}

// Thunder's nll_loss_backward(g, a, target, weight, reduction, ignore_index, total_weight), the
// gradient of nll_loss with respect to a (ATen's nll_loss_backward): at the target's class of each
// element, -g (divided by total_weight for 'mean', times weight[target] with a weight), where the
// target is not ignore_index; 0 elsewhere. a's shape, g's dtype. Written as elementwise prims over
// a's shape, the class of each element an iota, so that it fuses with the log-softmax backward
// beside it instead of writing a tensor of a's size that is almost all zeros. The arithmetic is
// the compute type's (float32 for 16-bit floats): ATen rounds total_weight to a's dtype first.
std::vector<Value*> Lowering::nll_loss_backward() {
  auto a = bind({"g", "a", "target", "weight", "reduction", "ignore_index", "total_weight"}, 6);
  Value* g = tensor(*a[0]);
  Value* input = tensor(*a[1]);
  Value* target = tensor(*a[2]);
  Value* weight = is_none(a[3]) ? nullptr : tensor(*a[3]);
  if (a[4]->kind != Expr::Kind::String) fail(*a[4], "expected reduction as a string: 'none', 'sum' or 'mean'");
  const std::string& reduction = a[4]->text;
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    fail(*a[4], "expected reduction 'none', 'sum' or 'mean', got '", reduction, "'");
  const int64_t ignore_index = integer(*a[5], "ignore_index");
  Value* total = is_none(a[6]) ? nullptr : tensor(*a[6]);

  const int64_t rank = input->rank();
  if (rank < 1) fail(*a[1], "expected a of rank 1 or more, got ", input->type_string());
  if (!is_floating(input->dtype) || !is_floating(g->dtype))
    fail(call_, "expected floating g and a, got g ", g->type_string(), " and a ", input->type_string());
  if (!is_integral(target->dtype)) fail(*a[2], "expected an integer target, got ", target->type_string());
  const int64_t class_dim = rank >= 2 ? 1 : 0;
  const int64_t classes = input->shape[class_dim];
  Shape target_shape = input->shape;
  target_shape.erase(target_shape.begin() + class_dim);
  if (target->shape != target_shape)
    fail(*a[2], "expected target of shape ", shape_to_string(target_shape), " (a ", input->type_string(),
         " without its class dim ", class_dim, "), got ", target->type_string());
  if (weight && weight->shape != Shape{classes})
    fail(*a[3], "expected weight of shape [", classes, "] (one per class), got ", weight->type_string());
  const Shape g_shape = reduction == "none" ? target_shape : Shape{};
  if (g->shape != g_shape)
    fail(*a[0], "expected g of shape ", shape_to_string(g_shape), " for reduction '", reduction, "', got ",
         g->type_string());
  if (reduction == "mean" && (!total || total->rank() != 0))
    fail(a[6] ? *a[6] : call_, "expected total_weight as a tensor of rank 0 for reduction 'mean', got ",
         total ? total->type_string() : "None");

  std::vector<int64_t> other_dims;  // a's dims other than the class dim: where target's dims go
  for (int64_t d = 0; d < rank; ++d)
    if (d != class_dim) other_dims.push_back(d);
  auto spread = [&](Value* v, std::vector<int64_t> dims, std::string_view what) {
    return emit_step(OpKind::BroadcastInDim, {v}, BroadcastAttrs{input->shape, std::move(dims)}, what);
  };
  Value* class_of = spread(emit_step(OpKind::Iota, {}, IotaAttrs{classes, 0, 1, target->dtype}, "iota"),
                           {class_dim}, "classes");
  Value* target_of = spread(target, other_dims, "targets");
  Value* hit = emit_step(OpKind::Eq, {class_of, target_of}, NoAttrs{}, "hit");
  if (ignore_index >= 0 && ignore_index < classes) {  // other values of ignore_index never hit
    Value* kept = emit_step(OpKind::Ne, {target_of, scope_.fusion.add_constant(Scalar::from_int(ignore_index))},
                            NoAttrs{}, "kept");
    hit = emit_step(OpKind::BitwiseAnd, {hit, kept}, NoAttrs{}, "hit_kept");
  }
  // Prims take operands of one dtype: g, total_weight and weight are cast to the compute type.
  const DType compute = g->dtype == DType::Float64 ? DType::Float64 : DType::Float32;
  auto as_compute = [&](Value* v, std::string_view what) {
    return v->dtype == compute ? v : emit_step(OpKind::ConvertElementType, {v}, CastAttrs{compute}, what);
  };
  Value* g_of = spread(as_compute(g, "g_compute"), reduction == "none" ? other_dims : std::vector<int64_t>{}, "g");
  Value* grad = emit_step(OpKind::Neg, {g_of}, NoAttrs{}, "neg_g");
  if (reduction == "mean")
    grad = emit_step(OpKind::Div, {grad, spread(as_compute(total, "total_compute"), {}, "total_weight")}, NoAttrs{},
                     "mean");
  if (weight) {
    // take reads a 1-D index: the targets flattened, and their weights shaped back.
    // An ignore_index outside the classes would be out of range: its weight is never used, class 0's is read.
    Value* flat = emit_step(OpKind::Reshape, {target}, ReshapeAttrs{Shape{target->numel()}}, "flat_targets");
    if (ignore_index < 0 || ignore_index >= classes) {
      Value* ignore = scope_.fusion.add_constant(Scalar::from_int(ignore_index));
      Value* kept = emit_step(OpKind::Ne, {flat, ignore}, NoAttrs{}, "flat_kept");
      flat = emit_step(OpKind::Where, {kept, flat, scope_.fusion.add_constant(Scalar::from_int(0))}, NoAttrs{},
                       "flat_safe_targets");
    }
    Value* picked = emit_step(OpKind::Take, {as_compute(weight, "weight_compute"), flat}, AxisAttrs{0}, "flat_weights");
    picked = emit_step(OpKind::Reshape, {picked}, ReshapeAttrs{target_shape}, "weight_of_target");
    grad = emit_step(OpKind::Mul, {grad, spread(picked, other_dims, "weights")}, NoAttrs{}, "weighted");
  }
  Value* zero = scope_.fusion.add_constant(Scalar::from_float(0.0));
  if (compute == g->dtype) return emit(OpKind::Where, {hit, grad, zero}, NoAttrs{});
  Value* picked = emit_step(OpKind::Where, {hit, grad, zero}, NoAttrs{}, "grad");
  return emit(OpKind::ConvertElementType, {picked}, CastAttrs{g->dtype});
}

// prims.index_add(a, index, value, dim): value's slice k is added to a's slice index[k] along dim.
std::vector<Value*> Lowering::index_add() {
  auto a = bind({"a", "index", "value", "dim"}, 4);
  return index_add_of(*a[0], *a[1], *a[2], *a[3], "value");
}

// torch.cumsum(a, dim, dtype=None): prims.cumsum of a converted to dtype, or, without one, of bool
// and integer inputs converted to int64 (torch's result dtype).
std::vector<Value*> Lowering::cumsum() {
  auto a = bind({"a", "dim", "dtype"}, 2);
  Value* t = tensor(*a[0]);
  const DType to = a[2] && a[2]->kind != Expr::Kind::None ? dtype(*a[2])
                   : is_floating(t->dtype)                  ? t->dtype
                                                            : DType::Int64;
  if (is_bool(to)) fail(*a[2], "expected a numeric dtype, got b8");
  if (to != t->dtype) t = emit_step(OpKind::ConvertElementType, {t}, CastAttrs{to}, "converted");
  return emit(OpKind::Cumsum, {t}, AxisAttrs{integer(*a[1], "dim")});
}

// prims.frexp(a) and torch.frexp(a): the mantissa and the exponent, an op each.
std::vector<Value*> Lowering::frexp() {
  auto a = bind({"a"}, 1);
  Value* x = tensor(*a[0]);
  auto named = [&](size_t k) {
    return output_names_.size() == 2 ? std::vector<std::string>{output_names_[k]} : std::vector<std::string>{};
  };
  return {add_at_call(OpKind::FrexpMantissa, {x}, NoAttrs{}, named(0)).at(0),
          add_at_call(OpKind::FrexpExponent, {x}, NoAttrs{}, named(1)).at(0)};
}

// torch.scatter_add(a, dim, index, src): prims.scatter_add.
std::vector<Value*> Lowering::torch_scatter_add() {
  auto a = bind({"a", "dim", "index", "src"}, 4);
  return emit(OpKind::ScatterAdd, {tensor(*a[0]), tensor(*a[2]), tensor(*a[3])}, AxisAttrs{integer(*a[1], "dim")});
}

// torch.index_add(a, dim, index, source): as prims.index_add.
std::vector<Value*> Lowering::torch_index_add() {
  auto a = bind({"a", "dim", "index", "source", "alpha"}, 4);
  if (a[4]) {
    std::optional<Scalar> alpha = literal_number(scope_, *a[4]);
    if (!alpha || alpha->as_double() != 1) fail(*a[4], "alpha other than 1 is not supported");
  }
  return index_add_of(*a[0], *a[2], *a[3], *a[1], "source");
}

// index_add with a 0-D or 1-D index: prims.scatter_add with the index spread along value's other
// dims. `what` names value's argument in the messages.
std::vector<Value*> Lowering::index_add_of(const Expr& a, const Expr& index_at, const Expr& value_at,
                                           const Expr& dim_at, std::string_view what) {
  Value* base = tensor(a);
  Value* index = tensor(index_at);
  Value* value = tensor(value_at);
  const int64_t dim = wrap_dim(integer(dim_at, "dim"), base->rank(), dim_at);
  if (index->rank() > 1) fail(index_at, "expected a 0-D or 1-D index, got ", index->type_string());
  if (value->rank() != base->rank())
    fail(value_at, "expected ", what, " of a's rank ", base->rank(), ", got ", value->type_string());
  if (base->rank() > 0 && value->shape[dim] != index->numel())
    fail(value_at, "expected ", what, "'s dim ", dim, " to have the index's ", index->numel(), " elements, got ",
         value->type_string());
  return emit(OpKind::ScatterAdd, {base, spread_index(index, value->shape, dim), value}, AxisAttrs{dim});
}

// Thunder's embedding_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq,
// sparse), the gradient of an embedding's weight: zeros of [num_weights, D] with each row of grad
// (flattened to [indices.numel(), D]) added at the row its index names, except where the index is
// padding_idx (-1: none). scale_grad_by_freq and sparse are not supported.
std::vector<Value*> Lowering::embedding_backward() {
  auto a = bind({"grad", "indices", "num_weights", "padding_idx", "scale_grad_by_freq", "sparse"}, 6);
  Value* grad = tensor(*a[0]);
  Value* indices = tensor(*a[1]);
  const int64_t rows = integer(*a[2], "num_weights");
  const int64_t padding = integer(*a[3], "padding_idx");
  for (size_t k : {size_t{4}, size_t{5}}) {
    std::optional<Scalar> flag = literal_number(scope_, *a[k]);
    if (!flag || flag->kind != ScalarKind::Bool) fail(*a[k], "expected True or False");
    if (flag->i) fail(*a[k], k == 4 ? "scale_grad_by_freq=True" : "sparse=True", " is not supported");
  }
  if (grad->rank() < 1) fail(*a[0], "expected grad of rank 1 or more, got ", grad->type_string());
  if (!is_integral(indices->dtype)) fail(*a[1], "expected integer indices, got ", indices->type_string());
  if (rows < 0 || rows > kMaxNumel) fail(*a[2], "expected num_weights in [0, 2^48], got ", rows);
  const Shape index_shape(grad->shape.begin(), grad->shape.end() - 1);
  if (indices->shape != index_shape)
    fail(*a[1], "expected indices of shape ", shape_to_string(index_shape), " (grad ", grad->type_string(),
         " without its last dim), got ", indices->type_string());
  const int64_t count = indices->numel(), width = grad->shape.back();
  Value* flat = indices->rank() == 1 ? indices
                                     : emit_step(OpKind::Reshape, {indices}, ReshapeAttrs{Shape{count}}, "flat_indices");
  Value* rows_of = grad->rank() == 2 ? grad
                                     : emit_step(OpKind::Reshape, {grad}, ReshapeAttrs{Shape{count, width}}, "flat_grad");
  if (padding >= 0 && padding < rows) {  // the padding row gets nothing
    Value* kept = emit_step(OpKind::Ne, {flat, scope_.fusion.add_constant(Scalar::from_int(padding))}, NoAttrs{}, "kept");
    Value* kept_of = emit_step(OpKind::BroadcastInDim, {kept}, BroadcastAttrs{Shape{count, width}, {0}}, "kept_rows");
    rows_of = emit_step(OpKind::Where, {kept_of, rows_of, scope_.fusion.add_constant(Scalar::from_float(0.0))},
                        NoAttrs{}, "kept_grad");
  }
  Value* zeros = emit_step(OpKind::Full, {}, FullAttrs{Shape{rows, width}, Scalar::from_int(0), grad->dtype}, "zeros");
  return emit(OpKind::ScatterAdd, {zeros, spread_index(flat, Shape{count, width}, 0), rows_of}, AxisAttrs{0});
}

// prims.argmax(a, dim) and prims.argmin(a, dim): the int64 index along dim (along every dim,
// row-major, when dim is None) of the first largest (smallest) element, where a NaN counts as
// larger (smaller) than every number, as in torch. Written as two reductions over the same dims,
// which one reduction kernel computes in two phases: the extreme (amax or amin: a NaN propagates),
// then the least index whose element equals it, or is NaN where it is NaN.
std::vector<Value*> Lowering::arg_extreme(OpKind extreme) {
  auto a = bind({"a", "dim"}, 1);
  Value* input = tensor(*a[0]);
  if (is_bool(input->dtype)) fail(*a[0], "expected a tensor of numbers, got ", input->type_string());
  const bool all_dims = is_none(a[1]);
  if (input->rank() == 0) {  // one element: its index is 0
    if (!all_dims) wrap_dim(integer(*a[1], "dim"), 0, *a[1]);
    return emit(OpKind::Full, {}, FullAttrs{Shape{}, Scalar::from_int(0), DType::Int64});
  }
  Value* x = input;
  int64_t dim = 0;
  if (all_dims) {
    if (input->numel() == 0) fail(call_, "expected dim for ", input->type_string(), " (it has no elements)");
    if (input->rank() > 1) x = emit_step(OpKind::Reshape, {input}, ReshapeAttrs{Shape{input->numel()}}, "flat");
  } else {
    dim = wrap_dim(integer(*a[1], "dim"), input->rank(), *a[1]);
  }
  const int64_t size = x->shape[dim];
  if (size == 0) fail(*a[1], "expected dim ", dim, " of ", input->type_string(), " to have elements");
  std::vector<int64_t> kept;  // the dims the result keeps
  for (int64_t d = 0; d < x->rank(); ++d)
    if (d != dim) kept.push_back(d);
  Value* best = emit_step(extreme, {x}, DimsAttrs{{dim}}, "extreme");
  Value* best_of = emit_step(OpKind::BroadcastInDim, {best}, BroadcastAttrs{x->shape, kept}, "extreme_of");
  Value* hit = emit_step(OpKind::Eq, {x, best_of}, NoAttrs{}, "hit");
  if (is_floating(x->dtype)) {  // NaN != NaN: where the extreme is NaN, the NaNs hit
    Value* x_nan = emit_step(OpKind::Ne, {x, x}, NoAttrs{}, "x_nan");
    Value* best_nan = emit_step(OpKind::Ne, {best_of, best_of}, NoAttrs{}, "extreme_nan");
    Value* both = emit_step(OpKind::BitwiseAnd, {x_nan, best_nan}, NoAttrs{}, "both_nan");
    hit = emit_step(OpKind::BitwiseOr, {hit, both}, NoAttrs{}, "hit_or_nan");
  }
  Value* iota = emit_step(OpKind::Iota, {}, IotaAttrs{size, 0, 1, DType::Int64}, "iota");
  Value* index = emit_step(OpKind::BroadcastInDim, {iota}, BroadcastAttrs{x->shape, {dim}}, "index");
  Value* none = scope_.fusion.add_constant(Scalar::from_int(size));
  Value* candidate = emit_step(OpKind::Where, {hit, index, none}, NoAttrs{}, "candidate");
  return emit(OpKind::Amin, {candidate}, DimsAttrs{{dim}});
}

std::vector<Value*> Lowering::slice_prim_impl() {
  auto a = bind({"a", "start_indices", "end_indices", "strides"}, 3);
  SliceAttrs attrs{int_list(*a[1], "start_indices", false), int_list(*a[2], "end_indices", false), {}};
  if (a[3] && a[3]->kind != Expr::Kind::None) attrs.step = int_list(*a[3], "strides", false);
  for (int64_t s : attrs.step)
    if (s > kMaxNumel) fail(*a[3], "stride ", s, " is too large");
  return emit(OpKind::SlicePrim, {tensor(*a[0])}, attrs);
}

// torch.squeeze(t[, dim]): the given dims (or every one) of size 1; torch leaves other dims alone.
std::vector<Value*> Lowering::squeeze() {
  auto a = bind({"a", "dim"}, 1);
  Value* t = tensor(*a[0]);
  std::vector<int64_t> dims;
  if (a[1] && a[1]->kind != Expr::Kind::None) {
    for (int64_t d : int_list(*a[1], "dim", true)) {
      d = wrap_dim(d, t->rank(), *a[1]);
      if (t->rank() > 0 && t->shape[d] == 1) dims.push_back(d);
    }
  } else {
    for (int64_t d = 0; d < t->rank(); ++d)
      if (t->shape[d] == 1) dims.push_back(d);
  }
  return emit(OpKind::Squeeze, {t}, DimsAttrs{dims});
}

// torch.transpose(t, dim0, dim1): a swap of two dims.
std::vector<Value*> Lowering::transpose() {
  auto a = bind({"a", "dim0", "dim1"}, 3);
  Value* t = tensor(*a[0]);
  std::vector<int64_t> perm(static_cast<size_t>(t->rank()));
  std::iota(perm.begin(), perm.end(), 0);
  int64_t d0 = wrap_dim(integer(*a[1], "dim0"), t->rank(), *a[1]);
  int64_t d1 = wrap_dim(integer(*a[2], "dim1"), t->rank(), *a[2]);
  if (t->rank() > 0) std::swap(perm[d0], perm[d1]);
  return emit(OpKind::Transpose, {t}, PermuteAttrs{perm});
}

// torch.flatten(t, start_dim=0, end_dim=-1): a reshape merging dims start_dim..end_dim.
std::vector<Value*> Lowering::flatten() {
  auto a = bind({"a", "start_dim", "end_dim"}, 1);
  Value* t = tensor(*a[0]);
  int64_t start = a[1] ? wrap_dim(integer(*a[1], "start_dim"), t->rank(), *a[1]) : 0;
  int64_t end = a[2] ? wrap_dim(integer(*a[2], "end_dim"), t->rank(), *a[2]) : std::max<int64_t>(t->rank() - 1, 0);
  if (start > end) fail(call_, "start_dim ", start, " must not come after end_dim ", end);
  Shape out;
  if (t->rank() == 0) {
    out = {1};
  } else {
    for (int64_t d = 0; d < start; ++d) out.push_back(t->shape[d]);
    int64_t merged = 1;
    for (int64_t d = start; d <= end; ++d) merged *= t->shape[d];
    out.push_back(merged);
    for (int64_t d = end + 1; d < t->rank(); ++d) out.push_back(t->shape[d]);
  }
  return emit(OpKind::Reshape, {t}, ReshapeAttrs{out});
}

// The torch-level functions the reader accepts besides the prims: one table, which the Python
// package reads too (torch_spellings()).
struct TorchSpellingEntry {
  std::string_view name;
  std::vector<Value*> (Lowering::*lower)();
  int outputs = 1;
};
constexpr TorchSpellingEntry kTorchSpellings[] = {
    {"permute", &Lowering::permute},     {"reshape", &Lowering::reshape},
    {"view", &Lowering::reshape},        {"expand", &Lowering::expand},
    {"unsqueeze", &Lowering::unsqueeze}, {"cat", &Lowering::cat},
    {"squeeze", &Lowering::squeeze},     {"transpose", &Lowering::transpose},
    {"flatten", &Lowering::flatten},     {"slice_prim_impl", &Lowering::slice_prim_impl},
    {"index_select", &Lowering::index_select}, {"take_along_dim", &Lowering::take_along_dim},
    {"gather", &Lowering::gather},     {"nll_loss_backward", &Lowering::nll_loss_backward},
    {"scatter_add", &Lowering::torch_scatter_add}, {"index_add", &Lowering::torch_index_add},
    {"embedding_backward", &Lowering::embedding_backward},
    {"cumsum", &Lowering::cumsum},     {"frexp", &Lowering::frexp, 2},
};

// Prims of Thunder's that ops.def does not have, which the reader writes as other prims.
constexpr TorchSpellingEntry kCompositePrims[] = {
    {"argmax", &Lowering::argmax},
    {"argmin", &Lowering::argmin},
    {"index_add", &Lowering::index_add},
    {"embedding_backward", &Lowering::embedding_backward},
    {"frexp", &Lowering::frexp, 2},
};

std::vector<Value*> Lowering::torch(const std::string& fn) {
  for (const TorchSpellingEntry& e : kTorchSpellings)
    if (e.name == fn) return (this->*e.lower)();
  scope_.fail(*call_.base, "unsupported op '", name_, "'");
}

// The torch-level function a callee names ("permute" for torch.permute, ltorch.permute,
// Tensor.permute and torch.Tensor.permute), or "" when it names none.
std::string torch_function(const std::string& callee) {
  for (std::string_view prefix : {"torch.Tensor.", "ltorch.", "torch.", "Tensor."})
    if (callee.rfind(prefix, 0) == 0) return callee.substr(prefix.size());
  if (callee == "torch_slice_prim_impl") return "slice_prim_impl";
  return "";
}

}  // namespace

std::vector<TorchSpelling> torch_spellings() {
  std::vector<TorchSpelling> out;
  for (const TorchSpellingEntry& e : kTorchSpellings)
    out.push_back({e.name, e.name == "slice_prim_impl" ? "torch_slice_prim_impl" : "torch." + std::string(e.name),
                   e.outputs});
  return out;
}

std::vector<Value*> lower_call(TraceScope& scope, const Expr& call, const std::vector<std::string>& output_names) {
  std::string callee = call.base->dotted_name();
  if (callee.empty()) scope.fail(call, "expected a call of a dotted name such as prims.add");
  Lowering lowering(scope, call, callee, output_names);
  if (callee.rfind("prims.", 0) == 0) {
    const std::string prim = callee.substr(6);
    if (std::optional<OpKind> op = op_from_name(prim)) return lowering.prim(*op);
    for (const TorchSpellingEntry& e : kCompositePrims)
      if (e.name == prim) return (lowering.*e.lower)();
    scope.fail(*call.base, "unsupported op '", callee, "'");
  }
  std::string fn = torch_function(callee);
  if (fn.empty()) scope.fail(*call.base, "unsupported op '", callee, "'");
  return lowering.torch(fn);
}

}  // namespace vf
