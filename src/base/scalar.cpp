#include "base/scalar.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace vf {

const char* scalar_kind_name(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::Bool: return "bool";
    case ScalarKind::Int: return "int";
    case ScalarKind::Float: return "float";
  }
  return "?";
}

std::string scalar_to_python(const Scalar& s) {
  switch (s.kind) {
    case ScalarKind::Bool: return s.i ? "True" : "False";
    case ScalarKind::Int: return std::to_string(s.i);
    case ScalarKind::Float: break;
  }
  if (std::isnan(s.f)) return "float('nan')";
  if (std::isinf(s.f)) return s.f > 0 ? "float('inf')" : "-float('inf')";
  // Shortest representation that reads back to the same double, always with a '.' or exponent.
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, s.f);
    if (std::strtod(buf, nullptr) == s.f) break;
  }
  std::string text = buf;
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

}  // namespace vf
