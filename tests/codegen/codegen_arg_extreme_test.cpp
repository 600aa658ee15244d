// prims.argmax and prims.argmin in kernels (the reader writes each as the extreme, then the least
// index that reaches it: two phases of one reduction kernel), against the reference executor on
// the CPU and, where there is a GPU, on CUDA: rows and columns, every dim, float and integer
// dtypes, many ties and NaNs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backend_test.h"
#include "frontend/trace_reader.h"
#include "reference/element_access.h"

namespace vf {
namespace {

class ArgExtremes : public test::BackendTest {};

// Values drawn from a few integers, so that rows hold ties; with `nans`, about one in 50 is NaN.
HostTensor few_values(DType dtype, const Shape& shape, uint64_t seed, bool nans) {
  HostTensor t = HostTensor::empty(dtype, shape);
  std::mt19937_64 rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = static_cast<double>(static_cast<int64_t>(rng() % 9) - 4);
    if (nans && rng() % 50 == 0) v = std::nan("");
    reference::store_as<double>(reference::contiguous_element(t, i), dtype, v);
  }
  return t;
}

TEST_P(ArgExtremes, EveryDimTiesAndNaN_MatchReference) {
  struct Case {
    DType dtype;
    Shape shape;
    const char* dim;
  };
  const std::vector<Case> cases = {
      {DType::Float32, {64, 1000}, "1"},   {DType::Float32, {64, 1000}, "0"},  {DType::BFloat16, {8, 4096}, "-1"},
      {DType::Float16, {3, 5, 7}, "1"},    {DType::Int32, {33, 17}, "None"},   {DType::Int64, {2, 50304}, "1"},
      {DType::Float32, {1, 1}, "None"},    {DType::Float32, {5, 0}, "0"}};
  uint64_t seed = 4100;
  for (const Case& k : cases) {
    std::string shape;
    for (size_t d = 0; d < k.shape.size(); ++d) shape += (d ? ", " : "") + std::to_string(k.shape[d]);
    const std::string type = std::string(dtype_short_name(k.dtype)) + "[" + shape + "]";
    SCOPED_TRACE(type + " dim " + k.dim);
    auto f = std::make_shared<Fusion>(read_trace("def f(x):\n  # x: \"cpu " + type + "\"\n  a = prims.argmax(x, " +
                                                 k.dim + ")\n  b = prims.argmin(x, " + k.dim + ")\n  return (a, b)\n"));
    const Plan plan = check(f, {few_values(k.dtype, k.shape, seed++, is_floating(k.dtype))}, 1);
    EXPECT_LE(plan.kernel_count(), 2);  // argmax's kernel and argmin's (one each when the rows are long)
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ArgExtremes, ::testing::Values(Device::Cpu, Device::Cuda),
                         [](const auto& info) { return std::string(device_name(info.param)); });

}  // namespace
}  // namespace vf
