// Reference reductions (sum, prod, amax, amin, var, var_mean).
//
// Accumulation: float16 and bfloat16 accumulate in float32, as the IR states. float32 and float64
// accumulate in double and round once at the end: a more accurate oracle than float32
// accumulation, whose difference from a float32 kernel stays inside compare's float32 tolerance
// for the sizes tests use. Integer sum and prod wrap in int64 and are truncated to the width.
// var and var_mean are computed in double by two passes (mean, then squared deviations).
// Elements are accumulated in row-major order of the input.
#include <cmath>
#include <limits>

#include "base/error.h"
#include "reference/element_access.h"
#include "reference/reference_ops.h"

namespace vf::reference {
namespace {

// Maps each input index to the linear index of its output element (reduced dims dropped).
class ReductionMap {
 public:
  ReductionMap(const Shape& in_shape, const std::vector<int64_t>& dims) : in_shape_(in_shape) {
    std::vector<bool> reduced(in_shape.size(), false);
    for (int64_t d : dims) reduced[d] = true;
    out_strides_.assign(in_shape.size(), 0);
    int64_t stride = 1;
    for (int64_t k = static_cast<int64_t>(in_shape.size()) - 1; k >= 0; --k) {
      if (reduced[k]) {
        reduced_count_ *= in_shape[k];
        continue;
      }
      out_strides_[k] = stride;
      stride *= in_shape[k];
    }
    out_numel_ = stride;
  }
  int64_t out_index(const int64_t* in_index) const {
    int64_t o = 0;
    for (size_t k = 0; k < in_shape_.size(); ++k) o += in_index[k] * out_strides_[k];
    return o;
  }
  int64_t out_numel() const { return out_numel_; }
  int64_t reduced_count() const { return reduced_count_; }  // n: elements per output

 private:
  Shape in_shape_;
  std::vector<int64_t> out_strides_;  // 0 for reduced dims
  int64_t out_numel_ = 1;
  int64_t reduced_count_ = 1;
};

// The smallest and largest values of an integer or bool dtype, as int64.
int64_t lowest_value(DType dtype) {
  if (dtype == DType::Bool || dtype == DType::UInt8) return 0;
  return -static_cast<int64_t>((uint64_t{1} << (8 * dtype_size(dtype) - 1)) - 1) - 1;
}
int64_t highest_value(DType dtype) {
  if (dtype == DType::Bool) return 1;
  if (dtype == DType::UInt8) return 255;
  return static_cast<int64_t>((uint64_t{1} << (8 * dtype_size(dtype) - 1)) - 1);
}

// The result over an empty extent.
template <typename A>
A identity(OpKind op, DType dtype) {
  switch (op) {
    case OpKind::Sum: return A(0);
    case OpKind::Prod: return A(1);
    case OpKind::Amax:
      if constexpr (std::is_floating_point_v<A>) return -std::numeric_limits<A>::infinity();
      else return static_cast<A>(lowest_value(dtype));
    case OpKind::Amin:
      if constexpr (std::is_floating_point_v<A>) return std::numeric_limits<A>::infinity();
      else return static_cast<A>(highest_value(dtype));
    default: VF_INTERNAL_ERROR("prims.", op_name(op), " has no identity here");
  }
}

template <typename A>
A combine(OpKind op, A acc, A x) {
  switch (op) {
    case OpKind::Sum:
      if constexpr (std::is_same_v<A, int64_t>)
        return static_cast<int64_t>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(x));
      else if constexpr (std::is_same_v<A, bool>) VF_INTERNAL_ERROR("bool sum");
      else return acc + x;
    case OpKind::Prod:
      if constexpr (std::is_same_v<A, int64_t>)
        return static_cast<int64_t>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(x));
      else if constexpr (std::is_same_v<A, bool>) VF_INTERNAL_ERROR("bool prod");
      else return acc * x;
    case OpKind::Amax:
      if constexpr (std::is_floating_point_v<A>)
        if (std::isnan(acc) || std::isnan(x)) return std::isnan(acc) ? acc : x;
      return x > acc ? x : acc;
    case OpKind::Amin:
      if constexpr (std::is_floating_point_v<A>)
        if (std::isnan(acc) || std::isnan(x)) return std::isnan(acc) ? acc : x;
      return x < acc ? x : acc;
    default: VF_INTERNAL_ERROR("prims.", op_name(op), " is not a simple reduction");
  }
}

// Loads elements as C, accumulates them in A (see the file comment) and stores the results.
template <typename C, typename A>
void reduce_into(OpKind op, const HostTensor& in, const ReductionMap& map, const HostTensor& out) {
  std::vector<A> acc(static_cast<size_t>(map.out_numel()), identity<A>(op, in.dtype()));
  for_each_index(in.shape(), [&](const int64_t* index) {
    const int64_t o = map.out_index(index);
    acc[o] = combine<A>(op, acc[o], static_cast<A>(load<C>(in, index)));
  });
  for (int64_t o = 0; o < map.out_numel(); ++o) store_as<A>(contiguous_element(out, o), out.dtype(), acc[o]);
}

HostTensor simple_reduction(const Node& node, const HostTensor& in, const ReductionMap& map) {
  const Value& result = *node.output();
  HostTensor out = HostTensor::empty(result.dtype, result.shape);
  switch (in.dtype()) {
    case DType::Bool: reduce_into<bool, bool>(node.op, in, map, out); break;
    case DType::UInt8: case DType::Int8: case DType::Int16: case DType::Int32: case DType::Int64:
      reduce_into<int64_t, int64_t>(node.op, in, map, out);
      break;
    case DType::Float16: case DType::BFloat16: reduce_into<float, float>(node.op, in, map, out); break;
    case DType::Float32: reduce_into<float, double>(node.op, in, map, out); break;
    case DType::Float64: reduce_into<double, double>(node.op, in, map, out); break;
  }
  return out;
}

// var (and the mean, for var_mean) in double, two passes.
std::vector<HostTensor> variance(const Node& node, const HostTensor& in, const ReductionMap& map) {
  const double correction = node.attr<VarAttrs>().correction;
  const auto n = static_cast<double>(map.reduced_count());
  std::vector<double> mean(static_cast<size_t>(map.out_numel()), 0.0);
  for_each_index(in.shape(), [&](const int64_t* index) { mean[map.out_index(index)] += in.get_double(index); });
  for (double& m : mean) m /= n;  // n == 0 gives NaN
  std::vector<double> squares(mean.size(), 0.0);
  for_each_index(in.shape(), [&](const int64_t* index) {
    const int64_t o = map.out_index(index);
    const double d = in.get_double(index) - mean[o];
    squares[o] += d * d;
  });
  const double divisor = std::max(0.0, n - correction);
  std::vector<HostTensor> results;
  for (const Value* v : node.outputs) results.push_back(HostTensor::empty(v->dtype, v->shape));
  for (int64_t o = 0; o < map.out_numel(); ++o) {
    store_as<double>(contiguous_element(results[0], o), results[0].dtype(), squares[o] / divisor);
    if (results.size() > 1) store_as<double>(contiguous_element(results[1], o), results[1].dtype(), mean[o]);
  }
  return results;
}

}  // namespace

std::vector<HostTensor> run_reduction(const Node& node, const HostTensor& input) {
  switch (node.op) {
    case OpKind::Sum: case OpKind::Prod: case OpKind::Amax: case OpKind::Amin:
      return {simple_reduction(node, input, ReductionMap(input.shape(), node.attr<DimsAttrs>().dims))};
    case OpKind::Var: case OpKind::VarMean:
      return variance(node, input, ReductionMap(input.shape(), node.attr<VarAttrs>().dims));
    default: VF_INTERNAL_ERROR("prims.", op_name(node.op), " is not a reduction");
  }
}

}  // namespace vf::reference
