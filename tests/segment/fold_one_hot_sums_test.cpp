// passes/fold_one_hot_sums: a sum along a dim of values that are zero but where an iota equals an
// index becomes that value; the plans and values that follow, and what is left alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codegen/kernel_name.h"
#include "passes/fold_one_hot_sums.h"
#include "run_plan.h"

namespace vf {
namespace {

using ::testing::HasSubstr;

// Thunder's cross-entropy backward: log_softmax's backward of nll_loss_backward's one-hot
// gradient, as the model steps trace it. Targets are random in [-8, 8] over 6 classes, so some are
// out of range (no class hit: a zero row); an ignore_index among the classes adds a condition.
std::string cross_entropy_backward(int ignore_index) {
  return R"(
def f(g, logp, targets, total):
  # g: "cpu f32[]"
  # logp: "cpu f32[40, 6]"
  # targets: "cpu i64[40]"
  # total: "cpu f32[]"
  t0 = ltorch.nll_loss_backward(g, logp, targets, None, 'mean', )" +
         std::to_string(ignore_index) + R"(, total)
  t1 = prims.exp(logp)
  t2 = prims.sum(t0, (1,))
  t3 = prims.broadcast_in_dim(t2, [40, 6], [0])
  t4 = prims.mul(t1, t3)
  t5 = prims.sub(t0, t4)
  return (t5,)
)";
}

TEST(FoldOneHotSums, CrossEntropyBackward_OnePointwiseKernelMatchesReference) {
  for (int ignore_index : {-100, 3}) {
    SCOPED_TRACE(ignore_index);
    for (uint64_t seed : {1, 2, 3}) {
      const test::PlanRun r = test::run_plan_against_reference(cross_entropy_backward(ignore_index), seed);
      ASSERT_EQ(r.plan.kernel_count(), 1);
      ASSERT_EQ(r.plan.rewrites.size(), 1u);
      EXPECT_THAT(r.plan.rewrites[0], HasSubstr("prims.sum t2: sums along dim 1 of f32[40, 6] values that are zero "
                                                "but where an iota equals t0__targets, so it is that one value"));
      for (const Segment& s : r.plan.segments)
        if (s.kind == SegmentKind::Kernel) {
          EXPECT_THAT(kernel_name(*s.fusion, *s.kernel), HasSubstr("vf_pointwise_"));
        }
    }
  }
}

// The one term in bf16 through a neg and a cast to float32 (applied to the folded value), summed
// along the first dim, the iota on the right of the eq.
TEST(FoldOneHotSums, CastsBetweenWhereAndSum_FoldedAlongTheFirstDim) {
  const test::PlanRun r = test::run_plan_against_reference(R"(
def f(s, v):
  # s: "cpu i32[3, 7]"
  # v: "cpu bf16[3, 7]"
  t0 = prims.iota(5, start=0, step=1, device=devices.Device("cpu"), dtype=dtypes.int32)
  t1 = prims.broadcast_in_dim(t0, [5, 3, 7], [0])
  t2 = prims.broadcast_in_dim(s, [5, 3, 7], [1, 2])
  t3 = prims.eq(t2, t1)
  t4 = prims.broadcast_in_dim(v, [5, 3, 7], [1, 2])
  t5 = prims.where(t3, t4, 0.0)
  t6 = prims.neg(t5)
  t7 = prims.convert_element_type(t6, dtypes.float32)
  t8 = prims.sum(t7, (0,))
  return (t8,)
)");
  ASSERT_EQ(r.plan.rewrites.size(), 1u);
  EXPECT_THAT(r.plan.rewrites[0], HasSubstr("so it is that one value (a where of t2 in [0, 5))"));
  EXPECT_EQ(r.plan.kernel_count(), 1);
}

// What is not a one-hot sum stays a sum: an index that varies along the summed dim, a float index
// (2.5 equals no element, but a range test would say it is in range), a where whose other value
// is not zero, an iota along another dim than the summed one, and an iota that does not start at 0.
TEST(FoldOneHotSums, NotOneHot_LeftAlone) {
  auto fusion = [](DType index_dtype, bool index_varies, double other, int64_t iota_dim, int64_t start) {
    Fusion f;
    const Shape s{4, 6};
    Value* idx = f.add_tensor_input("i", index_dtype, index_varies ? s : Shape{4});
    Value* iota = f.add(OpKind::Iota, {}, IotaAttrs{s[iota_dim], start, 1, index_dtype});
    Value* classes = f.add(OpKind::BroadcastInDim, {iota}, BroadcastAttrs{s, {iota_dim}});
    Value* index = index_varies ? idx : f.add(OpKind::BroadcastInDim, {idx}, BroadcastAttrs{s, {0}});
    Value* v = f.add(OpKind::BroadcastInDim, {f.add_tensor_input("v", DType::Float32, {})}, BroadcastAttrs{s, {}});
    Value* w = f.add(OpKind::Where, {f.add(OpKind::Eq, {classes, index}), v, f.add_constant(Scalar::from_float(other))});
    f.add_output(f.add(OpKind::Sum, {w}, DimsAttrs{{1}}));
    return f;
  };
  EXPECT_NE(fold_one_hot_sums(fusion(DType::Int64, false, 0.0, 1, 0)).fusion, nullptr);  // the one that folds
  EXPECT_EQ(fold_one_hot_sums(fusion(DType::Int64, true, 0.0, 1, 0)).fusion, nullptr);
  EXPECT_EQ(fold_one_hot_sums(fusion(DType::Float32, false, 0.0, 1, 0)).fusion, nullptr);
  EXPECT_EQ(fold_one_hot_sums(fusion(DType::Int64, false, 1.0, 1, 0)).fusion, nullptr);
  EXPECT_EQ(fold_one_hot_sums(fusion(DType::Int64, false, 0.0, 0, 0)).fusion, nullptr);
  EXPECT_EQ(fold_one_hot_sums(fusion(DType::Int64, false, 0.0, 1, 1)).fusion, nullptr);
}

}  // namespace
}  // namespace vf
