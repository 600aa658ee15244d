// The CPU backend's thread pool: back-to-back parallel launches whose chunk counts differ, so that a
// worker still looping after one launch meets the next (the claims are generation-tagged; under
// ThreadSanitizer this test also checks that nothing is read unlocked).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "frontend/trace_reader.h"
#include "reference/compare.h"
#include "reference/random_inputs.h"
#include "reference/reference_executor.h"
#include "runtime/cpu_backend.h"
#include "runtime/executor.h"

namespace vf {
namespace {

std::string axpb_trace(int64_t n) {
  const std::string t = "\"cpu f32[" + std::to_string(n) + "]\"";
  return "def axpb(a, b):\n  # a: " + t + "\n  # b: " + t + "\n  t0 = prims.mul(a, 2.0)\n  t1 = prims.add(t0, b)\n  return t1\n";
}

TEST(CpuThreadPool, BackToBackLaunchesOfDifferentChunkCounts_MatchReference) {
  CpuBackendOptions options;
  options.num_threads = 4;
  options.inline_extent = 0;  // every launch goes to the pool
  auto backend = std::make_shared<CpuBackend>(options);
  struct Case {
    std::shared_ptr<CompiledFusion> compiled;
    std::vector<Arg> args;
    HostTensor expected;
  };
  std::vector<Case> cases;
  for (int64_t n : {3, 19, 1000}) {  // fewer, as many, and more items than the pool's 20 chunks
    auto fusion = std::make_shared<const Fusion>(read_trace(axpb_trace(n), "axpb"));
    const std::vector<HostArg> host = random_inputs(*fusion, static_cast<uint64_t>(n));
    Case c;
    c.compiled = std::make_shared<CompiledFusion>(fusion, ExecutorOptions{}, backend);
    for (const HostArg& a : host) c.args.push_back(to_tensor(std::get<HostTensor>(a)));
    c.expected = run_reference(*fusion, host).at(0);
    cases.push_back(std::move(c));
  }
  for (int round = 0; round < 3000; ++round) {
    Case& c = cases[static_cast<size_t>(round) % cases.size()];
    const std::vector<Tensor> out = c.compiled->run(c.args);
    const Comparison cmp = compare_tensors(as_host_tensor(out.at(0)), c.expected, default_tolerance(DType::Float32));
    ASSERT_TRUE(cmp.ok) << "round " << round << ": " << cmp.first_mismatch;
  }
}

}  // namespace
}  // namespace vf
