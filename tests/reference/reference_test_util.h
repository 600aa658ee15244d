// Helpers for the reference executor's tests: tensors from value lists, one-op fusions, values out.
#pragma once

#include <cstring>
#include <limits>
#include <vector>

#include "ir/ir.h"
#include "layout/host_tensor.h"
#include "reference/element_access.h"
#include "reference/reference_executor.h"

namespace vf::testing {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
inline constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

// A contiguous tensor holding values (converted with the reference's cast rules).
inline HostTensor make_tensor(DType dtype, const Shape& shape, const std::vector<double>& values) {
  HostTensor t = HostTensor::empty(dtype, shape);
  for (size_t i = 0; i < values.size(); ++i)
    reference::store_as<double>(reference::contiguous_element(t, static_cast<int64_t>(i)), dtype, values[i]);
  return t;
}
inline HostTensor make_int_tensor(DType dtype, const Shape& shape, const std::vector<int64_t>& values) {
  HostTensor t = HostTensor::empty(dtype, shape);
  for (size_t i = 0; i < values.size(); ++i)
    reference::store_as<int64_t>(reference::contiguous_element(t, static_cast<int64_t>(i)), dtype, values[i]);
  return t;
}

// The values in logical (row-major) order.
inline std::vector<double> values_of(const HostTensor& t) {
  std::vector<double> out;
  for_each_index(t.shape(), [&](const int64_t* index) { out.push_back(t.get_double(index)); });
  return out;
}
inline std::vector<int64_t> ints_of(const HostTensor& t) {
  std::vector<int64_t> out;
  for_each_index(t.shape(), [&](const int64_t* index) { out.push_back(t.get_int64(index)); });
  return out;
}

// Runs a fusion with one output and returns that output.
inline HostTensor run_one(const Fusion& fusion, const std::vector<HostArg>& args) {
  return run_reference(fusion, args).at(0);
}

// op(x) on a 1-D tensor.
inline HostTensor run_unary(OpKind op, const HostTensor& x) {
  Fusion f;
  Value* in = f.add_tensor_input("x", x.dtype(), x.shape());
  f.add_output(f.add(op, {in}));
  return run_one(f, {x});
}

// op(a, b) on two tensors of one shape and dtype.
inline HostTensor run_binary(OpKind op, const HostTensor& a, const HostTensor& b) {
  Fusion f;
  Value* x = f.add_tensor_input("a", a.dtype(), a.shape());
  Value* y = f.add_tensor_input("b", b.dtype(), b.shape());
  f.add_output(f.add(op, {x, y}));
  return run_one(f, {a, b});
}

// op(a, scalar constant).
inline HostTensor run_with_scalar(OpKind op, const HostTensor& a, Scalar s) {
  Fusion f;
  Value* x = f.add_tensor_input("a", a.dtype(), a.shape());
  f.add_output(f.add(op, {x, f.add_constant(s)}));
  return run_one(f, {a});
}

// A one-input, one-node fusion with attributes, run on x.
inline HostTensor run_with_attrs(OpKind op, const HostTensor& x, OpAttrs attrs) {
  Fusion f;
  Value* in = f.add_tensor_input("x", x.dtype(), x.shape());
  f.add_output(f.add(op, {in}, std::move(attrs)));
  return run_one(f, {x});
}

// 0, 1, 2, ... as a tensor of the given shape.
inline HostTensor iota_tensor(DType dtype, const Shape& shape) {
  std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  return make_tensor(dtype, shape, v);
}

}  // namespace vf::testing
