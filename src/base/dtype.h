// Element types of tensors, their sizes and names, and the promotion rules between them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace vf {

// Listed from weakest to strongest within each category.
#define VF_DTYPES(X)                                  \
  X(Bool, "b8", "bool", 1)                            \
  X(UInt8, "ui8", "uint8", 1)                         \
  X(Int8, "i8", "int8", 1)                            \
  X(Int16, "i16", "int16", 2)                         \
  X(Int32, "i32", "int32", 4)                         \
  X(Int64, "i64", "int64", 8)                         \
  X(Float16, "f16", "float16", 2)                     \
  X(BFloat16, "bf16", "bfloat16", 2)                  \
  X(Float32, "f32", "float32", 4)                     \
  X(Float64, "f64", "float64", 8)

enum class DType : uint8_t {
#define VF_DTYPE_ENUM(name, short_name, long_name, size) name,
  VF_DTYPES(VF_DTYPE_ENUM)
#undef VF_DTYPE_ENUM
};

inline constexpr int kNumDTypes = 10;

int64_t dtype_size(DType dtype);
// Thunder's short name, as in trace annotations: "f32", "bf16", "b8".
std::string_view dtype_short_name(DType dtype);
// The name after `dtypes.` in traces and in torch: "float32", "bfloat16", "bool".
std::string_view dtype_long_name(DType dtype);
std::optional<DType> dtype_from_short_name(std::string_view name);
// A long name, a Thunder weak variant (a trailing underscore: `float32_`) or an alias (below):
// what follows `dtypes.` or `torch.` in a trace.
std::optional<DType> dtype_from_long_name(std::string_view name);

// Other names of dtypes: PyTorch's (torch.half, torch.float, torch.double, torch.short, torch.int,
// torch.long) and Thunder's bool8. The Python package reads this table too (_viewfuse.dtype_table).
struct DTypeAlias {
  std::string_view name;
  DType dtype;
};
std::span<const DTypeAlias> dtype_aliases();

inline bool is_bool(DType d) { return d == DType::Bool; }
inline bool is_floating(DType d) {
  return d == DType::Float16 || d == DType::BFloat16 || d == DType::Float32 || d == DType::Float64;
}
inline bool is_integral(DType d) { return !is_bool(d) && !is_floating(d); }  // excludes bool
inline bool is_half(DType d) { return d == DType::Float16 || d == DType::BFloat16; }
inline bool is_signed_integral(DType d) { return is_integral(d) && d != DType::UInt8; }
// The significand bits of a float dtype, the implicit one included (bf16 8, f16 11, f32 24,
// f64 53); 0 for the others.
inline int mantissa_bits(DType d) {
  switch (d) {
    case DType::BFloat16: return 8;
    case DType::Float16: return 11;
    case DType::Float32: return 24;
    case DType::Float64: return 53;
    default: return 0;
  }
}

// The dtype arithmetic runs in: float32 for the half types, the dtype itself otherwise.
DType compute_dtype(DType d);

}  // namespace vf
