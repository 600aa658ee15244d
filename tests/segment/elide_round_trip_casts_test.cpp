// passes/elide_round_trip_casts: which cast pairs read the value before them, the rewritten ops,
// the values (bit for bit where the pair is exact, float32 where a rounding is dropped), and the
// accuracy of a bf16 tanh GELU as Thunder decomposes it, against float64.
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "passes/elide_round_trip_casts.h"
#include "run_plan.h"

namespace vf {
namespace {

using ::testing::HasSubstr;
using test::ops_of;

std::shared_ptr<Fusion> trace(const std::string& text) { return std::make_shared<Fusion>(read_trace(text)); }

// The outputs of `fusion` run on the CPU backend with elide_round_trips as given.
std::vector<HostTensor> run_cpu(const std::shared_ptr<Fusion>& fusion, const std::vector<HostArg>& host_args,
                                bool elide) {
  static auto backend = std::make_shared<CpuBackend>();
  std::vector<Arg> args;
  for (const HostArg& a : host_args) args.push_back(Arg(to_tensor(std::get<HostTensor>(a))));
  CompiledFusion compiled(fusion, ExecutorOptions{.device = Device::Cpu, .plan = {.elide_round_trips = elide}},
                          backend);
  std::vector<HostTensor> outs;
  for (const Tensor& t : compiled.run(args)) outs.push_back(as_host_tensor(t));
  return outs;
}

std::vector<double> values(const HostTensor& t) {
  std::vector<double> v;
  for_each_index(t.shape(), [&](const int64_t* i) { v.push_back(t.get_double(i)); });
  return v;
}

// bf16 -> f32 -> bf16 is the input itself: an alias, no kernel, with or without dropping roundings.
TEST(ElideRoundTripCasts, WidenThenNarrow_IsTheInput) {
  const char* text = R"(
def f(x):
  # x: "cpu bf16[4, 6]"
  t0 = prims.convert_element_type(x, dtypes.float32)
  t1 = prims.convert_element_type(t0, dtypes.bfloat16)
  return (t1,)
)";
  for (bool drop : {false, true}) {
    const RewrittenFusion r = elide_round_trip_casts(*trace(text), drop);
    ASSERT_NE(r.fusion, nullptr);
    EXPECT_EQ(r.fusion->outputs()[0], r.fusion->inputs()[0]);
    EXPECT_THAT(r.notes[0], HasSubstr("1 cast(s) of a value widened without loss"));
  }
  const test::PlanRun run = test::run_plan_against_reference(text);
  EXPECT_EQ(run.plan.kernel_count(), 0);
  EXPECT_EQ(run.plan.allocated_bytes, 0);
  EXPECT_EQ(run.plan.outputs[0].value->name, "x");
}

// f32 -> bf16 -> f32 of a computed value keeps the float32 value when roundings may be dropped,
// and rounds otherwise.
TEST(ElideRoundTripCasts, NarrowThenWiden_KeepsFloat32OnlyWhenAsked) {
  auto f = trace(R"(
def f(x):
  # x: "cpu f32[64]"
  t0 = prims.mul(x, x)
  t1 = prims.convert_element_type(t0, dtypes.bfloat16)
  t2 = prims.convert_element_type(t1, dtypes.float32)
  t3 = prims.add(t2, x)
  return (t3,)
)");
  EXPECT_EQ(elide_round_trip_casts(*f, false).fusion, nullptr);
  const RewrittenFusion r = elide_round_trip_casts(*f, true);
  ASSERT_NE(r.fusion, nullptr);
  EXPECT_EQ(ops_of(*r.fusion), (std::vector<std::string>{"mul:[64]->[64] f32", "convert_element_type:[64]->[64] bf16",
                                                         "add:[64]->[64] f32"}));
  EXPECT_THAT(r.notes[0], HasSubstr("1 round trip(s) through bf16 or f16"));
  EXPECT_THAT(r.notes[1], HasSubstr("elided casts: t2"));

  const std::vector<HostArg> args = random_inputs(*f, 3);
  const std::vector<double> in = values(std::get<HostTensor>(args[0]));
  const std::vector<double> kept = values(run_cpu(f, args, true)[0]);
  const std::vector<double> rounded = values(run_cpu(f, args, false)[0]);
  const std::vector<double> reference = values(run_reference(*f, args)[0]);
  int differ = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const float x = static_cast<float>(in[i]);
    const float square = x * x;
    EXPECT_EQ(kept[i], static_cast<double>(square + x)) << i;  // float32 math, no rounding to bf16
    EXPECT_EQ(rounded[i], reference[i]) << i;                 // as the program says
    differ += kept[i] != rounded[i];
  }
  EXPECT_GT(differ, 32);  // squares of random floats are rarely bf16 values
}

// A rounding whose float value is read after a matmul that reads it (a residual stream beside a
// linear layer) stays: the value crosses the call in memory, rounded as the program says and half
// the bytes. The one read before the matmul keeps the float value; the results are the reference's
// where the kept rounding is what separates them.
TEST(ElideRoundTripCasts, RoundingReadAfterAMatmul_Kept) {
  auto f = trace(R"(
def f(x, w):
  # x: "cpu f32[16, 32]"
  # w: "cpu f32[32, 32]"
  a = prims.exp(x)
  ab = prims.convert_element_type(a, dtypes.bfloat16)
  af = prims.convert_element_type(ab, dtypes.float32)
  o = prims.neg(af)
  m = prims.matmul(o, w)
  af2 = prims.convert_element_type(ab, dtypes.float32)
  r = prims.add(af2, m)
  return (r,)
)");
  const RewrittenFusion r = elide_round_trip_casts(*f, true);
  ASSERT_NE(r.fusion, nullptr);
  EXPECT_THAT(r.notes[0], HasSubstr("1 round trip(s) through bf16 or f16 keep the float value"));
  EXPECT_THAT(r.notes[1], HasSubstr("1 round trip(s) through bf16 or f16 kept: a reader of the float value comes "
                                    "after a matmul that reads it"));
  EXPECT_THAT(r.notes[2], HasSubstr("elided casts: af"));
  EXPECT_EQ(ops_of(*r.fusion), (std::vector<std::string>{"exp:[16, 32]->[16, 32] f32",
                                                         "convert_element_type:[16, 32]->[16, 32] bf16",
                                                         "neg:[16, 32]->[16, 32] f32", "matmul:[16, 32]->[16, 32] f32",
                                                         "convert_element_type:[16, 32]->[16, 32] f32",
                                                         "add:[16, 32]->[16, 32] f32"}));
}

// An input's rounding stays (a declared dtype, or a program rounding on purpose); after a
// computed value, a chain of three casts becomes one; the rounded value, also an output, stays.
TEST(ElideRoundTripCasts, InputRoundingKept_ChainAfterArithmeticOneCast) {
  auto f = trace(R"(
def f(x):
  # x: "cpu f32[5, 7]"
  t0 = prims.convert_element_type(x, dtypes.float16)
  t1 = prims.convert_element_type(t0, dtypes.float32)
  t2 = prims.exp(t1)
  t3 = prims.convert_element_type(t2, dtypes.float16)
  t4 = prims.convert_element_type(t3, dtypes.float32)
  t5 = prims.convert_element_type(t4, dtypes.float64)
  return (t3, t5)
)");
  const RewrittenFusion r = elide_round_trip_casts(*f, true);
  ASSERT_NE(r.fusion, nullptr);
  EXPECT_EQ(ops_of(*r.fusion), (std::vector<std::string>{
                                   "convert_element_type:[5, 7]->[5, 7] f16", "convert_element_type:[5, 7]->[5, 7] f32",
                                   "exp:[5, 7]->[5, 7] f32", "convert_element_type:[5, 7]->[5, 7] f16",
                                   "convert_element_type:[5, 7]->[5, 7] f64"}));
  EXPECT_EQ(r.fusion->nodes()[4]->inputs[0], r.fusion->nodes()[2]->output());
  // The values: t3 as the program rounds it; t5 the float32 exp widened, as a program without the
  // round trip computes it.
  auto direct = trace(R"(
def f(x):
  # x: "cpu f32[5, 7]"
  t0 = prims.convert_element_type(x, dtypes.float16)
  t1 = prims.convert_element_type(t0, dtypes.float32)
  t2 = prims.exp(t1)
  t5 = prims.convert_element_type(t2, dtypes.float64)
  return (t5,)
)");
  const std::vector<HostArg> args = random_inputs(*f, 5);
  const std::vector<HostTensor> outs = run_cpu(f, args, true);
  EXPECT_EQ(values(outs[0]), values(run_reference(*f, args)[0]));
  EXPECT_EQ(values(outs[1]), values(run_reference(*direct, args)[0]));
}

// Casts through integers, to a 16-bit dtype at the end, or between bf16 and f16 are left alone.
TEST(ElideRoundTripCasts, IntegerOrSixteenBitEnds_Untouched) {
  for (const char* types : {"f32 int32 float32", "f32 bfloat16 float16", "bf16 float16 bfloat16",
                            "f16 bfloat16 float16", "i32 float32 int32"}) {
    SCOPED_TRACE(types);
    std::istringstream words(types);
    std::string in, mid, last;
    words >> in >> mid >> last;
    auto f = trace("def f(x):\n  # x: \"cpu " + in + "[8]\"\n  t0 = prims.convert_element_type(x, dtypes." + mid +
                   ")\n  t1 = prims.convert_element_type(t0, dtypes." + last + ")\n  return (t1,)\n");
    EXPECT_EQ(elide_round_trip_casts(*f, true).fusion, nullptr);
  }
}

// Thunder's tanh GELU in bf16 (the nanoGPT step's forward region): every step rounds to bf16.
// Keeping float32 brings it to eager's accuracy, one rounding at the end, against float64.
TEST(ElideRoundTripCasts, TanhGeluBf16_WithinHalfAnUlpOfFloat64) {
  // The region's trace, on 64 Ki elements instead of 24 Mi; normal random inputs rounded to bf16.
  // (model_regions/expected.txt: the form whose kernel is vf_pointwise_mul_add_tanh.)
  std::ifstream file(std::string(VF_SOURCE_DIR) + "/tests/segment/model_regions/nanogpt_004.py");
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const std::string shape = "bf16[8, 1024, 3072]";
  ASSERT_NE(text.find(shape), std::string::npos);
  ASSERT_NE(text.find("prims.tanh"), std::string::npos) << "not the GELU region:\n" << text;
  text.replace(text.find(shape), shape.size(), "bf16[16, 4096]");
  auto f = trace(text);
  const std::vector<HostArg> args = random_inputs(*f, 11);
  const HostTensor& x = std::get<HostTensor>(args[0]);
  const std::vector<double> in = values(x);
  const std::vector<double> kept = values(run_cpu(f, args, true)[0]);
  const std::vector<double> rounded = values(run_cpu(f, args, false)[0]);
  double worst_kept = 0, worst_rounded = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const double v = in[i];
    const double exact = 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    const double ulp = std::ldexp(1.0, std::ilogb(std::max(std::fabs(exact), 1e-30)) - 7);  // bf16's
    worst_kept = std::max(worst_kept, std::fabs(kept[i] - exact) / ulp);
    worst_rounded = std::max(worst_rounded, std::fabs(rounded[i] - exact) / ulp);
  }
  // Correctly rounded but for float32's own error, which 1 + tanh's cancellation for negative x
  // magnifies to a few hundredths of a bf16 ulp.
  EXPECT_LE(worst_kept, 0.55);
  EXPECT_GT(worst_rounded, 1.0);  // the roundings of every step add up
}

}  // namespace
}  // namespace vf
