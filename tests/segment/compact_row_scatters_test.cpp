// passes/compact_row_scatters: an embedding's gradient, few tokens into many rows, adds into a row
// per token and is read back at the rows the ids name; the same values as the table's to the bit,
// the plans that follow, and what is left alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codegen/kernel_name.h"
#include "passes/compact_row_scatters.h"
#include "passes/zero_based_scatters.h"
#include "run_plan.h"

namespace vf {
namespace {

using ::testing::HasSubstr;

// The embedding gradient of `tokens` tokens of rows of 32 into `rows` rows, rounded to bf16 (the
// models' case), with padding_idx `padding` (-1: none).
std::string embedding_backward(int64_t tokens, int64_t rows, int64_t padding = -1) {
  const std::string n = std::to_string(tokens);
  return "def f(g, idx):\n  # g: \"cpu bf16[" + n + ", 32]\"\n  # idx: \"cpu i64[" + n + "]\"\n"
         "  t0 = ltorch.embedding_backward(g, idx, " + std::to_string(rows) + ", " + std::to_string(padding) +
         ", False, False)\n  return t0\n";
}

// The fusion the planner sees: the scatters onto zeros in f32, then compacted (or not: null).
std::shared_ptr<const Fusion> compacted(const Fusion& f) {
  RewrittenFusion zero_based = zero_based_scatters(f);
  return compact_row_scatters(zero_based.fusion ? *zero_based.fusion : f).fusion;
}

// ids that repeat: token t names row (t % 37) * 13, so rows 0, 13, ... 468 take 5 or 6 tokens each.
HostTensor repeating_ids(int64_t tokens) {
  HostTensor ids = HostTensor::empty(DType::Int64, {tokens});
  for (int64_t t = 0; t < tokens; ++t) {
    const int64_t at[1] = {t};
    const int64_t row = (t % 37) * 13;
    std::memcpy(ids.element(at), &row, sizeof row);
  }
  return ids;
}

// The reference runs the compacted fusion to the same bits as the original (the sums of a row
// come in the index's order either way), with and without a padding row among the ids.
TEST(CompactRowScatters, EmbeddingBackward_SameBitsAsTheWholeTable) {
  for (int64_t padding : {int64_t{-1}, int64_t{26}}) {
    SCOPED_TRACE(padding);
    const Fusion f = read_trace(embedding_backward(200, 1000, padding));
    const std::shared_ptr<const Fusion> c = compacted(f);
    ASSERT_TRUE(c);
    const std::vector<HostArg> args{random_tensor(DType::BFloat16, {200, 32}, 3), repeating_ids(200)};
    const HostTensor expected = run_reference(f, args).at(0);
    const Comparison same = compare_tensors(run_reference(*c, args).at(0), expected, Tolerance{});
    EXPECT_TRUE(same.ok) << same.first_mismatch;
  }
}

// Planned: the rows' owners (a scatter_max), the sums of the tokens' rows, and the rounding that
// reads them back; the table's float32 sums are never allocated.
TEST(CompactRowScatters, EmbeddingBackward_ThreeKernelsNoTableOfSums) {
  const test::PlanRun r = test::run_plan_against_reference(embedding_backward(256, 3000));
  EXPECT_THAT(r.plan.rewrites.at(1), HasSubstr("prims.scatter_add t0_sums: the 256 rows of t0__index_of add into a row "
                                               "each (f32[256, 32]), read back at the 3000 rows they name"));
  std::vector<std::string> names;
  for (const Segment& s : r.plan.segments)
    if (s.kind == SegmentKind::Kernel) names.push_back(kernel_name(*s.fusion, *s.kernel));
  EXPECT_THAT(names, ::testing::ElementsAre("vf_scatter_max", "vf_scatter_add_take_sub",
                                            HasSubstr("vf_pointwise_gt_sub_maximum_take_where")));
  EXPECT_LT(r.plan.allocated_bytes, 3000 * 32 * 4);  // below the table's float32 sums alone
}

// Left alone: a result that is an output itself (a float32 gradient: the table is what is
// returned), as many tokens as half the rows or more, no tokens, rows narrower than 16, and an
// index that is not one id per row.
TEST(CompactRowScatters, TableReturnedOrFewRowsOrNarrowOrNotRowIds_LeftAlone) {
  EXPECT_FALSE(compacted(read_trace(
      "def f(g, idx):\n  # g: \"cpu f32[64, 32]\"\n  # idx: \"cpu i64[64]\"\n"
      "  t0 = ltorch.embedding_backward(g, idx, 1000, -1, False, False)\n  return t0\n")));
  EXPECT_FALSE(compacted(read_trace(embedding_backward(500, 999))));
  EXPECT_FALSE(compacted(read_trace(embedding_backward(0, 999))));  // no tokens: the table of zeros
  test::run_plan_against_reference(embedding_backward(0, 999));
  EXPECT_TRUE(compacted(read_trace(embedding_backward(499, 999))));
  EXPECT_FALSE(compacted(read_trace(
      "def f(g, idx):\n  # g: \"cpu bf16[64, 8]\"\n  # idx: \"cpu i64[64]\"\n"
      "  t0 = ltorch.embedding_backward(g, idx, 1000, -1, False, False)\n  return t0\n")));
  EXPECT_FALSE(compacted(read_trace(
      "def f(s, i):\n  # s: \"cpu f32[64, 32]\"\n  # i: \"cpu i64[64, 32]\"\n"
      "  a = prims.full((1000, 32), 0.0, device=devices.Device(\"cpu\"), dtype=dtypes.float32)\n"
      "  t0 = prims.scatter_add(a, i, s, 0)\n  t1 = prims.mul(t0, 2.0)\n  return t1\n")));
}

// index_add along dim 1 of a 3-D source, read by a reduction: the same values as the reference.
TEST(CompactRowScatters, IndexAddAlongMiddleDimReadByReduction_MatchesReference) {
  const test::PlanRun r = test::run_plan_against_reference(R"(
def f(v, i):
  # v: "cpu f32[3, 20, 24]"
  # i: "cpu i64[20]"
  a = prims.full((3, 100, 24), 0.0, device=devices.Device("cpu"), dtype=dtypes.float32)
  t0 = prims.index_add(a, i, v, 1)
  t1 = prims.sum(t0, (2,))
  return t1
)");
  EXPECT_THAT(r.plan.rewrites.at(0), HasSubstr("add into a row each (f32[3, 20, 24]), read back at the 100 rows"));
}

}  // namespace
}  // namespace vf
