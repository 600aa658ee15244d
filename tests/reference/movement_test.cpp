// Tests of the reference's view and movement ops: transpose, reshape, broadcast_in_dim, slice,
// squeeze, pad, cat, flip, take, take_along_axis and gather.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reference_test_util.h"

namespace vf {
namespace {

using testing::iota_tensor;
using testing::make_tensor;
using testing::run_one;
using testing::run_with_attrs;
using testing::values_of;

TEST(ReferenceMovement, Transpose_PermutesIndices) {
  HostTensor out = run_with_attrs(OpKind::Transpose, iota_tensor(DType::Float32, {2, 3}), PermuteAttrs{{1, 0}});
  EXPECT_EQ(out.shape(), (Shape{3, 2}));
  EXPECT_EQ(values_of(out), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  // [2, 3, 4] -> permutation (2, 0, 1) gives [4, 2, 3]; out[k][i][j] = in[i][j][k].
  HostTensor out3 = run_with_attrs(OpKind::Transpose, iota_tensor(DType::Int32, {2, 3, 4}), PermuteAttrs{{2, 0, 1}});
  EXPECT_EQ(out3.shape(), (Shape{4, 2, 3}));
  std::vector<double> v = values_of(out3);
  EXPECT_EQ(v[0 * 6 + 1 * 3 + 2], 1 * 12 + 2 * 4 + 0);  // out[0][1][2] = in[1][2][0]
  EXPECT_EQ(v[3 * 6 + 0 * 3 + 1], 0 * 12 + 1 * 4 + 3);  // out[3][0][1] = in[0][1][3]
}

TEST(ReferenceMovement, Reshape_KeepsRowMajorOrder) {
  HostTensor out = run_with_attrs(OpKind::Reshape, iota_tensor(DType::Float32, {2, 3}), ReshapeAttrs{{3, -1}});
  EXPECT_EQ(out.shape(), (Shape{3, 2}));
  EXPECT_EQ(values_of(out), (std::vector<double>{0, 1, 2, 3, 4, 5}));
}

TEST(ReferenceMovement, BroadcastInDim_ExpandsSizeOneAndNewDims) {
  HostTensor row = run_with_attrs(OpKind::BroadcastInDim, make_tensor(DType::Float32, {3}, {1, 2, 3}),
                                  BroadcastAttrs{{2, 3}, {1}});
  EXPECT_EQ(values_of(row), (std::vector<double>{1, 2, 3, 1, 2, 3}));
  HostTensor col = run_with_attrs(OpKind::BroadcastInDim, make_tensor(DType::Float32, {2, 1}, {1, 2}),
                                  BroadcastAttrs{{2, 3}, {0, 1}});
  EXPECT_EQ(values_of(col), (std::vector<double>{1, 1, 1, 2, 2, 2}));
  HostTensor scalar = run_with_attrs(OpKind::BroadcastInDim, make_tensor(DType::Float64, {}, {7}),
                                     BroadcastAttrs{{2, 2}, {}});
  EXPECT_EQ(values_of(scalar), (std::vector<double>{7, 7, 7, 7}));
}

TEST(ReferenceMovement, SliceWithSteps_PicksEveryStepth) {
  HostTensor out = run_with_attrs(OpKind::SlicePrim, iota_tensor(DType::Int64, {10}), SliceAttrs{{1}, {8}, {3}});
  EXPECT_EQ(values_of(out), (std::vector<double>{1, 4, 7}));
  // [4, 5]: rows 1..4 step 2, cols 0..5 step 2.
  HostTensor out2 = run_with_attrs(OpKind::SlicePrim, iota_tensor(DType::Float32, {4, 5}),
                                   SliceAttrs{{1, 0}, {4, 5}, {2, 2}});
  EXPECT_EQ(out2.shape(), (Shape{2, 3}));
  EXPECT_EQ(values_of(out2), (std::vector<double>{5, 7, 9, 15, 17, 19}));
  HostTensor empty = run_with_attrs(OpKind::SlicePrim, iota_tensor(DType::Float32, {4}), SliceAttrs{{3}, {3}, {1}});
  EXPECT_EQ(empty.shape(), (Shape{0}));
}

TEST(ReferenceMovement, Squeeze_DropsSizeOneDims) {
  HostTensor out = run_with_attrs(OpKind::Squeeze, iota_tensor(DType::Float32, {1, 3, 1}), DimsAttrs{{0, 2}});
  EXPECT_EQ(out.shape(), (Shape{3}));
  EXPECT_EQ(values_of(out), (std::vector<double>{0, 1, 2}));
}

TEST(ReferenceMovement, Flip_ReversesChosenDims) {
  HostTensor x = iota_tensor(DType::Float32, {2, 3});
  EXPECT_EQ(values_of(run_with_attrs(OpKind::Flip, x, DimsAttrs{{1}})), (std::vector<double>{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(values_of(run_with_attrs(OpKind::Flip, x, DimsAttrs{{0, 1}})), (std::vector<double>{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(values_of(run_with_attrs(OpKind::Flip, x, DimsAttrs{{}})), (std::vector<double>{0, 1, 2, 3, 4, 5}));
}

HostTensor pad(const HostTensor& x, Scalar value, std::vector<PadDim> config) {
  Fusion f;
  Value* in = f.add_tensor_input("x", x.dtype(), x.shape());
  f.add_output(f.add(OpKind::Pad, {in, f.add_constant(value)}, PadAttrs{std::move(config)}));
  return run_one(f, {x});
}

TEST(ReferencePad, NegativeLowAndDilation_CropAndInterleave) {
  HostTensor x = make_tensor(DType::Float32, {3}, {1, 2, 3});
  // Dilated: [1 0 2 0 3]; lo -1 drops the 1; hi 2 appends two 9s.
  HostTensor out = pad(x, Scalar::from_float(9), {{-1, 2, 1}});
  EXPECT_EQ(values_of(out), (std::vector<double>{9, 2, 9, 3, 9, 9}));
  // lo 2, hi -2: [9 9 1 2 3] cropped at the end to [9 9 1].
  EXPECT_EQ(values_of(pad(x, Scalar::from_float(9), {{2, -2, 0}})), (std::vector<double>{9, 9, 1}));
  // Everything cropped away.
  EXPECT_EQ(pad(x, Scalar::from_float(9), {{-2, -1, 0}}).shape(), (Shape{0}));
}

TEST(ReferencePad, TwoDims_PadsEachDim) {
  HostTensor x = make_tensor(DType::Int32, {2, 2}, {1, 2, 3, 4});
  HostTensor out = pad(x, Scalar::from_int(-1), {{1, 0, 0}, {0, -1, 1}});
  // Rows: a pad row, then the two rows; cols: [a 0 b] cropped to [a 0].
  EXPECT_EQ(out.shape(), (Shape{3, 2}));
  EXPECT_EQ(values_of(out), (std::vector<double>{-1, -1, 1, -1, 3, -1}));
}

TEST(ReferencePad, HalfPaddingValue_RoundedToDtype) {
  HostTensor out = pad(make_tensor(DType::BFloat16, {1}, {1}), Scalar::from_float(0.1), {{1, 0, 0}});
  EXPECT_EQ(values_of(out), (std::vector<double>{0.10009765625, 1}));
}

TEST(ReferenceCat, EmptyInputs_AreSkipped) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Float32, {0, 2});
  Value* b = f.add_tensor_input("b", DType::Float32, {2, 2});
  Value* c = f.add_tensor_input("c", DType::Float32, {0, 2});
  Value* d = f.add_tensor_input("d", DType::Float32, {1, 2});
  f.add_output(f.add(OpKind::Cat, {a, b, c, d}, AxisAttrs{0}));
  f.add_output(f.add(OpKind::Cat, {a, c}, AxisAttrs{0}));
  auto out = run_reference(f, {make_tensor(DType::Float32, {0, 2}, {}), make_tensor(DType::Float32, {2, 2}, {1, 2, 3, 4}),
                               make_tensor(DType::Float32, {0, 2}, {}), make_tensor(DType::Float32, {1, 2}, {5, 6})});
  EXPECT_EQ(out[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(out[1].shape(), (Shape{0, 2}));
}

TEST(ReferenceCat, InnerDim_Interleaves) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Int32, {2, 1});
  Value* b = f.add_tensor_input("b", DType::Int32, {2, 2});
  f.add_output(f.add(OpKind::Cat, {a, b}, AxisAttrs{-1}));
  HostTensor out = run_one(f, {testing::make_int_tensor(DType::Int32, {2, 1}, {1, 2}),
                               testing::make_int_tensor(DType::Int32, {2, 2}, {3, 4, 5, 6})});
  EXPECT_EQ(values_of(out), (std::vector<double>{1, 3, 4, 2, 5, 6}));
}

// Each output element against the definitions in ir.h, written out by hand.
TEST(ReferenceIndexing, TakeTakeAlongAxisGather_PickTheIndexedElements) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Float32, {2, 3});
  Value* rows = f.add_tensor_input("rows", DType::Int64, {3});
  Value* along = f.add_tensor_input("along", DType::Int32, {2, 2});
  Value* first = f.add_tensor_input("first", DType::Int64, {1, 2});
  f.add_output(f.add(OpKind::Take, {a, rows}, AxisAttrs{0}));
  f.add_output(f.add(OpKind::Take, {a, rows}, AxisAttrs{1}));
  f.add_output(f.add(OpKind::TakeAlongAxis, {a, along}, AxisAttrs{1}));
  f.add_output(f.add(OpKind::Gather, {a, first}, AxisAttrs{0}));
  // a = [[1, 2, 3], [4, 5, 6]]
  auto out = run_reference(f, {make_tensor(DType::Float32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                               testing::make_int_tensor(DType::Int64, {3}, {1, 0, 1}),
                               testing::make_int_tensor(DType::Int32, {2, 2}, {2, 2, 0, 1}),
                               testing::make_int_tensor(DType::Int64, {1, 2}, {1, 0})});
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{4, 5, 6, 1, 2, 3, 4, 5, 6}));  // rows 1, 0, 1
  EXPECT_EQ(values_of(out[1]), (std::vector<double>{2, 1, 2, 5, 4, 5}));           // columns 1, 0, 1
  EXPECT_EQ(values_of(out[2]), (std::vector<double>{3, 3, 4, 5}));                 // a[i][along[i][j]]
  EXPECT_EQ(values_of(out[3]), (std::vector<double>{4, 2}));                       // a[first[0][j]][j]
}

TEST(ReferenceIndexing, IndexOutOfRange_IsUserError) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Float32, {2, 3});
  Value* idx = f.add_tensor_input("idx", DType::Int64, {2});
  f.add_output(f.add_node(OpKind::Take, {a, idx}, AxisAttrs{1}, {"cols"}).at(0));
  for (int64_t bad : {int64_t{3}, int64_t{-1}}) {
    try {
      run_reference(f, {make_tensor(DType::Float32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                        testing::make_int_tensor(DType::Int64, {2}, {0, bad})});
      ADD_FAILURE() << "index " << bad << " was taken";
    } catch (const UserError& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("prims.take cols: index " + std::to_string(bad) +
                                                 " is out of range for dim 1 of size 3 of a f32[2, 3] (at output "
                                                 "element [0, 1])"));
    }
  }
}

TEST(ReferenceMovement, EmptyTensors_GiveEmptyResults) {
  HostTensor e = make_tensor(DType::Float32, {2, 0}, {});
  EXPECT_EQ(run_with_attrs(OpKind::Transpose, e, PermuteAttrs{{1, 0}}).shape(), (Shape{0, 2}));
  EXPECT_EQ(run_with_attrs(OpKind::Reshape, e, ReshapeAttrs{{0, 5}}).shape(), (Shape{0, 5}));
  EXPECT_EQ(run_with_attrs(OpKind::BroadcastInDim, e, BroadcastAttrs{{3, 2, 0}, {1, 2}}).shape(), (Shape{3, 2, 0}));
  EXPECT_EQ(run_with_attrs(OpKind::SlicePrim, e, SliceAttrs{{1, 0}, {2, 0}, {1, 1}}).shape(), (Shape{1, 0}));
  EXPECT_EQ(run_with_attrs(OpKind::Flip, e, DimsAttrs{{0, 1}}).shape(), (Shape{2, 0}));
  EXPECT_EQ(run_with_attrs(OpKind::Squeeze, make_tensor(DType::Float32, {1, 0}, {}), DimsAttrs{{0}}).shape(),
            (Shape{0}));
  // Padding an empty dim with lo/hi gives only padding values.
  HostTensor padded = pad(e, Scalar::from_float(4), {{0, 0, 0}, {1, 1, 3}});
  EXPECT_EQ(padded.shape(), (Shape{2, 2}));
  EXPECT_EQ(values_of(padded), (std::vector<double>{4, 4, 4, 4}));
}

}  // namespace
}  // namespace vf
