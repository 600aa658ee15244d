// Tests of the reference's matmul (torch.matmul's shapes: matrices, vectors, broadcast batches;
// float32 accumulation rounded once for bf16; K = 0) and of its type errors, and of the trace
// reader's linear (a matmul by the weight's transpose, plus the bias); matmul_gelu's two results.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"
#include "frontend/trace_reader.h"
#include "reference_test_util.h"

namespace vf {
namespace {

using ::testing::HasSubstr;
using testing::make_tensor;
using testing::run_one;
using testing::values_of;

HostTensor matmul(const HostTensor& a, const HostTensor& b) {
  Fusion f;
  Value* x = f.add_tensor_input("a", a.dtype(), a.shape());
  Value* y = f.add_tensor_input("b", b.dtype(), b.shape());
  f.add_output(f.add(OpKind::Matmul, {x, y}));
  return run_one(f, {a, b});
}

// [2, 3] @ [3, 2]: rows times columns.
TEST(ReferenceMatmul, Matrices_RowsTimesColumns) {
  const HostTensor a = make_tensor(DType::Float32, {2, 3}, {1, 2, 3, 4, 5, 6});
  const HostTensor b = make_tensor(DType::Float32, {3, 2}, {7, 8, 9, 10, 11, 12});
  const HostTensor c = matmul(a, b);
  EXPECT_EQ(c.shape(), (Shape{2, 2}));
  EXPECT_EQ(values_of(c), (std::vector<double>{58, 64, 139, 154}));
}

// Vectors: a dot product (0-dim), a vector times a matrix ([K] @ [K, N] = [N]) and a matrix
// times a vector ([M, K] @ [K] = [M]).
TEST(ReferenceMatmul, Vectors_DimsRemoved) {
  const HostTensor v = make_tensor(DType::Float64, {3}, {1, 2, 3});
  const HostTensor m = make_tensor(DType::Float64, {3, 2}, {1, 0, 0, 1, 1, 1});
  const HostTensor dot = matmul(v, v);
  EXPECT_EQ(dot.shape(), Shape{});
  EXPECT_EQ(values_of(dot), (std::vector<double>{14}));
  EXPECT_EQ(values_of(matmul(v, m)), (std::vector<double>{4, 5}));
  const HostTensor mt = make_tensor(DType::Float64, {2, 3}, {1, 0, 1, 0, 1, 1});
  EXPECT_EQ(values_of(matmul(mt, v)), (std::vector<double>{4, 5}));
}

// Batch dims broadcast from the right: [2, 1, 1, 2] @ [3, 2, 1] is [2, 3, 1, 1]; each batch (i, j)
// multiplies a's row i by b's column j.
TEST(ReferenceMatmul, BatchDims_Broadcast) {
  const HostTensor a = make_tensor(DType::Float32, {2, 1, 1, 2}, {1, 2, 3, 4});
  const HostTensor b = make_tensor(DType::Float32, {3, 2, 1}, {1, 1, 1, 0, 0, 1});
  const HostTensor c = matmul(a, b);
  EXPECT_EQ(c.shape(), (Shape{2, 3, 1, 1}));
  EXPECT_EQ(values_of(c), (std::vector<double>{3, 1, 2, 7, 3, 4}));
}

// bf16: 256 + eight ones, summed in float32 and rounded once: 264 (bf16 sums would stay 256).
// An empty K gives zeros.
TEST(ReferenceMatmul, BFloat16AccumulatesInFloat32_EmptyKGivesZero) {
  const HostTensor a = make_tensor(DType::BFloat16, {1, 9}, {256, 1, 1, 1, 1, 1, 1, 1, 1});
  const HostTensor ones = make_tensor(DType::BFloat16, {9, 1}, {1, 1, 1, 1, 1, 1, 1, 1, 1});
  EXPECT_EQ(values_of(matmul(a, ones)), (std::vector<double>{264}));
  const HostTensor e = matmul(HostTensor::empty(DType::Float32, {2, 0}), HostTensor::empty(DType::Float32, {0, 3}));
  EXPECT_EQ(values_of(e), (std::vector<double>(6, 0.0)));
}

TEST(ReferenceMatmul, BadOperands_UserErrors) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {2, 3});
  Value* h = f.add_tensor_input("h", DType::BFloat16, {3, 2});
  Value* i = f.add_tensor_input("i", DType::Int64, {3, 2});
  Value* y = f.add_tensor_input("y", DType::Float32, {4, 2});
  Value* z = f.add_tensor_input("z", DType::Float32, {2, 3, 3});
  Value* s = f.add_tensor_input("s", DType::Float32, {});
  auto message = [&](Value* a, Value* b) {
    try {
      f.add(OpKind::Matmul, {a, b});
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(message(x, h), HasSubstr("operands must have one dtype, got f32 and bf16"));
  EXPECT_THAT(message(i, i), HasSubstr("expects a floating dtype, got i64"));
  EXPECT_THAT(message(x, y), HasSubstr("the contracted dims differ: f32[2, 3] has 3 columns, f32[4, 2] has 4 rows"));
  Value* w = f.add_tensor_input("w", DType::Float32, {3, 3, 2});
  EXPECT_THAT(message(z, w), HasSubstr("the batch dims of f32[2, 3, 3] and f32[3, 3, 2] do not broadcast"));
  EXPECT_THAT(message(s, x), HasSubstr("expects operands of rank 1 or more"));
}

// A bias is added to the float32 sum before the one rounding: 256 + 1 + 1 rounds to 258 in bf16,
// where rounding the product (257 to 256) and then adding 1 would give 256.
TEST(ReferenceMatmul, BiasAddedBeforeRounding) {
  Fusion f;
  Value* x = f.add_tensor_input("a", DType::BFloat16, {1, 2});
  Value* y = f.add_tensor_input("b", DType::BFloat16, {2, 2});
  Value* bias = f.add_tensor_input("bias", DType::BFloat16, {2});
  f.add_output(f.add(OpKind::Matmul, {x, y, bias}));
  const HostTensor out = run_one(f, {make_tensor(DType::BFloat16, {1, 2}, {256, 1}),
                                     make_tensor(DType::BFloat16, {2, 2}, {1, 0, 1, 1}),
                                     make_tensor(DType::BFloat16, {2}, {1, -1})});
  EXPECT_EQ(values_of(out), (std::vector<double>{258, 0}));
}

TEST(ReferenceMatmul, BadBias_UserErrors) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {2, 3});
  Value* y = f.add_tensor_input("y", DType::Float32, {3, 4});
  Value* v = f.add_tensor_input("v", DType::Float32, {3});
  auto message = [&](Value* a, Value* b, Value* bias) {
    try {
      f.add(OpKind::Matmul, {a, b, bias});
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(message(x, y, v), HasSubstr("expected a bias of f32[4], got f32[3]"));
  EXPECT_THAT(message(x, y, f.add_tensor_input("h", DType::BFloat16, {4})), HasSubstr("expected a bias of f32[4], got bf16[4]"));
  EXPECT_THAT(message(x, v, v), HasSubstr("a bias needs b of rank 2 or more (the result's last dim), got f32[3]"));
}

// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) in double.
double gelu_tanh(double x) { return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }

// matmul_gelu gives the gelu of the float32 sum, rounded once, and the matmul's own result: the
// sum -2.0078125 rounds to -2 in bf16, whose gelu is 3 ulps away from the sum's.
TEST(ReferenceMatmul, MatmulGelu_GeluOfTheUnroundedSum) {
  Fusion f;
  Value* x = f.add_tensor_input("a", DType::BFloat16, {1, 2});
  Value* y = f.add_tensor_input("b", DType::BFloat16, {2, 1});
  const std::vector<Value*>& outs = f.add_node(OpKind::MatmulGelu, {x, y});
  ASSERT_EQ(outs.size(), 2u);
  f.add_output(outs[0]);
  f.add_output(outs[1]);
  const HostTensor a = make_tensor(DType::BFloat16, {1, 2}, {-2, -0.0078125});
  const HostTensor b = make_tensor(DType::BFloat16, {2, 1}, {1, 1});
  const std::vector<HostTensor> out = run_reference(f, {a, b});
  EXPECT_EQ(values_of(out[1]), values_of(matmul(a, b)));
  EXPECT_EQ(values_of(out[1]), (std::vector<double>{-2}));
  const double ulp = std::ldexp(1.0, -12), g = values_of(out[0]).at(0);  // bf16's ulp at 0.045
  EXPECT_NEAR(g, gelu_tanh(-2.0078125), 0.55 * ulp);
  EXPECT_GT(std::fabs(g - gelu_tanh(-2)), 2 * ulp);
}

// matmul_add adds c to the float32 sum before the bias and the one rounding: 256 + 1 + 1 is 258 in
// bf16 where rounding the matmul first (257 to 256) and adding 1 would give 256; c must have the
// result's type.
TEST(ReferenceMatmul, MatmulAdd_AddendBeforeRounding) {
  Fusion f;
  Value* x = f.add_tensor_input("a", DType::BFloat16, {1, 2});
  Value* y = f.add_tensor_input("b", DType::BFloat16, {2, 2});
  Value* c = f.add_tensor_input("c", DType::BFloat16, {1, 2});
  Value* bias = f.add_tensor_input("bias", DType::BFloat16, {2});
  f.add_output(f.add(OpKind::MatmulAdd, {x, y, c}));
  f.add_output(f.add(OpKind::MatmulAdd, {x, y, c, bias}));
  const std::vector<HostTensor> out =
      run_reference(f, {make_tensor(DType::BFloat16, {1, 2}, {256, 1}), make_tensor(DType::BFloat16, {2, 2}, {1, 0, 1, 1}),
                        make_tensor(DType::BFloat16, {1, 2}, {1, -1}), make_tensor(DType::BFloat16, {2}, {2, 1})});
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{258, 0}));
  EXPECT_EQ(values_of(out[1]), (std::vector<double>{260, 1}));
  try {
    f.add(OpKind::MatmulAdd, {x, y, bias});
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("prims.matmul_add"));
    EXPECT_THAT(e.what(), HasSubstr("expected c of bf16[1, 2] (the result's type), got bf16[2]"));
  }
}

// matmul_gelu has no float64 form: a user error naming it.
TEST(ReferenceMatmul, MatmulGeluOfF64_UserError) {
  Fusion f;
  Value* x = f.add_tensor_input("a", DType::Float64, {2, 3});
  Value* y = f.add_tensor_input("b", DType::Float64, {3, 2});
  try {
    f.add_node(OpKind::MatmulGelu, {x, y});
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("matmul_gelu"));
    EXPECT_THAT(e.what(), HasSubstr("has no float64 form"));
  }
}

// prims.linear(a, w, bias): a @ w.T + bias, and without a bias.
TEST(ReferenceMatmul, LinearThroughTheReader_TransposeAndBias) {
  const Fusion f = read_trace(
      "def f(a, w, b):\n  # a: \"cpu f32[2, 3]\"\n  # w: \"cpu f32[2, 3]\"\n  # b: \"cpu f32[2]\"\n"
      "  t0 = prims.linear(a, w, b)\n  t1 = ltorch.linear(a, w, None)\n  return (t0, t1)\n");
  const HostTensor a = make_tensor(DType::Float32, {2, 3}, {1, 2, 3, 4, 5, 6});
  const HostTensor w = make_tensor(DType::Float32, {2, 3}, {1, 0, 0, 1, 1, 1});
  const std::vector<HostTensor> out = run_reference(f, {a, w, make_tensor(DType::Float32, {2}, {10, 20})});
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{11, 26, 14, 35}));
  EXPECT_EQ(values_of(out[1]), (std::vector<double>{1, 6, 4, 15}));
}

}  // namespace
}  // namespace vf
