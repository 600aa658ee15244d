// Seeded random inputs: one std::mt19937_64 stream per call, drawn in input order and row-major
// element order, so the same seed gives the same values (on one standard library: the
// distributions' algorithms are not fixed by the C++ standard).
#include "reference/random_inputs.h"

#include <random>

#include "reference/element_access.h"

namespace vf {
namespace {

// Fills t (contiguous) from the engine: see random_inputs.h for the distributions.
void fill_random(const HostTensor& t, std::mt19937_64& engine) {
  const DType dtype = t.dtype();
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int64_t> ints(dtype == DType::UInt8 ? 0 : -8, dtype == DType::UInt8 ? 16 : 8);
  std::uniform_int_distribution<int64_t> bits(0, 1);
  for (int64_t i = 0; i < t.numel(); ++i) {
    std::byte* p = reference::contiguous_element(t, i);
    if (is_floating(dtype))
      reference::store_as<double>(p, dtype, normal(engine));
    else if (is_bool(dtype))
      reference::store_as<bool>(p, dtype, bits(engine) != 0);
    else
      reference::store_as<int64_t>(p, dtype, ints(engine));
  }
}

Scalar random_scalar(ScalarKind kind, std::mt19937_64& engine) {
  switch (kind) {
    case ScalarKind::Bool: return Scalar::from_bool(std::uniform_int_distribution<int64_t>(0, 1)(engine) != 0);
    case ScalarKind::Int: return Scalar::from_int(std::uniform_int_distribution<int64_t>(-8, 8)(engine));
    case ScalarKind::Float: return Scalar::from_float(std::normal_distribution<double>(0.0, 1.0)(engine));
  }
  return Scalar::from_int(0);
}

}  // namespace

HostTensor random_tensor(DType dtype, const Shape& shape, uint64_t seed) {
  std::mt19937_64 engine(seed);
  HostTensor t = HostTensor::empty(dtype, shape);
  fill_random(t, engine);
  return t;
}

std::vector<HostArg> random_inputs(const Fusion& fusion, uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::vector<HostArg> args;
  for (const Value* input : fusion.inputs()) {
    if (input->is_tensor) {
      HostTensor t = HostTensor::empty(input->dtype, input->shape);
      fill_random(t, engine);
      args.emplace_back(std::move(t));
    } else {
      args.emplace_back(random_scalar(input->scalar_kind, engine));
    }
  }
  return args;
}

}  // namespace vf
