#include "ir/check_input.h"

#include "base/error.h"

namespace vf {
namespace {
std::string describe(const ArgView& arg) {
  if (arg.is_tensor) return std::string(dtype_short_name(arg.dtype)) + shape_to_string(*arg.shape);
  return std::string(scalar_kind_name(arg.scalar.kind)) + " " + scalar_to_python(arg.scalar);
}
}  // namespace

void check_input_count(const Fusion& fusion, size_t count) {
  VF_USER_CHECK(count == fusion.inputs().size(), "the fusion takes ", fusion.inputs().size(), " argument(s), got ",
                count);
}

void check_input(const Value& input, const ArgView& arg) {
  if (input.is_tensor) {
    VF_USER_CHECK(arg.is_tensor, "input '", input.name, "' expects a tensor ", input.type_string(), ", got a number (",
                  describe(arg), ")");
    VF_USER_CHECK(arg.defined, "input '", input.name, "' expects ", input.type_string(), ", got an undefined tensor");
    VF_USER_CHECK(arg.dtype == input.dtype && *arg.shape == input.shape, "input '", input.name, "' expects ",
                  input.type_string(), ", got ", describe(arg));
    return;
  }
  VF_USER_CHECK(!arg.is_tensor, "input '", input.name, "' expects a number of kind ",
                scalar_kind_name(input.scalar_kind), ", got a tensor ", describe(arg));
  VF_USER_CHECK(arg.scalar.kind <= input.scalar_kind, "input '", input.name, "' expects a number of kind ",
                scalar_kind_name(input.scalar_kind), ", got ", describe(arg));
}

}  // namespace vf
