// passes/fuse_matmul_epilogues: which tanh gelus of a matmul's result fold into the call (Thunder's
// bf16 form after its round trips are gone, float32 spellings), which do not (another reader of an
// op between, an erf gelu, an aux output of a width cuBLASLt cannot write, the option off), the
// plans and values on the CPU backend, and the accuracy of the folded bf16 gelu against float64.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "passes/elide_round_trip_casts.h"
#include "passes/fuse_matmul_epilogues.h"
#include "run_plan.h"
#include "segment/plan_fusion.h"

namespace vf {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using test::library;

// nanoGPT's MLP up-projection as Thunder traces it in bf16: linear(x, w, b) named h, then the gelu
// region of the nanoGPT step (model_regions/nanogpt_004.py: every op rounds to bf16), whose result
// t2641 is returned, with `extra` returned after it. x is [rows, 64], w [cols, 64].
std::string thunder_mlp(int64_t rows, int64_t cols, const std::string& extra = "") {
  std::ifstream file(std::string(VF_SOURCE_DIR) + "/tests/segment/model_regions/nanogpt_004.py");
  std::stringstream region;
  region << file.rdbuf();
  std::string body = region.str();
  const std::string marker = "\"cpu bf16[8, 1024, 3072]\"\n";
  const size_t start = body.find(marker), end = body.find("  return");
  EXPECT_NE(start, std::string::npos) << "not the gelu region:\n" << body;
  body = body.substr(start + marker.size(), end - start - marker.size());
  const std::string c = std::to_string(cols);
  return "def f(x, w, b):\n  # x: \"cpu bf16[" + std::to_string(rows) + ", 64]\"\n  # w: \"cpu bf16[" + c +
         ", 64]\"\n  # b: \"cpu bf16[" + c + "]\"\n  t7894 = ltorch.linear(x, w, b)\n" + body +
         "  return (t2641" + extra + ")\n";
}

std::shared_ptr<Fusion> elided(const std::string& text) {
  auto f = std::make_shared<Fusion>(read_trace(text));
  RewrittenFusion r = elide_round_trip_casts(*f, true);
  return r.fusion ? std::const_pointer_cast<Fusion>(r.fusion) : f;
}

int count_op(const Fusion& f, OpKind op) {
  int n = 0;
  for (const auto& node : f.nodes()) n += node->op == op;
  return n;
}

// Thunder's bf16 gelu after a linear: one call whose epilogue adds the bias and computes the gelu;
// no kernel, no buffer for the linear's result.
TEST(FuseMatmulEpilogues, ThunderBf16Gelu_FoldsIntoTheCall) {
  const RewrittenFusion r = fuse_matmul_epilogues(*elided(thunder_mlp(24, 32)));
  ASSERT_NE(r.fusion, nullptr);
  EXPECT_EQ(count_op(*r.fusion, OpKind::MatmulGelu), 1);
  EXPECT_EQ(count_op(*r.fusion, OpKind::Tanh), 0);
  EXPECT_EQ(r.fusion->nodes().size(), 2u);  // the weight's transpose and the call
  EXPECT_THAT(r.notes.at(0), HasSubstr("(t2641, t7894) = matmul_gelu: the tanh gelu t2641 of matmul t7894"));
  EXPECT_THAT(r.notes.at(0), Not(HasSubstr("aux")));

  const test::PlanRun run = test::run_plan_against_reference(thunder_mlp(24, 32));
  EXPECT_EQ(run.plan.kernel_count(), 0);
  EXPECT_THAT(library(run.plan).note, HasSubstr("epilogue: bias, tanh gelu"));
  EXPECT_EQ(run.plan.allocated_bytes, 24 * 32 * 2);  // the gelu alone
}

// The linear's result returned too (as Thunder's forward saves it for the backward): the call
// writes it as the epilogue's aux output.
TEST(FuseMatmulEpilogues, MatmulResultAlsoReturned_AuxOutput) {
  const std::string text = thunder_mlp(24, 32, ", t7894");
  const RewrittenFusion r = fuse_matmul_epilogues(*elided(text));
  ASSERT_NE(r.fusion, nullptr);
  EXPECT_THAT(r.notes.at(0), HasSubstr("t7894 is written too (the epilogue's aux output)"));
  const test::PlanRun run = test::run_plan_against_reference(text);
  EXPECT_EQ(run.plan.kernel_count(), 0);
  EXPECT_THAT(library(run.plan).note, HasSubstr("epilogue: bias, tanh gelu; aux output t7894 (before the gelu)"));
  EXPECT_EQ(run.plan.allocated_bytes, 2 * 24 * 32 * 2);
}

// An aux output needs a row of a multiple of 8 elements (cuBLASLt's leading dimension): 12
// columns fold only where the linear's result is not read elsewhere.
TEST(FuseMatmulEpilogues, AuxOfTwelveColumns_NotFolded) {
  EXPECT_EQ(fuse_matmul_epilogues(*elided(thunder_mlp(24, 12, ", t7894"))).fusion, nullptr);
  EXPECT_NE(fuse_matmul_epilogues(*elided(thunder_mlp(24, 12))).fusion, nullptr);
  const test::PlanRun run = test::run_plan_against_reference(thunder_mlp(24, 12, ", t7894"));
  EXPECT_EQ(run.plan.kernel_count(), 1);
}

// float32 spellings: pow(x, 3), products and sums the other way round, no casts.
TEST(FuseMatmulEpilogues, Float32PowForm_Folds) {
  const std::string text = R"(
def f(a, b):
  # a: "cpu f32[2, 16, 24]"
  # b: "cpu f32[24, 40]"
  x = prims.matmul(a, b)
  c = prims.pow(x, 3.0)
  s = prims.mul(c, 0.044715)
  i = prims.add(s, x)
  u = prims.mul(i, 0.7978845608028654)
  t = prims.tanh(u)
  o = prims.add(t, 1.0)
  h = prims.mul(x, 0.5)
  g = prims.mul(o, h)
  return (g,)
)";
  const RewrittenFusion r = fuse_matmul_epilogues(*std::make_shared<Fusion>(read_trace(text)));
  ASSERT_NE(r.fusion, nullptr);
  EXPECT_EQ(r.fusion->nodes().size(), 1u);
  const test::PlanRun run = test::run_plan_against_reference(text);
  EXPECT_EQ(run.plan.kernel_count(), 0);
}

// Each of the gelu's eight products and sums written either way round (256 spellings): every one
// folds into the call and matches the reference.
TEST(FuseMatmulEpilogues, EveryOperandOrder_Folds) {
  for (int order = 0; order < 256; ++order) {
    SCOPED_TRACE(order);
    int bit = 0;
    auto op = [&](const std::string& name, const std::string& p, const std::string& q) {
      const bool swap = (order >> bit++) & 1;
      return "prims." + name + "(" + (swap ? q : p) + ", " + (swap ? p : q) + ")";
    };
    std::string text = "def f(a, b):\n  # a: \"cpu f32[6, 16]\"\n  # b: \"cpu f32[16, 8]\"\n  x = prims.matmul(a, b)\n";
    text += "  x2 = " + op("mul", "x", "x") + "\n";
    text += "  x3 = " + op("mul", "x2", "x") + "\n";
    text += "  s = " + op("mul", "0.044715", "x3") + "\n";
    text += "  i = " + op("add", "x", "s") + "\n";
    text += "  u = " + op("mul", "0.7978845608028654", "i") + "\n";
    text += "  t = prims.tanh(u)\n";
    text += "  o = " + op("add", "1.0", "t") + "\n";
    text += "  h = " + op("mul", "0.5", "x") + "\n";
    text += "  g = " + op("mul", "h", "o") + "\n  return (g,)\n";
    const RewrittenFusion r = fuse_matmul_epilogues(*std::make_shared<Fusion>(read_trace(text)));
    ASSERT_NE(r.fusion, nullptr) << text;
    EXPECT_EQ(r.fusion->nodes().size(), 1u);
    if (order % 37 == 0) {
      EXPECT_EQ(test::run_plan_against_reference(text).plan.kernel_count(), 0);
    }
  }
}

// An op between the matmul and the gelu's end read elsewhere (the tanh returned), an erf gelu, or
// the option off: the gelu is a kernel after the call, and the note names what reads the result.
TEST(FuseMatmulEpilogues, OtherReaderErfOrOptionOff_KernelAfterTheCall) {
  const std::string tanh_read = R"(
def f(a, b):
  # a: "cpu f32[16, 24]"
  # b: "cpu f32[24, 40]"
  x = prims.matmul(a, b)
  x2 = prims.mul(x, x)
  c = prims.mul(x2, x)
  s = prims.mul(0.044715, c)
  i = prims.add(x, s)
  u = prims.mul(0.7978845608028654, i)
  t = prims.tanh(u)
  o = prims.add(1.0, t)
  h = prims.mul(0.5, x)
  g = prims.mul(h, o)
  return (g, t)
)";
  EXPECT_EQ(fuse_matmul_epilogues(*std::make_shared<Fusion>(read_trace(tanh_read))).fusion, nullptr);
  const test::PlanRun run = test::run_plan_against_reference(tanh_read);
  EXPECT_EQ(run.plan.kernel_count(), 1);
  EXPECT_THAT(library(run.plan).note, HasSubstr("read by elementwise ops in kernels after it: x2 (mul)"));

  const std::string erf = R"(
def f(a, b):
  # a: "cpu f32[16, 24]"
  # b: "cpu f32[24, 40]"
  x = prims.matmul(a, b)
  s = prims.mul(x, 0.7071067811865476)
  e = prims.erf(s)
  o = prims.add(1.0, e)
  h = prims.mul(0.5, x)
  g = prims.mul(h, o)
  return (g,)
)";
  EXPECT_EQ(fuse_matmul_epilogues(*std::make_shared<Fusion>(read_trace(erf))).fusion, nullptr);

  auto f = std::make_shared<Fusion>(read_trace(thunder_mlp(24, 32)));
  const Plan off = plan_fusion(*f, contiguous_input_layouts(*f), PlanOptions{.matmul_epilogues = false});
  EXPECT_EQ(off.kernel_count(), 1);
  EXPECT_THAT(library(off).note, Not(HasSubstr("gelu")));
}

// The folded bf16 gelu is the float32 gelu of the float32 sum, rounded once: within half a bf16 ulp
// of float64's, beyond the float32 sum's own error (the gelu's slope, at most 1.13, times 64 terms'
// rounding). The program's own order rounds the linear's result first, a bf16 ulp of the sum.
TEST(FuseMatmulEpilogues, Bf16Gelu_WithinHalfAnUlpOfFloat64) {
  auto f = std::make_shared<Fusion>(read_trace(thunder_mlp(64, 128)));
  const std::vector<HostArg> args = random_inputs(*f, 5);
  const HostTensor& x = std::get<HostTensor>(args[0]);
  const HostTensor& w = std::get<HostTensor>(args[1]);
  const HostTensor& b = std::get<HostTensor>(args[2]);
  // The worst error in bf16 ulps of the rewritten fusion's result.
  auto worst_of = [&](const PlanOptions& options) {
    const Plan plan = plan_fusion(*f, contiguous_input_layouts(*f), options);
    const HostTensor g = run_reference(*plan.rewritten, args).at(0);
    double worst = 0;
    for (int64_t i = 0; i < 64; ++i) {
      for (int64_t j = 0; j < 128; ++j) {
        double s = 0, magnitude = 0;  // the terms are exact in float64, their sum nearly so
        for (int64_t k = 0; k < 64; ++k) {
          const int64_t xi[] = {i, k}, wi[] = {j, k};
          s += x.get_double(xi) * w.get_double(wi);
          magnitude += std::fabs(x.get_double(xi) * w.get_double(wi));
        }
        const int64_t bj[] = {j}, gi[] = {i, j};
        s += b.get_double(bj);
        const double sum_error = 1.13 * 65 * std::ldexp(magnitude + std::fabs(b.get_double(bj)), -24);
        const double exact = 0.5 * s * (1 + std::tanh(0.7978845608028654 * (s + 0.044715 * s * s * s)));
        const double ulp = std::ldexp(1.0, std::ilogb(std::max(std::fabs(exact), 1e-30)) - 7);
        worst = std::max(worst, (std::fabs(g.get_double(gi) - exact) - sum_error) / ulp);
      }
    }
    return worst;
  };
  EXPECT_LE(worst_of(PlanOptions{}), 0.6);
  EXPECT_GT(worst_of(PlanOptions{.matmul_epilogues = false}), 1.0);
}

// A residual add after a linear as Thunder writes it in bf16 (x + linear(h, w, b)), with `extra`
// returned after its sum y.
std::string thunder_residual(const std::string& x_type, const std::string& extra = "") {
  return "def f(x, h, w, b):\n  # x: \"cpu " + x_type + "\"\n  # h: \"cpu bf16[4, 6, 32]\"\n"
         "  # w: \"cpu bf16[16, 32]\"\n  # b: \"cpu bf16[16]\"\n  r = ltorch.linear(h, w, b)\n"
         "  xf = prims.convert_element_type(x, dtypes.float32)\n  rf = prims.convert_element_type(r, dtypes.float32)\n"
         "  s = prims.add(xf, rf)\n  y = prims.convert_element_type(s, dtypes.bfloat16)\n  return (y" + extra + ")\n";
}

// x + linear(h): one call, cuBLASLt's C the residual (beta = 1), the bias after it; no kernel.
TEST(FuseMatmulEpilogues, ThunderResidualAdd_FoldsIntoTheCall) {
  const std::string text = thunder_residual("bf16[4, 6, 16]");
  const RewrittenFusion r = fuse_matmul_epilogues(*elided(text));
  ASSERT_NE(r.fusion, nullptr);
  EXPECT_EQ(count_op(*r.fusion, OpKind::MatmulAdd), 1);
  EXPECT_EQ(r.fusion->nodes().size(), 2u);  // the weight's transpose and the call
  EXPECT_THAT(r.notes.at(0), HasSubstr("y = matmul_add: matmul r plus x (4 ops) in the call (C, beta = 1)"));
  const test::PlanRun run = test::run_plan_against_reference(text);
  EXPECT_EQ(run.plan.kernel_count(), 0);
  EXPECT_THAT(library(run.plan).note, HasSubstr("c = x, read in place, strides [96, 16, 1]"));
  EXPECT_THAT(library(run.plan).note, HasSubstr("epilogue: + c (C, beta = 1), then bias"));
}

// The matmul's result read elsewhere, a residual of float32 (not the result's dtype) or one
// broadcast along a dim: no fold, the add is a kernel after the call.
TEST(FuseMatmulEpilogues, ResultReadOrOtherTypeOrBroadcast_NotFolded) {
  EXPECT_EQ(fuse_matmul_epilogues(*elided(thunder_residual("bf16[4, 6, 16]", ", r"))).fusion, nullptr);
  const std::string f32 = thunder_residual("f32[4, 6, 16]");
  EXPECT_EQ(fuse_matmul_epilogues(*elided(f32)).fusion, nullptr);
  EXPECT_EQ(test::run_plan_against_reference(f32).plan.kernel_count(), 1);
  const std::string broadcast = R"(
def f(x, a, b):
  # x: "cpu f32[16]"
  # a: "cpu f32[6, 8]"
  # b: "cpu f32[8, 16]"
  r = prims.matmul(a, b)
  xb = prims.broadcast_in_dim(x, (6, 16), (1,))
  y = prims.add(r, xb)
  return (y,)
)";
  EXPECT_EQ(fuse_matmul_epilogues(*std::make_shared<Fusion>(read_trace(broadcast))).fusion, nullptr);
}

// A residual whose layout is not the result's (a transpose) is written first, contiguous, and the
// note says why; a float32 residual of a float32 matmul computed after it folds at the add.
TEST(FuseMatmulEpilogues, TransposedResidual_CopiedFirst) {
  const test::PlanRun run = test::run_plan_against_reference(R"(
def f(x, a, b):
  # x: "cpu f32[16, 6]"
  # a: "cpu f32[6, 8]"
  # b: "cpu f32[8, 16]"
  r = prims.matmul(a, b)
  xt = prims.transpose(x, (1, 0))
  e = prims.exp(xt)
  y = prims.add(e, r)
  return (y,)
)");
  EXPECT_EQ(run.plan.kernel_count(), 1);  // exp(x.T), written contiguous
  EXPECT_THAT(library(run.plan).note, HasSubstr("c = e, copied, contiguous: computed by exp"));
  ASSERT_FALSE(run.plan.rewrites.empty());
  EXPECT_THAT(run.plan.rewrites.back(), HasSubstr("y = matmul_add: matmul r plus e"));
}

}  // namespace
}  // namespace vf
