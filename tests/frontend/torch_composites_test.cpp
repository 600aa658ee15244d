// Calls the reader writes as several prims (nll_loss_backward, prims.argmax and prims.argmin), run
// by the reference executor against values worked out by hand from ATen's definitions, and planned.
#include <gtest/gtest.h>

#include "../reference/reference_test_util.h"
#include "frontend/trace_reader.h"
#include "segment/plan_fusion.h"

namespace vf {
namespace {

using testing::ints_of;
using testing::kNaN;
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

// x f32[2, 4]: row 0 has its largest value twice and its smallest once; row 1 holds a NaN.
const char* kArgHeader = R"(def f(x):
  # x: "cpu f32[2, 4]"
)";
HostTensor arg_input() { return make_tensor(DType::Float32, {2, 4}, {3, 7, 7, -1, 2, kNaN, 9, kNaN}); }

TEST(ArgExtreme, RowsWithTiesAndNaN_FirstIndexNaNCountsAsExtreme) {
  Fusion f = read_trace(std::string(kArgHeader) +
                        "  a = prims.argmax(x, 1)\n  b = prims.argmin(x, -1)\n  c = prims.argmax(x, 0)\n  return (a, b, c)\n");
  std::vector<HostTensor> out = run_reference(f, {arg_input()});
  EXPECT_EQ(out[0].dtype(), DType::Int64);
  EXPECT_EQ(ints_of(out[0]), (std::vector<int64_t>{1, 1}));        // the first 7; the first NaN
  EXPECT_EQ(ints_of(out[1]), (std::vector<int64_t>{3, 1}));        // -1; the first NaN again
  EXPECT_EQ(ints_of(out[2]), (std::vector<int64_t>{0, 1, 1, 1}));  // per column: 3 > 2, NaN, 9 > 7, NaN
}

TEST(ArgExtreme, NoDim_RowMajorIndexOverEveryDim) {
  Fusion f = read_trace(R"(def f(x):
  # x: "cpu i32[2, 3]"
  a = prims.argmax(x, None)
  b = prims.argmin(x, None)
  return (a, b)
)");
  std::vector<HostTensor> out =
      run_reference(f, {make_int_tensor(DType::Int32, {2, 3}, {4, -2, 8, 8, -2, 0})});
  EXPECT_EQ(out[0].shape(), Shape{});
  EXPECT_EQ(ints_of(out[0]), (std::vector<int64_t>{2}));
  EXPECT_EQ(ints_of(out[1]), (std::vector<int64_t>{1}));
}

TEST(ArgExtreme, RankZero_IndexZero) {
  Fusion f = read_trace("def f(x):\n  # x: \"cpu bf16[]\"\n  a = prims.argmin(x, None)\n  return a\n");
  EXPECT_EQ(ints_of(run_one(f, {make_tensor(DType::BFloat16, {}, {5})})), (std::vector<int64_t>{0}));
}

TEST(ArgExtreme, BothPhases_OneKernel) {
  Fusion f = read_trace(std::string(kArgHeader) + "  a = prims.argmax(x, 1)\n  return a\n");
  EXPECT_EQ(plan_fusion(f, contiguous_input_layouts(f), {}).kernel_count(), 1);
}

TEST(ArgExtreme, BoolOrNoElements_TraceErrorNamesTheInput) {
  auto message = [](const std::string& text) -> std::string {
    try {
      read_trace(text);
    } catch (const TraceError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message("def f(x):\n  # x: \"cpu b8[3]\"\n  a = prims.argmax(x, 0)\n  return a\n")
                .find("prims.argmax: expected a tensor of numbers, got b8[3]"),
            std::string::npos);
  EXPECT_NE(message("def f(x):\n  # x: \"cpu f32[2, 0]\"\n  a = prims.argmin(x, 1)\n  return a\n")
                .find("prims.argmin: expected dim 1 of f32[2, 0] to have elements"),
            std::string::npos);
  EXPECT_NE(message("def f(x):\n  # x: \"cpu f32[0]\"\n  a = prims.argmin(x, None)\n  return a\n")
                .find("expected dim for f32[0] (it has no elements)"),
            std::string::npos);
}

}  // namespace
}  // namespace vf
