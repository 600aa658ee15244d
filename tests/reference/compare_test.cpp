// Tests of tensor comparison, checksums and seeded random inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/compare.h"
#include "reference/random_inputs.h"
#include "reference_test_util.h"

namespace vf {
namespace {

using testing::ints_of;
using testing::make_int_tensor;
using testing::make_tensor;
using testing::values_of;

using testing::kNaN;
using testing::kInf;

TEST(DefaultTolerance, PerDtype_MatchesDocumentedValues) {
  EXPECT_EQ(default_tolerance(DType::Float64).rtol, 1e-10);
  EXPECT_EQ(default_tolerance(DType::Float64).atol, 1e-12);
  EXPECT_EQ(default_tolerance(DType::Float32).rtol, 1e-5);
  EXPECT_EQ(default_tolerance(DType::Float16).atol, 1e-3);
  EXPECT_EQ(default_tolerance(DType::BFloat16).rtol, 1.6e-2);
  EXPECT_EQ(default_tolerance(DType::Int32).rtol, 0);
  EXPECT_EQ(default_tolerance(DType::Bool).atol, 0);
}

// Outputs that depend on a reduction of n terms get the dtype's tolerance times sqrt(n / 16).
TEST(OutputTolerance, WidensWithTheLongestReductionAbove) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {4, 1600});
  Value* rows = f.add(OpKind::Sum, {x}, DimsAttrs{{1}});  // 1600 terms each
  Value* all = f.add(OpKind::Amax, {rows}, DimsAttrs{{0}});  // 4 terms
  Value* scaled = f.add(OpKind::Mul, {x, f.add(OpKind::BroadcastInDim, {all}, BroadcastAttrs{{4, 1600}, {}})});
  Value* plain = f.add(OpKind::Neg, {x});
  EXPECT_DOUBLE_EQ(output_tolerance(rows).rtol, 1e-4);
  EXPECT_DOUBLE_EQ(output_tolerance(scaled).atol, 1e-4);  // through the amax, down to the sum
  EXPECT_DOUBLE_EQ(output_tolerance(plain).rtol, default_tolerance(DType::Float32).rtol);
  EXPECT_DOUBLE_EQ(reduction_tolerance(DType::BFloat16, 8).rtol, default_tolerance(DType::BFloat16).rtol);
}

TEST(CompareTensors, WithinAtolPlusRtol_Matches) {
  HostTensor e = make_tensor(DType::Float64, {2}, {100, 0});
  // Bound at 100: 0.1 + 0.01 * 100 = 1.1.
  EXPECT_TRUE(compare_tensors(make_tensor(DType::Float64, {2}, {101.0, 0.1}), e, {0.01, 0.1}).ok);
  Comparison c = compare_tensors(make_tensor(DType::Float64, {2}, {101.25, 0.1}), e, {0.01, 0.1});
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_EQ(c.max_abs_error, 1.25);
  EXPECT_EQ(c.first_mismatch, "at [0]: got 101.25, expected 100");
}

TEST(CompareTensors, NonFinite_MatchOnlyTheSameKind) {
  HostTensor e = make_tensor(DType::Float32, {3}, {kNaN, kInf, -kInf});
  Comparison same = compare_tensors(make_tensor(DType::Float32, {3}, {kNaN, kInf, -kInf}), e, {0, 0});
  EXPECT_TRUE(same.ok);
  EXPECT_EQ(same.max_abs_error, 0);
  Comparison flipped = compare_tensors(make_tensor(DType::Float32, {3}, {1, -kInf, kInf}), e, {1e9, 1e9});
  EXPECT_EQ(flipped.mismatches, 3);
  EXPECT_EQ(flipped.first_mismatch, "at [0]: got 1, expected nan");
}

TEST(CompareTensors, Integers_AreExact) {
  HostTensor e = make_int_tensor(DType::Int64, {2, 2}, {1, 2, 3, 4});
  Comparison c = compare_tensors(make_int_tensor(DType::Int64, {2, 2}, {1, 2, 3, 5}), e, default_tolerance(DType::Int64));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.first_mismatch, "at [1, 1]: got 5, expected 4");
  EXPECT_EQ(c.max_abs_error, 1);
}

TEST(CompareTensors, ShapeOrDtypeMismatch_Fails) {
  Comparison shape = compare_tensors(make_tensor(DType::Float32, {2}, {1, 2}), make_tensor(DType::Float32, {3}, {1, 2, 3}),
                                     {1, 1});
  EXPECT_FALSE(shape.ok);
  EXPECT_EQ(shape.first_mismatch, "got f32[2], expected f32[3]");
  Comparison dtype = compare_tensors(make_tensor(DType::Float16, {2}, {1, 2}), make_tensor(DType::Float32, {2}, {1, 2}),
                                     {1, 1});
  EXPECT_FALSE(dtype.ok);
  EXPECT_EQ(dtype.first_mismatch, "got f16[2], expected f32[2]");
}

TEST(TensorChecksum, LayoutIndependentAndCountsNonFinite) {
  HostTensor c = make_tensor(DType::Float32, {2, 2}, {1, 2, 3, 4});
  HostTensor t = HostTensor::view_of(DType::Float32, Layout{{2, 2}, {1, 2}, 0}, make_tensor(DType::Float32, {4}, {1, 3, 2, 4}).storage());
  EXPECT_EQ(tensor_checksum(c), 10);
  EXPECT_EQ(tensor_checksum(t), 10);
  EXPECT_EQ(tensor_checksum(make_tensor(DType::Float64, {4}, {kNaN, kInf, -kInf, 2})), kChecksumNaN + 2);
  EXPECT_EQ(tensor_checksum(make_int_tensor(DType::Int8, {2}, {-5, 7})), 2);
}

Fusion mixed_input_fusion() {
  Fusion f;
  f.add_tensor_input("f", DType::Float32, {64});
  f.add_tensor_input("h", DType::BFloat16, {64});
  f.add_tensor_input("i", DType::Int32, {200});
  f.add_tensor_input("u", DType::UInt8, {200});
  f.add_tensor_input("b", DType::Bool, {200});
  f.add_scalar_input("sf", ScalarKind::Float);
  f.add_scalar_input("si", ScalarKind::Int);
  f.add_scalar_input("sb", ScalarKind::Bool);
  return f;
}

TEST(RandomInputs, SameSeed_SameValues) {
  Fusion f = mixed_input_fusion();
  auto a = random_inputs(f, 42), b = random_inputs(f, 42), c = random_inputs(f, 43);
  ASSERT_EQ(a.size(), 8u);
  bool any_difference = false;
  for (size_t k = 0; k < 5; ++k) {
    const auto& ta = std::get<HostTensor>(a[k]);
    EXPECT_EQ(ta.dtype(), f.inputs()[k]->dtype);
    EXPECT_EQ(ta.shape(), f.inputs()[k]->shape);
    EXPECT_TRUE(compare_tensors(ta, std::get<HostTensor>(b[k]), {0, 0}).ok);
    any_difference |= !compare_tensors(ta, std::get<HostTensor>(c[k]), {0, 0}).ok;
  }
  for (size_t k = 5; k < 8; ++k) EXPECT_EQ(std::get<Scalar>(a[k]), std::get<Scalar>(b[k]));
  EXPECT_TRUE(any_difference);
  EXPECT_EQ(std::get<Scalar>(a[5]).kind, ScalarKind::Float);
  EXPECT_EQ(std::get<Scalar>(a[6]).kind, ScalarKind::Int);
  EXPECT_EQ(std::get<Scalar>(a[7]).kind, ScalarKind::Bool);
}

TEST(RandomInputs, Ranges_FollowDtype) {
  Fusion f = mixed_input_fusion();
  auto args = random_inputs(f, 7);
  std::vector<int64_t> ints = ints_of(std::get<HostTensor>(args[2]));
  std::vector<int64_t> bytes = ints_of(std::get<HostTensor>(args[3]));
  std::vector<int64_t> bools = ints_of(std::get<HostTensor>(args[4]));
  EXPECT_EQ(*std::min_element(ints.begin(), ints.end()), -8);
  EXPECT_EQ(*std::max_element(ints.begin(), ints.end()), 8);
  EXPECT_EQ(*std::min_element(bytes.begin(), bytes.end()), 0);
  EXPECT_EQ(*std::max_element(bytes.begin(), bytes.end()), 16);
  EXPECT_EQ(*std::min_element(bools.begin(), bools.end()), 0);
  EXPECT_EQ(*std::max_element(bools.begin(), bools.end()), 1);
  // Normal floats: some negative, some positive, none absurd.
  std::vector<double> floats = values_of(std::get<HostTensor>(args[0]));
  EXPECT_LT(*std::min_element(floats.begin(), floats.end()), 0);
  EXPECT_GT(*std::max_element(floats.begin(), floats.end()), 0);
  for (double v : floats) EXPECT_LT(std::fabs(v), 8);
  const Scalar si = std::get<Scalar>(args[6]);
  EXPECT_TRUE(si.i >= -8 && si.i <= 8);
}

TEST(RandomTensor, SameSeed_SameValuesAndDtypeRepresentable) {
  HostTensor a = random_tensor(DType::BFloat16, {3, 5}, 11);
  HostTensor b = random_tensor(DType::BFloat16, {3, 5}, 11);
  EXPECT_TRUE(compare_tensors(a, b, {0, 0}).ok);
  EXPECT_EQ(tensor_checksum(a), tensor_checksum(b));
  EXPECT_NE(tensor_checksum(a), tensor_checksum(random_tensor(DType::BFloat16, {3, 5}, 12)));
  // Every value is a bf16 value: converting to bf16 again changes nothing.
  for (double v : values_of(a)) EXPECT_EQ(bfloat16_to_float(float_to_bfloat16(static_cast<float>(v))), v);
}

}  // namespace
}  // namespace vf
