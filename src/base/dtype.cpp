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
}  // namespace

int64_t dtype_size(DType d) { return info(d).size; }
std::string_view dtype_short_name(DType d) { return info(d).short_name; }
std::string_view dtype_long_name(DType d) { return info(d).long_name; }

std::optional<DType> dtype_from_short_name(std::string_view name) {
  for (size_t i = 0; i < kInfo.size(); ++i)
    if (kInfo[i].short_name == name) return static_cast<DType>(i);
  return std::nullopt;
}

std::optional<DType> dtype_from_long_name(std::string_view name) {
  // Thunder spells some dtypes with a trailing underscore (int8_, float32_) for the strong variant.
  if (!name.empty() && name.back() == '_') name.remove_suffix(1);
  for (size_t i = 0; i < kInfo.size(); ++i)
    if (kInfo[i].long_name == name) return static_cast<DType>(i);
  if (name == "bool8") return DType::Bool;
  if (name == "half") return DType::Float16;
  if (name == "float") return DType::Float32;
  if (name == "double") return DType::Float64;
  if (name == "int" || name == "long") return DType::Int64;
  if (name == "short") return DType::Int16;
  if (name == "uint8") return DType::UInt8;
  return std::nullopt;
}

DType compute_dtype(DType d) { return is_half(d) ? DType::Float32 : d; }

}  // namespace vf
