// Size specialization on the CPU backend (runtime/specializer.h), where CI runs it: specialized
// kernels against the reference executor, the modes, and the compile counts.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "base/error.h"
#include "frontend/trace_reader.h"
#include "reference/compare.h"
#include "reference/random_inputs.h"
#include "reference/reference_executor.h"
#include "runtime/cpu_backend.h"
#include "runtime/executor.h"

namespace vf {
namespace {

// The merge-heads producer at [B, H, S, D] = [2, 4, s, 8]: one kernel, whose layout class does
// not depend on s.
std::shared_ptr<Fusion> producer(int s) {
  const std::string S = std::to_string(s);
  return std::make_shared<Fusion>(read_trace(
      "def producer(x):\n"
      "  # x: \"cpu f32[2, 4, " + S + ", 8]\"\n"
      "  t0 = prims.mul(x, 0.125)\n"
      "  t1 = prims.transpose(t0, (0, 2, 1, 3))\n"
      "  t2 = prims.reshape(t1, (2, " + S + ", 32))\n"
      "  return t2\n"));
}

// Runs `compiled` on seeded inputs and compares its outputs with the reference executor's.
void expect_matches_reference(CompiledFusion& compiled, uint64_t seed) {
  const std::vector<HostArg> host = random_inputs(compiled.fusion(), seed);
  const std::vector<HostTensor> expected = run_reference(compiled.fusion(), host);
  std::vector<Arg> args;
  for (const HostArg& a : host) args.push_back(to_tensor(std::get<HostTensor>(a)));
  const std::vector<Tensor> outs = compiled.run(args);
  ASSERT_EQ(outs.size(), expected.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    const Comparison c = compare_tensors(host_copy(outs[i]), expected[i], default_tolerance(expected[i].dtype()));
    EXPECT_TRUE(c.ok) << "output " << i << ": " << c.first_mismatch;
  }
}

std::shared_ptr<CpuBackend> backend_with(SpecializeMode mode) {
  CpuBackendOptions options;
  options.specialize = mode;
  options.inline_extent = 64;  // the thread pool runs the specialized kernels too
  return std::make_shared<CpuBackend>(options);
}

TEST(CpuSpecialize, NowMode_EachSizeSpecializedOneGenericCompile) {
  auto backend = backend_with(SpecializeMode::Now);
  for (int s : {16, 24, 5}) {
    SCOPED_TRACE("S = " + std::to_string(s));
    CompiledFusion compiled(producer(s), {}, backend);
    expect_matches_reference(compiled, 1);
    expect_matches_reference(compiled, 2);
  }
  EXPECT_EQ(backend->compile_count(), 1) << "one generic kernel serves every size";
  EXPECT_EQ(backend->specialize_stats().made.load(), 3);
  EXPECT_EQ(backend->specialize_stats().compiled.load(), 3);
  EXPECT_EQ(backend->specialize_stats().launches.load(), 6);
}

TEST(CpuSpecialize, BackgroundMode_SpecializedAfterSecondLaunch) {
  auto backend = backend_with(SpecializeMode::Background);
  CompiledFusion compiled(producer(12), {}, backend);
  expect_matches_reference(compiled, 1);
  expect_matches_reference(compiled, 2);  // starts the specialization
  for (int i = 0; i < 1200 && backend->specialize_stats().made.load() == 0; ++i) usleep(50 * 1000);
  ASSERT_EQ(backend->specialize_stats().made.load(), 1) << "no specialized kernel after 60 s";
  expect_matches_reference(compiled, 3);
  EXPECT_EQ(backend->specialize_stats().launches.load(), 1);
  EXPECT_EQ(backend->specialize_stats().failures.load(), 0);
  EXPECT_EQ(backend->compile_count(), 1);
}

TEST(CpuSpecialize, OffMode_GenericOnly) {
  auto backend = backend_with(SpecializeMode::Off);
  CompiledFusion compiled(producer(8), {}, backend);
  for (uint64_t seed = 1; seed <= 3; ++seed) expect_matches_reference(compiled, seed);
  EXPECT_EQ(backend->specialize_stats().made.load(), 0);
  EXPECT_EQ(backend->specialize_stats().launches.load(), 0);
}

TEST(CpuSpecialize, Environment_SetsModeAndBadValueIsUserError) {
  const char* before = std::getenv("VF_SPECIALIZE");
  const std::string saved = before ? before : "";
  ::unsetenv("VF_SPECIALIZE");
  EXPECT_EQ(specialize_mode_from_env(SpecializeMode::Off), SpecializeMode::Off);
  ::setenv("VF_SPECIALIZE", "now", 1);
  EXPECT_EQ(specialize_mode_from_env(SpecializeMode::Off), SpecializeMode::Now);
  ::setenv("VF_SPECIALIZE", "sometimes", 1);
  try {
    CpuBackend backend;
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("VF_SPECIALIZE is 'sometimes'; expected off, background or now"),
              std::string::npos) << e.what();
  }
  if (before)
    ::setenv("VF_SPECIALIZE", saved.c_str(), 1);
  else
    ::unsetenv("VF_SPECIALIZE");
}

}  // namespace
}  // namespace vf
