// Tests of the reference's reductions: values, NaN handling, empty-extent identities, var, var_mean.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "frontend/trace_reader.h"
#include "reference_test_util.h"

namespace vf {
namespace {

using testing::ints_of;
using testing::iota_tensor;
using testing::make_int_tensor;
using testing::make_tensor;
using testing::run_with_attrs;
using testing::values_of;

using testing::kNaN;
using testing::kInf;

HostTensor reduce(OpKind op, const HostTensor& x, std::vector<int64_t> dims) {
  return run_with_attrs(op, x, DimsAttrs{std::move(dims)});
}

TEST(ReferenceReduction, SumProdAmaxAmin_OverOneDim) {
  HostTensor x = make_tensor(DType::Float32, {2, 3}, {1, 2, 3, -4, 5, 0.5});
  EXPECT_EQ(values_of(reduce(OpKind::Sum, x, {1})), (std::vector<double>{6, 1.5}));
  EXPECT_EQ(values_of(reduce(OpKind::Sum, x, {0})), (std::vector<double>{-3, 7, 3.5}));
  EXPECT_EQ(values_of(reduce(OpKind::Prod, x, {1})), (std::vector<double>{6, -10}));
  EXPECT_EQ(values_of(reduce(OpKind::Amax, x, {1})), (std::vector<double>{3, 5}));
  EXPECT_EQ(values_of(reduce(OpKind::Amin, x, {-1})), (std::vector<double>{1, -4}));
  HostTensor all = reduce(OpKind::Sum, x, {0, 1});
  EXPECT_EQ(all.shape(), Shape{});
  EXPECT_EQ(values_of(all), (std::vector<double>{7.5}));
}

TEST(ReferenceReduction, NonAdjacentDims_ReduceTogether) {
  // x[i][j][k] = 12i + 4j + k; summing over i and k leaves j: sum = 2*4*4j + (0+12)*4 + 2*(0+1+2+3).
  HostTensor out = reduce(OpKind::Sum, iota_tensor(DType::Int64, {2, 3, 4}), {0, 2});
  EXPECT_EQ(out.shape(), (Shape{3}));
  EXPECT_EQ(ints_of(out), (std::vector<int64_t>{60, 92, 124}));
}

TEST(ReferenceReduction, AmaxAmin_PropagateNaN) {
  HostTensor x = make_tensor(DType::Float64, {2, 3}, {1, kNaN, 3, -kInf, kInf, 0});
  std::vector<double> mx = values_of(reduce(OpKind::Amax, x, {1}));
  std::vector<double> mn = values_of(reduce(OpKind::Amin, x, {1}));
  EXPECT_TRUE(std::isnan(mx[0]));
  EXPECT_TRUE(std::isnan(mn[0]));
  EXPECT_EQ(mx[1], kInf);
  EXPECT_EQ(mn[1], -kInf);
  // NaN first in the reduced order propagates too.
  EXPECT_TRUE(std::isnan(values_of(reduce(OpKind::Amax, make_tensor(DType::Float32, {2}, {kNaN, 1}), {0}))[0]));
}

TEST(ReferenceReduction, IntegerSumAndProd_Wrap) {
  EXPECT_EQ(ints_of(reduce(OpKind::Sum, make_int_tensor(DType::Int8, {2}, {100, 100}), {0})), (std::vector<int64_t>{-56}));
  EXPECT_EQ(ints_of(reduce(OpKind::Prod, make_int_tensor(DType::Int32, {2}, {65536, 65536}), {0})),
            (std::vector<int64_t>{0}));
  EXPECT_EQ(ints_of(reduce(OpKind::Amax, make_int_tensor(DType::UInt8, {3}, {3, 250, 7}), {0})),
            (std::vector<int64_t>{250}));
}

TEST(ReferenceReduction, EmptyExtent_GivesIdentities) {
  HostTensor f = make_tensor(DType::Float32, {2, 0}, {});
  EXPECT_EQ(values_of(reduce(OpKind::Sum, f, {1})), (std::vector<double>{0, 0}));
  EXPECT_EQ(values_of(reduce(OpKind::Prod, f, {1})), (std::vector<double>{1, 1}));
  EXPECT_EQ(values_of(reduce(OpKind::Amax, f, {1})), (std::vector<double>{-kInf, -kInf}));
  EXPECT_EQ(values_of(reduce(OpKind::Amin, f, {1})), (std::vector<double>{kInf, kInf}));
  EXPECT_EQ(values_of(reduce(OpKind::Amax, make_tensor(DType::BFloat16, {0}, {}), {0})), (std::vector<double>{-kInf}));
  struct IntCase {
    DType dtype;
    int64_t lowest, highest;
  };
  for (const IntCase& c : {IntCase{DType::Int8, -128, 127}, IntCase{DType::UInt8, 0, 255},
                           IntCase{DType::Int16, -32768, 32767}, IntCase{DType::Int32, -2147483648LL, 2147483647},
                           IntCase{DType::Int64, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()},
                           IntCase{DType::Bool, 0, 1}}) {
    HostTensor e = make_int_tensor(c.dtype, {0}, {});
    EXPECT_EQ(ints_of(reduce(OpKind::Amax, e, {0}))[0], c.lowest) << dtype_short_name(c.dtype);
    EXPECT_EQ(ints_of(reduce(OpKind::Amin, e, {0}))[0], c.highest) << dtype_short_name(c.dtype);
    if (c.dtype != DType::Bool) {
      EXPECT_EQ(ints_of(reduce(OpKind::Sum, e, {0}))[0], 0);
      EXPECT_EQ(ints_of(reduce(OpKind::Prod, e, {0}))[0], 1);
    }
  }
  // Reducing a non-empty dim of an empty tensor gives an empty result.
  EXPECT_EQ(reduce(OpKind::Sum, f, {0}).shape(), (Shape{0}));
}

TEST(ReferenceReduction, BoolAmaxAmin_AreAnyAndAll) {
  HostTensor b = make_int_tensor(DType::Bool, {2, 2}, {0, 1, 1, 1});
  EXPECT_EQ(ints_of(reduce(OpKind::Amax, b, {1})), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(ints_of(reduce(OpKind::Amin, b, {1})), (std::vector<int64_t>{0, 1}));
}

TEST(ReferenceReduction, HalfSum_AccumulatesInFloat32) {
  // A bf16 accumulator would stick at 256 (256 + 1 is a tie that rounds to even); float32
  // accumulation reaches 300, which bf16 represents (its spacing at 256 is 2).
  HostTensor ones = make_tensor(DType::BFloat16, {300}, std::vector<double>(300, 1.0));
  EXPECT_EQ(values_of(reduce(OpKind::Sum, ones, {0})), (std::vector<double>{300}));
}

TEST(ReferenceReduction, Float32Sum_AccumulatesInDouble) {
  // 2^24 + 1 + 1: a float32 accumulator loses both ones; double keeps them, rounded once at the end.
  HostTensor x = make_tensor(DType::Float32, {3}, {16777216, 1, 1});
  EXPECT_EQ(values_of(reduce(OpKind::Sum, x, {0})), (std::vector<double>{16777218}));
}

HostTensor var(const HostTensor& x, std::vector<int64_t> dims, double correction) {
  return run_with_attrs(OpKind::Var, x, VarAttrs{std::move(dims), correction});
}

TEST(ReferenceVar, Correction_DividesByNMinusCorrection) {
  HostTensor x = make_tensor(DType::Float64, {4}, {1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(values_of(var(x, {0}, 1))[0], 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(values_of(var(x, {0}, 0))[0], 1.25);
  HostTensor y = make_tensor(DType::Float32, {2, 2}, {1, 3, 2, 2});
  EXPECT_EQ(values_of(var(y, {1}, 0)), (std::vector<double>{1, 0}));
}

TEST(ReferenceVar, TooFewElements_GiveNaNOrInf) {
  // One element, correction 1: 0 / 0.
  EXPECT_TRUE(std::isnan(values_of(var(make_tensor(DType::Float32, {1}, {5}), {0}, 1))[0]));
  // Deviation 2 over max(0, 2 - 3) = 0: inf.
  EXPECT_EQ(values_of(var(make_tensor(DType::Float32, {2}, {1, 3}), {0}, 3))[0], kInf);
  // Empty: the mean is NaN.
  EXPECT_TRUE(std::isnan(values_of(var(make_tensor(DType::Float32, {0}, {}), {0}, 0))[0]));
}

TEST(ReferenceVar, VarMean_ReturnsVarThenMean) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {2, 4});
  const auto& outs = f.add_node(OpKind::VarMean, {x}, VarAttrs{{1}, 0});
  f.add_output(outs[0]);
  f.add_output(outs[1]);
  auto out = run_reference(f, {make_tensor(DType::Float32, {2, 4}, {1, 2, 3, 4, 10, 10, 10, 10})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{1.25, 0}));
  EXPECT_EQ(values_of(out[1]), (std::vector<double>{2.5, 10}));
}

TEST(ReferenceVar, HalfInput_ResultRoundedToDtype) {
  // var of [0, 1, 2] with correction 1 is 1; with correction 0 it is 2/3, rounded to bf16.
  HostTensor x = make_tensor(DType::BFloat16, {3}, {0, 1, 2});
  EXPECT_EQ(values_of(var(x, {0}, 1))[0], 1.0);
  EXPECT_EQ(values_of(var(x, {0}, 0))[0], 0.66796875);
}

}  // namespace
}  // namespace vf

namespace vf {
namespace {

// Thunder's prims.std, which the trace reader writes as the square root of prims.var: [1, 2, 3, 4]
// has squared deviations summing to 5, so std is sqrt(5 / 3) with the default correction and
// sqrt(5 / 4) with correction 0.
TEST(ReferenceReduction, StdThroughTheReader_SqrtOfVar) {
  const Fusion f = read_trace(
      "def f(x):\n  # x: \"cpu f64[2, 4]\"\n  t0 = prims.std(x, (1,))\n  t1 = prims.std(x, (1,), correction=0)\n"
      "  return (t0, t1)\n");
  const std::vector<HostTensor> out =
      run_reference(f, {testing::make_tensor(DType::Float64, {2, 4}, {1, 2, 3, 4, 2, 2, 2, 2})});
  EXPECT_EQ(testing::values_of(out[0]), (std::vector<double>{std::sqrt(5.0 / 3), 0}));
  EXPECT_EQ(testing::values_of(out[1]), (std::vector<double>{std::sqrt(5.0 / 4), 0}));
}

}  // namespace
}  // namespace vf
