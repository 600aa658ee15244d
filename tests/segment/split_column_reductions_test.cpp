// passes/split_column_reductions: which reductions over the leading dims become chunk partials
// and their reduction, the rewritten ops, and the plans made of them (the partials in the kernel of
// the rows' other work, the reductions of several shapes in as few kernels as can hold them).
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include "passes/split_column_reductions.h"
#include "run_plan.h"

namespace vf {
namespace {

using ::testing::HasSubstr;

using test::ops_of;

using test::one_reduction;

TEST(SplitColumnReductions, BiasGradient_PartialsOfChunksThenTheirSum) {
  const RewrittenFusion s = split_column_reductions(one_reduction(OpKind::Sum, DType::BFloat16, {8, 1024, 64}, {0, 1}));
  ASSERT_NE(s.fusion, nullptr);
  EXPECT_EQ(ops_of(*s.fusion), (std::vector<std::string>{
                                   "convert_element_type:[8, 1024, 64]->[8, 1024, 64] f32",
                                   "reshape:[8, 1024, 64]->[8, 64, 16, 64] f32",
                                   "sum:[8, 64, 16, 64]->[8, 64, 64] f32",
                                   "sum:[8, 64, 64]->[64] f32",
                                   "convert_element_type:[64]->[64] bf16",
                               }));
  EXPECT_EQ(s.fusion->outputs()[0]->name, "r");
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_THAT(s.notes[0], HasSubstr("8192 rows of [64], chunks of 16 rows"));
  // amax needs no wider type, integers sum in int64.
  const RewrittenFusion m = split_column_reductions(one_reduction(OpKind::Amax, DType::BFloat16, {4096, 64}, {0}));
  ASSERT_NE(m.fusion, nullptr);
  EXPECT_EQ(ops_of(*m.fusion)[0], "reshape:[4096, 64]->[512, 8, 64] bf16");
  const RewrittenFusion i = split_column_reductions(one_reduction(OpKind::Sum, DType::Int32, {4096, 64}, {0}));
  ASSERT_NE(i.fusion, nullptr);
  EXPECT_EQ(ops_of(*i.fusion).back(), "convert_element_type:[64]->[64] i32");
}

TEST(SplitColumnReductions, FewRowsFewColumnsOrInnerDims_NotSplit) {
  EXPECT_EQ(split_column_reductions(one_reduction(OpKind::Sum, DType::Float32, {512, 768}, {0})).fusion, nullptr);
  EXPECT_EQ(split_column_reductions(one_reduction(OpKind::Sum, DType::Float32, {8192, 16}, {0})).fusion, nullptr);
  EXPECT_EQ(split_column_reductions(one_reduction(OpKind::Sum, DType::Float32, {8, 1024, 64}, {1})).fusion, nullptr);
  EXPECT_EQ(split_column_reductions(one_reduction(OpKind::Sum, DType::Float32, {8192, 64}, {1})).fusion, nullptr);
  EXPECT_EQ(split_column_reductions(one_reduction(OpKind::Amax, DType::Bool, {8192, 64}, {0})).fusion, nullptr);
  // 1023 rows: no chunk divides the last reduced dim.
  EXPECT_EQ(split_column_reductions(one_reduction(OpKind::Sum, DType::Float32, {1023, 64}, {0})).fusion, nullptr);
}

// GELU's backward beside its bias's gradient: the partials in the kernel that writes the input
// gradient, then the partials' sum.
TEST(SplitColumnReductions, Plan_BiasGradientBesidePointwise_OnePassAndThePartials) {
  const test::PlanRun r = test::run_plan_against_reference(R"(
def gelu_backward(g, x):
  # g: "cpu bf16[4, 256, 96]"
  # x: "cpu bf16[4, 256, 96]"
  gf = prims.convert_element_type(g, dtypes.float32)
  xf = prims.convert_element_type(x, dtypes.float32)
  t = prims.tanh(xf)
  t2 = prims.mul(t, t)
  d = prims.sub(1.0, t2)
  dx = prims.mul(gf, d)
  out = prims.convert_element_type(dx, dtypes.bfloat16)
  db = prims.sum(dx, (0, 1))
  dbh = prims.convert_element_type(db, dtypes.bfloat16)
  flat = prims.reshape(out, (1024, 96))
  return (flat, dbh)
)");
  ASSERT_EQ(r.plan.kernel_count(), 2);
  EXPECT_EQ(r.plan.rewrites.size(), 1u);
  const Segment& first = r.plan.segments[0];
  EXPECT_TRUE(first.kernel->nests[0].serial);
  EXPECT_EQ(first.bytes_read, 2 * 1024 * 96 * 2);  // g and x, once
  EXPECT_THAT(r.plan.segments[1].note, HasSubstr("split"));
}

// Column sums of two column extents and a row sum: each extent's partials in a kernel of its own
// (the row sum joins the first), each partials' sum in another.
TEST(SplitColumnReductions, Plan_TwoColumnExtents_GroupedByWhatOneKernelHolds) {
  const test::PlanRun r = test::run_plan_against_reference(R"(
def two(a, b):
  # a: "cpu f32[1024, 40]"
  # b: "cpu f32[1024, 72]"
  sa = prims.sum(a, (0,))
  rs = prims.sum(a, (1,))
  sb = prims.sum(b, (0,))
  return (sa, rs, sb)
)");
  EXPECT_EQ(r.plan.kernel_count(), 4);
  int serial = 0;
  for (const Segment& s : r.plan.segments) {
    if (s.kind != SegmentKind::Kernel) continue;
    serial += s.kernel->nests[0].serial;
    EXPECT_THAT(s.note, HasSubstr("split"));
  }
  EXPECT_EQ(serial, 2);
}

}  // namespace
}  // namespace vf
