// passes/split_reductions: which reductions become two stages, the rewritten ops, and the plan
// that planning makes of them (two kernels, the partials' buffer in explain).
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include <nlohmann/json.hpp>

#include "passes/split_reductions.h"
#include "segment/explain.h"
#include "segment/plan_fusion.h"
#include "run_plan.h"

namespace vf {
namespace {

using ::testing::HasSubstr;

using test::one_reduction;

// The planned fusion's reductions, in order, as (op, input shape, output shape).
std::vector<std::tuple<OpKind, Shape, Shape>> reductions(const Fusion& f) {
  std::vector<std::tuple<OpKind, Shape, Shape>> out;
  for (const auto& n : f.nodes())
    if (op_category(n->op) == OpCategory::Reduction) out.emplace_back(n->op, n->inputs[0]->shape, n->output()->shape);
  return out;
}

TEST(SplitReductions, SumOfALongVector_TwoStages) {
  const Fusion f = one_reduction(OpKind::Sum, DType::Float32, {int64_t{1} << 18}, {0});
  const RewrittenFusion s = split_long_reductions(f);
  ASSERT_NE(s.fusion, nullptr);
  using R = std::tuple<OpKind, Shape, Shape>;
  EXPECT_EQ(reductions(*s.fusion), (std::vector<R>{R{OpKind::Sum, {64, 4096}, {64}}, R{OpKind::Sum, {64}, {}}}));
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_THAT(s.notes[0], HasSubstr("1 row(s) of 262144 elements, split into 64 chunks of 4096"));
  // The inputs and outputs keep their names, types and order.
  ASSERT_EQ(s.fusion->outputs().size(), 1u);
  EXPECT_EQ(s.fusion->outputs()[0]->name, "r");
  EXPECT_EQ(s.fusion->outputs()[0]->shape, Shape{});
  EXPECT_EQ(s.fusion->inputs()[0]->name, "x");
}

TEST(SplitReductions, ManyRowsShortRowsOrNoChunk_Unchanged) {
  EXPECT_EQ(split_long_reductions(one_reduction(OpKind::Sum, DType::Float32, {2048, 65536}, {1})).fusion, nullptr);
  EXPECT_EQ(split_long_reductions(one_reduction(OpKind::Sum, DType::Float32, {4, 32768}, {1})).fusion, nullptr);
  // 65537 is prime: no chunk divides it.
  EXPECT_EQ(split_long_reductions(one_reduction(OpKind::Amax, DType::Float32, {65537}, {0})).fusion, nullptr);
  EXPECT_EQ(split_long_reductions(one_reduction(OpKind::Sum, DType::Int32, {1 << 20}, {0})).fusion, nullptr);
}

// var and var_mean: the mean's sum, then the squared deviations' sum, each in two stages, in
// float32 for a bf16 input; the outputs keep their names and types.
TEST(SplitReductions, VarMean_TwoPassesOfTwoStages) {
  Fusion v;
  Value* x = v.add_tensor_input("x", DType::BFloat16, {2, 1 << 17});
  for (Value* out : v.add_node(OpKind::VarMean, {x}, VarAttrs{{1}, 1}, {"var", "mean"})) v.add_output(out);
  const RewrittenFusion s = split_long_reductions(v);
  ASSERT_NE(s.fusion, nullptr);
  using R = std::tuple<OpKind, Shape, Shape>;
  EXPECT_EQ(reductions(*s.fusion), (std::vector<R>{R{OpKind::Sum, {2, 32, 4096}, {2, 32}}, R{OpKind::Sum, {2, 32}, {2}},
                                                   R{OpKind::Sum, {2, 32, 4096}, {2, 32}}, R{OpKind::Sum, {2, 32}, {2}}}));
  for (const auto& n : s.fusion->nodes()) {
    if (n->op == OpKind::Sum) {
      EXPECT_EQ(n->output()->dtype, DType::Float32);
    }
  }
  ASSERT_EQ(s.fusion->outputs().size(), 2u);
  EXPECT_EQ(s.fusion->outputs()[0]->name, "var");
  EXPECT_EQ(s.fusion->outputs()[1]->name, "mean");
  EXPECT_EQ(s.fusion->outputs()[0]->dtype, DType::BFloat16);
  EXPECT_EQ(s.fusion->outputs()[1]->shape, Shape{2});
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_THAT(s.notes[0], HasSubstr("prims.var_mean var: 2 row(s) of 131072 elements, split into 32 chunks of 4096"));
  EXPECT_THAT(s.notes[0], HasSubstr("squared deviations"));
  // A float32 var needs no conversion: its result is the division itself.
  Fusion w;
  Value* y = w.add_tensor_input("y", DType::Float32, {1 << 20});
  w.add_output(w.add_node(OpKind::Var, {y}, VarAttrs{{0}, 0}, {"v"})[0]);
  const RewrittenFusion t = split_long_reductions(w);
  ASSERT_NE(t.fusion, nullptr);
  EXPECT_EQ(t.fusion->outputs()[0]->producer->op, OpKind::Div);
  for (const auto& n : t.fusion->nodes()) EXPECT_NE(n->op, OpKind::ConvertElementType);
}

// Adjacent reduced dims are split in place, outer ones too (their loads keep their memory order).
TEST(SplitReductions, AdjacentReducedDims_SplitInPlace) {
  const RewrittenFusion s = split_long_reductions(one_reduction(OpKind::Sum, DType::Float32, {256, 512, 3}, {0, 1}));
  ASSERT_NE(s.fusion, nullptr);
  using R = std::tuple<OpKind, Shape, Shape>;
  EXPECT_EQ(reductions(*s.fusion), (std::vector<R>{R{OpKind::Sum, {32, 4096, 3}, {32, 3}}, R{OpKind::Sum, {32, 3}, {3}}}));
  for (const auto& n : s.fusion->nodes()) EXPECT_NE(n->op, OpKind::Transpose);
}

// Reduced dims that are not adjacent are moved last first; the kept dims stay in order.
TEST(SplitReductions, NonAdjacentReducedDims_KeptDimsFirst) {
  const Fusion f = one_reduction(OpKind::Amin, DType::Float32, {256, 3, 512}, {0, 2});
  const RewrittenFusion s = split_long_reductions(f);
  ASSERT_NE(s.fusion, nullptr);
  using R = std::tuple<OpKind, Shape, Shape>;
  EXPECT_EQ(reductions(*s.fusion), (std::vector<R>{R{OpKind::Amin, {3, 32, 4096}, {3, 32}}, R{OpKind::Amin, {3, 32}, {3}}}));
  bool transposed = false;
  for (const auto& n : s.fusion->nodes())
    if (n->op == OpKind::Transpose) transposed = n->attr<PermuteAttrs>().permutation == std::vector<int64_t>{1, 0, 2};
  EXPECT_TRUE(transposed);
}

// Sums of half types add float32 partials, as the unsplit sum accumulates in float32.
TEST(SplitReductions, HalfSum_Float32Partials) {
  const RewrittenFusion s = split_long_reductions(one_reduction(OpKind::Sum, DType::BFloat16, {2, 1 << 17}, {1}));
  ASSERT_NE(s.fusion, nullptr);
  std::vector<DType> sums;
  for (const auto& n : s.fusion->nodes())
    if (n->op == OpKind::Sum) sums.push_back(n->output()->dtype);
  EXPECT_EQ(sums, (std::vector<DType>{DType::Float32, DType::Float32}));
  EXPECT_EQ(s.fusion->outputs()[0]->dtype, DType::BFloat16);
  // amax needs no wider type.
  const RewrittenFusion m = split_long_reductions(one_reduction(OpKind::Amax, DType::BFloat16, {2, 1 << 17}, {1}));
  ASSERT_NE(m.fusion, nullptr);
  for (const auto& n : m.fusion->nodes()) EXPECT_NE(n->op, OpKind::ConvertElementType);
}

// Planning plans the rewritten fusion: a kernel per stage, the partials in a buffer of their own,
// and explain says what was split.
TEST(SplitReductions, Plan_TwoKernelsAndThePartialsBuffer) {
  const Fusion f = one_reduction(OpKind::Sum, DType::Float32, {int64_t{1} << 18}, {0});
  const Plan plan = plan_fusion(f, contiguous_input_layouts(f), {});
  ASSERT_NE(plan.rewritten, nullptr);
  EXPECT_EQ(plan.kernel_count(), 2);
  EXPECT_EQ(plan.allocated_bytes, 64 * 4 + 4);  // the 64 partials, then the result
  EXPECT_EQ(plan.outputs[0].value, plan.rewritten->outputs()[0]);
  const std::string text = explain_text(f, plan);
  EXPECT_THAT(text, HasSubstr("rewrites before planning"));
  EXPECT_THAT(text, HasSubstr("prims.sum r: 1 row(s) of 262144 elements"));
  EXPECT_EQ(explain_json(f, plan)["rewrites"].size(), 1u);
  PlanOptions whole;
  whole.split_reductions = false;
  const Plan unsplit = plan_fusion(f, contiguous_input_layouts(f), whole);
  EXPECT_EQ(unsplit.rewritten, nullptr);
  EXPECT_EQ(unsplit.kernel_count(), 1);
  EXPECT_FALSE(explain_json(f, unsplit).contains("rewrites"));
}

}  // namespace
}  // namespace vf
