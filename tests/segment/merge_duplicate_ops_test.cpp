// passes/merge_duplicate_ops: which nodes merge (same op, operands and attributes), which do not
// (other attributes, literals of other bits), and the plan of a fusion that returns a value twice.
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include "passes/merge_duplicate_ops.h"
#include "run_plan.h"

namespace vf {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using test::ops_of;

RewrittenFusion merge(const std::string& text) { return merge_duplicate_ops(read_trace(text)); }

// Two casts of x and the exps of them: the second cast, then the second exp (on the merged cast) go.
TEST(MergeDuplicateOps, ChainOfTwins_MergesWhole) {
  const char* text = R"(
def f(x):
  # x: "cpu bf16[4, 6]"
  t0 = prims.convert_element_type(x, dtypes.float32)
  t1 = prims.convert_element_type(x, dtypes.float32)
  t2 = prims.exp(t0)
  t3 = prims.exp(t1)
  t4 = prims.add(t2, t3)
  return (t4,)
)";
  const RewrittenFusion r = merge(text);
  ASSERT_NE(r.fusion, nullptr);
  EXPECT_THAT(ops_of(*r.fusion), ElementsAre("convert_element_type:[4, 6]->[4, 6] f32", "exp:[4, 6]->[4, 6] f32",
                                             "add:[4, 6]->[4, 6] f32"));
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_THAT(r.notes[0], HasSubstr("2 op(s) computing a value already computed read it instead: t1 = t0, t3 = t2"));
  EXPECT_EQ(test::run_plan_against_reference(text).plan.kernel_count(), 1);
}

// Other attributes, other dtypes, operands in another order, literals of other bits (0.0 and
// -0.0 give zeros of other signs): nothing merges.
TEST(MergeDuplicateOps, DifferentAttributesOrOperands_NotMerged) {
  const char* text = R"(
def f(x, y):
  # x: "cpu f32[5, 5]"
  # y: "cpu f32[5, 5]"
  t0 = prims.sum(x, (0,))
  t1 = prims.sum(x, (1,))
  t2 = prims.convert_element_type(x, dtypes.bfloat16)
  t3 = prims.convert_element_type(x, dtypes.float16)
  t4 = prims.sub(x, y)
  t5 = prims.sub(y, x)
  t6 = prims.mul(x, 0.0)
  t7 = prims.mul(x, -0.0)
  t8 = prims.mul(x, 0)
  return (t0, t1, t2, t3, t4, t5, t6, t7, t8)
)";
  EXPECT_EQ(merge(text).fusion, nullptr);
  test::run_plan_against_reference(text);
}

// Equal literals are equal operands even as two constants; both results of a var_mean merge.
TEST(MergeDuplicateOps, EqualLiteralsAndTwoResults_Merged) {
  const char* text = R"(
def f(x):
  # x: "cpu f32[3, 8]"
  t0 = prims.mul(x, 0.5)
  t1 = prims.mul(x, 0.5)
  (t2, t3) = prims.var_mean(t0, (1,), correction=1)
  (t4, t5) = prims.var_mean(t1, (1,), correction=1)
  t6 = prims.add(t2, t5)
  t7 = prims.sub(t4, t3)
  return (t6, t7)
)";
  const RewrittenFusion r = merge(text);
  ASSERT_NE(r.fusion, nullptr);
  EXPECT_THAT(r.notes[0], HasSubstr("2 op(s) computing a value already computed read it instead: t1 = t0, t4 = t2"));
  EXPECT_EQ(r.fusion->nodes().size(), 4u);
  test::run_plan_against_reference(text);
}

// A value returned twice under two names (a norm's residual gradient, once for each path that
// reads it) is one buffer, written once.
TEST(MergeDuplicateOps, SameValueReturnedTwice_OneBuffer) {
  const char* text = R"(
def f(x, y):
  # x: "cpu f32[64, 32]"
  # y: "cpu f32[64, 32]"
  t0 = prims.add(x, y)
  t1 = prims.convert_element_type(t0, dtypes.bfloat16)
  t2 = prims.convert_element_type(t0, dtypes.bfloat16)
  t3 = prims.reshape(t2, (2048,))
  return (t1, t3, t2)
)";
  const test::PlanRun r = test::run_plan_against_reference(text);
  EXPECT_EQ(r.plan.kernel_count(), 1);
  EXPECT_EQ(r.plan.allocated_bytes, 64 * 32 * 2);
}

}  // namespace
}  // namespace vf
