// Tests of Fusion::add_node's type inference (ir/infer_types.cpp): result types for each op
// category, attribute canonicalisation, and the message of every user-error path.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "ir/ir.h"

namespace vf {
namespace {

using testing::HasSubstr;

class InferTypes : public testing::Test {
 protected:
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {2, 3});
  Value* y = f.add_tensor_input("y", DType::Float32, {2, 3});
  Value* i = f.add_tensor_input("i", DType::Int32, {2, 3});
  Value* b = f.add_tensor_input("b", DType::Bool, {2, 3});
  Value* h = f.add_tensor_input("h", DType::BFloat16, {2, 3});
  Value* v = f.add_tensor_input("v", DType::Float32, {3});

  Value* constant(double value) { return f.add_constant(Scalar::from_float(value)); }
  Value* constant_int(int64_t value) { return f.add_constant(Scalar::from_int(value)); }
  Value* constant_bool(bool value) { return f.add_constant(Scalar::from_bool(value)); }

  // The message of the UserError that adding the node throws ("" if none is thrown).
  std::string error(OpKind op, std::vector<Value*> inputs, OpAttrs attrs = NoAttrs{}) {
    try {
      f.add_node(op, std::move(inputs), std::move(attrs));
    } catch (const UserError& e) {
      return e.what();
    }
    return "";
  }
};

void expect_type(const Value* v, DType dtype, const Shape& shape) {
  ASSERT_NE(v, nullptr);
  EXPECT_TRUE(v->is_tensor);
  EXPECT_EQ(dtype_short_name(v->dtype), dtype_short_name(dtype));
  EXPECT_EQ(shape_to_string(v->shape), shape_to_string(shape));
}

// ---- View ops ----

TEST_F(InferTypes, Transpose_PermutesShapeAndWrapsNegativeEntries) {
  Value* t = f.add(OpKind::Transpose, {x}, PermuteAttrs{{-1, 0}});
  expect_type(t, DType::Float32, {3, 2});
  EXPECT_EQ(t->producer->attr<PermuteAttrs>().permutation, (std::vector<int64_t>{1, 0}));
}

TEST_F(InferTypes, TransposeWrongLength_Throws) {
  EXPECT_THAT(error(OpKind::Transpose, {x}, PermuteAttrs{{0}}),
              HasSubstr("prims.transpose(x: f32[2, 3]): permutation [0] must have 2 entries"));
}

TEST_F(InferTypes, TransposeRepeatedEntry_Throws) {
  EXPECT_THAT(error(OpKind::Transpose, {x}, PermuteAttrs{{1, -1}}), HasSubstr("repeats 1"));
}

TEST_F(InferTypes, TransposeEntryOutOfRange_Throws) {
  EXPECT_THAT(error(OpKind::Transpose, {x}, PermuteAttrs{{0, 2}}),
              HasSubstr("permutation entry 2 is out of range for a tensor of rank 2"));
}

TEST_F(InferTypes, ReshapeInferredDim_IsResolved) {
  Value* r = f.add(OpKind::Reshape, {x}, ReshapeAttrs{{-1, 2}});
  expect_type(r, DType::Float32, {3, 2});
  EXPECT_EQ(r->producer->attr<ReshapeAttrs>().shape, (Shape{3, 2}));
}

TEST_F(InferTypes, ReshapeInferredDimOfEmpty_IsZero) {
  Value* e = f.add_tensor_input("e", DType::Float32, {0, 3});
  expect_type(f.add(OpKind::Reshape, {e}, ReshapeAttrs{{3, -1}}), DType::Float32, {3, 0});
}

TEST_F(InferTypes, ReshapeToRank0_FromSingleElement) {
  Value* one = f.add_tensor_input("one", DType::Float32, {1, 1});
  expect_type(f.add(OpKind::Reshape, {one}, ReshapeAttrs{{}}), DType::Float32, {});
}

// A 0-dim tensor's dim 0 or -1 is itself (PyTorch's rule): the reduction reduces no dim; dim 1 is
// out of range.
TEST_F(InferTypes, ReductionOfRank0OverDim0_ReducesNothing) {
  Value* s = f.add_tensor_input("s", DType::Float32, {});
  for (int64_t d : {0, -1}) {
    Value* m = f.add(OpKind::Amax, {s}, DimsAttrs{{d}});
    expect_type(m, DType::Float32, {});
    EXPECT_TRUE(m->producer->attr<DimsAttrs>().dims.empty());
  }
  EXPECT_THAT(error(OpKind::Sum, {s}, DimsAttrs{{1}}), HasSubstr("dim 1 is out of range for a tensor of rank 0"));
}

TEST_F(InferTypes, ReshapeSizeMismatch_Throws) {
  EXPECT_THAT(error(OpKind::Reshape, {x}, ReshapeAttrs{{4, 2}}),
              HasSubstr("cannot reshape [2, 3] (6 elements) to [4, 2] (8 elements)"));
}

TEST_F(InferTypes, ReshapeTwoInferredDims_Throws) {
  EXPECT_THAT(error(OpKind::Reshape, {x}, ReshapeAttrs{{-1, -1}}), HasSubstr("has more than one -1"));
}

TEST_F(InferTypes, ReshapeInferredDimNotDivisible_Throws) {
  EXPECT_THAT(error(OpKind::Reshape, {x}, ReshapeAttrs{{4, -1}}),
              HasSubstr("shape [4, -1] is invalid for 6 elements"));
}

TEST_F(InferTypes, ReshapeInferredDimNextToZero_Throws) {
  EXPECT_THAT(error(OpKind::Reshape, {x}, ReshapeAttrs{{0, -1}}),
              HasSubstr("cannot infer the -1 in shape [0, -1] for a tensor of 6 elements"));
}

TEST_F(InferTypes, ReshapeNegativeSize_Throws) {
  EXPECT_THAT(error(OpKind::Reshape, {x}, ReshapeAttrs{{-2, -3}}), HasSubstr("has a negative size"));
}

TEST_F(InferTypes, BroadcastInDim_ExpandsAndWrapsDims) {
  Value* r = f.add(OpKind::BroadcastInDim, {v}, BroadcastAttrs{{4, 2, 3}, {-1}});
  expect_type(r, DType::Float32, {4, 2, 3});
  EXPECT_EQ(r->producer->attr<BroadcastAttrs>().broadcast_dims, (std::vector<int64_t>{2}));
  Value* one = f.add_tensor_input("one", DType::Float32, {1, 3});
  expect_type(f.add(OpKind::BroadcastInDim, {one}, BroadcastAttrs{{5, 3}, {0, 1}}), DType::Float32, {5, 3});
}

TEST_F(InferTypes, BroadcastInDimWrongDimCount_Throws) {
  EXPECT_THAT(error(OpKind::BroadcastInDim, {x}, BroadcastAttrs{{2, 3}, {0}}),
              HasSubstr("broadcast_dimensions [0] must have one entry per input dim (2)"));
}

TEST_F(InferTypes, BroadcastInDimNotIncreasing_Throws) {
  EXPECT_THAT(error(OpKind::BroadcastInDim, {x}, BroadcastAttrs{{2, 3, 2}, {2, 1}}),
              HasSubstr("must be strictly increasing"));
}

TEST_F(InferTypes, BroadcastInDimSizeMismatch_Throws) {
  EXPECT_THAT(error(OpKind::BroadcastInDim, {v}, BroadcastAttrs{{4, 5}, {1}}),
              HasSubstr("input dim 0 of size 3 cannot broadcast to size 5 of output dim 1"));
}

TEST_F(InferTypes, BroadcastInDimDimOutOfRange_Throws) {
  EXPECT_THAT(error(OpKind::BroadcastInDim, {v}, BroadcastAttrs{{3}, {1}}),
              HasSubstr("broadcast dimension 1 is out of range for a tensor of rank 1"));
}

TEST_F(InferTypes, BroadcastInDimNegativeSize_Throws) {
  EXPECT_THAT(error(OpKind::BroadcastInDim, {v}, BroadcastAttrs{{-1, 3}, {1}}),
              HasSubstr("shape [-1, 3] has a negative size"));
}

TEST_F(InferTypes, Slice_DefaultStepsFilledAndSizesRoundedUp) {
  Value* s = f.add(OpKind::SlicePrim, {x}, SliceAttrs{{0, 1}, {2, 3}, {}});
  expect_type(s, DType::Float32, {2, 2});
  EXPECT_EQ(s->producer->attr<SliceAttrs>().step, (std::vector<int64_t>{1, 1}));
  expect_type(f.add(OpKind::SlicePrim, {x}, SliceAttrs{{0, 0}, {2, 3}, {1, 2}}), DType::Float32, {2, 2});
}

TEST_F(InferTypes, SliceEmpty_IsAllowed) {
  expect_type(f.add(OpKind::SlicePrim, {x}, SliceAttrs{{1, 3}, {1, 3}, {1, 1}}), DType::Float32, {0, 0});
}

TEST_F(InferTypes, SliceStartAfterEnd_Throws) {
  EXPECT_THAT(error(OpKind::SlicePrim, {x}, SliceAttrs{{0, 2}, {2, 1}, {}}),
              HasSubstr("dim 1: expected 0 <= start <= end <= 3, got start 2 and end 1"));
}

TEST_F(InferTypes, SliceEndPastSize_Throws) {
  EXPECT_THAT(error(OpKind::SlicePrim, {x}, SliceAttrs{{0, 0}, {3, 3}, {}}),
              HasSubstr("dim 0: expected 0 <= start <= end <= 2, got start 0 and end 3"));
}

TEST_F(InferTypes, SliceZeroStep_Throws) {
  EXPECT_THAT(error(OpKind::SlicePrim, {x}, SliceAttrs{{0, 0}, {2, 3}, {1, 0}}),
              HasSubstr("dim 1: stride must be >= 1, got 0"));
}

TEST_F(InferTypes, SliceWrongEntryCount_Throws) {
  EXPECT_THAT(error(OpKind::SlicePrim, {x}, SliceAttrs{{0}, {2}, {}}), HasSubstr("must each have 2 entries"));
}

TEST_F(InferTypes, Squeeze_DropsSize1Dims) {
  Value* z = f.add_tensor_input("z", DType::Float32, {1, 3, 1});
  Value* s = f.add(OpKind::Squeeze, {z}, DimsAttrs{{-1, 0}});
  expect_type(s, DType::Float32, {3});
  EXPECT_EQ(s->producer->attr<DimsAttrs>().dims, (std::vector<int64_t>{0, 2}));
}

TEST_F(InferTypes, SqueezeNonSize1Dim_Throws) {
  EXPECT_THAT(error(OpKind::Squeeze, {x}, DimsAttrs{{1}}),
              HasSubstr("cannot squeeze dim 1 of size 3 (shape [2, 3])"));
}

TEST_F(InferTypes, SqueezeRepeatedDim_Throws) {
  Value* z = f.add_tensor_input("z", DType::Float32, {1, 3});
  EXPECT_THAT(error(OpKind::Squeeze, {z}, DimsAttrs{{0, -2}}), HasSubstr("repeat a dim"));
}

TEST_F(InferTypes, ViewOpOnScalar_Throws) {
  EXPECT_THAT(error(OpKind::Squeeze, {constant(1.0)}, DimsAttrs{{}}),
              HasSubstr("argument 0 must be a tensor, got a float"));
}

// ---- Movement ops ----

TEST_F(InferTypes, Pad_NegativeLoAndInteriorDilation) {
  Value* p = f.add(OpKind::Pad, {x, constant(0.0)}, PadAttrs{{{-1, 2, 0}, {1, 0, 2}}});
  // dim 0: 2 - 1 + 2 = 3; dim 1: 3 + 2 * 2 + 1 = 8.
  expect_type(p, DType::Float32, {3, 8});
}

TEST_F(InferTypes, PadNegativeResultSize_Throws) {
  EXPECT_THAT(error(OpKind::Pad, {x, constant(0.0)}, PadAttrs{{{-2, -1, 0}, {0, 0, 0}}}),
              HasSubstr("dim 0: padding (-2, -1, 0) of a dim of size 2 gives a negative size -1"));
}

TEST_F(InferTypes, PadNegativeInterior_Throws) {
  EXPECT_THAT(error(OpKind::Pad, {x, constant(0.0)}, PadAttrs{{{0, 0, -1}, {0, 0, 0}}}),
              HasSubstr("dim 0: interior dilation must be >= 0, got -1"));
}

TEST_F(InferTypes, PadFloatValueOnIntTensor_Throws) {
  EXPECT_THAT(error(OpKind::Pad, {i, constant(0.5)}, PadAttrs{{{0, 0, 0}, {0, 0, 0}}}),
              HasSubstr("a float padding value cannot pad a i32 tensor"));
}

TEST_F(InferTypes, PadIntValueOnBoolTensor_Throws) {
  EXPECT_THAT(error(OpKind::Pad, {b, constant_int(1)}, PadAttrs{{{0, 0, 0}, {0, 0, 0}}}),
              HasSubstr("an int padding value cannot pad a b8 tensor"));
}

TEST_F(InferTypes, PadTensorValue_Throws) {
  EXPECT_THAT(error(OpKind::Pad, {x, y}, PadAttrs{{{0, 0, 0}, {0, 0, 0}}}),
              HasSubstr("padding_value must be a number, got a tensor"));
}

TEST_F(InferTypes, PadWrongConfigLength_Throws) {
  EXPECT_THAT(error(OpKind::Pad, {x, constant(0.0)}, PadAttrs{{{0, 0, 0}}}),
              HasSubstr("padding_config must have one (lo, hi, dilation) per dim (2), got 1"));
}

TEST_F(InferTypes, Cat_SumsTheCatDim) {
  Value* w = f.add_tensor_input("w", DType::Float32, {2, 0});
  Value* c = f.add(OpKind::Cat, {x, w, y}, AxisAttrs{-1});
  expect_type(c, DType::Float32, {2, 6});
  EXPECT_EQ(c->producer->attr<AxisAttrs>().dim, 1);
}

TEST_F(InferTypes, CatDtypeMismatch_Throws) {
  EXPECT_THAT(error(OpKind::Cat, {x, i}, AxisAttrs{0}),
              HasSubstr("tensors must have the same dtype, got f32 and i32"));
}

TEST_F(InferTypes, CatShapeMismatch_Throws) {
  Value* w = f.add_tensor_input("w", DType::Float32, {3, 3});
  EXPECT_THAT(error(OpKind::Cat, {x, w}, AxisAttrs{1}),
              HasSubstr("tensor 1 has shape [3, 3], which differs from [2, 3] outside the cat dim 1"));
}

TEST_F(InferTypes, CatRankMismatch_Throws) {
  EXPECT_THAT(error(OpKind::Cat, {x, v}, AxisAttrs{0}), HasSubstr("tensors must have the same rank, got 2 and 1"));
}

TEST_F(InferTypes, CatNoTensors_Throws) {
  EXPECT_THAT(error(OpKind::Cat, {}, AxisAttrs{0}), HasSubstr("prims.cat(): expects at least one tensor"));
}

TEST_F(InferTypes, Take_ReplacesTheDimByTheIndex) {
  Value* idx = f.add_tensor_input("idx", DType::Int64, {5});
  Value* one = f.add_tensor_input("one", DType::Int32, {});
  Value* t = f.add(OpKind::Take, {x, idx}, AxisAttrs{-1});
  expect_type(t, DType::Float32, {2, 5});
  EXPECT_EQ(t->producer->attr<AxisAttrs>().dim, 1);
  expect_type(f.add(OpKind::Take, {x, one}, AxisAttrs{0}), DType::Float32, {1, 3});
}

TEST_F(InferTypes, TakeAlongAxisAndGather_GiveTheIndexShape) {
  Value* along = f.add_tensor_input("along", DType::Int64, {2, 7});
  Value* smaller = f.add_tensor_input("smaller", DType::Int64, {1, 9});
  expect_type(f.add(OpKind::TakeAlongAxis, {x, along}, AxisAttrs{1}), DType::Float32, {2, 7});
  expect_type(f.add(OpKind::Gather, {x, smaller}, AxisAttrs{1}), DType::Float32, {1, 9});
}

TEST_F(InferTypes, IndexingWrongIndex_Throws) {
  Value* idx2 = f.add_tensor_input("idx2", DType::Int64, {2, 2});
  Value* big = f.add_tensor_input("big", DType::Int64, {3, 3});
  Value* rank1 = f.add_tensor_input("rank1", DType::Int64, {3});
  Value* empty = f.add_tensor_input("empty", DType::Float32, {0, 3});
  EXPECT_THAT(error(OpKind::Take, {x, x}, AxisAttrs{0}),
              HasSubstr("prims.take(x: f32[2, 3], x: f32[2, 3]): the index must have an integer dtype, got f32"));
  EXPECT_THAT(error(OpKind::Take, {x, idx2}, AxisAttrs{0}), HasSubstr("the index must be 0-D or 1-D, got i64[2, 2]"));
  EXPECT_THAT(error(OpKind::Take, {x, idx2}, AxisAttrs{2}), HasSubstr("dim 2 is out of range for a tensor of rank 2"));
  EXPECT_THAT(error(OpKind::Take, {empty, rank1}, AxisAttrs{0}),
              HasSubstr("a non-empty index into dim 0 of size 0 of f32[0, 3]"));
  EXPECT_THAT(error(OpKind::TakeAlongAxis, {x, rank1}, AxisAttrs{0}),
              HasSubstr("the index must have the rank of a (2), got i64[3]"));
  EXPECT_THAT(error(OpKind::TakeAlongAxis, {x, big}, AxisAttrs{1}),
              HasSubstr("the index's shape [3, 3] differs from a's [2, 3] in dim 0 (only dim 1 may differ)"));
  EXPECT_THAT(error(OpKind::Gather, {x, big}, AxisAttrs{1}),
              HasSubstr("the index's shape [3, 3] exceeds a's [2, 3] in dim 0 (only dim 1 may differ)"));
}

TEST_F(InferTypes, Flip_KeepsShapeAndSortsDims) {
  Value* r = f.add(OpKind::Flip, {x}, DimsAttrs{{-1, 0}});
  expect_type(r, DType::Float32, {2, 3});
  EXPECT_EQ(r->producer->attr<DimsAttrs>().dims, (std::vector<int64_t>{0, 1}));
}

// ---- Elementwise ops ----

TEST_F(InferTypes, Cast_GivesTargetDtype) {
  expect_type(f.add(OpKind::ConvertElementType, {h}, CastAttrs{DType::Float32}), DType::Float32, {2, 3});
  expect_type(f.add(OpKind::ConvertElementType, {x}, CastAttrs{DType::Bool}), DType::Bool, {2, 3});
}

TEST_F(InferTypes, Unary_KeepsType) {
  expect_type(f.add(OpKind::Exp, {h}), DType::BFloat16, {2, 3});
  expect_type(f.add(OpKind::Neg, {i}), DType::Int32, {2, 3});
}

TEST_F(InferTypes, UnaryPredicates_GiveBool) {
  expect_type(f.add(OpKind::IsFinite, {x}), DType::Bool, {2, 3});
  expect_type(f.add(OpKind::Signbit, {h}), DType::Bool, {2, 3});
}

TEST_F(InferTypes, Frexp_MantissaKeepsTypeExponentIsInt32) {
  expect_type(f.add(OpKind::FrexpMantissa, {h}), DType::BFloat16, {2, 3});
  expect_type(f.add(OpKind::FrexpExponent, {h}), DType::Int32, {2, 3});
  EXPECT_THAT(error(OpKind::FrexpExponent, {i}), HasSubstr("expects a floating dtype, got i32"));
}

TEST_F(InferTypes, Cumsum_KeepsTypeAndWrapsDim) {
  Value* c = f.add(OpKind::Cumsum, {i}, AxisAttrs{-1});
  expect_type(c, DType::Int32, {2, 3});
  EXPECT_EQ(c->producer->attr<AxisAttrs>().dim, 1);
  Value* flags = f.add_tensor_input("flags", DType::Bool, {4});
  EXPECT_THROW(f.add(OpKind::Cumsum, {flags}, AxisAttrs{0}), UserError);
  EXPECT_THROW(f.add(OpKind::Cumsum, {x}, AxisAttrs{-3}), UserError);
}

TEST_F(InferTypes, UnaryWrongArity_Throws) {
  EXPECT_THAT(error(OpKind::Exp, {x, y}), HasSubstr("prims.exp(x: f32[2, 3], y: f32[2, 3]): expected 1 argument(s), got 2"));
}

TEST_F(InferTypes, FloatOnlyUnaryOnInt_Throws) {
  EXPECT_THAT(error(OpKind::Exp, {i}), HasSubstr("prims.exp(i: i32[2, 3]): expects a floating dtype, got i32"));
  EXPECT_THAT(error(OpKind::Sqrt, {b}), HasSubstr("expects a floating dtype, got b8"));
}

TEST_F(InferTypes, ArithmeticOnBool_Throws) {
  EXPECT_THAT(error(OpKind::Neg, {b}), HasSubstr("expects a numeric dtype, got b8"));
}

TEST_F(InferTypes, BitwiseOnFloat_Throws) {
  EXPECT_THAT(error(OpKind::BitwiseNot, {x}), HasSubstr("expects an integer or bool dtype, got f32"));
  expect_type(f.add(OpKind::BitwiseAnd, {b, b}), DType::Bool, {2, 3});
}

TEST_F(InferTypes, BinaryWithWeakScalar_TakesTensorDtype) {
  expect_type(f.add(OpKind::Add, {h, constant(1e-5)}), DType::BFloat16, {2, 3});
  expect_type(f.add(OpKind::Mul, {constant_int(2), i}), DType::Int32, {2, 3});
  expect_type(f.add(OpKind::Add, {x, constant_bool(true)}), DType::Float32, {2, 3});
}

TEST_F(InferTypes, BinaryShapeMismatch_Throws) {
  EXPECT_THAT(error(OpKind::Add, {x, v}),
              HasSubstr("operands must have the same shape (use broadcast_in_dim), got [2, 3] and [3]"));
}

TEST_F(InferTypes, BinaryDtypeMismatch_Throws) {
  EXPECT_THAT(error(OpKind::Mul, {x, h}), HasSubstr("tensor operands must have the same dtype"));
  EXPECT_THAT(error(OpKind::Mul, {x, h}), HasSubstr("got f32 and bf16"));
}

TEST_F(InferTypes, FloatNumberWithIntTensor_Throws) {
  EXPECT_THAT(error(OpKind::Add, {i, constant(1.5)}),
              HasSubstr("prims.add(i: i32[2, 3], 1.5): a float number cannot combine with i32 tensors"));
}

TEST_F(InferTypes, IntNumberWithBoolTensor_Throws) {
  EXPECT_THAT(error(OpKind::BitwiseOr, {b, constant_int(1)}),
              HasSubstr("an int number cannot combine with b8 tensors"));
}

TEST_F(InferTypes, BinaryOnlyScalars_Throws) {
  EXPECT_THAT(error(OpKind::Add, {constant(1.0), constant(2.0)}), HasSubstr("at least one operand must be a tensor"));
}

TEST_F(InferTypes, BinaryWrongArity_Throws) {
  EXPECT_THAT(error(OpKind::Add, {x}), HasSubstr("expected 2 argument(s), got 1"));
}

TEST_F(InferTypes, Comparisons_GiveBool) {
  expect_type(f.add(OpKind::Lt, {x, y}), DType::Bool, {2, 3});
  expect_type(f.add(OpKind::Eq, {i, constant_int(0)}), DType::Bool, {2, 3});
  expect_type(f.add(OpKind::Ne, {b, b}), DType::Bool, {2, 3});
}

TEST_F(InferTypes, FloatOnlyBinaryOnInt_Throws) {
  EXPECT_THAT(error(OpKind::Atan2, {i, i}), HasSubstr("expects a floating dtype, got i32"));
}

TEST_F(InferTypes, Where_TakesValueDtype) {
  expect_type(f.add(OpKind::Where, {b, x, y}), DType::Float32, {2, 3});
  expect_type(f.add(OpKind::Where, {b, i, constant_int(0)}), DType::Int32, {2, 3});
  expect_type(f.add(OpKind::Where, {constant_bool(true), h, h}), DType::BFloat16, {2, 3});
}

TEST_F(InferTypes, WhereScalarValues_TakeDefaultDtype) {
  expect_type(f.add(OpKind::Where, {b, constant(1.0), constant_int(0)}), DType::Float32, {2, 3});
  expect_type(f.add(OpKind::Where, {b, constant_int(1), constant_int(0)}), DType::Int64, {2, 3});
  expect_type(f.add(OpKind::Where, {b, constant_bool(true), constant_bool(false)}), DType::Bool, {2, 3});
}

TEST_F(InferTypes, WhereNonBoolCondition_Throws) {
  EXPECT_THAT(error(OpKind::Where, {x, x, y}), HasSubstr("the condition must be bool, got f32[2, 3]"));
  EXPECT_THAT(error(OpKind::Where, {constant_int(1), x, y}), HasSubstr("the condition must be bool, got int"));
}

TEST_F(InferTypes, WhereShapeMismatch_Throws) {
  Value* c = f.add_tensor_input("c", DType::Bool, {3});
  EXPECT_THAT(error(OpKind::Where, {c, x, y}), HasSubstr("operands must have the same shape, got [3] and [2, 3]"));
}

TEST_F(InferTypes, WhereValueDtypeMismatch_Throws) {
  EXPECT_THAT(error(OpKind::Where, {b, x, i}), HasSubstr("got f32 and i32"));
  EXPECT_THAT(error(OpKind::Where, {b, i, constant(0.5)}), HasSubstr("a float number cannot combine with i32"));
}

TEST_F(InferTypes, WhereAllScalars_Throws) {
  EXPECT_THAT(error(OpKind::Where, {constant_bool(true), constant(1.0), constant(2.0)}),
              HasSubstr("at least one operand must be a tensor"));
}

TEST_F(InferTypes, LerpOnFloats_KeepsType) {
  expect_type(f.add(OpKind::Lerp, {x, y, constant(0.5)}), DType::Float32, {2, 3});
  EXPECT_THAT(error(OpKind::Lerp, {i, i, constant_int(1)}), HasSubstr("expects a floating dtype, got i32"));
}

// ---- Reductions ----

TEST_F(InferTypes, Sum_RemovesDims) {
  Value* z = f.add_tensor_input("z", DType::Int64, {2, 3, 4});
  Value* s = f.add(OpKind::Sum, {z}, DimsAttrs{{-1, 0}});
  expect_type(s, DType::Int64, {3});
  EXPECT_EQ(s->producer->attr<DimsAttrs>().dims, (std::vector<int64_t>{0, 2}));
  expect_type(f.add(OpKind::Amax, {z}, DimsAttrs{{0, 1, 2}}), DType::Int64, {});
  expect_type(f.add(OpKind::Amin, {b}, DimsAttrs{{1}}), DType::Bool, {2});
}

TEST_F(InferTypes, SumOfBool_Throws) {
  EXPECT_THAT(error(OpKind::Sum, {b}, DimsAttrs{{0}}), HasSubstr("expects a numeric dtype, got b8"));
}

TEST_F(InferTypes, ReductionDimOutOfRange_Throws) {
  EXPECT_THAT(error(OpKind::Prod, {x}, DimsAttrs{{2}}), HasSubstr("dim 2 is out of range for a tensor of rank 2"));
  EXPECT_THAT(error(OpKind::Prod, {x}, DimsAttrs{{-3}}), HasSubstr("dim -3 is out of range"));
}

TEST_F(InferTypes, ReductionRepeatedDim_Throws) {
  EXPECT_THAT(error(OpKind::Sum, {x}, DimsAttrs{{1, -1}}), HasSubstr("dims [1, 1] repeat a dim"));
}

TEST_F(InferTypes, VarMean_GivesTwoOutputs) {
  const std::vector<Value*>& outs = f.add_node(OpKind::VarMean, {h}, VarAttrs{{1}, 0}, {"var", "mean"});
  ASSERT_EQ(outs.size(), 2u);
  expect_type(outs[0], DType::BFloat16, {2});
  expect_type(outs[1], DType::BFloat16, {2});
  EXPECT_EQ(outs[0]->name, "var");
  EXPECT_EQ(outs[1]->name, "mean");
  EXPECT_EQ(outs[0]->producer, outs[1]->producer);
}

TEST_F(InferTypes, VarOfInt_Throws) {
  EXPECT_THAT(error(OpKind::Var, {i}, VarAttrs{{0}, 1}), HasSubstr("prims.var(i: i32[2, 3]): expects a floating dtype"));
}

TEST_F(InferTypes, WrongNumberOfOutputNames_Throws) {
  try {
    f.add_node(OpKind::VarMean, {x}, VarAttrs{{0}, 1}, {"only"});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("prims.var_mean returns 2 value(s), but 1 name(s) were given"));
  }
}

// ---- Creation ----

TEST_F(InferTypes, Full_GivesShapeAndDtype) {
  expect_type(f.add(OpKind::Full, {}, FullAttrs{{2, 0, 4}, Scalar::from_float(1.5), DType::Float16}),
              DType::Float16, {2, 0, 4});
  expect_type(f.add(OpKind::Full, {}, FullAttrs{{}, Scalar::from_int(3), DType::Int32}), DType::Int32, {});
}

TEST_F(InferTypes, FullNegativeSize_Throws) {
  EXPECT_THAT(error(OpKind::Full, {}, FullAttrs{{2, -1}, Scalar::from_int(0), DType::Float32}),
              HasSubstr("prims.full(): shape [2, -1] has a negative size"));
}

TEST_F(InferTypes, FullWithArguments_Throws) {
  EXPECT_THAT(error(OpKind::Full, {x}, FullAttrs{{2}, Scalar::from_int(0), DType::Float32}),
              HasSubstr("expected 0 argument(s), got 1"));
}

TEST_F(InferTypes, Iota_GivesVector) {
  expect_type(f.add(OpKind::Iota, {}, IotaAttrs{5, 2, 3, DType::Int64}), DType::Int64, {5});
  expect_type(f.add(OpKind::Iota, {}, IotaAttrs{0, 0, 1, DType::Float32}), DType::Float32, {0});
}

TEST_F(InferTypes, IotaNegativeLength_Throws) {
  EXPECT_THAT(error(OpKind::Iota, {}, IotaAttrs{-1, 0, 1, DType::Int64}), HasSubstr("length must be >= 0, got -1"));
}

TEST_F(InferTypes, IotaBool_Throws) {
  EXPECT_THAT(error(OpKind::Iota, {}, IotaAttrs{3, 0, 1, DType::Bool}), HasSubstr("dtype must be numeric, got b8"));
}

// A failed add_node leaves the fusion unchanged.
TEST_F(InferTypes, FailedNode_AddsNothing) {
  const size_t values = f.values().size(), nodes = f.nodes().size();
  EXPECT_NE(error(OpKind::Add, {x, v}), "");
  EXPECT_EQ(f.values().size(), values);
  EXPECT_EQ(f.nodes().size(), nodes);
  EXPECT_TRUE(x->uses.empty());
}

}  // namespace
}  // namespace vf
