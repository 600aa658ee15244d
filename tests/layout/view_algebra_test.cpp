// Table-driven tests of the view algebra: each case's expected layout or copy reason is worked
// out by hand from the element addresses.
#include "layout/view_algebra.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/ir.h"

namespace vf {
namespace {

using testing::HasSubstr;
using Strides = std::vector<int64_t>;

// A layout expected from a view op, or (when `copy` is set) substrings of its copy reason.
struct Expect {
  std::optional<Layout> layout;
  std::vector<std::string> reason_parts;
};
Expect view(Layout l) { return {std::move(l), {}}; }
Expect copy(std::vector<std::string> parts) { return {std::nullopt, std::move(parts)}; }

void check(const ViewResult& got, const Expect& want) {
  if (want.layout) {
    ASSERT_TRUE(got.is_view()) << "copy: " << got.copy_reason;
    EXPECT_EQ(*got.layout, *want.layout) << "got " << got.layout->to_string() << "\nwant "
                                         << want.layout->to_string();
    EXPECT_TRUE(got.copy_reason.empty());
  } else {
    ASSERT_FALSE(got.is_view()) << "view: " << got.layout->to_string();
    for (const std::string& part : want.reason_parts) EXPECT_THAT(got.copy_reason, HasSubstr(part));
  }
}

// ---- reshape ----

struct ReshapeCase {
  const char* name;
  Layout in;
  Shape shape;
  Expect want;
};

const ReshapeCase kReshapeCases[] = {
    {"ContiguousMerge", {{2, 3, 4}, {12, 4, 1}, 0}, {6, 4}, view({{6, 4}, {4, 1}, 0})},
    {"ContiguousFlatten", {{2, 3, 4}, {12, 4, 1}, 0}, {24}, view({{24}, {1}, 0})},
    {"ContiguousSplit", {{24}, {1}, 0}, {2, 3, 4}, view({{2, 3, 4}, {12, 4, 1}, 0})},
    {"SameShapeKeepsStrides", {{3, 2}, {1, 3}, 4}, {3, 2}, view({{3, 2}, {1, 3}, 4})},
    // The seed: [2,16,8,16] permuted (0,2,1,3) and reshaped to [2,8,256] merges dims 2 and 3,
    // whose strides 128 and 1 are not contiguous with each other.
    {"SeedPermuteThenMerge",
     {{2, 8, 16, 16}, {2048, 16, 128, 1}, 0},
     {2, 8, 256},
     copy({"merging dims 2 and 3", "sizes [2, 8, 16, 16]", "strides [2048, 16, 128, 1]",
           "stride 128 != 16 * 1"})},
    // Permute (1,0,2,3) of contiguous [2,16,8,16]: dims 2 and 3 stay adjacent in memory.
    {"PermuteThenMergeAdjacent",
     {{16, 2, 8, 16}, {128, 2048, 16, 1}, 0},
     {16, 2, 128},
     view({{16, 2, 128}, {128, 2048, 1}, 0})},
    {"PermuteThenMergeSwapped",
     {{16, 2, 8, 16}, {128, 2048, 16, 1}, 0},
     {32, 128},
     copy({"merging dims 0 and 1", "stride 128 != 2 * 2048"})},
    // Contiguous [2,3,4] permuted (2,0,1): dims 0 and 1 of the input stay adjacent.
    {"Permute3dMergeTrailing", {{4, 2, 3}, {1, 12, 4}, 0}, {4, 6}, view({{4, 6}, {1, 4}, 0})},
    {"Transposed2dFlatten", {{3, 4}, {1, 3}, 0}, {12}, copy({"merging dims 0 and 1", "stride 1 != 4 * 3"})},
    {"Transposed2dSplitOuter", {{4, 6}, {1, 4}, 0}, {2, 2, 6}, view({{2, 2, 6}, {2, 1, 4}, 0})},
    {"RowSliceFlattenKeepsOffset", {{2, 6}, {6, 1}, 6}, {12}, view({{12}, {1}, 6})},
    {"ColumnSliceFlatten", {{4, 3}, {6, 1}, 1}, {12}, copy({"merging dims 0 and 1", "stride 6 != 3 * 1"})},
    {"ColumnSliceSplitOuter", {{4, 3}, {6, 1}, 1}, {2, 2, 3}, view({{2, 2, 3}, {12, 6, 1}, 1})},
    {"ColumnSliceStraddle", {{4, 3}, {6, 1}, 1}, {6, 2}, copy({"merging dims 0 and 1"})},
    {"SteppedSliceSplit", {{4}, {2}, 1}, {2, 2}, view({{2, 2}, {4, 2}, 1})},
    {"SteppedSliceMerge", {{2, 4}, {16, 2}, 0}, {8}, copy({"stride 16 != 4 * 2"})},
    {"SteppedSliceMergeContiguousRows", {{2, 4}, {8, 2}, 0}, {8}, view({{8}, {2}, 0})},
    {"ExpandedSplit", {{4, 3}, {0, 1}, 0}, {2, 2, 3}, view({{2, 2, 3}, {0, 0, 1}, 0})},
    {"ExpandedMergeWithReal", {{4, 3}, {0, 1}, 0}, {12}, copy({"merging dims 0 and 1", "stride 0 != 3 * 1"})},
    {"RealMergeWithExpanded", {{3, 4}, {1, 0}, 0}, {12}, copy({"merging dims 0 and 1", "stride 1 != 4 * 0"})},
    {"ExpandedMergeWithExpanded", {{2, 3, 5}, {0, 0, 1}, 2}, {6, 5}, view({{6, 5}, {0, 1}, 2})},
    {"FullyExpandedFlatten", {{2, 2}, {0, 0}, 0}, {4}, view({{4}, {0}, 0})},
    {"Size1OddStrideInsideChunk", {{2, 1, 3}, {3, 100, 1}, 0}, {6}, view({{6}, {1}, 0})},
    {"Size1OddStrideInnermost", {{3, 1}, {5, 5}, 0}, {3}, view({{3}, {5}, 0})},
    {"Size1InnermostBreaksNothing", {{2, 3, 1}, {3, 1, 7}, 0}, {6, 1}, view({{6, 1}, {1, 7}, 0})},
    {"InsertSize1Middle", {{2, 3}, {3, 1}, 0}, {2, 1, 3}, view({{2, 1, 3}, {3, 3, 1}, 0})},
    {"InsertSize1Trailing", {{2, 3}, {3, 1}, 0}, {6, 1}, view({{6, 1}, {1, 1}, 0})},
    {"InsertSize1Transposed", {{3, 2}, {1, 3}, 0}, {3, 1, 2}, view({{3, 1, 2}, {1, 6, 3}, 0})},
    {"RemoveSize1", {{2, 1, 3}, {3, 3, 1}, 0}, {2, 3}, view({{2, 3}, {3, 1}, 0})},
    {"EmptyGetsContiguous", {{0, 3}, {3, 1}, 0}, {3, 0}, view({{3, 0}, {1, 1}, 0})},
    {"EmptyNonContiguousKeepsOffset", {{2, 0}, {1, 2}, 5}, {0, 4}, view({{0, 4}, {4, 1}, 5})},
    {"Rank0ToOnes", {{}, {}, 3}, {1, 1}, view({{1, 1}, {1, 1}, 3})},
    {"OnesToRank0", {{1, 1}, {7, 9}, 2}, {}, view({{}, {}, 2})},
    {"SingleElementToVector", {{1, 1}, {7, 9}, 2}, {1}, view({{1}, {9}, 2})},
    {"OffsetKeptThroughPermutedSplit", {{4, 6}, {1, 4}, 10}, {4, 2, 3}, view({{4, 2, 3}, {1, 12, 4}, 10})},
};

void PrintTo(const ReshapeCase& c, std::ostream* os) { *os << c.name; }

class ReshapeTable : public testing::TestWithParam<ReshapeCase> {};

TEST_P(ReshapeTable, Layout_MatchesHandComputed) {
  const ReshapeCase& c = GetParam();
  SCOPED_TRACE(c.in.to_string() + " -> " + shape_to_string(c.shape));
  check(reshape_layout(c.in, c.shape), c.want);
}

INSTANTIATE_TEST_SUITE_P(ReshapeLayout, ReshapeTable, testing::ValuesIn(kReshapeCases),
                         [](const testing::TestParamInfo<ReshapeCase>& info) { return info.param.name; });

TEST(ReshapeLayout, SeedChainFromContiguous_NeedsCopy) {
  Layout x = Layout::contiguous({2, 16, 8, 16});
  ViewResult t = transpose_layout(x, {0, 2, 1, 3});
  ASSERT_TRUE(t.is_view());
  EXPECT_EQ(t.layout->strides, (Strides{2048, 16, 128, 1}));
  ViewResult r = reshape_layout(*t.layout, {2, 8, 256});
  EXPECT_FALSE(r.is_view());
  EXPECT_EQ(r.copy_reason,
            "merging dims 2 and 3 of sizes [2, 8, 16, 16] strides [2048, 16, 128, 1]: stride 128 != 16 * 1");
}

// ---- transpose ----

struct TransposeCase {
  const char* name;
  Layout in;
  std::vector<int64_t> permutation;
  Layout want;
};

const TransposeCase kTransposeCases[] = {
    {"Identity", {{2, 3}, {3, 1}, 0}, {0, 1}, {{2, 3}, {3, 1}, 0}},
    {"Swap2d", {{2, 3}, {3, 1}, 0}, {1, 0}, {{3, 2}, {1, 3}, 0}},
    {"Seed4d", {{2, 16, 8, 16}, {2048, 128, 16, 1}, 0}, {0, 2, 1, 3}, {{2, 8, 16, 16}, {2048, 16, 128, 1}, 0}},
    {"Cycle3dKeepsOffset", {{2, 3, 4}, {12, 4, 1}, 7}, {2, 0, 1}, {{4, 2, 3}, {1, 12, 4}, 7}},
    {"ExpandedDimMoves", {{4, 3}, {0, 1}, 0}, {1, 0}, {{3, 4}, {1, 0}, 0}},
    {"EmptyDims", {{0, 5}, {5, 1}, 0}, {1, 0}, {{5, 0}, {1, 5}, 0}},
    {"Rank0", {{}, {}, 2}, {}, {{}, {}, 2}},
};

void PrintTo(const TransposeCase& c, std::ostream* os) { *os << c.name; }

class TransposeTable : public testing::TestWithParam<TransposeCase> {};

TEST_P(TransposeTable, Layout_PermutesSizesAndStrides) {
  const TransposeCase& c = GetParam();
  check(transpose_layout(c.in, c.permutation), view(c.want));
}

INSTANTIATE_TEST_SUITE_P(TransposeLayout, TransposeTable, testing::ValuesIn(kTransposeCases),
                         [](const testing::TestParamInfo<TransposeCase>& info) { return info.param.name; });

// ---- broadcast_in_dim ----

struct BroadcastCase {
  const char* name;
  Layout in;
  Shape shape;
  std::vector<int64_t> broadcast_dims;
  Layout want;
};

const BroadcastCase kBroadcastCases[] = {
    {"NewLeadingDim", {{3}, {1}, 0}, {2, 3}, {1}, {{2, 3}, {0, 1}, 0}},
    {"NewTrailingDim", {{3}, {2}, 5}, {3, 4}, {0}, {{3, 4}, {2, 0}, 5}},
    {"Size1DimGrows", {{3, 1}, {1, 1}, 0}, {3, 4}, {0, 1}, {{3, 4}, {1, 0}, 0}},
    {"Size1DimKept", {{1}, {5}, 0}, {1, 1}, {1}, {{1, 1}, {0, 5}, 0}},
    {"SeedWeight", {{256}, {1}, 0}, {2, 8, 256}, {2}, {{2, 8, 256}, {0, 0, 1}, 0}},
    {"Rank0ToMatrix", {{}, {}, 4}, {2, 2}, {}, {{2, 2}, {0, 0}, 4}},
    {"Size1GrowsToEmpty", {{1, 3}, {3, 1}, 0}, {0, 3}, {0, 1}, {{0, 3}, {0, 1}, 0}},
    {"KeepsTransposedStrides", {{3, 2}, {1, 3}, 0}, {3, 5, 2}, {0, 2}, {{3, 5, 2}, {1, 0, 3}, 0}},
};

void PrintTo(const BroadcastCase& c, std::ostream* os) { *os << c.name; }

class BroadcastTable : public testing::TestWithParam<BroadcastCase> {};

TEST_P(BroadcastTable, Layout_NewAndGrownDimsGetStride0) {
  const BroadcastCase& c = GetParam();
  check(broadcast_in_dim_layout(c.in, c.shape, c.broadcast_dims), view(c.want));
}

INSTANTIATE_TEST_SUITE_P(BroadcastInDimLayout, BroadcastTable, testing::ValuesIn(kBroadcastCases),
                         [](const testing::TestParamInfo<BroadcastCase>& info) { return info.param.name; });

// ---- slice ----

struct SliceCase {
  const char* name;
  Layout in;
  std::vector<int64_t> start, end, step;
  Layout want;
};

const SliceCase kSliceCases[] = {
    {"Block", {{4, 6}, {6, 1}, 0}, {1, 2}, {3, 5}, {1, 1}, {{2, 3}, {6, 1}, 8}},
    {"Step3Exact", {{10}, {1}, 0}, {1}, {10}, {3}, {{3}, {3}, 1}},
    {"Step3Rounded", {{10}, {1}, 0}, {1}, {9}, {3}, {{3}, {3}, 1}},
    {"Step2Of4", {{8}, {1}, 0}, {0}, {8}, {2}, {{4}, {2}, 0}},
    {"EmptyAtEnd", {{5}, {1}, 0}, {5}, {5}, {1}, {{0}, {1}, 5}},
    {"EmptyInMiddle", {{5, 2}, {2, 1}, 1}, {3, 0}, {3, 2}, {1, 1}, {{0, 2}, {2, 1}, 7}},
    {"OnPermutedInput", {{6, 4}, {1, 6}, 2}, {1, 1}, {5, 4}, {2, 1}, {{2, 3}, {2, 6}, 9}},
    {"OfExpandedDim", {{4, 3}, {0, 1}, 0}, {1, 1}, {4, 3}, {2, 1}, {{2, 2}, {0, 1}, 1}},
    {"FullRangeIsIdentity", {{2, 3}, {1, 2}, 3}, {0, 0}, {2, 3}, {1, 1}, {{2, 3}, {1, 2}, 3}},
    {"Rank0", {{}, {}, 3}, {}, {}, {}, {{}, {}, 3}},
};

void PrintTo(const SliceCase& c, std::ostream* os) { *os << c.name; }

class SliceTable : public testing::TestWithParam<SliceCase> {};

TEST_P(SliceTable, Layout_OffsetAndScaledStrides) {
  const SliceCase& c = GetParam();
  check(slice_layout(c.in, c.start, c.end, c.step), view(c.want));
}

INSTANTIATE_TEST_SUITE_P(SliceLayout, SliceTable, testing::ValuesIn(kSliceCases),
                         [](const testing::TestParamInfo<SliceCase>& info) { return info.param.name; });

// ---- squeeze ----

TEST(SqueezeLayout, OddStrideDims_Dropped) {
  check(squeeze_layout({{2, 1, 3, 1}, {3, 7, 1, 9}, 4}, {1, 3}), view({{2, 3}, {3, 1}, 4}));
}

TEST(SqueezeLayout, AllDims_GivesRank0) {
  check(squeeze_layout({{1, 1}, {5, 0}, 6}, {0, 1}), view({{}, {}, 6}));
}

TEST(SqueezeLayout, NoDims_Unchanged) {
  check(squeeze_layout({{2, 1}, {1, 2}, 1}, {}), view({{2, 1}, {1, 2}, 1}));
}

TEST(SqueezeLayout, NextToEmptyDim_KeepsStrides) {
  check(squeeze_layout({{0, 1, 3}, {3, 3, 1}, 0}, {1}), view({{0, 3}, {3, 1}, 0}));
}

// ---- view_layout dispatch ----

class ViewLayoutDispatch : public testing::Test {
 protected:
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {2, 16, 8, 16});
  Layout xl = Layout::contiguous({2, 16, 8, 16});
  const Node& node_of(Value* v) { return *v->producer; }
};

TEST_F(ViewLayoutDispatch, Transpose_UsesPermutation) {
  Value* t = f.add(OpKind::Transpose, {x}, PermuteAttrs{{0, 2, -3, 3}});
  check(view_layout(node_of(t), xl), view({{2, 8, 16, 16}, {2048, 16, 128, 1}, 0}));
}

TEST_F(ViewLayoutDispatch, ReshapeWithInferredDim_UsesResolvedShape) {
  Value* r = f.add(OpKind::Reshape, {x}, ReshapeAttrs{{2, -1, 16}});
  check(view_layout(node_of(r), xl), view({{2, 128, 16}, {2048, 16, 1}, 0}));
}

TEST_F(ViewLayoutDispatch, ReshapeAfterPermute_NeedsCopy) {
  Value* t = f.add(OpKind::Transpose, {x}, PermuteAttrs{{0, 2, 1, 3}});
  Value* r = f.add(OpKind::Reshape, {t}, ReshapeAttrs{{2, 8, 256}});
  ViewResult tl = view_layout(node_of(t), xl);
  ASSERT_TRUE(tl.is_view());
  check(view_layout(node_of(r), *tl.layout), copy({"merging dims 2 and 3"}));
}

TEST_F(ViewLayoutDispatch, BroadcastInDim_UsesShapeAndDims) {
  Value* w = f.add_tensor_input("w", DType::Float32, {16});
  Value* b = f.add(OpKind::BroadcastInDim, {w}, BroadcastAttrs{{4, 16}, {-1}});
  check(view_layout(node_of(b), Layout::contiguous({16}, 3)), view({{4, 16}, {0, 1}, 3}));
}

TEST_F(ViewLayoutDispatch, SliceWithDefaultSteps_UsesStep1) {
  Value* s = f.add(OpKind::SlicePrim, {x}, SliceAttrs{{1, 2, 0, 0}, {2, 10, 8, 16}, {}});
  check(view_layout(node_of(s), xl), view({{1, 8, 8, 16}, {2048, 128, 16, 1}, 2048 + 256}));
}

TEST_F(ViewLayoutDispatch, Squeeze_DropsDims) {
  Value* y = f.add_tensor_input("y", DType::Float32, {3, 1});
  Value* s = f.add(OpKind::Squeeze, {y}, DimsAttrs{{-1}});
  check(view_layout(node_of(s), Layout::contiguous({3, 1})), view({{3}, {1}, 0}));
}

TEST_F(ViewLayoutDispatch, Flip_AlwaysCopies) {
  Value* r = f.add(OpKind::Flip, {x}, DimsAttrs{{1}});
  check(view_layout(node_of(r), xl), copy({"prims.flip always writes new memory"}));
}

TEST_F(ViewLayoutDispatch, Pad_AlwaysCopies) {
  Value* zero = f.add_constant(Scalar::from_float(0.0));
  Value* r = f.add(OpKind::Pad, {x, zero}, PadAttrs{{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {1, 1, 0}}});
  check(view_layout(node_of(r), xl), copy({"prims.pad always writes new memory"}));
}

TEST_F(ViewLayoutDispatch, Cat_AlwaysCopies) {
  Value* r = f.add(OpKind::Cat, {x, x}, AxisAttrs{0});
  check(view_layout(node_of(r), xl), copy({"prims.cat always writes new memory"}));
}

TEST_F(ViewLayoutDispatch, ComputeOps_AlwaysCopy) {
  Value* e = f.add(OpKind::Exp, {x});
  check(view_layout(node_of(e), xl), copy({"prims.exp always writes new memory"}));
  Value* c = f.add(OpKind::ConvertElementType, {x}, CastAttrs{DType::Float32});
  check(view_layout(node_of(c), xl), copy({"prims.convert_element_type always writes new memory"}));
  Value* s = f.add(OpKind::Sum, {x}, DimsAttrs{{}});
  check(view_layout(node_of(s), xl), copy({"prims.sum always writes new memory"}));
}


// same_view_strides: chains equal but for unit-step slices, with only transposes, squeezes and such
// slices after them, give equal strides on every input layout (checked by composing both); other
// chains are not claimed equal.
Node step(OpKind op, OpAttrs attrs) {
  Node n;
  n.op = op;
  n.attrs = std::move(attrs);
  return n;
}

Layout compose(const std::vector<Node>& chain, Layout l) {
  for (const Node& n : chain) {
    const ViewResult r = view_layout(n, l);
    EXPECT_TRUE(r.is_view()) << r.copy_reason;
    l = *r.layout;
  }
  return l;
}

TEST(SameViewStrides, RopeHalves_SameStridesOnEveryLayout) {
  // qkv [2, 4, 3 * 2 * 8] -> [2, 4, 3, 2, 8] -> q or k -> [2, 2, 4, 8] -> a half along the last dim.
  const Node reshape = step(OpKind::Reshape, ReshapeAttrs{{2, 4, 3, 2, 8}});
  auto part = [&](int64_t p) { return step(OpKind::SlicePrim, SliceAttrs{{0, 0, p, 0, 0}, {2, 4, p + 1, 2, 8}, {1, 1, 1, 1, 1}}); };
  const Node squeeze = step(OpKind::Squeeze, DimsAttrs{{2}});
  const Node transpose = step(OpKind::Transpose, PermuteAttrs{{0, 2, 1, 3}});
  const Node high = step(OpKind::SlicePrim, SliceAttrs{{0, 0, 0, 4}, {2, 2, 4, 8}, {1, 1, 1, 1}});
  const std::vector<Node> q{reshape, part(0), squeeze, transpose}, k{reshape, part(1), squeeze, transpose};
  const std::vector<Node> q_high{reshape, part(0), squeeze, transpose, high};
  EXPECT_TRUE(same_view_strides(q, k));
  EXPECT_TRUE(same_view_strides(q, q_high));
  EXPECT_TRUE(same_view_strides(k, q_high));
  // The claim holds on a contiguous qkv, one with a row stride of 64, and one with an offset.
  Layout padded = Layout::contiguous({2, 4, 48});
  padded.strides = {4 * 64, 64, 1};
  for (const Layout& in : {Layout::contiguous({2, 4, 48}), padded, Layout::contiguous({2, 4, 48}, 5)}) {
    EXPECT_EQ(compose(q, in).strides, compose(k, in).strides);
    EXPECT_EQ(compose(q, in).strides, compose(q_high, in).strides);
    EXPECT_NE(compose(q, in).offset, compose(k, in).offset);
  }
}

TEST(SameViewStrides, StepSliceOrSizeDependentStepAfterSlice_NotClaimed) {
  const Node cut = step(OpKind::SlicePrim, SliceAttrs{{0, 0}, {4, 4}, {1, 1}});
  const Node every_other = step(OpKind::SlicePrim, SliceAttrs{{0, 0}, {4, 8}, {1, 2}});
  const Node flatten = step(OpKind::Reshape, ReshapeAttrs{{16}});
  const Node grow = step(OpKind::BroadcastInDim, BroadcastAttrs{{3, 4, 4}, {1, 2}});
  const Node swap = step(OpKind::Transpose, PermuteAttrs{{1, 0}});
  EXPECT_FALSE(same_view_strides({every_other}, {}));  // a step of 2 doubles a stride
  EXPECT_FALSE(same_view_strides({cut, flatten}, {flatten}));  // a reshape after the slice
  EXPECT_FALSE(same_view_strides({cut, grow}, {grow}));  // a broadcast after the slice
  EXPECT_FALSE(same_view_strides({swap}, {}));  // different chains
  EXPECT_TRUE(same_view_strides({cut, swap}, {swap}));
}
}  // namespace
}  // namespace vf
