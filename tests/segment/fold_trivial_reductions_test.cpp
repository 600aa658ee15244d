// passes/fold_trivial_reductions: reductions over size-1 dims become views (or reductions of the
// squeezed input), reductions over empty dims their identity; the plans and values that follow.
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include "passes/fold_trivial_reductions.h"
#include "run_plan.h"
#include "segment/explain.h"

namespace vf {
namespace {

using ::testing::HasSubstr;

using test::ops_of;

// RoPE's backward sums over a pair dim of size 1: a view of its input, no kernel.
TEST(FoldTrivialReductions, SumOverSizeOneDimsOnly_IsAnAliasOfTheInput) {
  const test::PlanRun r = test::run_plan_against_reference(R"(
def f(x):
  # x: "cpu f32[4, 8, 64, 1]"
  t0 = prims.sum(x, (3,))
  return (t0,)
)");
  EXPECT_EQ(r.plan.kernel_count(), 0);
  ASSERT_EQ(r.plan.rewrites.size(), 1u);
  EXPECT_THAT(r.plan.rewrites[0], HasSubstr("reduces only dims of size 1 of [4, 8, 64, 1], so it is a reshape"));
  ASSERT_NE(r.plan.outputs[0].alias_of, nullptr);  // a value of the rewritten fusion
  EXPECT_EQ(r.plan.outputs[0].alias_of->name, "x");
}

// A cumsum along a dim of size 1, and one of a 0-dim tensor, are their inputs: aliases, no kernel.
TEST(FoldTrivialReductions, CumsumAlongSizeOneDim_IsAnAliasOfTheInput) {
  const test::PlanRun r = test::run_plan_against_reference(R"(
def f(x, s):
  # x: "cpu bf16[4, 1, 6]"
  # s: "cpu f32[]"
  t0 = prims.cumsum(x, 1)
  t1 = prims.cumsum(s, -1)
  return (t0, t1)
)");
  EXPECT_EQ(r.plan.kernel_count(), 0);
  ASSERT_EQ(r.plan.rewrites.size(), 2u);
  EXPECT_THAT(r.plan.rewrites[0], HasSubstr("prims.cumsum t0: sums along a dim of size 1 of [4, 1, 6], so it is a reshape"));
  ASSERT_NE(r.plan.outputs[1].alias_of, nullptr);
  EXPECT_EQ(r.plan.outputs[1].alias_of->name, "s");
}

// The size-1 dims, reduced or kept, leave the input; the reduction reduces the rest, renumbered.
TEST(FoldTrivialReductions, SomeDimsOfSizeOne_ReducesTheSqueezedInput) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::BFloat16, {8, 1, 1024, 1, 768});
  f.add_output(f.add_node(OpKind::Sum, {x}, DimsAttrs{{0, 1, 2}}, {"r"})[0]);
  const RewrittenFusion folded = fold_trivial_reductions(f);
  ASSERT_NE(folded.fusion, nullptr);
  EXPECT_EQ(ops_of(*folded.fusion), (std::vector<std::string>{"reshape:[8, 1, 1024, 1, 768]->[8, 1024, 768] bf16",
                                                              "sum:[8, 1024, 768]->[768] bf16", "reshape:[768]->[1, 768] bf16"}));
  EXPECT_EQ(folded.fusion->outputs()[0]->name, "r");
  ASSERT_EQ(folded.notes.size(), 1u);
  EXPECT_THAT(folded.notes[0], HasSubstr("reduces [0, 1] of [8, 1024, 768]"));
  // Nothing to fold: no fusion.
  Fusion g;
  g.add_output(g.add_node(OpKind::Amax, {g.add_tensor_input("y", DType::Float32, {3, 5})}, DimsAttrs{{1}}, {"m"})[0]);
  EXPECT_EQ(fold_trivial_reductions(g).fusion, nullptr);
}

// Cross-entropy's loss: sums over [8192, 1] of the loss and of the valid-target count.
TEST(FoldTrivialReductions, SumsOfAColumn_OneKernelOfScalars) {
  const test::PlanRun r = test::run_plan_against_reference(R"(
def f(loss, valid):
  # loss: "cpu bf16[96, 1]"
  # valid: "cpu b8[96, 1]"
  t0 = prims.convert_element_type(loss, dtypes.float32)
  t1 = prims.sum(t0, (0, 1))
  t2 = prims.convert_element_type(valid, dtypes.int64)
  t3 = prims.sum(t2, (0, 1))
  t4 = prims.convert_element_type(t3, dtypes.float32)
  t5 = prims.div(t1, t4)
  return (t3, t5)
)");
  EXPECT_EQ(r.plan.kernel_count(), 1);
  EXPECT_EQ(r.plan.rewrites.size(), 2u);
}

// Empty reduced dims give each op's identity, in every dtype kind; var over one is not folded.
TEST(FoldTrivialReductions, EmptyDims_IdentityOfEveryOpAndDtype) {
  for (const char* op : {"sum", "prod", "amax", "amin"}) {
    for (const char* dtype : {"f32", "bf16", "i32", "i64", "ui8", "b8"}) {
      if (std::string(dtype) == "b8" && std::string(op) != "amax" && std::string(op) != "amin") continue;
      SCOPED_TRACE(std::string(op) + " " + dtype);
      const test::PlanRun r = test::run_plan_against_reference(std::string(R"(
def f(x):
  # x: "cpu )") + dtype + R"([3, 0, 5]"
  t0 = prims.)" + op + R"((x, (1,))
  return (t0,)
)");
      ASSERT_EQ(r.plan.rewrites.size(), 1u);
      EXPECT_THAT(r.plan.rewrites[0], HasSubstr("so it is full of its identity"));
    }
  }
  Fusion v;
  Value* x = v.add_tensor_input("x", DType::Float32, {4, 1});
  for (Value* out : v.add_node(OpKind::VarMean, {x}, VarAttrs{{1}, 0}, {"var", "mean"})) v.add_output(out);
  EXPECT_EQ(fold_trivial_reductions(v).fusion, nullptr);
}

// var_mean over a size-1 and a longer dim keeps both results and their dtypes.
TEST(FoldTrivialReductions, VarMeanWithASizeOneDim_MatchesReference) {
  const test::PlanRun r = test::run_plan_against_reference(R"(
def f(x):
  # x: "cpu bf16[6, 1, 40]"
  (t0, t1) = prims.var_mean(x, (1, 2), correction=1)
  t2 = prims.sum(x, (0, 1))
  return (t0, t1, t2)
)");
  // Two folds, and the second fold's view of x without its size-1 dim merged into the first's.
  ASSERT_EQ(r.plan.rewrites.size(), 3u);
  EXPECT_THAT(r.plan.rewrites[0], HasSubstr("without the dims of size 1"));
  EXPECT_THAT(r.plan.rewrites[1], HasSubstr("without the dims of size 1"));
  EXPECT_THAT(r.plan.rewrites[2], HasSubstr("x_squeezed_2 = x_squeezed"));
  EXPECT_GE(r.plan.kernel_count(), 1);
}

}  // namespace
}  // namespace vf
