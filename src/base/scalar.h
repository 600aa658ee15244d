// Weakly typed numbers, as Python numbers appear in traces: bool, int or float.
#pragma once

#include <cstdint>
#include <string>

namespace vf {

enum class ScalarKind : uint8_t { Bool, Int, Float };  // weakest to strongest

struct Scalar {
  ScalarKind kind = ScalarKind::Int;
  int64_t i = 0;  // Bool and Int
  double f = 0;   // Float

  static Scalar from_bool(bool v) { return {ScalarKind::Bool, v ? 1 : 0, 0}; }
  static Scalar from_int(int64_t v) { return {ScalarKind::Int, v, 0}; }
  static Scalar from_float(double v) { return {ScalarKind::Float, 0, v}; }

  double as_double() const { return kind == ScalarKind::Float ? f : static_cast<double>(i); }
  bool operator==(const Scalar& o) const {
    return kind == o.kind && (kind == ScalarKind::Float ? (f == o.f || (f != f && o.f != o.f)) : i == o.i);
  }
};

const char* scalar_kind_name(ScalarKind kind);  // "bool", "int", "float"
// The Python literal: True, 3, 1e-05, float('inf'), -float('inf'), float('nan').
std::string scalar_to_python(const Scalar& s);

}  // namespace vf
