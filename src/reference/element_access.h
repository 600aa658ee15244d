// Reading and writing single tensor elements in the reference's compute types, with the IR's casts.
//
// The reference computes in four C++ types: float (float16, bfloat16, float32), double (float64),
// int64_t (every integer dtype, wrapping) and bool. Loading widens exactly; storing applies the
// IR's conversion rules for the destination dtype (see ir/ir.h):
// - float to integer truncates toward zero, saturates to the int64 range (NaN gives 0), then wraps
//   to the width; anything to bool tests != 0;
// - double and int64 reach float16 and bfloat16 through float32, as PyTorch's conversions do
//   (c10::Half and c10::BFloat16 are built from float), so they may round twice;
// - integers wrap to the destination width (two's complement).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "base/error.h"
#include "base/half.h"
#include "base/scalar.h"
#include "layout/host_tensor.h"

namespace vf::reference {

template <typename C>
inline constexpr bool kIsFloatCompute = std::is_same_v<C, float> || std::is_same_v<C, double>;

// Calls fn with a value of the C++ type that arithmetic on dtype runs in.
template <typename Fn>
decltype(auto) dispatch_compute(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::Bool: return fn(bool{});
    case DType::UInt8: case DType::Int8: case DType::Int16: case DType::Int32: case DType::Int64:
      return fn(int64_t{});
    case DType::Float16: case DType::BFloat16: case DType::Float32: return fn(float{});
    case DType::Float64: return fn(double{});
  }
  VF_INTERNAL_ERROR("bad dtype");
}

// Truncates v to the width of an integer dtype and extends it back (sign or zero) to int64.
inline int64_t wrap_to_width(int64_t v, DType dtype) {
  switch (dtype) {
    case DType::Bool: return v != 0;
    case DType::UInt8: return static_cast<uint8_t>(v);
    case DType::Int8: return static_cast<int8_t>(static_cast<uint8_t>(v));
    case DType::Int16: return static_cast<int16_t>(static_cast<uint16_t>(v));
    case DType::Int32: return static_cast<int32_t>(static_cast<uint32_t>(v));
    case DType::Int64: return v;
    case DType::Float16: case DType::BFloat16: case DType::Float32: case DType::Float64:
      VF_INTERNAL_ERROR("wrap_to_width on floating dtype ", dtype_short_name(dtype));
  }
  VF_INTERNAL_ERROR("bad dtype");
}

// Float to int64: truncate toward zero, saturate, NaN gives 0 (never undefined behaviour).
inline int64_t float_to_int64_saturating(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
  if (v <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

// The element at index, widened to the compute type C of the tensor's dtype.
template <typename C>
C load(const HostTensor& t, const int64_t* index) {
  if constexpr (std::is_same_v<C, bool>) {
    return t.get_int64(index) != 0;
  } else if constexpr (std::is_same_v<C, int64_t>) {
    return t.get_int64(index);
  } else {
    return static_cast<C>(t.get_double(index));  // exact: the dtype's values fit in C
  }
}

// A weak scalar converted to the compute type C of a tensor dtype (integers wrap to its width).
template <typename C>
C scalar_as(const Scalar& s, DType dtype) {
  if constexpr (std::is_same_v<C, bool>) {
    return s.kind == ScalarKind::Float ? s.f != 0 : s.i != 0;
  } else if constexpr (std::is_same_v<C, int64_t>) {
    int64_t v = s.kind == ScalarKind::Float ? float_to_int64_saturating(s.f) : s.i;
    return wrap_to_width(v, dtype);
  } else {
    return s.kind == ScalarKind::Float ? static_cast<C>(s.f) : static_cast<C>(s.i);
  }
}

template <typename T>
void store_raw(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// v (of compute type C) as an int64, with the IR's float-to-integer rule.
template <typename C>
int64_t to_int64(C v) {
  if constexpr (kIsFloatCompute<C>)
    return float_to_int64_saturating(static_cast<double>(v));
  else
    return static_cast<int64_t>(v);
}

// Writes v (of compute type C) to p as an element of dtype, with the IR's conversion rules.
template <typename C>
void store_as(std::byte* p, DType dtype, C v) {
  switch (dtype) {
    case DType::Bool: return store_raw<uint8_t>(p, v != 0 ? 1 : 0);
    case DType::UInt8: return store_raw<uint8_t>(p, static_cast<uint8_t>(to_int64(v)));
    case DType::Int8: return store_raw<uint8_t>(p, static_cast<uint8_t>(to_int64(v)));
    case DType::Int16: return store_raw<uint16_t>(p, static_cast<uint16_t>(to_int64(v)));
    case DType::Int32: return store_raw<uint32_t>(p, static_cast<uint32_t>(to_int64(v)));
    case DType::Int64: return store_raw<int64_t>(p, to_int64(v));
    case DType::Float16: return store_raw<uint16_t>(p, float_to_half(static_cast<float>(v)));
    case DType::BFloat16: return store_raw<uint16_t>(p, float_to_bfloat16(static_cast<float>(v)));
    case DType::Float32: return store_raw<float>(p, static_cast<float>(v));
    case DType::Float64: return store_raw<double>(p, static_cast<double>(v));
  }
  VF_INTERNAL_ERROR("bad dtype");
}

// The address of element `linear` of a contiguous tensor.
inline std::byte* contiguous_element(const HostTensor& t, int64_t linear) {
  return t.storage()->data() + (t.layout().offset + linear) * dtype_size(t.dtype());
}

}  // namespace vf::reference
