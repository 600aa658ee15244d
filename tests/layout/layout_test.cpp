// Tests of Layout: contiguous strides, contiguity, storage extent and overlap, on hand-computed cases.
#include "layout/layout.h"

#include <gtest/gtest.h>

namespace vf {
namespace {

struct LayoutCase {
  const char* name;
  Layout layout;
  bool contiguous;
  int64_t extent;
  bool non_overlapping;
};

const LayoutCase kCases[] = {
    {"Contiguous3d", {{2, 3, 4}, {12, 4, 1}, 0}, true, 24, true},
    {"ContiguousWithOffset", {{2, 3}, {3, 1}, 5}, true, 11, true},
    {"Transposed", {{3, 2}, {1, 3}, 0}, false, 6, true},
    {"Size1DimOddStride", {{2, 1, 3}, {3, 99, 1}, 0}, true, 6, true},
    {"Size1DimZeroStride", {{1, 3}, {0, 1}, 0}, true, 3, true},
    {"EmptyOddStrides", {{0, 3}, {7, 7}, 4}, true, 0, true},
    {"EmptyInnerDim", {{5, 0}, {1, 1}, 0}, true, 0, true},
    {"Rank0", {{}, {}, 3}, true, 4, true},
    {"SteppedSlice", {{4}, {3}, 1}, false, 11, true},
    {"RowSlice", {{2, 6}, {6, 1}, 6}, true, 18, true},
    {"ColumnSlice", {{4, 3}, {6, 1}, 1}, false, 22, true},
    {"ExpandedRow", {{4, 3}, {0, 1}, 0}, false, 3, false},
    {"ExpandedAll", {{2, 2}, {0, 0}, 2}, false, 3, false},
    {"OverlappingUnitStrides", {{2, 2}, {1, 1}, 0}, false, 3, false},
    {"OverlappingSmallOuterStride", {{3, 2}, {1, 2}, 0}, false, 5, false},
    {"RowMajorStride2", {{3, 2}, {2, 1}, 0}, true, 6, true},
    {"GappedRows", {{3, 2}, {5, 1}, 0}, false, 12, true},
    {"SingleElementOddStride", {{1, 1}, {9, 9}, 2}, true, 3, true},
};

void PrintTo(const LayoutCase& c, std::ostream* os) { *os << c.name; }

class LayoutTable : public testing::TestWithParam<LayoutCase> {};

TEST_P(LayoutTable, Properties_MatchHandComputed) {
  const LayoutCase& c = GetParam();
  SCOPED_TRACE(c.layout.to_string());
  EXPECT_EQ(c.layout.is_contiguous(), c.contiguous);
  EXPECT_EQ(c.layout.storage_extent(), c.extent);
  EXPECT_EQ(c.layout.is_non_overlapping(), c.non_overlapping);
}

INSTANTIATE_TEST_SUITE_P(Layout, LayoutTable, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<LayoutCase>& info) { return info.param.name; });

TEST(LayoutContiguous, RowMajor_StridesAreSuffixProducts) {
  EXPECT_EQ(Layout::contiguous({2, 3, 4}).strides, (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(Layout::contiguous({2, 3, 4}, 7).offset, 7);
  EXPECT_EQ(Layout::contiguous({5}).strides, (std::vector<int64_t>{1}));
}

TEST(LayoutContiguous, ZeroSizeDim_CountsAsOneForOuterStrides) {
  EXPECT_EQ(Layout::contiguous({2, 0, 3}).strides, (std::vector<int64_t>{3, 3, 1}));
  EXPECT_EQ(Layout::contiguous({3, 0}).strides, (std::vector<int64_t>{1, 1}));
}

TEST(LayoutContiguous, Rank0_HasNoStrides) {
  Layout l = Layout::contiguous({});
  EXPECT_TRUE(l.strides.empty());
  EXPECT_EQ(l.numel(), 1);
  EXPECT_EQ(l.storage_extent(), 1);
}

TEST(LayoutToString, PrintsSizesStridesOffset) {
  EXPECT_EQ((Layout{{2, 8}, {8, 1}, 0}).to_string(), "sizes [2, 8] strides [8, 1] offset 0");
  EXPECT_EQ((Layout{{}, {}, 3}).to_string(), "sizes [] strides [] offset 3");
}

}  // namespace
}  // namespace vf
