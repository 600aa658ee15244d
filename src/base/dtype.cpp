#include "base/dtype.h"

#include <array>
#include <string>

namespace vf {
namespace {
struct DTypeInfo {
  std::string_view short_name;
  std::string_view long_name;
  int64_t size;
};
constexpr std::array<DTypeInfo, kNumDTypes> kInfo = {{
#define VF_DTYPE_INFO(name, short_name, long_name, size) {short_name, long_name, size},
    VF_DTYPES(VF_DTYPE_INFO)
#undef VF_DTYPE_INFO
}};
const DTypeInfo& info(DType d) { return kInfo[static_cast<size_t>(d)]; }

constexpr DTypeAlias kAliases[] = {
    {"bool8", DType::Bool},    {"half", DType::Float16}, {"float", DType::Float32}, {"double", DType::Float64},
    {"short", DType::Int16},   {"int", DType::Int32},    {"long", DType::Int64},
};
}  // namespace

std::span<const DTypeAlias> dtype_aliases() { return kAliases; }

int64_t dtype_size(DType d) { return info(d).size; }
std::string_view dtype_short_name(DType d) { return info(d).short_name; }
std::string_view dtype_long_name(DType d) { return info(d).long_name; }

std::optional<DType> dtype_from_short_name(std::string_view name) {
  for (size_t i = 0; i < kInfo.size(); ++i)
    if (kInfo[i].short_name == name) return static_cast<DType>(i);
  return std::nullopt;
}

std::optional<DType> dtype_from_long_name(std::string_view name) {
  // Thunder spells the weak variant of a dtype with a trailing underscore (int8_, float32_).
  if (!name.empty() && name.back() == '_') name.remove_suffix(1);
  for (size_t i = 0; i < kInfo.size(); ++i)
    if (kInfo[i].long_name == name) return static_cast<DType>(i);
  for (const DTypeAlias& a : kAliases)
    if (a.name == name) return a.dtype;
  return std::nullopt;
}

DType compute_dtype(DType d) { return is_half(d) ? DType::Float32 : d; }

}  // namespace vf
