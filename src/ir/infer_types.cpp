// Argument checks and result types for every op. Each error names the op, its arguments, what
// was expected and what was given.
#include "ir/infer_types.h"

#include <algorithm>
#include <limits>
#include <sstream>

#include "base/error.h"

namespace vf {
namespace {

std::string list_to_string(const std::vector<int64_t>& v) { return shape_to_string(v); }

// "a float", "an int", "a bool".
std::string with_article(ScalarKind kind) {
  return std::string(kind == ScalarKind::Int ? "an " : "a ") + scalar_kind_name(kind);
}

// "prims.add(t0: f32[2, 3], 1.0)"
std::string describe_call(OpKind op, const std::vector<Value*>& inputs) {
  std::ostringstream out;
  out << "prims." << op_name(op) << '(';
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value* v = inputs[i];
    out << (i ? ", " : "");
    if (v->is_constant())
      out << scalar_to_python(*v->constant);
    else
      out << v->name << ": " << v->type_string();
  }
  out << ')';
  return out.str();
}

class Checker {
 public:
  Checker(OpKind op, const std::vector<Value*>& inputs) : op_(op), inputs_(inputs) {}

  template <typename... Args>
  [[noreturn]] void fail(Args&&... args) const {
    throw UserError(detail::concat(describe_call(op_, inputs_), ": ", std::forward<Args>(args)...));
  }
  template <typename... Args>
  void check(bool cond, Args&&... args) const {
    if (!cond) fail(std::forward<Args>(args)...);
  }

  size_t count() const { return inputs_.size(); }
  void arity(size_t n) const {
    check(inputs_.size() == n, "expected ", n, " argument(s), got ", inputs_.size());
  }
  const Value& tensor(size_t i) const {
    check(inputs_[i]->is_tensor, "argument ", i, " must be a tensor, got a ", inputs_[i]->type_string());
    return *inputs_[i];
  }
  // Wraps a possibly negative dim into [0, rank).
  int64_t dim(int64_t d, int64_t rank, std::string_view what = "dim") const {
    check(d >= -rank && d < std::max<int64_t>(rank, 1) && !(rank == 0), what, " ", d,
          " is out of range for a tensor of rank ", rank);
    return d < 0 ? d + rank : d;
  }
  // Canonical, sorted, unique dims.
  std::vector<int64_t> dims(std::vector<int64_t> ds, int64_t rank) const {
    for (int64_t& d : ds) d = dim(d, rank);
    std::vector<int64_t> sorted = ds;
    std::sort(sorted.begin(), sorted.end());
    check(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), "dims ",
          list_to_string(ds), " repeat a dim");
    return sorted;
  }
  // The tensor dtype shared by all tensor operands of an elementwise op, checking shapes and the
  // weak scalars against it. Scalar-only calls take the default dtype of the strongest scalar.
  DType elementwise_dtype(size_t first = 0) const {
    const Value* ref = nullptr;
    for (size_t i = first; i < inputs_.size(); ++i) {
      const Value* v = inputs_[i];
      if (!v->is_tensor) continue;
      if (!ref) {
        ref = v;
        continue;
      }
      check(v->shape == ref->shape, "operands must have the same shape (use broadcast_in_dim), got ",
            shape_to_string(ref->shape), " and ", shape_to_string(v->shape));
      check(v->dtype == ref->dtype, "tensor operands must have the same dtype (use "
            "convert_element_type), got ", dtype_short_name(ref->dtype), " and ", dtype_short_name(v->dtype));
    }
    ScalarKind strongest = ScalarKind::Bool;
    for (size_t i = first; i < inputs_.size(); ++i)
      if (!inputs_[i]->is_tensor) strongest = std::max(strongest, inputs_[i]->scalar_kind);
    if (!ref) {
      fail("at least one operand must be a tensor");
    }
    ScalarKind allowed = is_floating(ref->dtype) ? ScalarKind::Float
                         : is_bool(ref->dtype)   ? ScalarKind::Bool
                                                 : ScalarKind::Int;
    check(strongest <= allowed, with_article(strongest), " number cannot combine with ",
          dtype_short_name(ref->dtype), " tensors (convert the tensor first)");
    return ref->dtype;
  }
  const Shape& elementwise_shape(size_t first = 0) const {
    for (size_t i = first; i < inputs_.size(); ++i)
      if (inputs_[i]->is_tensor) return inputs_[i]->shape;
    fail("at least one operand must be a tensor");
  }

 private:
  OpKind op_;
  const std::vector<Value*>& inputs_;
};

ValueType tensor_type(DType dtype, Shape shape) { return ValueType{true, dtype, std::move(shape), ScalarKind::Float}; }

bool float_only(OpKind op) {
  switch (op) {
    case OpKind::Exp: case OpKind::Exp2: case OpKind::Expm1: case OpKind::Log: case OpKind::Log1p:
    case OpKind::Log2: case OpKind::Log10: case OpKind::Sqrt: case OpKind::Rsqrt:
    case OpKind::Reciprocal: case OpKind::Sin: case OpKind::Cos: case OpKind::Tan: case OpKind::Tanh:
    case OpKind::Sinh: case OpKind::Cosh: case OpKind::Asin: case OpKind::Acos: case OpKind::Atan:
    case OpKind::Erf: case OpKind::Erfc: case OpKind::Erfinv: case OpKind::Atan2: case OpKind::Lerp:
    case OpKind::Acosh: case OpKind::Asinh: case OpKind::Atanh: case OpKind::Lgamma: case OpKind::Digamma:
    case OpKind::Erfcinv: case OpKind::Ndtri: case OpKind::Nextafter: case OpKind::Zeta:
    case OpKind::FrexpMantissa: case OpKind::FrexpExponent: case OpKind::Var: case OpKind::VarMean:
      return true;
    default:
      return false;
  }
}

bool rejects_bool(OpKind op) {
  switch (op) {
    case OpKind::Abs: case OpKind::Neg: case OpKind::Floor: case OpKind::Ceil:
    case OpKind::Round: case OpKind::Trunc: case OpKind::Sub: case OpKind::Div: case OpKind::Pow: case OpKind::Fmod: case OpKind::Remainder: case OpKind::Sum:
    case OpKind::Prod: case OpKind::BitwiseLeftShift: case OpKind::BitwiseRightShift: case OpKind::Cumsum:
      return true;
    default:
      return false;
  }
}

bool is_bitwise(OpKind op) {
  return op == OpKind::BitwiseNot || op == OpKind::BitwiseAnd || op == OpKind::BitwiseOr ||
         op == OpKind::BitwiseXor || op == OpKind::BitwiseLeftShift || op == OpKind::BitwiseRightShift;
}

bool gives_bool(OpKind op) {
  switch (op) {
    case OpKind::IsFinite: case OpKind::Signbit: case OpKind::Eq: case OpKind::Ne: case OpKind::Lt:
    case OpKind::Le: case OpKind::Gt: case OpKind::Ge:
      return true;
    default:
      return false;
  }
}

void check_dtype_class(const Checker& c, OpKind op, DType dtype) {
  if (float_only(op))
    c.check(is_floating(dtype), "expects a floating dtype, got ", dtype_short_name(dtype));
  if (rejects_bool(op))
    c.check(!is_bool(dtype), "expects a numeric dtype, got b8 (convert it first)");
  if (is_bitwise(op)) {
    const bool shift = op == OpKind::BitwiseLeftShift || op == OpKind::BitwiseRightShift;
    c.check(!is_floating(dtype), "expects an integer ", shift ? "" : "or bool ", "dtype, got ", dtype_short_name(dtype));
  }
  // The next value after a in a half type is a step of that type, which float32 arithmetic
  // rounded to it would not give.
  if (op == OpKind::Nextafter)
    c.check(!is_half(dtype), "expects f32 or f64 (the next value of a 16-bit float is not supported), got ",
            dtype_short_name(dtype));
}

std::vector<ValueType> infer_view(const Checker& c, OpKind op, const std::vector<Value*>& inputs,
                                  OpAttrs& attrs) {
  c.arity(1);
  const Value& in = c.tensor(0);
  const int64_t rank = in.rank();
  switch (op) {
    case OpKind::Transpose: {
      auto& perm = std::get<PermuteAttrs>(attrs).permutation;
      c.check(static_cast<int64_t>(perm.size()) == rank, "permutation ", list_to_string(perm),
              " must have ", rank, " entries");
      std::vector<bool> seen(rank, false);
      Shape out(rank);
      for (int64_t i = 0; i < rank; ++i) {
        perm[i] = c.dim(perm[i], rank, "permutation entry");
        c.check(!seen[perm[i]], "permutation ", list_to_string(perm), " repeats ", perm[i]);
        seen[perm[i]] = true;
        out[i] = in.shape[perm[i]];
      }
      return {tensor_type(in.dtype, out)};
    }
    case OpKind::Reshape: {
      Shape& shape = std::get<ReshapeAttrs>(attrs).shape;
      int64_t known = 1, infer_at = -1;
      for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == -1) {
          c.check(infer_at < 0, "shape ", shape_to_string(shape), " has more than one -1");
          infer_at = static_cast<int64_t>(i);
        } else {
          c.check(shape[i] >= 0, "shape ", shape_to_string(shape), " has a negative size");
          known *= shape[i];
        }
      }
      if (infer_at >= 0) {
        c.check(known != 0, "cannot infer the -1 in shape ", shape_to_string(shape),
                " for a tensor of ", in.numel(), " elements");
        c.check(in.numel() % known == 0, "shape ", shape_to_string(shape), " is invalid for ",
                in.numel(), " elements");
        shape[infer_at] = in.numel() / known;
      }
      c.check(shape_numel(shape) == in.numel(), "cannot reshape ", shape_to_string(in.shape), " (",
              in.numel(), " elements) to ", shape_to_string(shape), " (", shape_numel(shape), " elements)");
      return {tensor_type(in.dtype, shape)};
    }
    case OpKind::BroadcastInDim: {
      auto& a = std::get<BroadcastAttrs>(attrs);
      const int64_t out_rank = static_cast<int64_t>(a.shape.size());
      for (int64_t s : a.shape)
        c.check(s >= 0, "shape ", shape_to_string(a.shape), " has a negative size");
      c.check(static_cast<int64_t>(a.broadcast_dims.size()) == rank, "broadcast_dimensions ",
              list_to_string(a.broadcast_dims), " must have one entry per input dim (", rank, ")");
      for (int64_t i = 0; i < rank; ++i) {
        int64_t d = a.broadcast_dims[i] = c.dim(a.broadcast_dims[i], out_rank, "broadcast dimension");
        c.check(i == 0 || d > a.broadcast_dims[i - 1], "broadcast_dimensions ",
                list_to_string(a.broadcast_dims), " must be strictly increasing");
        c.check(in.shape[i] == 1 || in.shape[i] == a.shape[d], "input dim ", i, " of size ", in.shape[i],
                " cannot broadcast to size ", a.shape[d], " of output dim ", d, " in shape ",
                shape_to_string(a.shape));
      }
      return {tensor_type(in.dtype, a.shape)};
    }
    case OpKind::SlicePrim: {
      auto& a = std::get<SliceAttrs>(attrs);
      if (a.step.empty()) a.step.assign(rank, 1);
      c.check(static_cast<int64_t>(a.start.size()) == rank && static_cast<int64_t>(a.end.size()) == rank &&
                  static_cast<int64_t>(a.step.size()) == rank,
              "start_indices ", list_to_string(a.start), ", end_indices ", list_to_string(a.end),
              " and strides ", list_to_string(a.step), " must each have ", rank, " entries");
      Shape out(rank);
      for (int64_t i = 0; i < rank; ++i) {
        c.check(0 <= a.start[i] && a.start[i] <= a.end[i] && a.end[i] <= in.shape[i], "dim ", i,
                ": expected 0 <= start <= end <= ", in.shape[i], ", got start ", a.start[i], " and end ",
                a.end[i]);
        c.check(a.step[i] >= 1, "dim ", i, ": stride must be >= 1, got ", a.step[i]);
        out[i] = (a.end[i] - a.start[i] + a.step[i] - 1) / a.step[i];
      }
      return {tensor_type(in.dtype, out)};
    }
    case OpKind::Squeeze: {
      auto& dims = std::get<DimsAttrs>(attrs).dims;
      dims = c.dims(dims, rank);
      Shape out;
      for (int64_t i = 0; i < rank; ++i) {
        bool squeezed = std::binary_search(dims.begin(), dims.end(), i);
        c.check(!squeezed || in.shape[i] == 1, "cannot squeeze dim ", i, " of size ", in.shape[i],
                " (shape ", shape_to_string(in.shape), ")");
        if (!squeezed) out.push_back(in.shape[i]);
      }
      return {tensor_type(in.dtype, out)};
    }
    default:
      VF_INTERNAL_ERROR("not a view op: ", op_name(op));
  }
}

std::vector<ValueType> infer_movement(const Checker& c, OpKind op, const std::vector<Value*>& inputs,
                                      OpAttrs& attrs) {
  switch (op) {
    case OpKind::Pad: {
      c.arity(2);
      const Value& in = c.tensor(0);
      const Value& value = *inputs[1];
      c.check(!value.is_tensor, "padding_value must be a number, got a tensor");
      ScalarKind allowed = is_floating(in.dtype) ? ScalarKind::Float
                           : is_bool(in.dtype)   ? ScalarKind::Bool
                                                 : ScalarKind::Int;
      c.check(value.scalar_kind <= allowed, with_article(value.scalar_kind),
              " padding value cannot pad a ", dtype_short_name(in.dtype), " tensor");
      auto& config = std::get<PadAttrs>(attrs).config;
      c.check(static_cast<int64_t>(config.size()) == in.rank(), "padding_config must have one (lo, hi, "
              "dilation) per dim (", in.rank(), "), got ", config.size());
      Shape out(in.rank());
      for (int64_t i = 0; i < in.rank(); ++i) {
        const PadDim& p = config[i];
        c.check(p.interior >= 0, "dim ", i, ": interior dilation must be >= 0, got ", p.interior);
        int64_t n = in.shape[i];
        out[i] = n + std::max<int64_t>(0, n - 1) * p.interior + p.lo + p.hi;
        c.check(out[i] >= 0, "dim ", i, ": padding (", p.lo, ", ", p.hi, ", ", p.interior,
                ") of a dim of size ", n, " gives a negative size ", out[i]);
      }
      return {tensor_type(in.dtype, out)};
    }
    case OpKind::Cat: {
      c.check(!inputs.empty(), "expects at least one tensor");
      const Value& first = c.tensor(0);
      auto& dim = std::get<AxisAttrs>(attrs).dim;
      dim = c.dim(dim, first.rank());
      Shape out = first.shape;
      for (size_t i = 1; i < inputs.size(); ++i) {
        const Value& t = c.tensor(i);
        c.check(t.dtype == first.dtype, "tensors must have the same dtype, got ",
                dtype_short_name(first.dtype), " and ", dtype_short_name(t.dtype));
        c.check(t.rank() == first.rank(), "tensors must have the same rank, got ", first.rank(), " and ",
                t.rank());
        for (int64_t d = 0; d < first.rank(); ++d)
          c.check(d == dim || t.shape[d] == first.shape[d], "tensor ", i, " has shape ",
                  shape_to_string(t.shape), ", which differs from ", shape_to_string(first.shape),
                  " outside the cat dim ", dim);
        out[dim] += t.shape[dim];
      }
      return {tensor_type(first.dtype, out)};
    }
    case OpKind::Flip: {
      c.arity(1);
      const Value& in = c.tensor(0);
      auto& dims = std::get<DimsAttrs>(attrs).dims;
      dims = c.dims(dims, in.rank());
      return {tensor_type(in.dtype, in.shape)};
    }
    case OpKind::Take: case OpKind::TakeAlongAxis: case OpKind::Gather: {
      c.arity(2);
      const Value& a = c.tensor(0);
      const Value& index = c.tensor(1);
      c.check(is_integral(index.dtype), "the index must have an integer dtype, got ", dtype_short_name(index.dtype));
      auto& dim = std::get<AxisAttrs>(attrs).dim;
      dim = c.dim(dim, a.rank());
      c.check(a.shape[dim] > 0 || index.numel() == 0, "a non-empty index into dim ", dim, " of size 0 of ",
              a.type_string());
      if (op == OpKind::Take) {
        c.check(index.rank() <= 1, "the index must be 0-D or 1-D, got ", index.type_string());
        Shape out = a.shape;
        out[dim] = index.rank() == 1 ? index.shape[0] : 1;
        return {tensor_type(a.dtype, out)};
      }
      c.check(index.rank() == a.rank(), "the index must have the rank of a (", a.rank(), "), got ",
              index.type_string());
      for (int64_t d = 0; d < a.rank(); ++d) {
        if (d == dim) continue;
        const bool fits = op == OpKind::Gather ? index.shape[d] <= a.shape[d] : index.shape[d] == a.shape[d];
        c.check(fits, "the index's shape ", shape_to_string(index.shape),
                op == OpKind::Gather ? " exceeds " : " differs from ", "a's ", shape_to_string(a.shape),
                " in dim ", d, " (only dim ", dim, " may differ)");
      }
      return {tensor_type(a.dtype, index.shape)};
    }
    default:
      VF_INTERNAL_ERROR("not a movement op: ", op_name(op));
  }
}

// scatter_add and scatter_max(a, index, src, dim): index and src of a's rank, index within src
// everywhere and within a outside dim, src of a's dtype; scatter_max's an integer one.
std::vector<ValueType> infer_scatter(const Checker& c, OpKind op, OpAttrs& attrs) {
  c.arity(3);
  const Value& a = c.tensor(0);
  const Value& index = c.tensor(1);
  const Value& src = c.tensor(2);
  c.check(is_integral(index.dtype), "the index must have an integer dtype, got ", dtype_short_name(index.dtype));
  c.check(!is_bool(a.dtype), "a must have a numeric dtype, got b8");
  c.check(op != OpKind::ScatterMax || is_integral(a.dtype), "a must have an integer dtype, got ",
          dtype_short_name(a.dtype));
  c.check(src.dtype == a.dtype, "src must have a's dtype ", dtype_short_name(a.dtype), ", got ",
          dtype_short_name(src.dtype));
  auto& dim = std::get<AxisAttrs>(attrs).dim;
  dim = c.dim(dim, a.rank());
  c.check(index.rank() == a.rank() && src.rank() == a.rank(), "index and src must have the rank of a (", a.rank(),
          "), got ", index.type_string(), " and ", src.type_string());
  for (int64_t d = 0; d < a.rank(); ++d) {
    c.check(index.shape[d] <= src.shape[d], "the index's shape ", shape_to_string(index.shape), " exceeds src's ",
            shape_to_string(src.shape), " in dim ", d);
    c.check(d == dim || index.shape[d] <= a.shape[d], "the index's shape ", shape_to_string(index.shape),
            " exceeds a's ", shape_to_string(a.shape), " in dim ", d, " (only dim ", dim, " may)");
  }
  c.check(a.shape[dim] > 0 || index.numel() == 0, "a non-empty index into dim ", dim, " of size 0 of ",
          a.type_string());
  return {tensor_type(a.dtype, a.shape)};
}

// torch.matmul's shapes (ir.h).
std::vector<ValueType> infer_matmul(const Checker& c, OpKind op) {
  const bool add = op == OpKind::MatmulAdd;
  if (add)
    c.check(c.count() == 3 || c.count() == 4, "expected 3 arguments (a, b, c) or 4 (a, b, c, bias), got ", c.count());
  else
    c.check(c.count() == 2 || c.count() == 3, "expected 2 arguments (a, b) or 3 (a, b, bias), got ", c.count());
  const Value& a = c.tensor(0);
  const Value& b = c.tensor(1);
  c.check(a.dtype == b.dtype, "operands must have one dtype, got ", dtype_short_name(a.dtype), " and ",
          dtype_short_name(b.dtype));
  c.check(is_floating(a.dtype), "expects a floating dtype, got ", dtype_short_name(a.dtype));
  c.check(a.rank() >= 1 && b.rank() >= 1, "expects operands of rank 1 or more, got ", a.type_string(), " and ",
          b.type_string());
  const Shape as = a.rank() == 1 ? Shape{1, a.shape[0]} : a.shape;
  const Shape bs = b.rank() == 1 ? Shape{b.shape[0], 1} : b.shape;
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  c.check(bs[bs.size() - 2] == k, "the contracted dims differ: ", a.type_string(), " has ", k, " columns, ",
          b.type_string(), " has ", bs[bs.size() - 2], " rows");
  // The batch dims, broadcast from the right.
  const size_t batch = std::max(as.size(), bs.size()) - 2;
  Shape out(batch, 1);
  for (size_t i = 0; i < batch; ++i) {
    const int64_t x = i + as.size() >= batch + 2 ? as[i + as.size() - 2 - batch] : 1;
    const int64_t y = i + bs.size() >= batch + 2 ? bs[i + bs.size() - 2 - batch] : 1;
    c.check(x == y || x == 1 || y == 1, "the batch dims of ", a.type_string(), " and ", b.type_string(),
            " do not broadcast");
    out[i] = x == 1 ? y : x;
  }
  if (a.rank() > 1) out.push_back(m);
  if (b.rank() > 1) out.push_back(n);
  if (add) {
    const Value& addend = c.tensor(2);
    c.check(addend.dtype == a.dtype && addend.shape == out, "expected c of ", dtype_short_name(a.dtype),
            shape_to_string(out), " (the result's type), got ", addend.type_string());
  }
  if (c.count() == (add ? 4u : 3u)) {
    const Value& bias = c.tensor(add ? 3 : 2);
    c.check(b.rank() >= 2, "a bias needs b of rank 2 or more (the result's last dim), got ", b.type_string());
    c.check(bias.dtype == a.dtype && bias.rank() == 1 && bias.shape[0] == n, "expected a bias of ",
            dtype_short_name(a.dtype), "[", n, "], got ", bias.type_string());
  }
  if (op == OpKind::MatmulGelu) {
    c.check(a.dtype != DType::Float64, "has no float64 form (cuBLASLt's gelu epilogue), got f64 operands");
    return {tensor_type(a.dtype, out), tensor_type(a.dtype, out)};
  }
  return {tensor_type(a.dtype, out)};
}

std::vector<ValueType> infer_reduction(const Checker& c, OpKind op, OpAttrs& attrs) {
  c.arity(1);
  const Value& in = c.tensor(0);
  check_dtype_class(c, op, in.dtype);
  std::vector<int64_t>& dims = (op == OpKind::Var || op == OpKind::VarMean)
                                   ? std::get<VarAttrs>(attrs).dims
                                   : std::get<DimsAttrs>(attrs).dims;
  // A 0-dim tensor's dim 0 (or -1) is the tensor itself, as in PyTorch: reducing over it reduces
  // over no dim (torch.amax(torch.tensor(3.0), 0) is 3.0).
  if (in.rank() == 0 && dims.size() == 1 && (dims[0] == 0 || dims[0] == -1)) dims.clear();
  dims = c.dims(dims, in.rank());
  Shape out;
  for (int64_t i = 0; i < in.rank(); ++i)
    if (!std::binary_search(dims.begin(), dims.end(), i)) out.push_back(in.shape[i]);
  if (op == OpKind::VarMean) return {tensor_type(in.dtype, out), tensor_type(in.dtype, out)};
  return {tensor_type(in.dtype, out)};
}

// The attribute struct each op carries.
bool attrs_match(OpKind op, const OpAttrs& attrs) {
  switch (op) {
    case OpKind::Transpose: return std::holds_alternative<PermuteAttrs>(attrs);
    case OpKind::Reshape: return std::holds_alternative<ReshapeAttrs>(attrs);
    case OpKind::BroadcastInDim: return std::holds_alternative<BroadcastAttrs>(attrs);
    case OpKind::SlicePrim: return std::holds_alternative<SliceAttrs>(attrs);
    case OpKind::Squeeze: case OpKind::Flip: case OpKind::Sum: case OpKind::Prod: case OpKind::Amax:
    case OpKind::Amin:
      return std::holds_alternative<DimsAttrs>(attrs);
    case OpKind::Var: case OpKind::VarMean: return std::holds_alternative<VarAttrs>(attrs);
    case OpKind::Pad: return std::holds_alternative<PadAttrs>(attrs);
    case OpKind::Cat: case OpKind::Take: case OpKind::TakeAlongAxis: case OpKind::Gather:
    case OpKind::ScatterAdd: case OpKind::ScatterMax: case OpKind::Cumsum:
      return std::holds_alternative<AxisAttrs>(attrs);
    case OpKind::ConvertElementType: return std::holds_alternative<CastAttrs>(attrs);
    case OpKind::Full: return std::holds_alternative<FullAttrs>(attrs);
    case OpKind::Iota: return std::holds_alternative<IotaAttrs>(attrs);
    case OpKind::UniformPhilox: return std::holds_alternative<UniformAttrs>(attrs);
    default: return std::holds_alternative<NoAttrs>(attrs);
  }
}

}  // namespace

std::vector<ValueType> infer_types(OpKind op, const std::vector<Value*>& inputs, OpAttrs& attrs) {
  VF_INTERNAL_CHECK(attrs_match(op, attrs), "prims.", op_name(op), " built with the wrong attribute kind (index ",
                    attrs.index(), ")");
  Checker c(op, inputs);
  switch (op_category(op)) {
    case OpCategory::View:
      return infer_view(c, op, inputs, attrs);
    case OpCategory::Movement:
      return infer_movement(c, op, inputs, attrs);
    case OpCategory::Cast: {
      c.arity(1);
      const Value& in = c.tensor(0);
      return {tensor_type(std::get<CastAttrs>(attrs).dtype, in.shape)};
    }
    case OpCategory::Unary: {
      c.arity(1);
      const Value& in = c.tensor(0);
      check_dtype_class(c, op, in.dtype);
      const DType out = gives_bool(op) ? DType::Bool : op == OpKind::FrexpExponent ? DType::Int32 : in.dtype;
      return {tensor_type(out, in.shape)};
    }
    case OpCategory::Binary: {
      c.arity(2);
      DType dtype = c.elementwise_dtype();
      check_dtype_class(c, op, dtype);
      return {tensor_type(gives_bool(op) ? DType::Bool : dtype, c.elementwise_shape())};
    }
    case OpCategory::Ternary: {
      c.arity(3);
      if (op == OpKind::Where) {
        const Value& pred = *inputs[0];
        c.check(pred.is_tensor ? pred.dtype == DType::Bool : pred.scalar_kind == ScalarKind::Bool,
                "the condition must be bool, got ", pred.type_string());
        bool any_value_tensor = inputs[1]->is_tensor || inputs[2]->is_tensor;
        DType dtype;
        if (any_value_tensor) {
          dtype = c.elementwise_dtype(1);
        } else {
          ScalarKind k = std::max(inputs[1]->scalar_kind, inputs[2]->scalar_kind);
          dtype = k == ScalarKind::Float ? DType::Float32 : k == ScalarKind::Int ? DType::Int64 : DType::Bool;
        }
        c.check(pred.is_tensor || any_value_tensor, "at least one operand must be a tensor");
        const Shape& shape = c.elementwise_shape();
        for (Value* v : inputs)
          c.check(!v->is_tensor || v->shape == shape, "operands must have the same shape, got ",
                  shape_to_string(shape), " and ", shape_to_string(v->shape));
        return {tensor_type(dtype, shape)};
      }
      DType dtype = c.elementwise_dtype();
      check_dtype_class(c, op, dtype);
      return {tensor_type(dtype, c.elementwise_shape())};
    }
    case OpCategory::Reduction:
      return infer_reduction(c, op, attrs);
    case OpCategory::Scatter:
      return infer_scatter(c, op, attrs);
    case OpCategory::Contraction:
      return infer_matmul(c, op);
    case OpCategory::Scan: {
      c.arity(1);
      const Value& in = c.tensor(0);
      check_dtype_class(c, op, in.dtype);
      auto& dim = std::get<AxisAttrs>(attrs).dim;
      // A 0-dim tensor's dim 0 (or -1) is the tensor itself, as in torch.cumsum.
      dim = in.rank() == 0 && (dim == 0 || dim == -1) ? 0 : c.dim(dim, in.rank());
      return {tensor_type(in.dtype, in.shape)};
    }
    case OpCategory::Creation: {
      if (op == OpKind::UniformPhilox) {
        const auto& a = std::get<UniformAttrs>(attrs);
        c.arity(2);
        const char* names[] = {"seed", "offset"};
        for (size_t i = 0; i < 2; ++i)
          c.check(!inputs[i]->is_tensor && inputs[i]->scalar_kind == ScalarKind::Int, names[i],
                  " must be an int scalar, got a ", inputs[i]->type_string());
        for (int64_t s : a.shape) c.check(s >= 0, "shape ", shape_to_string(a.shape), " has a negative size");
        c.check(is_floating(a.dtype), "dtype must be a floating type, got ", dtype_short_name(a.dtype));
        c.check(a.minval < a.maxval && a.maxval - a.minval < std::numeric_limits<double>::infinity(),
                "minval must be less than maxval, both finite, got minval ", a.minval, " and maxval ", a.maxval);
        return {tensor_type(a.dtype, a.shape)};
      }
      c.arity(0);
      if (op == OpKind::Full) {
        const auto& a = std::get<FullAttrs>(attrs);
        for (int64_t s : a.shape)
          c.check(s >= 0, "shape ", shape_to_string(a.shape), " has a negative size");
        return {tensor_type(a.dtype, a.shape)};
      }
      const auto& a = std::get<IotaAttrs>(attrs);
      c.check(a.length >= 0, "length must be >= 0, got ", a.length);
      c.check(!is_bool(a.dtype), "dtype must be numeric, got b8");
      return {tensor_type(a.dtype, {a.length})};
    }
  }
  VF_INTERNAL_ERROR("unhandled op category for ", op_name(op));
}

}  // namespace vf
