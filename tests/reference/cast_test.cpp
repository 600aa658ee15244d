// Tests of the reference's casts (convert_element_type) and creation ops (full, iota).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reference_test_util.h"

namespace vf {
namespace {

using testing::ints_of;
using testing::make_int_tensor;
using testing::make_tensor;
using testing::run_one;
using testing::run_with_attrs;
using testing::values_of;

using testing::kNaN;
using testing::kInf;
using testing::kI64Min;
using testing::kI64Max;

HostTensor cast(const HostTensor& x, DType to) { return run_with_attrs(OpKind::ConvertElementType, x, CastAttrs{to}); }

TEST(ReferenceCast, FloatToInt_TruncatesSaturatesThenWraps) {
  HostTensor f = make_tensor(DType::Float32, {5}, {2.7, -2.7, kNaN, 1e30, -1e30});
  // 1e30 saturates to INT64_MAX, whose low 32 bits are -1; INT64_MIN's are 0.
  EXPECT_EQ(ints_of(cast(f, DType::Int32)), (std::vector<int64_t>{2, -2, 0, -1, 0}));
  HostTensor d = make_tensor(DType::Float64, {5}, {1e19, -1e19, -9223372036854775808.0, kInf, -kInf});
  EXPECT_EQ(ints_of(cast(d, DType::Int64)), (std::vector<int64_t>{kI64Max, kI64Min, kI64Min, kI64Max, kI64Min}));
  EXPECT_EQ(ints_of(cast(make_tensor(DType::Float32, {2}, {300.5, -129.9}), DType::Int8)),
            (std::vector<int64_t>{44, 127}));
  EXPECT_EQ(ints_of(cast(make_tensor(DType::Float32, {1}, {-1.5}), DType::UInt8)), (std::vector<int64_t>{255}));
}

TEST(ReferenceCast, ToBool_TestsNonZero) {
  HostTensor f = make_tensor(DType::Float32, {5}, {0, -0.0, kNaN, 0.1, -kInf});
  EXPECT_EQ(ints_of(cast(f, DType::Bool)), (std::vector<int64_t>{0, 0, 1, 1, 1}));
  EXPECT_EQ(ints_of(cast(make_int_tensor(DType::Int32, {3}, {0, 2, -1}), DType::Bool)),
            (std::vector<int64_t>{0, 1, 1}));
  // 256 is non-zero even though its low byte is 0.
  EXPECT_EQ(ints_of(cast(make_int_tensor(DType::Int32, {1}, {256}), DType::Bool)), (std::vector<int64_t>{1}));
}

TEST(ReferenceCast, FloatToHalf_RoundsToNearestEven) {
  // bf16 keeps 7 fraction bits: ties at 1 + 2^-8 (to 1) and 1 + 3 * 2^-8 (to 1 + 2^-6).
  HostTensor f = make_tensor(DType::Float32, {4}, {1.00390625, 1.01171875, 1.0039215087890625, kNaN});
  std::vector<double> bf = values_of(cast(f, DType::BFloat16));
  EXPECT_EQ(bf[0], 1.0);
  EXPECT_EQ(bf[1], 1.015625);
  EXPECT_EQ(bf[2], 1.0078125);
  EXPECT_TRUE(std::isnan(bf[3]));
  // f16 keeps 10 fraction bits; 65520 is the tie between 65504 (the largest) and 65536: inf.
  HostTensor g = make_tensor(DType::Float32, {4}, {1.00048828125, 1.00146484375, 65520, 65519});
  EXPECT_EQ(values_of(cast(g, DType::Float16)), (std::vector<double>{1.0, 1.001953125, kInf, 65504}));
}

TEST(ReferenceCast, IntToFloat_RoundsToNearest) {
  EXPECT_EQ(values_of(cast(make_int_tensor(DType::Int64, {1}, {9007199254740993LL}), DType::Float64))[0],
            9007199254740992.0);
  EXPECT_EQ(values_of(cast(make_int_tensor(DType::Int32, {1}, {16777217}), DType::Float32))[0], 16777216.0);
  // bf16 spacing at 256 is 2: 257 and 259 are ties, to 256 and 260.
  EXPECT_EQ(values_of(cast(make_int_tensor(DType::Int32, {2}, {257, 259}), DType::BFloat16)),
            (std::vector<double>{256, 260}));
  EXPECT_EQ(values_of(cast(make_int_tensor(DType::Bool, {2}, {1, 0}), DType::Float32)), (std::vector<double>{1, 0}));
}

TEST(ReferenceCast, IntToInt_WrapsToWidth) {
  EXPECT_EQ(ints_of(cast(make_int_tensor(DType::Int8, {2}, {-1, 5}), DType::UInt8)), (std::vector<int64_t>{255, 5}));
  EXPECT_EQ(ints_of(cast(make_int_tensor(DType::Int32, {2}, {200, 65537}), DType::Int8)),
            (std::vector<int64_t>{-56, 1}));
  EXPECT_EQ(ints_of(cast(make_int_tensor(DType::UInt8, {1}, {255}), DType::Int64)), (std::vector<int64_t>{255}));
}

TEST(ReferenceCast, DoubleToFloat_RoundsOnce) {
  EXPECT_EQ(values_of(cast(make_tensor(DType::Float64, {1}, {0.1}), DType::Float32))[0],
            static_cast<double>(0.1f));
}

HostTensor full(const Shape& shape, Scalar value, DType dtype) {
  Fusion f;
  f.add_output(f.add(OpKind::Full, {}, FullAttrs{shape, value, dtype}));
  return run_one(f, {});
}

HostTensor iota(int64_t length, int64_t start, int64_t step, DType dtype) {
  Fusion f;
  f.add_output(f.add(OpKind::Iota, {}, IotaAttrs{length, start, step, dtype}));
  return run_one(f, {});
}

TEST(ReferenceCreation, Full_ConvertsValueToDtype) {
  HostTensor a = full({2, 2}, Scalar::from_float(2.5), DType::Float32);
  EXPECT_EQ(a.shape(), (Shape{2, 2}));
  EXPECT_EQ(values_of(a), (std::vector<double>{2.5, 2.5, 2.5, 2.5}));
  EXPECT_EQ(ints_of(full({2}, Scalar::from_float(2.7), DType::Int32)), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values_of(full({1}, Scalar::from_float(0.1), DType::BFloat16))[0], 0.10009765625);
  EXPECT_EQ(ints_of(full({1}, Scalar::from_int(3), DType::Bool)), (std::vector<int64_t>{1}));
  EXPECT_EQ(full({0, 4}, Scalar::from_int(3), DType::Int64).shape(), (Shape{0, 4}));
}

TEST(ReferenceCreation, Iota_StartStepAndWrap) {
  EXPECT_EQ(ints_of(iota(5, 2, 3, DType::Int32)), (std::vector<int64_t>{2, 5, 8, 11, 14}));
  EXPECT_EQ(values_of(iota(4, 0, -2, DType::Float32)), (std::vector<double>{0, -2, -4, -6}));
  EXPECT_EQ(ints_of(iota(3, 126, 1, DType::Int8)), (std::vector<int64_t>{126, 127, -128}));
  EXPECT_EQ(iota(0, 0, 1, DType::Int64).numel(), 0);
}

}  // namespace
}  // namespace vf
