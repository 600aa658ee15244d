// Lowering of trace calls: the prims, the view spellings, the tables of torch spellings and composite prims.
#include "frontend/lower_call.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "frontend/call_lowering.h"
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

namespace detail {

std::vector<Value*> CallLowering::prim(OpKind op) {
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
    case OpCategory::Contraction: {
      const bool add = op == OpKind::MatmulAdd;
      auto a = add ? bind({"a", "b", "c", "bias"}, 3) : bind({"a", "b", "bias"}, 2);
      std::vector<Value*> operands;
      for (const Expr* e : a)
        if (e && e->kind != Expr::Kind::None) operands.push_back(tensor(*e));
      return emit(op, std::move(operands), NoAttrs{});
    }
    case OpCategory::Reduction: {
      if (op == OpKind::Var || op == OpKind::VarMean) {
        auto a = bind({"a", "dims", "correction"}, 2);
        return emit(op, {operand(*a[0])}, var_attrs(*a[1], a[2]));
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
std::vector<Value*> CallLowering::permute() {
  Value* t = varargs_tensor();
  return emit(OpKind::Transpose, {t}, PermuteAttrs{int_varargs(1, "dims")});
}

// torch.reshape and Tensor.view: -1 takes the remaining elements.
std::vector<Value*> CallLowering::reshape() {
  Value* t = varargs_tensor();
  return emit(OpKind::Reshape, {t}, ReshapeAttrs{shape(int_varargs(1, "shape"), call_, true)});
}

std::vector<Value*> CallLowering::expand() {
  Value* t = varargs_tensor();
  Shape sizes = shape(int_varargs(1, "sizes"), call_, true);
  return emit_with(OpKind::BroadcastInDim, {t}, [&] { return expand_as_broadcast(t->shape, sizes); });
}

std::vector<Value*> CallLowering::unsqueeze() {
  auto a = bind({"a", "dim"}, 2);
  Value* t = tensor(*a[0]);
  const int64_t dim = integer(*a[1], "dim");
  return emit_with(OpKind::BroadcastInDim, {t}, [&] { return unsqueeze_as_broadcast(t->shape, dim); });
}

std::vector<Value*> CallLowering::cat() {
  auto a = bind({"tensors", "dim"}, 1);
  const Expr& list = *a[0];
  if (list.kind != Expr::Kind::Tuple && list.kind != Expr::Kind::List) fail(list, "expected a list of tensors");
  std::vector<Value*> ins;
  for (const auto& item : list.items) ins.push_back(tensor(*item));
  return emit(OpKind::Cat, ins, AxisAttrs{a[1] ? integer(*a[1], "dim") : 0});
}

// and integer inputs converted to int64 (torch's result dtype).
std::vector<Value*> CallLowering::cumsum() {
  auto a = bind({"a", "dim", "dtype"}, 2);
  Value* t = tensor(*a[0]);
  const DType to = a[2] && a[2]->kind != Expr::Kind::None ? dtype(*a[2])
                   : is_floating(t->dtype)                  ? t->dtype
                                                            : DType::Int64;
  if (is_bool(to)) fail(*a[2], "expected a numeric dtype, got b8");
  if (to != t->dtype) t = emit_step(OpKind::ConvertElementType, {t}, CastAttrs{to}, "converted");
  return emit(OpKind::Cumsum, {t}, AxisAttrs{integer(*a[1], "dim")});
}

// prims.std(a, dims, correction): the square root of prims.var.
std::vector<Value*> CallLowering::std_dev() {
  auto a = bind({"a", "dims", "correction"}, 2);
  Value* var = emit_step(OpKind::Var, {operand(*a[0])}, var_attrs(*a[1], a[2]), "var");
  return emit(OpKind::Sqrt, {var}, NoAttrs{});
}

// prims.frexp(a) and torch.frexp(a): the mantissa and the exponent, an op each.
std::vector<Value*> CallLowering::frexp() {
  auto a = bind({"a"}, 1);
  Value* x = tensor(*a[0]);
  auto named = [&](size_t k) {
    return output_names_.size() == 2 ? std::vector<std::string>{output_names_[k]} : std::vector<std::string>{};
  };
  return {add_at_call(OpKind::FrexpMantissa, {x}, NoAttrs{}, named(0)).at(0),
          add_at_call(OpKind::FrexpExponent, {x}, NoAttrs{}, named(1)).at(0)};
}


std::vector<Value*> CallLowering::slice_prim_impl() {
  auto a = bind({"a", "start_indices", "end_indices", "strides"}, 3);
  SliceAttrs attrs{int_list(*a[1], "start_indices", false), int_list(*a[2], "end_indices", false), {}};
  if (a[3] && a[3]->kind != Expr::Kind::None) attrs.step = int_list(*a[3], "strides", false);
  for (int64_t s : attrs.step)
    if (s > kMaxNumel) fail(*a[3], "stride ", s, " is too large");
  return emit(OpKind::SlicePrim, {tensor(*a[0])}, attrs);
}

// torch.squeeze(t[, dim]): the given dims (or every one) of size 1; torch leaves other dims alone.
std::vector<Value*> CallLowering::squeeze() {
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
std::vector<Value*> CallLowering::transpose() {
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
std::vector<Value*> CallLowering::flatten() {
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

// torch.matmul(a, b): prims.matmul.
std::vector<Value*> CallLowering::matmul() { return prim(OpKind::Matmul); }

// prims.linear(a, w, bias) and torch's linear: matmul(a, w.T, bias), the transpose a view of w and
// the bias added before the product is rounded (torch's addmm). A 0-dim bias is broadcast to the
// weight's rows first.
std::vector<Value*> CallLowering::linear() {
  auto x = bind({"a", "w", "bias"}, 2);
  Value* a = tensor(*x[0]);
  Value* w = tensor(*x[1]);
  if (w->rank() != 2) fail(*x[1], "expected a weight of rank 2 ([out, in]), got ", w->type_string());
  Value* wt = emit_step(OpKind::Transpose, {w}, PermuteAttrs{{1, 0}}, "weight_t");
  if (!x[2] || x[2]->kind == Expr::Kind::None) return emit(OpKind::Matmul, {a, wt}, NoAttrs{});
  Value* bias = tensor(*x[2]);
  if (bias->rank() > 1 || (bias->rank() == 1 && bias->shape[0] != w->shape[0]))
    fail(*x[2], "expected a bias of shape [", w->shape[0], "], got ", bias->type_string());
  if (bias->rank() == 0)
    bias = emit_step(OpKind::BroadcastInDim, {bias}, BroadcastAttrs{{w->shape[0]}, {}}, "bias");
  return emit(OpKind::Matmul, {a, wt, bias}, NoAttrs{});
}

// The torch-level functions the reader accepts besides the prims: one table, which the Python
// package reads too (torch_spellings()).
struct TorchSpellingEntry {
  std::string_view name;
  std::vector<Value*> (CallLowering::*lower)();
  int outputs = 1;
};
constexpr TorchSpellingEntry kTorchSpellings[] = {
    {"permute", &CallLowering::permute},     {"reshape", &CallLowering::reshape},
    {"view", &CallLowering::reshape},        {"expand", &CallLowering::expand},
    {"unsqueeze", &CallLowering::unsqueeze}, {"cat", &CallLowering::cat},
    {"squeeze", &CallLowering::squeeze},     {"transpose", &CallLowering::transpose},
    {"flatten", &CallLowering::flatten},     {"slice_prim_impl", &CallLowering::slice_prim_impl},
    {"index_select", &CallLowering::index_select}, {"take_along_dim", &CallLowering::take_along_dim},
    {"gather", &CallLowering::gather},     {"nll_loss_backward", &CallLowering::nll_loss_backward},
    {"scatter_add", &CallLowering::torch_scatter_add}, {"index_add", &CallLowering::torch_index_add},
    {"embedding_backward", &CallLowering::embedding_backward},
    {"cumsum", &CallLowering::cumsum},     {"frexp", &CallLowering::frexp, 2},
    {"matmul", &CallLowering::matmul},     {"linear", &CallLowering::linear},
};

// Prims of Thunder's that ops.def does not have, which the reader writes as other prims.
constexpr TorchSpellingEntry kCompositePrims[] = {
    {"argmax", &CallLowering::argmax},
    {"argmin", &CallLowering::argmin},
    {"index_add", &CallLowering::index_add},
    {"embedding_backward", &CallLowering::embedding_backward},
    {"frexp", &CallLowering::frexp, 2},
    {"std", &CallLowering::std_dev},
    {"linear", &CallLowering::linear},
};

std::vector<Value*> CallLowering::torch(const std::string& fn) {
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

}  // namespace detail

std::vector<TorchSpelling> torch_spellings() {
  std::vector<TorchSpelling> out;
  for (const detail::TorchSpellingEntry& e : detail::kTorchSpellings)
    out.push_back({e.name, e.name == "slice_prim_impl" ? "torch_slice_prim_impl" : "torch." + std::string(e.name),
                   e.outputs});
  return out;
}

std::vector<Value*> lower_call(TraceScope& scope, const Expr& call, const std::vector<std::string>& output_names) {
  std::string callee = call.base->dotted_name();
  if (callee.empty()) scope.fail(call, "expected a call of a dotted name such as prims.add");
  detail::CallLowering lowering(scope, call, callee, output_names);
  if (callee.rfind("prims.", 0) == 0) {
    const std::string prim = callee.substr(6);
    if (std::optional<OpKind> op = op_from_name(prim)) return lowering.prim(*op);
    for (const detail::TorchSpellingEntry& e : detail::kCompositePrims)
      if (e.name == prim) return (lowering.*e.lower)();
    scope.fail(*call.base, "unsupported op '", callee, "'");
  }
  std::string fn = detail::torch_function(callee);
  if (fn.empty()) scope.fail(*call.base, "unsupported op '", callee, "'");
  return lowering.torch(fn);
}

}  // namespace vf
