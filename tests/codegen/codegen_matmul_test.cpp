// matmul in library segments on the CPU (the reference's loop) and, where there is a GPU, on CUDA
// (cuBLASLt), against the reference executor: every float dtype, transposed operands passed as
// layouts, broadcast and cross-broadcast batches, vectors, an operand read twice, an empty K, a
// stepped slice (copied first), linear with its bias in the call, operands off 16-byte boundaries,
// and the gelu epilogue.
#include <gtest/gtest.h>

#include "backend_test.h"

namespace vf {
namespace {

class Matmuls : public test::BackendTest {};

int library_calls(const Plan& plan) {
  int n = 0;
  for (const Segment& s : plan.segments) n += s.kind == SegmentKind::Library;
  return n;
}

TEST_P(Matmuls, EveryFloatDtype_TransposedOperand) {
  for (const char* dtype : {"f32", "f64", "bf16", "f16"}) {
    SCOPED_TRACE(dtype);
    const std::string d = dtype;
    const Plan plan = check_trace("def f(q, k):\n  # q: \"cpu " + d + "[2, 3, 40, 64]\"\n  # k: \"cpu " + d +
                                      "[2, 3, 24, 64]\"\n  kt = prims.transpose(k, (0, 1, 3, 2))\n"
                                      "  s = prims.matmul(q, kt)\n  return s\n",
                                  64);
    EXPECT_EQ(library_calls(plan), 1);
    EXPECT_EQ(plan.kernel_count(), 0);
  }
}

TEST_P(Matmuls, BatchesAndVectors_MatchReference) {
  check_trace(
      "def f(a, b, c, v, w):\n  # a: \"cpu f32[2, 1, 5, 7]\"\n  # b: \"cpu f32[3, 7, 4]\"\n  # c: \"cpu f32[7, 4]\"\n"
      "  # v: \"cpu f32[7]\"\n  # w: \"cpu f32[5, 7]\"\n"
      "  t0 = prims.matmul(a, b)\n  t1 = prims.matmul(a, c)\n  t2 = prims.matmul(v, c)\n  t3 = prims.matmul(w, v)\n"
      "  t4 = prims.matmul(v, v)\n  wt = prims.transpose(w, (1, 0))\n  t5 = prims.matmul(w, wt)\n"
      "  return (t0, t1, t2, t3, t4, t5)\n",
      7);
}

TEST_P(Matmuls, EmptyKAndSteppedSlice_MatchReference) {
  const Plan plan = check_trace(
      "def f(a, b, x, w):\n  # a: \"cpu f32[4, 0]\"\n  # b: \"cpu f32[0, 3]\"\n  # x: \"cpu f32[6, 8]\"\n"
      "  # w: \"cpu f32[8, 10]\"\n  t0 = prims.matmul(a, b)\n"
      "  ws = prims.slice_prim(w, (0, 0), (8, 10), (1, 2))\n  t1 = prims.matmul(x, ws)\n  return (t0, t1)\n",
      8);
  EXPECT_EQ(plan.kernel_count(), 1);  // the slice, copied contiguous
}

// linear's bias is added in the call (cuBLASLt's bias epilogue), before the one rounding, in every
// float dtype.
TEST_P(Matmuls, LinearWithBiasEveryDtype_MatchesReference) {
  for (const char* dtype : {"bf16", "f16", "f32", "f64"}) {
    SCOPED_TRACE(dtype);
    const std::string d = dtype;
    const Plan plan = check_trace("def f(x, w, b):\n  # x: \"cpu " + d + "[4, 33, 96]\"\n  # w: \"cpu " + d +
                                      "[80, 96]\"\n  # b: \"cpu " + d + "[80]\"\n"
                                      "  t0 = ltorch.linear(x, w, b)\n  t1 = prims.tanh(t0)\n  return (t0, t1)\n",
                                  96);
    EXPECT_EQ(library_calls(plan), 1);
    EXPECT_EQ(plan.kernel_count(), 1);  // the tanh
  }
}

// Operands that start off a 16-byte boundary (a slice one element in, with an odd leading
// dimension, and a bias three elements in): the call asks for an algorithm for that alignment.
TEST_P(Matmuls, MisalignedOperandsAndBias_MatchReference) {
  const Plan plan = check_trace(
      "def f(x, w, v):\n  # x: \"cpu f32[8, 17]\"\n  # w: \"cpu f32[12, 16]\"\n  # v: \"cpu f32[20]\"\n"
      "  a = prims.slice_prim(x, (0, 1), (8, 17), (1, 1))\n  b = prims.slice_prim(v, (3,), (15,), (1,))\n"
      "  t0 = ltorch.linear(a, w, b)\n  return t0\n",
      16);
  EXPECT_EQ(plan.kernel_count(), 0);
}

// Attention's output written in the order of the transpose after it: one GEMM call per batch of
// the first dim, each a strided batch over the heads with a leading dimension of heads x 16.
TEST_P(Matmuls, ResultInTransposeOrder_MatchesReference) {
  const Plan plan = check_trace(
      "def f(att, v):\n  # att: \"cpu bf16[2, 4, 8, 8]\"\n  # v: \"cpu bf16[2, 4, 8, 16]\"\n"
      "  y = prims.matmul(att, v)\n  t = prims.transpose(y, (0, 2, 1, 3))\n  o = prims.reshape(t, (2, 8, 64))\n"
      "  return o\n",
      8);
  EXPECT_EQ(plan.kernel_count(), 0);
}

// matmul_gelu (cuBLASLt's GELU epilogue) against the reference's own: with and without a bias, the
// matmul's result written too where it is read (the aux output) or not, batched (the aux output's
// batch stride), in each dtype it takes.
TEST_P(Matmuls, GeluEpilogueEveryDtype_MatchesReference) {
  for (const char* dtype : {"bf16", "f16", "f32"}) {
    SCOPED_TRACE(dtype);
    const std::string d = dtype;
    const Plan plan = check_trace(
        "def f(x, w, b, p, q):\n  # x: \"cpu " + d + "[4, 33, 96]\"\n  # w: \"cpu " + d + "[80, 96]\"\n  # b: \"cpu " + d +
            "[80]\"\n  # p: \"cpu " + d + "[3, 16, 40]\"\n  # q: \"cpu " + d + "[3, 40, 24]\"\n"
            "  wt = prims.transpose(w, (1, 0))\n  y0, r0 = prims.matmul_gelu(x, wt, b)\n  t0 = prims.neg(r0)\n"
            "  y1, r1 = prims.matmul_gelu(x, wt)\n  y2, r2 = prims.matmul_gelu(p, q)\n"
            "  return (y0, t0, y1, y2, r2)\n",
        96);
    EXPECT_EQ(library_calls(plan), 3);
    EXPECT_EQ(plan.kernel_count(), 1);  // the neg
  }
}

// Thunder's bf16 linear + tanh gelu, whose gelu folds into the call, against the program's own
// reference (which rounds the linear's result before the gelu), the linear's result returned too.
TEST_P(Matmuls, ThunderLinearGeluFolded_MatchesProgram) {
  std::string gelu = "  h = ltorch.linear(x, w, b)\n  c = prims.convert_element_type(h, dtypes.float32)\n";
  auto op = [&](const std::string& out, const std::string& expr) {  // f32 math rounded through bf16
    gelu += "  " + out + "_ = " + expr + "\n  " + out + "_b = prims.convert_element_type(" + out +
            "_, dtypes.bfloat16)\n  " + out + " = prims.convert_element_type(" + out + "_b, dtypes.float32)\n";
  };
  op("x2", "prims.mul(c, c)");
  op("x3", "prims.mul(x2, c)");
  op("s", "prims.mul(0.044715, x3)");
  op("i", "prims.add(c, s)");
  op("u", "prims.mul(0.7978845608028654, i)");
  op("t", "prims.tanh(u)");
  op("o", "prims.add(1.0, t)");
  op("hx", "prims.mul(0.5, c)");
  gelu += "  g = prims.mul(hx, o)\n  y = prims.convert_element_type(g, dtypes.bfloat16)\n  return (y, h)\n";
  const Plan plan = check_trace(
      "def f(x, w, b):\n  # x: \"cpu bf16[64, 96]\"\n  # w: \"cpu bf16[128, 96]\"\n  # b: \"cpu bf16[128]\"\n" + gelu, 96);
  EXPECT_EQ(plan.kernel_count(), 0);
  ASSERT_FALSE(plan.rewrites.empty());
  EXPECT_NE(plan.rewrites.back().find("(y, h) = matmul_gelu"), std::string::npos) << plan.rewrites.back();
}

// matmul_add (cuBLASLt's C with beta = 1, the bias after it) against the reference's own, in every
// float dtype: with and without a bias, batched (C's batch stride), c a slice one row in (C's own
// offset and alignment).
TEST_P(Matmuls, MatmulAddEveryDtype_MatchesReference) {
  for (const char* dtype : {"bf16", "f16", "f32", "f64"}) {
    SCOPED_TRACE(dtype);
    const std::string d = dtype;
    const Plan plan = check_trace(
        "def f(x, w, b, c, p, q):\n  # x: \"cpu " + d + "[4, 33, 96]\"\n  # w: \"cpu " + d + "[80, 96]\"\n  # b: \"cpu " +
            d + "[80]\"\n  # c: \"cpu " + d + "[4, 34, 80]\"\n  # p: \"cpu " + d + "[3, 16, 40]\"\n  # q: \"cpu " + d +
            "[3, 40, 24]\"\n  wt = prims.transpose(w, (1, 0))\n"
            "  cs = prims.slice_prim(c, (0, 1, 0), (4, 34, 80), (1, 1, 1))\n  y0 = prims.matmul_add(x, wt, cs, b)\n"
            "  y1 = prims.matmul_add(x, wt, cs)\n  pq = prims.matmul(p, q)\n  y2 = prims.matmul_add(p, q, pq)\n"
            "  return (y0, y1, y2)\n",
        96);
    EXPECT_EQ(library_calls(plan), 4);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Matmuls, ::testing::Values(Device::Cpu, Device::Cuda),
                         [](const auto& info) { return std::string(device_name(info.param)); });

}  // namespace
}  // namespace vf
