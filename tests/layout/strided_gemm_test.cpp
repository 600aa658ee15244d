// layout/strided_gemm: matmul operands and results as strided-batched GEMMs. Batch dims merge
// where every operand allows; transposed operands are column-major; broadcasts have stride 0;
// matrices that are neither row- nor column-major are refused with the reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "layout/strided_gemm.h"

namespace vf {
namespace {

using ::testing::HasSubstr;

Layout strided(Shape sizes, std::vector<int64_t> strides, int64_t offset = 0) { return Layout{sizes, strides, offset}; }

// [2, 3, 4] @ [4, 5]: one strided batch of 2, b broadcast (stride 0).
TEST(StridedGemm, BatchedTimesMatrix_BroadcastStrideZero) {
  const auto g = strided_gemm(Layout::contiguous({2, 3, 4}), Layout::contiguous({4, 5}), Layout::contiguous({2, 3, 5}),
                              nullptr);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->m, 3);
  EXPECT_EQ(g->k, 4);
  EXPECT_EQ(g->n, 5);
  EXPECT_EQ(g->batch, Shape{2});
  EXPECT_EQ(g->a.batch, std::vector<int64_t>{12});
  EXPECT_EQ(g->b.batch, std::vector<int64_t>{0});
  EXPECT_EQ(g->d.batch, std::vector<int64_t>{15});
  EXPECT_EQ(g->a.rs, 4);
  EXPECT_EQ(g->a.cs, 1);
  EXPECT_EQ(g->d.rs, 5);
}

// q @ k^T with k [2, 3, 8, 16] transposed: b is column-major (rs 1, cs 16); the batch dims [2, 3]
// merge into one of 6.
TEST(StridedGemm, TransposedOperand_ColumnMajorAndMergedBatch) {
  const auto g = strided_gemm(Layout::contiguous({2, 3, 8, 16}), strided({2, 3, 16, 8}, {384, 128, 1, 16}),
                              Layout::contiguous({2, 3, 8, 8}), nullptr);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->batch, Shape{6});
  EXPECT_EQ(g->b.rs, 1);
  EXPECT_EQ(g->b.cs, 16);
  EXPECT_EQ(g->b.batch, std::vector<int64_t>{128});
  EXPECT_EQ(g->a.batch, std::vector<int64_t>{128});
}

// [2, 1, 3, 4] @ [5, 4, 6]: batch [2, 5], a broadcast along the inner, b along the outer: the dims
// cannot merge (a loop of 2 calls of 5).
TEST(StridedGemm, CrossBroadcast_TwoBatchDims) {
  const auto g = strided_gemm(Layout::contiguous({2, 1, 3, 4}), Layout::contiguous({5, 4, 6}),
                              Layout::contiguous({2, 5, 3, 6}), nullptr);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->batch, (Shape{2, 5}));
  EXPECT_EQ(g->a.batch, (std::vector<int64_t>{12, 0}));
  EXPECT_EQ(g->b.batch, (std::vector<int64_t>{0, 24}));
}

// Vectors: [K] @ [K] is one 1 x 1 product; a strided vector is a column-major row.
TEST(StridedGemm, Vectors_OneByOne) {
  const auto g = strided_gemm(strided({7}, {3}, 5), Layout::contiguous({7}), Layout::contiguous({}), nullptr);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->m, 1);
  EXPECT_EQ(g->n, 1);
  EXPECT_EQ(g->k, 7);
  EXPECT_TRUE(g->batch.empty());
  EXPECT_EQ(g->a.rs, 1);
  EXPECT_EQ(g->a.cs, 3);
  EXPECT_EQ(g->a.offset, 5);
}

// Every other column of a matrix (a slice with step 2) is neither row- nor column-major.
TEST(StridedGemm, SteppedColumns_Refused) {
  std::string why;
  EXPECT_FALSE(strided_gemm(Layout::contiguous({4, 8}), strided({8, 5}, {10, 2}), Layout::contiguous({4, 5}), &why));
  EXPECT_THAT(why, HasSubstr("b: its 8 x 5 matrices have strides [10, 2], neither row- nor column-major"));
  EXPECT_THAT(gemm_operand_problem(strided({8, 5}, {10, 2})), HasSubstr("neither row- nor column-major"));
  EXPECT_EQ(gemm_operand_problem(strided({8, 5}, {1, 8})), "");
  EXPECT_EQ(gemm_operand_problem(strided({1, 5}, {0, 1})), "");  // a broadcast row
}

}  // namespace
}  // namespace vf
