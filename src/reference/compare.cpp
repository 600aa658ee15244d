// Comparing tensors elementwise with dtype tolerances, and layout-independent checksums.
#include "reference/compare.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <unordered_set>
#include <vector>
#include <sstream>

#include "base/error.h"

namespace vf {
namespace {

std::string index_to_string(const int64_t* index, int64_t rank) {
  return shape_to_string(Shape(index, index + rank));
}

// A value as text, with enough digits to tell neighbouring values of the dtype apart.
std::string value_to_string(const HostTensor& t, const int64_t* index) {
  std::ostringstream out;
  if (!is_floating(t.dtype())) {
    out << t.get_int64(index);
  } else {
    out << std::setprecision(t.dtype() == DType::Float64 ? 17 : 9) << t.get_double(index);
  }
  return out.str();
}

// Whether a computed float value matches the expected one.
bool float_matches(double a, double e, Tolerance tol) {
  if (std::isnan(a) || std::isnan(e)) return std::isnan(a) && std::isnan(e);
  if (std::isinf(a) || std::isinf(e)) return a == e;
  return std::fabs(a - e) <= tol.atol + tol.rtol * std::fabs(e);
}

}  // namespace

Tolerance default_tolerance(DType dtype) {
  switch (dtype) {
    case DType::Float64: return {1e-10, 1e-12};
    case DType::Float32: return {1e-5, 1e-5};
    case DType::Float16: return {1e-3, 1e-3};
    case DType::BFloat16: return {1.6e-2, 1e-2};
    case DType::Bool: case DType::UInt8: case DType::Int8: case DType::Int16: case DType::Int32:
    case DType::Int64:
      return {0, 0};
  }
  return {0, 0};
}

Tolerance reduction_tolerance(DType dtype, int64_t terms) {
  Tolerance t = default_tolerance(dtype);
  const double scale = std::sqrt(std::max(1.0, static_cast<double>(terms) / 16.0));
  t.rtol *= scale;
  t.atol *= scale;
  return t;
}

Tolerance output_tolerance(const Value* output) {
  int64_t terms = 1;
  std::vector<const Value*> stack{output};
  std::unordered_set<const Value*> seen;
  while (!stack.empty()) {
    const Value* v = stack.back();
    stack.pop_back();
    if (!v->producer || !seen.insert(v).second) continue;
    const Node& n = *v->producer;
    if (op_category(n.op) == OpCategory::Reduction && n.inputs[0]->numel() > 0)
      terms = std::max(terms, n.inputs[0]->numel() / std::max<int64_t>(1, v->numel()));
    for (const Value* in : n.inputs) stack.push_back(in);
  }
  return reduction_tolerance(output->dtype, terms);
}

Comparison compare_tensors(const HostTensor& actual, const HostTensor& expected, Tolerance tol) {
  Comparison result;
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) {
    result.ok = false;
    result.mismatches = std::max(actual.numel(), expected.numel());
    result.first_mismatch = detail::concat("got ", dtype_short_name(actual.dtype()),
                                           shape_to_string(actual.shape()), ", expected ",
                                           dtype_short_name(expected.dtype()), shape_to_string(expected.shape()));
    return result;
  }
  const bool floating = is_floating(expected.dtype());
  for_each_index(expected.shape(), [&](const int64_t* index) {
    bool match;
    if (floating) {
      const double a = actual.get_double(index), e = expected.get_double(index);
      match = float_matches(a, e, tol);
      if (std::isfinite(a) && std::isfinite(e)) result.max_abs_error = std::max(result.max_abs_error, std::fabs(a - e));
    } else {
      const int64_t a = actual.get_int64(index), e = expected.get_int64(index);
      match = a == e;
      // |a - e| in double: exact enough for a report, and no signed overflow.
      result.max_abs_error =
          std::max(result.max_abs_error, std::fabs(static_cast<double>(a) - static_cast<double>(e)));
    }
    if (match) return;
    if (result.mismatches++ == 0)
      result.first_mismatch = "at " + index_to_string(index, expected.rank()) + ": got " +
                              value_to_string(actual, index) + ", expected " + value_to_string(expected, index);
  });
  result.ok = result.mismatches == 0;
  return result;
}

double tensor_checksum(const HostTensor& t) {
  double sum = 0;
  const bool floating = is_floating(t.dtype());
  for_each_index(t.shape(), [&](const int64_t* index) {
    const double v = floating ? t.get_double(index) : static_cast<double>(t.get_int64(index));
    if (std::isnan(v))
      sum += kChecksumNaN;
    else if (std::isinf(v))
      sum += v > 0 ? kChecksumInf : -kChecksumInf;
    else
      sum += v;
  });
  return sum;
}

}  // namespace vf
