// Planning of matmuls as library segments: operands that are views of placed storage passed with
// their layout (an alias segment, no kernel), computed operands and copies written first by a
// kernel, the result a buffer that later kernels read; values against the reference executor.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "run_plan.h"

namespace vf {
namespace {

using ::testing::HasSubstr;
using test::library;

int count(const Plan& plan, SegmentKind kind) {
  int n = 0;
  for (const Segment& s : plan.segments) n += s.kind == kind;
  return n;
}

// Attention scores q @ k^T: the transpose is a layout, not a copy; no kernel at all.
TEST(LibraryPlan, TransposedOperand_PassedAsLayout) {
  const test::PlanRun r = test::run_plan_against_reference(R"(
def f(q, k):
  # q: "cpu f32[2, 3, 8, 16]"
  # k: "cpu f32[2, 3, 8, 16]"
  kt = prims.transpose(k, (0, 1, 3, 2))
  s = prims.matmul(q, kt)
  return (s,)
)");
  EXPECT_EQ(r.plan.kernel_count(), 0);
  EXPECT_EQ(count(r.plan, SegmentKind::Library), 1);
  EXPECT_THAT(library(r.plan).note, HasSubstr("b = kt, passed as layout: a view of k, strides [384, 128, 1, 16]"));
  EXPECT_EQ(r.plan.view_ops.at(0).decision, ViewDecision::Alias);
}

// A computed operand is written first (contiguous) by a kernel; the result's consumer (tanh) is a
// kernel after the call.
TEST(LibraryPlan, ComputedOperand_WrittenFirst) {
  const test::PlanRun r = test::run_plan_against_reference(R"(
def f(x, w):
  # x: "cpu f32[4, 6, 8]"
  # w: "cpu f32[8, 5]"
  e = prims.exp(x)
  y = prims.matmul(e, w)
  t = prims.tanh(y)
  return (t,)
)");
  EXPECT_EQ(r.plan.kernel_count(), 2);
  ASSERT_EQ(r.plan.segments.size(), 3u);
  EXPECT_EQ(r.plan.segments[1].kind, SegmentKind::Library);
  EXPECT_THAT(r.plan.segments[1].note, HasSubstr("a = e, copied, contiguous: computed by exp"));
  EXPECT_THAT(r.plan.segments[1].note, HasSubstr("b = w, read in place"));
}

// A reshape after a permute is not a view: the operand is copied, and the note says why.
TEST(LibraryPlan, ReshapeAfterPermute_Copied) {
  const test::PlanRun r = test::run_plan_against_reference(R"(
def f(x, w):
  # x: "cpu f32[4, 6, 8]"
  # w: "cpu f32[48, 3]"
  p = prims.transpose(x, (0, 2, 1))
  m = prims.reshape(p, (4, 48))
  y = prims.matmul(m, w)
  return (y,)
)");
  EXPECT_EQ(r.plan.kernel_count(), 1);
  EXPECT_THAT(library(r.plan).note, HasSubstr("a = m, copied, contiguous: merging dims"));
  EXPECT_EQ(r.plan.view_ops.at(1).decision, ViewDecision::Copy);
  EXPECT_THAT(r.plan.view_ops.at(1).reason, HasSubstr("a matmul operand, merging dims"));
}

// linear with a bias: the weight's transpose is a layout and the bias an operand of the call, read
// in place; the consumer (neg) is the one kernel.
TEST(LibraryPlan, LinearWithBias_BiasInTheCall) {
  const test::PlanRun r = test::run_plan_against_reference(R"(
def f(x, w, b):
  # x: "cpu bf16[2, 7, 16]"
  # w: "cpu bf16[12, 16]"
  # b: "cpu bf16[12]"
  t0 = ltorch.linear(x, w, b)
  t1 = prims.neg(t0)
  return (t1,)
)");
  EXPECT_EQ(r.plan.kernel_count(), 1);
  EXPECT_THAT(library(r.plan).note, HasSubstr("b = t0__weight_t, passed as layout: a view of w, strides [1, 16]"));
  EXPECT_THAT(library(r.plan).note, HasSubstr("bias = b, read in place, strides [1]"));
}

// A bias whose elements are not adjacent (a stepped slice, a 0-dim bias broadcast) is copied
// first, and the note says why; a contiguous slice of a longer vector is passed as layout.
TEST(LibraryPlan, SteppedOrBroadcastBias_Copied) {
  const test::PlanRun r = test::run_plan_against_reference(R"(
def f(x, w, v, s):
  # x: "cpu f32[5, 16]"
  # w: "cpu f32[12, 16]"
  # v: "cpu f32[30]"
  # s: "cpu f32[]"
  b0 = prims.slice_prim(v, (0,), (24,), (2,))
  t0 = ltorch.linear(x, w, b0)
  t1 = ltorch.linear(x, w, s)
  b2 = prims.slice_prim(v, (3,), (15,), (1,))
  t2 = ltorch.linear(x, w, b2)
  return (t0, t1, t2)
)");
  std::vector<const Segment*> calls;
  for (const Segment& seg : r.plan.segments)
    if (seg.kind == SegmentKind::Library) calls.push_back(&seg);
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_THAT(calls[0]->note, HasSubstr("bias = b0, copied, contiguous: a view of v whose elements are 2 apart"));
  EXPECT_THAT(calls[1]->note, HasSubstr("bias = t1__bias, copied, contiguous: a view of s whose elements are 0 apart"));
  EXPECT_THAT(calls[2]->note, HasSubstr("bias = b2, passed as layout: a view of v, strides [1]"));
  EXPECT_EQ(r.plan.kernel_count(), 2);
}

// Attention's output, (att @ v).transpose(1, 2).reshape(B, T, C): the call writes its result in
// the transpose's order, so the transpose and the reshape are views and no kernel copies it.
TEST(LibraryPlan, ResultInTheOrderOfItsTranspose_NoCopy) {
  const test::PlanRun r = test::run_plan_against_reference(R"(
def f(att, v):
  # att: "cpu f32[2, 4, 8, 8]"
  # v: "cpu f32[2, 4, 8, 16]"
  y = prims.matmul(att, v)
  t = prims.transpose(y, (0, 2, 1, 3))
  o = prims.reshape(t, (2, 8, 64))
  return (o,)
)");
  EXPECT_EQ(r.plan.kernel_count(), 0);
  EXPECT_THAT(library(r.plan).note, HasSubstr("result written in the order of its transpose t, strides [512, 16, 64, 1]"));
  EXPECT_EQ(r.plan.view_ops.at(1).decision, ViewDecision::Alias);
}

// A transpose that moves the matrices' last dim (the GEMM writes rows) leaves the result
// row-major: the returned transpose is a strided view of it.
TEST(LibraryPlan, TransposeOfTheLastDim_ResultRowMajor) {
  const test::PlanRun r = test::run_plan_against_reference(R"(
def f(a, b):
  # a: "cpu f32[3, 5, 7]"
  # b: "cpu f32[3, 7, 6]"
  y = prims.matmul(a, b)
  t = prims.transpose(y, (0, 2, 1))
  return (t,)
)");
  EXPECT_EQ(r.plan.kernel_count(), 0);
  EXPECT_THAT(library(r.plan).note, ::testing::Not(HasSubstr("result written in the order")));
  EXPECT_EQ(r.plan.outputs.at(0).layout.strides, (std::vector<int64_t>{30, 1, 6}));
}

// A residual stream between matmuls (each operand computed from it): the kernel that writes an
// operand also writes the stream where computing it again would read more than twice its bytes,
// so that no later kernel computes it from every layer before it (which read x, a1, a2, ...).
TEST(LibraryPlan, ResidualBetweenMatmuls_WrittenWhereRecomputingCostsMore) {
  const test::PlanRun r = test::run_plan_against_reference(R"(
def f(x, w1, w2, w3, w4):
  # x: "cpu f32[16, 32]"
  # w1: "cpu f32[32, 32]"
  # w2: "cpu f32[32, 32]"
  # w3: "cpu f32[32, 32]"
  # w4: "cpu f32[32, 32]"
  h0 = prims.exp(x)
  o0 = prims.neg(h0)
  a1 = prims.matmul(o0, w1)
  g1 = prims.tanh(a1)
  h1 = prims.add(h0, g1)
  o1 = prims.neg(h1)
  a2 = prims.matmul(o1, w2)
  g2 = prims.tanh(a2)
  h2 = prims.add(h1, g2)
  o2 = prims.neg(h2)
  a3 = prims.matmul(o2, w3)
  g3 = prims.tanh(a3)
  h3 = prims.add(h2, g3)
  o3 = prims.neg(h3)
  a4 = prims.matmul(o3, w4)
  g4 = prims.tanh(a4)
  h4 = prims.add(h3, g4)
  return (h4,)
)");
  constexpr int64_t kTensor = 16 * 32 * 4;
  for (const Segment& s : r.plan.segments) {
    if (s.kind == SegmentKind::Kernel) {
      EXPECT_LE(s.bytes_read, 3 * kTensor) << s.note;
    }
  }
  EXPECT_EQ(count(r.plan, SegmentKind::Library), 4);
  EXPECT_EQ(r.plan.kernel_count(), 5);
}

// A returned value that an operand's kernel computes (a forward's saved statistics) is written by
// that kernel, not computed again by a kernel at the end.
TEST(LibraryPlan, ReturnedValueBesideAnOperand_WrittenByItsKernel) {
  const test::PlanRun r = test::run_plan_against_reference(R"(
def f(x, w):
  # x: "cpu f32[16, 32]"
  # w: "cpu f32[32, 8]"
  m = prims.mul(x, x)
  e = prims.exp(m)
  y = prims.matmul(e, w)
  return (m, y)
)");
  EXPECT_EQ(r.plan.kernel_count(), 1);
  EXPECT_THAT(r.plan.segments.at(0).note, HasSubstr("also writes m"));
}

// Operands of two matmuls computed from one tensor (a SiLU-gated MLP's backward: the gate's
// activation times two others): one kernel writes both, reading the shared tensor once, and the
// second call reads what it wrote.
TEST(LibraryPlan, LaterOperandsFromASharedTensor_OneKernel) {
  const test::PlanRun r = test::run_plan_against_reference(R"(
def f(a, b, g, w1, w2):
  # a: "cpu f32[16, 32]"
  # b: "cpu f32[16, 32]"
  # g: "cpu f32[16, 32]"
  # w1: "cpu f32[32, 8]"
  # w2: "cpu f32[32, 8]"
  s = prims.neg(a)
  e = prims.exp(s)
  o1 = prims.mul(e, g)
  m1 = prims.matmul(o1, w1)
  o2 = prims.mul(e, b)
  m2 = prims.matmul(o2, w2)
  return (m1, m2)
)");
  EXPECT_EQ(r.plan.kernel_count(), 1);
  EXPECT_EQ(count(r.plan, SegmentKind::Library), 2);
  EXPECT_EQ(r.plan.segments.at(0).bytes_read, 3 * 16 * 32 * 4);
  EXPECT_THAT(r.plan.segments.back().note, HasSubstr("a = o2, written by segment #0"));
}

// A float value that later kernels read, widened from a bf16 one the operand's kernel computes, is
// written as the bf16 (half the bytes); the later kernel widens it as it reads.
TEST(LibraryPlan, CarriedWidenedValue_WrittenNarrow) {
  const test::PlanRun r = test::run_plan_against_reference(R"(
def f(x, y, z, w):
  # x: "cpu f32[16, 32]"
  # y: "cpu f32[16, 32]"
  # z: "cpu f32[16, 32]"
  # w: "cpu f32[32, 32]"
  p = prims.mul(x, y)
  a = prims.mul(p, z)
  ab = prims.convert_element_type(a, dtypes.bfloat16)
  rb = prims.reshape(ab, (16, 32))
  af = prims.convert_element_type(rb, dtypes.float32)
  o = prims.neg(af)
  m = prims.matmul(o, w)
  t = prims.tanh(m)
  r = prims.add(af, t)
  return (r,)
)");
  ASSERT_EQ(r.plan.kernel_count(), 2);
  const Segment& first = r.plan.segments.at(0);
  EXPECT_EQ(first.bytes_written, 16 * 32 * (4 + 2));  // o in f32, the carried value in bf16
  EXPECT_THAT(first.note, HasSubstr("also writes rb"));
  EXPECT_EQ(r.plan.segments.at(2).bytes_read, 16 * 32 * (2 + 4));  // rb and m
}

}  // namespace
}  // namespace vf
