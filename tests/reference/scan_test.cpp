// Tests of the reference's cumsum (hand-worked running sums along each dim, float32 accumulation
// with one rounding per element for the half types, integer wrap, a 0-dim tensor) and of frexp's
// two results (hand-worked mantissas and exponents, subnormals, zero, inf and NaN).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "base/error.h"
#include "frontend/trace_reader.h"
#include "reference_test_util.h"

namespace vf {
namespace {

using testing::ints_of;
using testing::make_int_tensor;
using testing::make_tensor;
using testing::run_one;
using testing::run_unary;
using testing::values_of;

HostTensor cumsum(const HostTensor& a, int64_t dim) {
  Fusion f;
  Value* x = f.add_tensor_input("a", a.dtype(), a.shape());
  f.add_output(f.add(OpKind::Cumsum, {x}, AxisAttrs{dim}));
  return run_one(f, {a});
}

// [2, 3]: along dim 1 each row's running sum; along dim 0 (written -2) each column's.
TEST(ReferenceScan, CumsumEachDim_RunningSums) {
  const HostTensor a = make_tensor(DType::Float32, {2, 3}, {1, 2, 3, 10, 20, 30});
  EXPECT_EQ(values_of(cumsum(a, 1)), (std::vector<double>{1, 3, 6, 10, 30, 60}));
  EXPECT_EQ(values_of(cumsum(a, -2)), (std::vector<double>{1, 2, 3, 11, 22, 33}));
}

// The middle dim of [2, 3, 2]: the lines are (i, :, k).
TEST(ReferenceScan, CumsumMiddleDim_LinesKeepOuterAndInner) {
  const HostTensor a = make_tensor(DType::Float64, {2, 3, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  EXPECT_EQ(values_of(cumsum(a, 1)), (std::vector<double>{1, 2, 4, 6, 9, 12, 7, 8, 16, 18, 27, 30}));
}

// bf16: 256 then eight ones. Each element is the float32 running sum rounded once (bf16's step at
// 256 is 2): 256, 257 -> 256 (ties to even), 258, 259 -> 260, 260, 261 -> 260, 262, 263 -> 264,
// 264. Rounding the running sum itself would stay at 256.
TEST(ReferenceScan, BFloat16_AccumulatesInFloat32) {
  const HostTensor a = make_tensor(DType::BFloat16, {9}, {256, 1, 1, 1, 1, 1, 1, 1, 1});
  EXPECT_EQ(values_of(cumsum(a, 0)), (std::vector<double>{256, 256, 258, 260, 260, 260, 262, 264, 264}));
}

// int8 wraps at each element: 100, 200 = -56, 300 = 44.
TEST(ReferenceScan, Int8_Wraps) {
  const HostTensor a = make_int_tensor(DType::Int8, {3}, {100, 100, 100});
  EXPECT_EQ(ints_of(cumsum(a, 0)), (std::vector<int64_t>{100, -56, 44}));
}

// A 0-dim tensor is its own cumsum along dim 0 or -1; bool and out-of-range dims are refused.
TEST(ReferenceScan, ZeroDimAndErrors) {
  const HostTensor s = make_tensor(DType::Float32, {}, {2.5});
  EXPECT_EQ(values_of(cumsum(s, -1)), (std::vector<double>{2.5}));
  Fusion f;
  Value* b = f.add_tensor_input("b", DType::Bool, {4});
  Value* x = f.add_tensor_input("x", DType::Float32, {4, 2});
  EXPECT_THROW(f.add(OpKind::Cumsum, {b}, AxisAttrs{0}), UserError);
  EXPECT_THROW(f.add(OpKind::Cumsum, {x}, AxisAttrs{2}), UserError);
}

// The trace reader's torch.cumsum: integer and bool inputs sum in int64, dtype= converts first.
TEST(ReferenceScan, TorchCumsum_PromotesIntegersAndConverts) {
  const Fusion f = read_trace(
      "def f(b, x):\n  # b: \"cpu b8[4]\"\n  # x: \"cpu f32[3]\"\n"
      "  t0 = torch.cumsum(b, 0)\n  t1 = ltorch.cumsum(x, 0, dtype=dtypes.float64)\n  return (t0, t1)\n");
  HostTensor b = HostTensor::empty(DType::Bool, {4});
  const bool bits[4] = {true, false, true, true};
  for (int64_t i = 0; i < 4; ++i) *reinterpret_cast<bool*>(b.element(&i)) = bits[i];
  const std::vector<HostTensor> out = run_reference(f, {b, make_tensor(DType::Float32, {3}, {0.1, 0.2, 0.3})});
  EXPECT_EQ(out[0].dtype(), DType::Int64);
  EXPECT_EQ(ints_of(out[0]), (std::vector<int64_t>{1, 1, 2, 3}));
  EXPECT_EQ(out[1].dtype(), DType::Float64);
  const double a = static_cast<float>(0.1), c = static_cast<float>(0.2), d = static_cast<float>(0.3);
  EXPECT_EQ(values_of(out[1]), (std::vector<double>{a, a + c, a + c + d}));
}

// frexp: a = m * 2^e with 0.5 <= |m| < 1; zero, inf and NaN give (a, 0); the smallest f32
// subnormal 2^-149 is 0.5 * 2^-148.
TEST(ReferenceFrexp, MantissaAndExponent_HandWorked) {
  const double inf = std::numeric_limits<double>::infinity();
  const double tiny = std::ldexp(1.0, -149);
  const HostTensor a = make_tensor(DType::Float32, {8}, {1, -3, 0.375, 1024, 0, -inf, tiny, 0.5});
  const HostTensor m = run_unary(OpKind::FrexpMantissa, a);
  const HostTensor e = run_unary(OpKind::FrexpExponent, a);
  EXPECT_EQ(m.dtype(), DType::Float32);
  EXPECT_EQ(e.dtype(), DType::Int32);
  EXPECT_EQ(values_of(m), (std::vector<double>{0.5, -0.75, 0.75, 0.5, 0, -inf, 0.5, 0.5}));
  EXPECT_EQ(ints_of(e), (std::vector<int64_t>{1, 2, -1, 11, 0, 0, -148, 0}));
  const HostTensor nan = make_tensor(DType::BFloat16, {1}, {std::nan("")});
  EXPECT_TRUE(std::isnan(values_of(run_unary(OpKind::FrexpMantissa, nan))[0]));
  EXPECT_EQ(ints_of(run_unary(OpKind::FrexpExponent, nan)), (std::vector<int64_t>{0}));
  Fusion f;
  EXPECT_THROW(f.add(OpKind::FrexpExponent, {f.add_tensor_input("i", DType::Int32, {2})}, NoAttrs{}), UserError);
}

// prims.frexp and torch.frexp give both results, named as the trace's targets.
TEST(ReferenceFrexp, TraceReader_TwoResults) {
  const Fusion f = read_trace(
      "def f(x):\n  # x: \"cpu f64[2]\"\n  (m, e) = prims.frexp(x)\n  (m2, e2) = torch.frexp(x)\n  return (m, e, m2, e2)\n");
  const std::vector<HostTensor> out = run_reference(f, {make_tensor(DType::Float64, {2}, {6, -0.125})});
  EXPECT_EQ(f.outputs()[0]->name, "m");
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{0.75, -0.5}));
  EXPECT_EQ(ints_of(out[1]), (std::vector<int64_t>{3, -2}));
  EXPECT_EQ(values_of(out[2]), values_of(out[0]));
  EXPECT_EQ(ints_of(out[3]), ints_of(out[1]));
}

}  // namespace
}  // namespace vf
