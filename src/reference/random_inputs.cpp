// Seeded random inputs: one std::mt19937_64 stream per call, drawn in input order and row-major
// element order, so the same seed gives the same values (on one standard library: the
// distributions' algorithms are not fixed by the C++ standard).
#include "reference/random_inputs.h"

#include <algorithm>
#include <random>
#include <unordered_map>

#include "reference/element_access.h"

namespace vf {
namespace {

// Fills t (contiguous) from the engine: see random_inputs.h for the distributions. Integers in
// [0, index_bound) when index_bound > 0.
void fill_random(const HostTensor& t, std::mt19937_64& engine, int64_t index_bound = 0) {
  const DType dtype = t.dtype();
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int64_t> ints(index_bound > 0 ? 0 : dtype == DType::UInt8 ? 0 : -8,
                                              index_bound > 0 ? index_bound - 1 : dtype == DType::UInt8 ? 16 : 8);
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

// The inputs that takes, gathers and scatters read as indices, through view ops and casts, and the
// smallest size of the dims they index.
std::unordered_map<const Value*, int64_t> index_bounds(const Fusion& fusion) {
  std::unordered_map<const Value*, int64_t> bounds;
  for (const auto& n : fusion.nodes()) {
    if (n->op != OpKind::Take && n->op != OpKind::TakeAlongAxis && n->op != OpKind::Gather &&
        op_category(n->op) != OpCategory::Scatter)
      continue;
    const Value* v = n->inputs[1];
    while (v->producer && (is_view_op(v->producer->op) || v->producer->op == OpKind::ConvertElementType))
      v = v->producer->inputs[0];
    if (!fusion.is_input(v)) continue;
    const int64_t size = n->inputs[0]->shape.at(static_cast<size_t>(n->attr<AxisAttrs>().dim));
    auto [it, fresh] = bounds.emplace(v, size);
    if (!fresh) it->second = std::min(it->second, size);
  }
  return bounds;
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
  const std::unordered_map<const Value*, int64_t> bounds = index_bounds(fusion);
  for (const Value* input : fusion.inputs()) {
    if (input->is_tensor) {
      HostTensor t = HostTensor::empty(input->dtype, input->shape);
      const auto bound = bounds.find(input);
      fill_random(t, engine, bound == bounds.end() || is_bool(input->dtype) ? 0 : bound->second);
      args.emplace_back(std::move(t));
    } else {
      args.emplace_back(random_scalar(input->scalar_kind, engine));
    }
  }
  return args;
}

}  // namespace vf
