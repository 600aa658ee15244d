// Tests of the reference's scatter_add and scatter_max, and of index_add and embedding_backward as the trace reader
// writes them (scatter_add with a spread index): hand-worked sums, the accumulation in float32 for
// the half types with one rounding, integer wrap, and the errors.
#include <gtest/gtest.h>

#include <cstdint>

#include "base/error.h"
#include "frontend/trace_reader.h"
#include "reference_test_util.h"

namespace vf {
namespace {

using testing::ints_of;
using testing::make_int_tensor;
using testing::make_tensor;
using testing::run_one;
using testing::values_of;

// scatter_add (or `op`)(a, index, src, dim) of one node.
HostTensor scatter(const HostTensor& a, const HostTensor& index, const HostTensor& src, int64_t dim,
                   OpKind op = OpKind::ScatterAdd) {
  Fusion f;
  Value* va = f.add_tensor_input("a", a.dtype(), a.shape());
  Value* vi = f.add_tensor_input("index", index.dtype(), index.shape());
  Value* vs = f.add_tensor_input("src", src.dtype(), src.shape());
  f.add_output(f.add(op, {va, vi, vs}, AxisAttrs{dim}));
  return run_one(f, {a, index, src});
}

// dim 0: out[index[i][j]][j] += src[i][j]; index [2, 2] within src [2, 3]: src's last column unread.
TEST(ReferenceScatter, ScatterAddDim0_SumsRepeatedTargets) {
  const HostTensor a = make_tensor(DType::Float32, {3, 2}, {1, 1, 1, 1, 1, 1});
  const HostTensor index = make_int_tensor(DType::Int64, {2, 2}, {2, 0, 2, 2});
  const HostTensor src = make_tensor(DType::Float32, {2, 3}, {10, 20, 99, 30, 40, 99});
  // (0,0)->[2][0] += 10, (0,1)->[0][1] += 20, (1,0)->[2][0] += 30, (1,1)->[2][1] += 40.
  EXPECT_EQ(values_of(scatter(a, index, src, 0)), (std::vector<double>{1, 21, 1, 1, 41, 41}));
}

// dim 1 (written -1): out[i][index[i][j]] += src[i][j]; int32 indices.
TEST(ReferenceScatter, ScatterAddLastDim_AlongRows) {
  const HostTensor a = make_tensor(DType::Float64, {2, 4}, {0, 0, 0, 0, 5, 5, 5, 5});
  const HostTensor index = make_int_tensor(DType::Int32, {2, 3}, {3, 3, 0, 1, 2, 1});
  const HostTensor src = make_tensor(DType::Float64, {2, 3}, {1, 2, 4, 8, 16, 32});
  EXPECT_EQ(values_of(scatter(a, index, src, -1)), (std::vector<double>{4, 0, 0, 3, 5, 45, 21, 5}));
}

// bf16: 256 + eight ones. Rounded after each add (bf16's step at 256 is 2) it would stay 256; the
// sum is taken in float32 and rounded once: 264.
TEST(ReferenceScatter, BFloat16_AccumulatesInFloat32AndRoundsOnce) {
  const HostTensor a = make_tensor(DType::BFloat16, {1}, {256});
  const HostTensor index = make_int_tensor(DType::Int64, {8}, {0, 0, 0, 0, 0, 0, 0, 0});
  const HostTensor src = make_tensor(DType::BFloat16, {8}, {1, 1, 1, 1, 1, 1, 1, 1});
  EXPECT_EQ(values_of(scatter(a, index, src, 0)), (std::vector<double>{264}));
}

// int8 wraps: 100 + 100 + 100 = 300 = 44 (mod 256).
TEST(ReferenceScatter, Int8_Wraps) {
  const HostTensor a = make_int_tensor(DType::Int8, {2}, {100, -128});
  const HostTensor index = make_int_tensor(DType::Int64, {3}, {0, 0, 1});
  const HostTensor src = make_int_tensor(DType::Int8, {3}, {100, 100, -1});
  EXPECT_EQ(ints_of(scatter(a, index, src, 0)), (std::vector<int64_t>{44, 127}));
}

// scatter_max: the largest of a's element and what lands on it; an element nothing lands on keeps
// a's (-7 at [1]), one whose sources are all smaller too (100 at [3]); negatives compare as signed.
TEST(ReferenceScatter, ScatterMax_LargestOfBaseAndSources) {
  const HostTensor a = make_int_tensor(DType::Int32, {4}, {0, -7, -50, 100});
  const HostTensor index = make_int_tensor(DType::Int64, {6}, {0, 2, 2, 3, 0, 2});
  const HostTensor src = make_int_tensor(DType::Int32, {6}, {-3, -9, -40, 99, 5, -41});
  EXPECT_EQ(ints_of(scatter(a, index, src, 0, OpKind::ScatterMax)), (std::vector<int64_t>{5, -7, -9, 100}));
  const HostTensor wide = make_int_tensor(DType::Int64, {2}, {INT64_MIN, 0});
  EXPECT_EQ(ints_of(scatter(wide, make_int_tensor(DType::Int64, {1}, {0}), make_int_tensor(DType::Int64, {1}, {INT64_MIN + 1}),
                            0, OpKind::ScatterMax)),
            (std::vector<int64_t>{INT64_MIN + 1, 0}));
}

TEST(ReferenceScatter, IndexOutOfRange_IsUserErrorNamingIt) {
  const HostTensor a = make_tensor(DType::Float32, {3}, {0, 0, 0});
  const HostTensor src = make_tensor(DType::Float32, {2}, {1, 1});
  for (int64_t bad : {3, -1}) {
    try {
      scatter(a, make_int_tensor(DType::Int64, {2}, {0, bad}), src, 0);
      FAIL() << "no error for index " << bad;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("index " + std::to_string(bad) + " is out of range for dim 0 of size 3"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(ReferenceScatter, BadArguments_AreUserErrors) {
  Fusion f;
  Value* a = f.add_tensor_input("a", DType::Float32, {3, 4});
  Value* fi = f.add_tensor_input("fi", DType::Float32, {3, 4});
  Value* i = f.add_tensor_input("i", DType::Int64, {3, 5});
  Value* ok = f.add_tensor_input("ok", DType::Int64, {2, 4});
  Value* s = f.add_tensor_input("s", DType::Float32, {3, 4});
  Value* h = f.add_tensor_input("h", DType::Float16, {3, 4});
  Value* b = f.add_tensor_input("b", DType::Bool, {3, 4});
  EXPECT_THROW(f.add(OpKind::ScatterAdd, {a, fi, s}, AxisAttrs{0}), UserError);  // a float index
  EXPECT_THROW(f.add(OpKind::ScatterAdd, {a, i, s}, AxisAttrs{0}), UserError);   // index wider than src
  EXPECT_THROW(f.add(OpKind::ScatterAdd, {a, ok, h}, AxisAttrs{0}), UserError);  // src of another dtype
  EXPECT_THROW(f.add(OpKind::ScatterAdd, {b, ok, b}, AxisAttrs{0}), UserError);  // bool
  EXPECT_THROW(f.add(OpKind::ScatterAdd, {a, ok, s}, AxisAttrs{2}), UserError);  // dim out of range
  EXPECT_NO_THROW(f.add(OpKind::ScatterAdd, {a, ok, s}, AxisAttrs{-2}));
  try {  // scatter_max takes integers only
    f.add(OpKind::ScatterMax, {a, ok, s}, AxisAttrs{0});
    FAIL() << "no error for scatter_max of f32";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("a must have an integer dtype, got f32"), std::string::npos) << e.what();
  }
}

// prims.index_add: value's slice k goes to a's slice index[k] along dim.
TEST(ReferenceScatter, IndexAdd_AddsSlices) {
  const Fusion f = read_trace(
      "def f(a, index, v):\n  # a: \"cpu f32[2, 3]\"\n  # index: \"cpu i64[4]\"\n  # v: \"cpu f32[2, 4]\"\n"
      "  t0 = prims.index_add(a, index, v, 1)\n  return t0\n");
  const HostTensor out = run_one(f, {make_tensor(DType::Float32, {2, 3}, {0, 0, 0, 100, 100, 100}),
                                     make_int_tensor(DType::Int64, {4}, {2, 0, 2, 1}),
                                     make_tensor(DType::Float32, {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})});
  EXPECT_EQ(values_of(out), (std::vector<double>{2, 4, 4, 106, 108, 112}));
}

// embedding_backward: each token's gradient row added at its index's row; the padding row gets none.
TEST(ReferenceScatter, EmbeddingBackward_SumsRowsButPadding) {
  const std::string head = "def f(g, idx):\n  # g: \"cpu f32[2, 2, 2]\"\n  # idx: \"cpu i64[2, 2]\"\n";
  const HostTensor g = make_tensor(DType::Float32, {2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  const HostTensor idx = make_int_tensor(DType::Int64, {2, 2}, {3, 0, 3, 1});
  const Fusion plain = read_trace(head + "  t0 = ltorch.embedding_backward(g, idx, 4, -1, False, False)\n  return t0\n");
  EXPECT_EQ(values_of(run_one(plain, {g, idx})), (std::vector<double>{3, 4, 7, 8, 0, 0, 6, 8}));
  const Fusion padded = read_trace(head + "  t0 = prims.embedding_backward(g, idx, 4, 3, False, False)\n  return t0\n");
  EXPECT_EQ(values_of(run_one(padded, {g, idx})), (std::vector<double>{3, 4, 7, 8, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace vf
