// prims.uniform_philox in kernels against the reference executor on the CPU and, where there is a
// GPU, on CUDA: the generator's values bit for bit in every schedule (flat and vector passes with
// their tails, transposed tiles, reduction rows), with bounds and half types within rounding.
#include <gtest/gtest.h>

#include "backend_test.h"
#include "frontend/trace_reader.h"
#include "reference/random_inputs.h"

namespace vf {
namespace {

class Uniform : public test::BackendTest {
 protected:
  // Runs the trace (inputs x, seed, offset) against the reference: outputs within the tolerance of
  // `terms`, and the first output (the generator's u itself) equal bit for bit.
  Plan check_exact_u(const std::string& trace, DType x_dtype, const Shape& x_shape, int64_t seed, int64_t offset,
                     int64_t terms = 1) {
    auto f = std::make_shared<Fusion>(read_trace(trace));
    const std::vector<HostArg> inputs = {random_tensor(x_dtype, x_shape, 77), Scalar::from_int(seed),
                                         Scalar::from_int(offset)};
    const Plan plan = check(f, inputs, terms);
    const HostTensor u = run(f, inputs).at(0);
    const Comparison c = compare_tensors(u, run_reference(*f, inputs).at(0), Tolerance{});
    EXPECT_TRUE(c.ok) << "u on " << device_name(GetParam()) << ": " << c.first_mismatch << " (" << c.mismatches
                      << " mismatches)";
    return plan;
  }
};

std::string shape_text(const Shape& s) {
  std::string t = "(";
  for (size_t d = 0; d < s.size(); ++d) t += std::to_string(s[d]) + (s.size() == 1 || d + 1 < s.size() ? ", " : "");
  return t + ")";
}

std::string type_text(const char* dtype, const Shape& s) {
  std::string t = std::string("cpu ") + dtype + "[";
  for (size_t d = 0; d < s.size(); ++d) t += (d ? ", " : "") + std::to_string(s[d]);
  return t + "]";
}

// Dropout's pattern: u, and x where u < 0.9, in one kernel; sizes with vector tails, f64, empty.
TEST_P(Uniform, DropoutPattern_ExactEverySize) {
  struct Case {
    Shape shape;
    const char* dtype;
  };
  for (const Case& k : std::vector<Case>{{{1000003}, "f32"}, {{64, 1000}, "f32"}, {{3, 5, 7}, "f64"}, {{8, 0}, "f32"},
                                         {{2, 1, 33}, "f64"}}) {
    SCOPED_TRACE(type_text(k.dtype, k.shape));
    const std::string dt = std::string(k.dtype) == "f64" ? "float64" : "float32";
    const std::string trace = "def f(x, seed, offset):\n  # x: \"" + type_text(k.dtype, k.shape) +
                              "\"\n  # seed: \"int\"\n  # offset: \"int\"\n"
                              "  u = prims.uniform_philox(" + shape_text(k.shape) + ", 0.0, 1.0, device=devices.Device(\"cpu\"), dtype=dtypes." + dt +
                              ", seed=seed, offset=offset)\n"
                              "  keep = prims.lt(u, 0.9)\n  y = prims.where(keep, x, 0.0)\n  return (u, y)\n";
    const Plan plan = check_exact_u(trace, std::string(k.dtype) == "f64" ? DType::Float64 : DType::Float32, k.shape,
                                    20261206, 3);
    EXPECT_LE(plan.kernel_count(), 1);
  }
}

// A seed above 2^32 and a negative offset (its two's complement is the counter's high half).
TEST_P(Uniform, LargeSeedNegativeOffset_Exact) {
  const std::string trace =
      "def f(x, seed, offset):\n  # x: \"cpu f32[4, 257]\"\n  # seed: \"int\"\n  # offset: \"int\"\n"
      "  u = prims.uniform_philox((4, 257), 0.0, 1.0, device=devices.Device(\"cpu\"), dtype=dtypes.float32, seed=seed, offset=offset)\n"
      "  y = prims.add(u, x)\n  return (u, y)\n";
  check_exact_u(trace, DType::Float32, {4, 257}, 0x7fffffff12345678ll, -5);
}

// u read transposed beside a transposed input (the CUDA tiled schedule), and bounds in bf16.
TEST_P(Uniform, TransposedAndBounded_MatchReference) {
  const std::string trace =
      "def f(x, seed, offset):\n  # x: \"cpu f32[50, 40]\"\n  # seed: \"int\"\n  # offset: \"int\"\n"
      "  u = prims.uniform_philox((40, 50), 0.0, 1.0, device=devices.Device(\"cpu\"), dtype=dtypes.float32, seed=seed, offset=offset)\n"
      "  xt = prims.transpose(x, (1, 0))\n  y = prims.add(u, xt)\n"
      "  b = prims.uniform_philox((33, 65), -2.0, 3.0, device=devices.Device(\"cpu\"), dtype=dtypes.bfloat16, seed=seed, offset=offset)\n"
      "  return (u, y, b)\n";
  check_exact_u(trace, DType::Float32, {50, 40}, 11, 12);
}

// u feeding a row reduction and the pointwise work beside it: one reduction kernel.
TEST_P(Uniform, FeedsReduction_OneKernel) {
  const std::string trace =
      "def f(x, seed, offset):\n  # x: \"cpu f32[64, 1000]\"\n  # seed: \"int\"\n  # offset: \"int\"\n"
      "  u = prims.uniform_philox((64, 1000), 0.0, 1.0, device=devices.Device(\"cpu\"), dtype=dtypes.float32, seed=seed, offset=offset)\n"
      "  m = prims.mul(u, x)\n  s = prims.sum(m, (1,))\n  sb = prims.broadcast_in_dim(s, (64, 1000), (0,))\n"
      "  y = prims.sub(m, sb)\n  return (u, y, s)\n";
  const Plan plan = check_exact_u(trace, DType::Float32, {64, 1000}, 99, 0, 1000);
  EXPECT_EQ(plan.kernel_count(), 1);
}

INSTANTIATE_TEST_SUITE_P(Backends, Uniform, ::testing::Values(Device::Cpu, Device::Cuda),
                         [](const auto& info) { return std::string(device_name(info.param)); });

}  // namespace
}  // namespace vf
