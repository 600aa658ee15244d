// Tests of the reference's uniform_philox: the Philox4x32-10 blocks against Random123's published
// answers, and the tensor the IR's semantics (ir.h) define: its range, its dependence on the seed,
// the offset and the row-major position only, and its distribution.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "reference/reference_ops.h"
#include "reference_test_util.h"

namespace vf {
namespace {

using testing::run_one;
using testing::values_of;

// The known-answer vectors of Random123's kat_vectors file for philox4x32, 10 rounds.
TEST(Philox, KnownAnswerVectors_MatchRandom123) {
  using Block = std::array<uint32_t, 4>;
  EXPECT_EQ(reference::philox4x32_10({0, 0, 0, 0}, 0), (Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(reference::philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, ~uint64_t{0}),
            (Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(reference::philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, 0x299f31d0a4093822ull),
            (Block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

HostTensor uniform(const Shape& shape, DType dtype, int64_t seed, int64_t offset, double lo = 0, double hi = 1) {
  Fusion f;
  Value* s = f.add_scalar_input("seed", ScalarKind::Int);
  Value* o = f.add_scalar_input("offset", ScalarKind::Int);
  f.add_output(f.add(OpKind::UniformPhilox, {s, o}, UniformAttrs{shape, lo, hi, dtype}));
  return run_one(f, {Scalar::from_int(seed), Scalar::from_int(offset)});
}

// Element i is word i % 4 of the block of counter (i / 4, offset) under the seed, its high 24 bits
// times 2^-24.
TEST(UniformPhilox, Float32_IsTheBlockWordScaled) {
  const std::vector<double> v = values_of(uniform({9}, DType::Float32, 0x299f31d0a4093822ll, 0x0370734413198a2ell));
  for (uint64_t i = 0; i < 9; ++i) {
    const auto w = reference::philox4x32_10(
        {static_cast<uint32_t>(i / 4), 0, 0x13198a2e, 0x03707344}, 0x299f31d0a4093822ull);
    EXPECT_EQ(v[i], static_cast<double>(w[i % 4] >> 8) / 16777216.0) << "element " << i;
  }
}

TEST(UniformPhilox, Float64_TakesTwoWords) {
  const std::vector<double> v = values_of(uniform({3}, DType::Float64, -1, 7));
  for (uint64_t i = 0; i < 3; ++i) {
    const auto w = reference::philox4x32_10({static_cast<uint32_t>(i / 2), 0, 7, 0}, ~uint64_t{0});
    const uint64_t bits = (uint64_t{w[2 * (i % 2)]} << 32 | w[2 * (i % 2) + 1]) >> 11;
    EXPECT_EQ(v[i], std::ldexp(static_cast<double>(bits), -53)) << "element " << i;
  }
}

// The values depend on the position, not the shape; the seed and offset each change every value.
TEST(UniformPhilox, SameSeedAndOffset_SameValuesWhateverTheShape) {
  const std::vector<double> flat = values_of(uniform({24}, DType::Float32, 5, 9));
  EXPECT_EQ(values_of(uniform({2, 3, 4}, DType::Float32, 5, 9)), flat);
  EXPECT_EQ(values_of(uniform({2, 3, 4}, DType::Float32, 5, 9)), flat);
  const std::vector<double> seed = values_of(uniform({24}, DType::Float32, 6, 9));
  const std::vector<double> offset = values_of(uniform({24}, DType::Float32, 5, 10));
  for (size_t i = 0; i < flat.size(); ++i) {
    EXPECT_NE(flat[i], seed[i]) << i;
    EXPECT_NE(flat[i], offset[i]) << i;
  }
}

// 2^16 values: all in [lo, hi), mean and variance those of the uniform distribution within five
// standard errors, each of 16 bins within five standard deviations of its count.
TEST(UniformPhilox, ManyValues_UniformInRange) {
  for (DType dtype : {DType::Float32, DType::Float64, DType::BFloat16}) {
    SCOPED_TRACE(dtype_short_name(dtype));
    const double lo = -2, hi = 3;
    const std::vector<double> v = values_of(uniform({256, 256}, dtype, 2026, 12, lo, hi));
    const double n = static_cast<double>(v.size());
    double sum = 0, sq = 0;
    std::vector<int> bins(16);
    for (double x : v) {
      ASSERT_GE(x, lo);
      ASSERT_LE(x, hi);  // bf16 rounding may reach hi
      sum += x;
      sq += x * x;
      bins[std::min(15, static_cast<int>((x - lo) / (hi - lo) * 16))]++;
    }
    const double mean = sum / n, var = sq / n - mean * mean, width = hi - lo;
    EXPECT_NEAR(mean, (lo + hi) / 2, 5 * width / std::sqrt(12 * n));
    EXPECT_NEAR(var, width * width / 12, 5 * width * width / std::sqrt(180 * n));
    if (dtype == DType::BFloat16) continue;  // rounding to 8 bits moves values between bins
    for (int b = 0; b < 16; ++b) EXPECT_NEAR(bins[b], n / 16, 5 * std::sqrt(n / 16)) << "bin " << b;
    EXPECT_LT(*std::max_element(v.begin(), v.end()), hi);
  }
}

}  // namespace
}  // namespace vf
