// cumsum in kernels (a scan nest: each line walked in order), against the reference executor on the
// CPU and, where there is a GPU, on CUDA: every dim of a 3-D tensor, an operand computed and read
// through a transpose in the scan's kernel, bf16 (float32 sums, each element rounded once), the
// integer dtypes (exact, wrapping), an operand that needs a reduction (written first), a scan of
// a scan, size-1 and empty dims (no scan kernel); and frexp's two results at special values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "backend_test.h"

namespace vf {
namespace {

using ::testing::HasSubstr;

class Scans : public test::BackendTest {};

int scan_kernels(const Plan& plan) {
  return test::kernels_where(plan, [](const LoopNest& n) { return n.scan; });
}

// Each dim of [5, 300, 7] in f32 and f64: lines of 5, 300 and 7, the walked dim outer, middle and
// innermost.
TEST_P(Scans, EveryDim_MatchesReference) {
  for (const char* dtype : {"f32", "f64"}) {
    for (int dim = 0; dim < 3; ++dim) {
      SCOPED_TRACE(std::string(dtype) + " dim " + std::to_string(dim));
      const Plan plan = check_trace("def f(x):\n  # x: \"cpu " + std::string(dtype) +
                                        "[5, 300, 7]\"\n  t0 = ltorch.cumsum(x, " + std::to_string(dim) +
                                        ")\n  return t0\n",
                                    300);
      EXPECT_EQ(scan_kernels(plan), 1);
      EXPECT_EQ(plan.kernel_count(), 1);
    }
  }
}

// The operand (exp of a transposed input times a scalar) is computed in the scan's kernel, and a
// consumer of the scan reads it from its buffer in a second kernel.
TEST_P(Scans, ComputedOperand_FusesIntoTheScan) {
  const Plan plan = check_trace(
      "def f(x):\n  # x: \"cpu f32[64, 33]\"\n  xt = prims.transpose(x, (1, 0))\n  e = prims.exp(xt)\n"
      "  s = prims.mul(e, 0.25)\n  t0 = ltorch.cumsum(s, 1)\n  t1 = prims.neg(t0)\n  return t1\n",
      64);
  EXPECT_EQ(scan_kernels(plan), 1);
  EXPECT_EQ(plan.kernel_count(), 2);
  for (const Segment& s : plan.segments)
    if (s.kernel && s.kernel->nests[0].scan) {
      EXPECT_THAT(s.note, HasSubstr("summed in order"));
    }
}

// bf16 and f16 sum in float32 and round each element once; int8, int32 and bool (through torch's
// promotion to int64) are exact.
TEST_P(Scans, HalfAndIntegerDtypes_MatchReference) {
  for (const char* dtype : {"bf16", "f16", "i8", "i32", "b8"}) {
    SCOPED_TRACE(dtype);
    const std::string d = dtype;
    check_trace("def f(x):\n  # x: \"cpu " + d + "[9, 130]\"\n  t0 = torch.cumsum(x, -1)\n  return t0\n", 130);
  }
}

// An operand that needs a reduction is written first; a scan of a scan reads the first from its
// buffer.
TEST_P(Scans, OperandNeedsReductionAndScanOfScan) {
  const Plan plan = check_trace(
      "def f(x):\n  # x: \"cpu f32[48, 40]\"\n  m = prims.amax(x, (1,))\n  mb = prims.broadcast_in_dim(m, (48, 40), (0,))\n"
      "  s = prims.sub(x, mb)\n  t0 = ltorch.cumsum(s, 0)\n  t1 = ltorch.cumsum(t0, 1)\n  return (t0, t1)\n",
      48 * 40);
  EXPECT_EQ(scan_kernels(plan), 2);
}

// Along a dim of size 1, of a 0-dim tensor, or over an empty tensor, there is no scan kernel.
TEST_P(Scans, TrivialScans_NoScanKernel) {
  const Plan plan = check_trace(
      "def f(x, s, e):\n  # x: \"cpu f32[6, 1, 5]\"\n  # s: \"cpu f32[]\"\n  # e: \"cpu f32[0, 4]\"\n"
      "  t0 = ltorch.cumsum(x, 1)\n  t1 = ltorch.cumsum(s, 0)\n  t2 = ltorch.cumsum(e, 1)\n  t3 = prims.add(t0, 1.0)\n"
      "  return (t3, t1, t2)\n",
      1);
  EXPECT_EQ(scan_kernels(plan), 0);
}

// frexp at zero, -0, inf, NaN, subnormals, powers of two and their neighbours, in every float dtype.
TEST_P(Scans, FrexpSpecialValues_MatchReference) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> values = {0.0, -0.0, inf, -inf, std::nan(""), 1.0, -1.0, 0.5, 0.75, 3.0, 1e-40,
                                      -3e-39, 1e-45, 6e-8, 65504.0, 1e30, -1e-300, 4.9e-324, 1023.99, 2.0};
  for (DType dtype : test::kFloatDTypes) {
    SCOPED_TRACE(dtype_short_name(dtype));
    auto f = std::make_shared<Fusion>();
    Value* x = f->add_tensor_input("x", dtype, {static_cast<int64_t>(values.size())});
    f->add_output(f->add(OpKind::FrexpMantissa, {x}));
    f->add_output(f->add(OpKind::FrexpExponent, {x}));
    check(f, {test::from_values(dtype, values)}, 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Scans, ::testing::Values(Device::Cpu, Device::Cuda),
                         [](const auto& info) { return std::string(device_name(info.param)); });

}  // namespace
}  // namespace vf
