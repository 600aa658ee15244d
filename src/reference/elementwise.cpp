// Reference elementwise ops: casts, unary, binary and ternary ops, one element at a time.
//
// Arithmetic runs in the compute type of the operands' dtype (float for float16, bfloat16 and
// float32; double for float64; int64 for integers, wrapping through unsigned arithmetic and
// truncated to the width on store; bool for bool) and the result is rounded to the output dtype
// after every op. Weak scalars are converted to that compute type first (integers wrap to the
// tensor's width). Float functions are the C++ standard library's in the compute type.
#include <cmath>
#include <limits>

#include "base/error.h"
#include "reference/element_access.h"
#include "reference/reference_ops.h"

namespace vf::reference {
namespace {

// An elementwise operand: a tensor read through its strides, or a weak scalar.
struct Operand {
  const HostTensor* tensor = nullptr;
  Scalar scalar;

  template <typename C>
  C get(const int64_t* index, DType dtype) const {
    return tensor ? load<C>(*tensor, index) : scalar_as<C>(scalar, dtype);
  }
};

std::vector<Operand> operands(const std::vector<HostArg>& inputs) {
  std::vector<Operand> ops;
  for (const HostArg& arg : inputs) {
    if (const auto* t = std::get_if<HostTensor>(&arg))
      ops.push_back({t, {}});
    else
      ops.push_back({nullptr, std::get<Scalar>(arg)});
  }
  return ops;
}

// Writes fn(index) for every element of out (contiguous), in row-major order.
template <typename Fn>
void fill_elements(const HostTensor& out, Fn&& fn) {
  int64_t linear = 0;
  for_each_index(out.shape(), [&](const int64_t* index) {
    fn(contiguous_element(out, linear), index);
    ++linear;
  });
}

// ---- Integer arithmetic on int64, wrapping (unsigned arithmetic: no signed overflow) ----
int64_t wrap_add(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
int64_t wrap_sub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
int64_t wrap_mul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }
int64_t wrap_neg(int64_t a) { return static_cast<int64_t>(0 - static_cast<uint64_t>(a)); }

// Truncating division; by zero gives 0, INT64_MIN / -1 wraps.
int64_t int_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return wrap_neg(a);
  return a / b;
}
// Sign of the dividend (C's %); by zero gives 0.
int64_t int_fmod(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  return a % b;
}
// Sign of the divisor (Python's %); by zero gives 0.
int64_t int_remainder(int64_t a, int64_t b) {
  int64_t r = int_fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
int64_t int_pow(int64_t base, int64_t exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exp % 2 == 0) ? 1 : -1;
    return 0;
  }
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  for (uint64_t e = static_cast<uint64_t>(exp); e != 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<int64_t>(result);
}

// ---- Unary ----
template <typename C>
C unary_float(OpKind op, C x) {
  switch (op) {
    case OpKind::Abs: return std::abs(x);
    case OpKind::Neg: return -x;
    case OpKind::Exp: return std::exp(x);
    case OpKind::Exp2: return std::exp2(x);
    case OpKind::Expm1: return std::expm1(x);
    case OpKind::Log: return std::log(x);
    case OpKind::Log1p: return std::log1p(x);
    case OpKind::Log2: return std::log2(x);
    case OpKind::Log10: return std::log10(x);
    case OpKind::Sqrt: return std::sqrt(x);
    case OpKind::Rsqrt: return C(1) / std::sqrt(x);
    case OpKind::Reciprocal: return C(1) / x;
    case OpKind::Sin: return std::sin(x);
    case OpKind::Cos: return std::cos(x);
    case OpKind::Tan: return std::tan(x);
    case OpKind::Tanh: return std::tanh(x);
    case OpKind::Sinh: return std::sinh(x);
    case OpKind::Cosh: return std::cosh(x);
    case OpKind::Asin: return std::asin(x);
    case OpKind::Acos: return std::acos(x);
    case OpKind::Atan: return std::atan(x);
    case OpKind::Erf: return std::erf(x);
    case OpKind::Erfc: return std::erfc(x);
    case OpKind::Erfinv: return static_cast<C>(erfinv(static_cast<double>(x)));
    case OpKind::Acosh: return std::acosh(x);
    case OpKind::Asinh: return std::asinh(x);
    case OpKind::Atanh: return std::atanh(x);
    // The special functions in double for every floating dtype (as the kernels compute them).
    case OpKind::Lgamma: return static_cast<C>(lgamma(static_cast<double>(x)));
    case OpKind::Digamma: return static_cast<C>(digamma(static_cast<double>(x)));
    case OpKind::Erfcinv: return static_cast<C>(erfcinv(static_cast<double>(x)));
    case OpKind::Ndtri: return static_cast<C>(ndtri(static_cast<double>(x)));
    case OpKind::FrexpMantissa: {
      int e = 0;
      return std::isfinite(x) ? std::frexp(x, &e) : x;
    }
    // As torch.sign: (0 < x) - (x < 0), so NaN gives 0.
    case OpKind::Sign: return static_cast<C>((C(0) < x) - (x < C(0)));
    case OpKind::Floor: return std::floor(x);
    case OpKind::Ceil: return std::ceil(x);
    case OpKind::Round: return std::nearbyint(x);  // half to even in the default rounding mode
    case OpKind::Trunc: return std::trunc(x);
    default: VF_INTERNAL_ERROR("prims.", op_name(op), " is not a floating unary op");
  }
}

int64_t unary_int(OpKind op, int64_t x) {
  switch (op) {
    case OpKind::Abs: return x < 0 ? wrap_neg(x) : x;
    case OpKind::Neg: return wrap_neg(x);
    case OpKind::Sign: return (0 < x) - (x < 0);
    case OpKind::Floor: case OpKind::Ceil: case OpKind::Round: case OpKind::Trunc: return x;
    case OpKind::BitwiseNot: return ~x;
    default: VF_INTERNAL_ERROR("prims.", op_name(op), " is not an integer unary op");
  }
}

bool unary_bool(OpKind op, bool x) {
  VF_INTERNAL_CHECK(op == OpKind::BitwiseNot || op == OpKind::Sign, "prims.", op_name(op), " is not a bool unary op");
  return op == OpKind::Sign ? x : !x;  // sign keeps a bool's value, as torch.sign
}

template <typename C>
C unary(OpKind op, C x) {
  if constexpr (kIsFloatCompute<C>) return unary_float(op, x);
  else if constexpr (std::is_same_v<C, int64_t>) return unary_int(op, x);
  else return unary_bool(op, x);
}

// isfinite and signbit.
template <typename C>
bool unary_predicate(OpKind op, C x) {
  if (op == OpKind::IsFinite) {
    if constexpr (kIsFloatCompute<C>) return std::isfinite(x);
    else return true;
  }
  VF_INTERNAL_CHECK(op == OpKind::Signbit, "prims.", op_name(op), " is not a predicate");
  if constexpr (kIsFloatCompute<C>) return std::signbit(x);
  else if constexpr (std::is_same_v<C, int64_t>) return x < 0;
  else return false;
}

// frexp's exponent: 0 for zero, inf and NaN.
template <typename C>
int64_t frexp_exponent(C x) {
  int e = 0;
  if constexpr (kIsFloatCompute<C>)
    if (std::isfinite(x)) std::frexp(x, &e);
  return e;
}

// ---- Binary ----
template <typename C>
C binary_float(OpKind op, C a, C b) {
  switch (op) {
    case OpKind::Add: return a + b;
    case OpKind::Sub: return a - b;
    case OpKind::Mul: return a * b;
    case OpKind::Div: return a / b;
    case OpKind::Pow: return std::pow(a, b);
    case OpKind::Maximum:
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      return std::max(a, b);
    case OpKind::Minimum:
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      return std::min(a, b);
    case OpKind::Fmod: return std::fmod(a, b);
    case OpKind::Remainder: {
      // torch's remainder: fmod, then moved into the divisor's sign.
      C r = std::fmod(a, b);
      if (r != 0 && ((b < 0) != (r < 0))) r += b;
      return r;
    }
    case OpKind::Atan2: return std::atan2(a, b);
    case OpKind::Nextafter: return std::nextafter(a, b);
    case OpKind::Zeta: return static_cast<C>(zeta(static_cast<double>(a), static_cast<double>(b)));
    default: VF_INTERNAL_ERROR("prims.", op_name(op), " is not a floating binary op");
  }
}

int64_t binary_int(OpKind op, int64_t a, int64_t b) {
  switch (op) {
    case OpKind::Add: return wrap_add(a, b);
    case OpKind::Sub: return wrap_sub(a, b);
    case OpKind::Mul: return wrap_mul(a, b);
    case OpKind::Div: return int_div(a, b);
    case OpKind::Pow: return int_pow(a, b);
    case OpKind::Maximum: return std::max(a, b);
    case OpKind::Minimum: return std::min(a, b);
    case OpKind::Fmod: return int_fmod(a, b);
    case OpKind::Remainder: return int_remainder(a, b);
    case OpKind::BitwiseAnd: return a & b;
    case OpKind::BitwiseOr: return a | b;
    case OpKind::BitwiseXor: return a ^ b;
    // torch's shifts: a left shift by a negative amount or by the width or more gives 0, a right
    // shift by such an amount the sign (a >> (width - 1)). On the sign-extended int64 value, the
    // 64-bit shift wrapped to the width gives the same for every width.
    case OpKind::BitwiseLeftShift:
      return b < 0 || b > 63 ? 0 : static_cast<int64_t>(static_cast<uint64_t>(a) << b);
    case OpKind::BitwiseRightShift: return a >> (b < 0 || b > 63 ? 63 : b);
    default: VF_INTERNAL_ERROR("prims.", op_name(op), " is not an integer binary op");
  }
}

bool binary_bool(OpKind op, bool a, bool b) {
  switch (op) {
    // add and mul of bools are or and and, as torch.add and torch.mul of bool tensors.
    case OpKind::Maximum: case OpKind::BitwiseOr: case OpKind::Add: return a || b;
    case OpKind::Minimum: case OpKind::BitwiseAnd: case OpKind::Mul: return a && b;
    case OpKind::BitwiseXor: return a != b;
    default: VF_INTERNAL_ERROR("prims.", op_name(op), " is not a bool binary op");
  }
}

template <typename C>
C binary(OpKind op, C a, C b) {
  if constexpr (kIsFloatCompute<C>) return binary_float(op, a, b);
  else if constexpr (std::is_same_v<C, int64_t>) return binary_int(op, a, b);
  else return binary_bool(op, a, b);
}

bool is_comparison(OpKind op) {
  return op == OpKind::Eq || op == OpKind::Ne || op == OpKind::Lt || op == OpKind::Le ||
         op == OpKind::Gt || op == OpKind::Ge;
}

template <typename C>
bool compare(OpKind op, C a, C b) {
  switch (op) {
    case OpKind::Eq: return a == b;
    case OpKind::Ne: return a != b;
    case OpKind::Lt: return a < b;
    case OpKind::Le: return a <= b;
    case OpKind::Gt: return a > b;
    case OpKind::Ge: return a >= b;
    default: VF_INTERNAL_ERROR("prims.", op_name(op), " is not a comparison");
  }
}

// lerp as torch computes it: two formulas split at |weight| = 0.5 for accuracy at both ends.
template <typename C>
C lerp(C start, C end, C weight) {
  if (std::abs(weight) < C(0.5)) return start + weight * (end - start);
  return end - (end - start) * (C(1) - weight);
}

// The dtype the operands' arithmetic runs in: that of the first tensor operand from `first` on.
DType operand_dtype(const Node& node, size_t first) {
  for (size_t i = first; i < node.inputs.size(); ++i)
    if (node.inputs[i]->is_tensor) return node.inputs[i]->dtype;
  return node.output()->dtype;  // where with only scalar values takes the output dtype
}

HostTensor run_cast(const Node& node, const HostTensor& in, const HostTensor& out) {
  const DType to = out.dtype();
  dispatch_compute(in.dtype(), [&](auto tag) {
    using C = decltype(tag);
    fill_elements(out, [&](std::byte* p, const int64_t* index) { store_as<C>(p, to, load<C>(in, index)); });
  });
  return out;
}

}  // namespace

HostTensor run_elementwise(const Node& node, const std::vector<HostArg>& inputs) {
  const OpKind op = node.op;
  const Value& result = *node.output();
  HostTensor out = HostTensor::empty(result.dtype, result.shape);
  const std::vector<Operand> args = operands(inputs);
  const DType to = result.dtype;

  switch (op_category(op)) {
    case OpCategory::Cast:
      VF_INTERNAL_CHECK(args.size() == 1 && args[0].tensor, "convert_element_type needs one tensor");
      return run_cast(node, *args[0].tensor, out);
    case OpCategory::Unary: {
      const DType dtype = operand_dtype(node, 0);
      dispatch_compute(dtype, [&](auto tag) {
        using C = decltype(tag);
        const bool predicate = op == OpKind::IsFinite || op == OpKind::Signbit;
        fill_elements(out, [&](std::byte* p, const int64_t* index) {
          C x = args[0].get<C>(index, dtype);
          if (predicate)
            store_as<bool>(p, to, unary_predicate<C>(op, x));
          else if (op == OpKind::FrexpExponent)
            store_as<int64_t>(p, to, frexp_exponent<C>(x));
          else
            store_as<C>(p, to, unary<C>(op, x));
        });
      });
      return out;
    }
    case OpCategory::Binary: {
      const DType dtype = operand_dtype(node, 0);
      dispatch_compute(dtype, [&](auto tag) {
        using C = decltype(tag);
        const bool comparison = is_comparison(op);
        fill_elements(out, [&](std::byte* p, const int64_t* index) {
          C a = args[0].get<C>(index, dtype), b = args[1].get<C>(index, dtype);
          if (comparison)
            store_as<bool>(p, to, compare<C>(op, a, b));
          else
            store_as<C>(p, to, binary<C>(op, a, b));
        });
      });
      return out;
    }
    case OpCategory::Ternary: {
      if (op == OpKind::Where) {
        const DType dtype = operand_dtype(node, 1);
        dispatch_compute(dtype, [&](auto tag) {
          using C = decltype(tag);
          fill_elements(out, [&](std::byte* p, const int64_t* index) {
            bool pred = args[0].get<bool>(index, DType::Bool);
            store_as<C>(p, to, pred ? args[1].get<C>(index, dtype) : args[2].get<C>(index, dtype));
          });
        });
        return out;
      }
      VF_INTERNAL_CHECK(op == OpKind::Lerp, "unknown ternary op prims.", op_name(op));
      const DType dtype = operand_dtype(node, 0);
      dispatch_compute(dtype, [&](auto tag) {
        using C = decltype(tag);
        if constexpr (kIsFloatCompute<C>) {
          fill_elements(out, [&](std::byte* p, const int64_t* index) {
            store_as<C>(p, to, lerp<C>(args[0].get<C>(index, dtype), args[1].get<C>(index, dtype),
                                       args[2].get<C>(index, dtype)));
          });
        } else {
          VF_INTERNAL_ERROR("prims.lerp on non-floating dtype ", dtype_short_name(dtype));
        }
      });
      return out;
    }
    case OpCategory::View: case OpCategory::Movement: case OpCategory::Reduction:
    case OpCategory::Creation: case OpCategory::Scatter: case OpCategory::Scan: case OpCategory::Contraction:
      break;
  }
  VF_INTERNAL_ERROR("prims.", op_name(op), " is not an elementwise op");
}

}  // namespace vf::reference
