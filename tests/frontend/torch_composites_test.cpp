// Torch spellings the reader writes as several prims (nll_loss_backward), run by the reference
// executor against values worked out by hand from ATen's definition.
#include <gtest/gtest.h>

#include "../reference/reference_test_util.h"
#include "frontend/trace_reader.h"

namespace vf {
namespace {

using testing::make_int_tensor;
using testing::make_tensor;
using testing::run_one;
using testing::values_of;

// a [3, 4] (values unused: the gradient depends only on g, target, weight and total_weight).
const char* kHeader = R"(def f(g, a, target, w, total):
  # g: "cpu f32[]"
  # a: "cpu f32[3, 4]"
  # target: "cpu i64[3]"
  # w: "cpu f32[4]"
  # total: "cpu i64[]"
)";

HostTensor scalar(DType dtype, double v) { return make_tensor(dtype, {}, {v}); }

TEST(NllLossBackward, Mean_MinusGOverTotalAtTheTarget) {
  Fusion f = read_trace(std::string(kHeader) +
                        "  r = ltorch.nll_loss_backward(g, a, target, None, 'mean', -100, total)\n  return r\n");
  HostTensor out = run_one(f, {scalar(DType::Float32, 2.0), make_tensor(DType::Float32, {3, 4}, std::vector<double>(12)),
                               make_int_tensor(DType::Int64, {3}, {1, 3, 0}), make_tensor(DType::Float32, {4}, {1, 1, 1, 1}),
                               make_int_tensor(DType::Int64, {}, {4})});
  EXPECT_EQ(out.dtype(), DType::Float32);
  EXPECT_EQ(out.shape(), (Shape{3, 4}));
  EXPECT_EQ(values_of(out), (std::vector<double>{0, -0.5, 0, 0, 0, 0, 0, -0.5, -0.5, 0, 0, 0}));
}

TEST(NllLossBackward, NoneWithWeightAndIgnoredClass_ZeroRowWhereIgnored) {
  Fusion f = read_trace(R"(def f(g, a, target, w):
  # g: "cpu f32[3]"
  # a: "cpu f32[3, 4]"
  # target: "cpu i32[3]"
  # w: "cpu f32[4]"
  r = ltorch.nll_loss_backward(g, a, target, w, 'none', 0, None)
  return r
)");
  HostTensor out = run_one(f, {make_tensor(DType::Float32, {3}, {1, 2, 3}),
                               make_tensor(DType::Float32, {3, 4}, std::vector<double>(12)),
                               make_int_tensor(DType::Int32, {3}, {2, 0, 1}), make_tensor(DType::Float32, {4}, {0.5, 1, 2, 4})});
  // Row 0: class 2, -1 * w[2]; row 1: target 0 is ignore_index; row 2: class 1, -3 * w[1].
  EXPECT_EQ(values_of(out), (std::vector<double>{0, 0, -2, 0, 0, 0, 0, 0, 0, -3, 0, 0}));
}

TEST(NllLossBackward, RankOneInput_ClassDimZero) {
  Fusion f = read_trace(R"(def f(g, a, target):
  # g: "cpu bf16[]"
  # a: "cpu bf16[4]"
  # target: "cpu i64[]"
  r = ltorch.nll_loss_backward(g, a, target, None, 'sum', -1, None)
  return r
)");
  HostTensor out = run_one(f, {scalar(DType::BFloat16, 1.5), make_tensor(DType::BFloat16, {4}, {0, 0, 0, 0}),
                               make_int_tensor(DType::Int64, {}, {3})});
  EXPECT_EQ(out.dtype(), DType::BFloat16);
  EXPECT_EQ(values_of(out), (std::vector<double>{0, 0, 0, -1.5}));
}

TEST(NllLossBackward, RankThreeInput_ClassDimOneTargetOverTheRest) {
  Fusion f = read_trace(R"(def f(g, a, target, w):
  # g: "cpu f32[]"
  # a: "cpu f32[2, 3, 2]"
  # target: "cpu i64[2, 2]"
  # w: "cpu f32[3]"
  r = ltorch.nll_loss_backward(g, a, target, w, 'sum', 5, None)
  return r
)");
  HostTensor out = run_one(f, {scalar(DType::Float32, 1.0), make_tensor(DType::Float32, {2, 3, 2}, std::vector<double>(12)),
                               make_int_tensor(DType::Int64, {2, 2}, {0, 2, 1, 1}), make_tensor(DType::Float32, {3}, {1, 2, 3})});
  // out[n][target[n][d]][d] = -w[target[n][d]].
  EXPECT_EQ(values_of(out), (std::vector<double>{-1, 0, 0, 0, 0, -3, 0, 0, -2, -2, 0, 0}));
}

TEST(NllLossBackward, WeightAndIgnoreIndexOutsideTheClasses_IgnoredRowIsZero) {
  Fusion f = read_trace(R"(def f(g, a, target, w):
  # g: "cpu f32[]"
  # a: "cpu f32[2, 3]"
  # target: "cpu i64[2]"
  # w: "cpu f32[3]"
  r = ltorch.nll_loss_backward(g, a, target, w, 'sum', -100, None)
  return r
)");
  // Target -100 is ignore_index: its weight is never looked up, which would be out of range.
  HostTensor out = run_one(f, {scalar(DType::Float32, 1.0), make_tensor(DType::Float32, {2, 3}, std::vector<double>(6)),
                               make_int_tensor(DType::Int64, {2}, {-100, 2}), make_tensor(DType::Float32, {3}, {1, 2, 3})});
  EXPECT_EQ(values_of(out), (std::vector<double>{0, 0, 0, 0, 0, -3}));
}

TEST(NllLossBackward, Steps_NamedAfterTheCall) {
  Fusion f = read_trace(std::string(kHeader) +
                        "  r = ltorch.nll_loss_backward(g, a, target, None, 'mean', 1, total)\n  return r\n");
  EXPECT_NE(f.find("r__classes"), nullptr);
  EXPECT_NE(f.find("r__kept"), nullptr);  // ignore_index 1 is a class: masked
  EXPECT_EQ(f.find("t0"), nullptr);
}

TEST(NllLossBackward, TargetOfWrongShape_TraceErrorNamesBothShapes) {
  try {
    read_trace(R"(def f(g, a, target):
  # g: "cpu f32[]"
  # a: "cpu f32[3, 4]"
  # target: "cpu i64[4]"
  r = ltorch.nll_loss_backward(g, a, target, None, 'sum', -1, None)
  return r
)");
    FAIL() << "expected a TraceError";
  } catch (const TraceError& e) {
    EXPECT_EQ(e.line(), 5);
    EXPECT_NE(std::string(e.what()).find("ltorch.nll_loss_backward: expected target of shape [3] (a f32[3, 4] without "
                                         "its class dim 1), got i64[4]"),
              std::string::npos)
        << e.what();
  }
}

TEST(NllLossBackward, MeanWithoutTotalWeight_TraceError) {
  EXPECT_THROW(read_trace(std::string(kHeader) +
                          "  r = ltorch.nll_loss_backward(g, a, target, None, 'mean', -1, None)\n  return r\n"),
               TraceError);
}

}  // namespace
}  // namespace vf
