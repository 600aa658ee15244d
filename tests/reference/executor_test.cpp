// Tests of run_reference itself: argument checks, scalar inputs, outputs that are inputs, and
// inputs in non-contiguous layouts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "reference/compare.h"
#include "reference_test_util.h"

namespace vf {
namespace {

using ::testing::HasSubstr;
using testing::iota_tensor;
using testing::make_tensor;
using testing::values_of;

// The message of the UserError that fn throws ("" if none).
template <typename Fn>
std::string user_error_of(Fn&& fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

struct TwoInputFusion {
  Fusion f;
  TwoInputFusion() {
    Value* x = f.add_tensor_input("x", DType::Float32, {2, 3});
    Value* s = f.add_scalar_input("s", ScalarKind::Float);
    f.add_output(f.add(OpKind::Mul, {x, s}));
  }
};

TEST(ReferenceExecutor, WrongArgumentCount_Throws) {
  TwoInputFusion t;
  EXPECT_THAT(user_error_of([&] { run_reference(t.f, {iota_tensor(DType::Float32, {2, 3})}); }),
              HasSubstr("the fusion takes 2 argument(s), got 1"));
}

TEST(ReferenceExecutor, WrongShapeOrDtype_NamesInput) {
  TwoInputFusion t;
  EXPECT_THAT(user_error_of([&] { run_reference(t.f, {iota_tensor(DType::Float32, {2, 4}), Scalar::from_float(1)}); }),
              HasSubstr("input 'x' expects f32[2, 3], got f32[2, 4]"));
  EXPECT_THAT(user_error_of([&] { run_reference(t.f, {iota_tensor(DType::Float16, {2, 3}), Scalar::from_float(1)}); }),
              HasSubstr("input 'x' expects f32[2, 3], got f16[2, 3]"));
  EXPECT_THAT(user_error_of([&] { run_reference(t.f, {HostTensor{}, Scalar::from_float(1)}); }),
              HasSubstr("input 'x' expects f32[2, 3], got an undefined tensor"));
}

TEST(ReferenceExecutor, TensorScalarMixup_NamesInput) {
  TwoInputFusion t;
  EXPECT_THAT(user_error_of([&] { run_reference(t.f, {Scalar::from_float(1.5), Scalar::from_float(1)}); }),
              HasSubstr("input 'x' expects a tensor f32[2, 3], got a number (float 1.5)"));
  EXPECT_THAT(user_error_of([&] {
                run_reference(t.f, {iota_tensor(DType::Float32, {2, 3}), iota_tensor(DType::Float32, {2})});
              }),
              HasSubstr("input 's' expects a number of kind float, got a tensor f32[2]"));
}

TEST(ReferenceExecutor, StrongerScalarKind_Throws) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Int32, {2});
  Value* n = f.add_scalar_input("n", ScalarKind::Int);
  f.add_output(f.add(OpKind::Add, {x, n}));
  EXPECT_THAT(user_error_of([&] { run_reference(f, {iota_tensor(DType::Int32, {2}), Scalar::from_float(1.5)}); }),
              HasSubstr("input 'n' expects a number of kind int, got float 1.5"));
  // A bool where an int is expected is accepted as that int.
  EXPECT_EQ(values_of(run_reference(f, {iota_tensor(DType::Int32, {2}), Scalar::from_bool(true)})[0]),
            (std::vector<double>{1, 2}));
}

TEST(ReferenceExecutor, IntForFloatScalar_IsConverted) {
  TwoInputFusion t;
  auto out = run_reference(t.f, {iota_tensor(DType::Float32, {2, 3}), Scalar::from_int(2)});
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{0, 2, 4, 6, 8, 10}));
}

TEST(ReferenceExecutor, OutputThatIsInput_IsCopied) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {3});
  f.add_output(x);
  Value* y = f.add(OpKind::Neg, {x});
  f.add_output(y);
  f.add_output(y);
  HostTensor in = make_tensor(DType::Float32, {3}, {1, 2, 3});
  auto out = run_reference(f, {in});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_NE(out[0].storage(), in.storage());
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{1, 2, 3}));
  EXPECT_NE(out[1].storage(), out[2].storage());
  EXPECT_EQ(values_of(out[2]), (std::vector<double>{-1, -2, -3}));
}

TEST(ReferenceExecutor, RunNode_OnGivenArguments) {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float64, {2});
  Value* y = f.add(OpKind::Add, {x, f.add_constant(Scalar::from_float(0.5))});
  auto out = run_reference_node(*y->producer, {make_tensor(DType::Float64, {2}, {1, 2}), Scalar::from_float(0.25)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{1.25, 2.25}));
}

// A view of a fresh storage of storage_elems float32 elements holding 0.5, 1.75, 3.0, ...
HostTensor strided_view(const Shape& sizes, std::vector<int64_t> strides, int64_t offset, int64_t storage_elems) {
  HostTensor base = make_tensor(DType::Float32, {storage_elems}, {});
  for (int64_t i = 0; i < storage_elems; ++i)
    reference::store_as<double>(reference::contiguous_element(base, i), DType::Float32, 0.5 + 1.25 * i);
  return HostTensor::view_of(DType::Float32, Layout{sizes, std::move(strides), offset}, base.storage());
}

// exp, transpose + reshape, slice, broadcast, a reduction, pad and cat of one input.
Fusion layout_probe_fusion() {
  Fusion f;
  Value* x = f.add_tensor_input("x", DType::Float32, {2, 3});
  f.add_output(f.add(OpKind::Exp, {x}));
  f.add_output(f.add(OpKind::Reshape, {f.add(OpKind::Transpose, {x}, PermuteAttrs{{1, 0}})}, ReshapeAttrs{{6}}));
  f.add_output(f.add(OpKind::SlicePrim, {x}, SliceAttrs{{0, 1}, {2, 3}, {1, 1}}));
  f.add_output(f.add(OpKind::Sum, {x}, DimsAttrs{{1}}));
  f.add_output(f.add(OpKind::Pad, {x, f.add_constant(Scalar::from_float(0))}, PadAttrs{{{1, -1, 0}, {0, 0, 1}}}));
  f.add_output(f.add(OpKind::Cat, {x, x}, AxisAttrs{1}));
  f.add_output(f.add(OpKind::Flip, {x}, DimsAttrs{{0}}));
  return f;
}

TEST(ReferenceExecutor, NonContiguousInputs_MatchContiguousCopies) {
  struct LayoutCase {
    const char* name;
    HostTensor view;
  };
  const LayoutCase cases[] = {
      {"permuted", strided_view({2, 3}, {1, 2}, 0, 6)},
      {"strided", strided_view({2, 3}, {8, 2}, 1, 16)},
      {"expanded", strided_view({2, 3}, {0, 1}, 0, 3)},
      {"offset", strided_view({2, 3}, {3, 1}, 4, 10)},
  };
  Fusion f = layout_probe_fusion();
  for (const LayoutCase& c : cases) {
    HostTensor contiguous = make_tensor(DType::Float32, {2, 3}, values_of(c.view));
    auto expected = run_reference(f, {contiguous});
    auto actual = run_reference(f, {c.view});
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i) {
      EXPECT_TRUE(actual[i].layout().is_contiguous()) << c.name << " output " << i;
      Comparison cmp = compare_tensors(actual[i], expected[i], Tolerance{0, 0});
      EXPECT_TRUE(cmp.ok) << c.name << " output " << i << ": " << cmp.first_mismatch;
    }
  }
  // The permuted view reads element (i, j) from storage position 2j + i.
  EXPECT_EQ(values_of(cases[0].view), (std::vector<double>{0.5, 3.0, 5.5, 1.75, 4.25, 6.75}));
}

}  // namespace
}  // namespace vf
