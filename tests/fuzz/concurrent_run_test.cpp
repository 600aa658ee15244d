// Compiled fusions run from 8 threads at once: plans, compiles on first use, size specializations,
// launches and library calls race, and every result still equals the reference's. The CPU backend always; CUDA
// where a GPU is present.
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <mutex>
#include <thread>

#include "test_support.h"
#include "frontend/trace_reader.h"
#include "random_fusion.h"
#include "reference/compare.h"
#include "reference/random_inputs.h"
#include "runtime/cpu_backend.h"
#include "runtime/cuda_backend.h"
#include "runtime/cuda_device.h"
#include "runtime/executor.h"

namespace vf {
namespace {

constexpr int kThreads = 8;
constexpr int kRounds = 3;

struct Case {
  std::string name;
  std::shared_ptr<Fusion> fusion;
  std::vector<HostArg> contiguous;  // the inputs, contiguous
  std::vector<HostArg> shifted;     // the same values at storage offset 3 (another plan)
  std::vector<HostTensor> expected;
};

// The same values in a fresh buffer, starting 3 elements in.
HostTensor shifted_copy(const HostTensor& t) {
  const Layout layout = Layout::contiguous(t.shape(), 3);
  auto storage = std::make_shared<Storage>((t.numel() + 3) * dtype_size(t.dtype()));
  HostTensor out = HostTensor::view_of(t.dtype(), layout, storage);
  copy_elements(t, out);
  return out;
}

std::vector<Case> make_cases() {
  std::vector<Case> cases;
  auto add = [&](std::string name, std::shared_ptr<Fusion> fusion, std::vector<HostArg> inputs) {
    Case c{std::move(name), std::move(fusion), inputs, {}, {}};
    for (const HostArg& a : inputs) {
      const HostTensor* t = std::get_if<HostTensor>(&a);
      c.shifted.push_back(t ? HostArg(shifted_copy(*t)) : a);
    }
    c.expected = run_reference(*c.fusion, c.contiguous);
    cases.push_back(std::move(c));
  };
  for (const char* example : {"transpose_add", "llama_rope", "layer_norm", "softmax", "falcon_cat_empty",
                              "seed_permute_reshape"}) {
    auto fusion = std::make_shared<Fusion>(read_trace_file(std::string(VF_SOURCE_DIR) + "/examples/" + example + ".py"));
    add(example, fusion, random_inputs(*fusion, 7));
  }
  // A linear with its bias and a pointwise consumer: library calls (cuBLASLt on CUDA, one handle
  // for all threads, and an algorithm chosen again for the offset inputs' alignment).
  auto linear = std::make_shared<Fusion>(read_trace(
      "def f(x, w, b):\n  # x: \"cpu f32[8, 24, 32]\"\n  # w: \"cpu f32[40, 32]\"\n  # b: \"cpu f32[40]\"\n"
      "  t0 = ltorch.linear(x, w, b)\n  t1 = prims.tanh(t0)\n  return (t0, t1)\n"));
  add("linear", linear, random_inputs(*linear, 7));
  // Random fusions with strided, expanded and offset inputs.
  for (uint64_t seed : {11, 12, 13, 14}) {
    const fuzz::FuzzProgram p = fuzz::generate_program(seed);
    add("random fusion " + std::to_string(seed), fuzz::build_fusion(p), fuzz::make_inputs(p));
  }
  return cases;
}

std::vector<Arg> upload(const std::vector<HostArg>& host, Device device) {
  std::vector<Arg> args;
  for (const HostArg& a : host) {
    if (const HostTensor* t = std::get_if<HostTensor>(&a))
      args.push_back(copy_to(to_tensor(*t), device));
    else
      args.push_back(std::get<Scalar>(a));
  }
  return args;
}

// Every thread runs every case kRounds times, starting at a different case and alternating the
// input layouts, on compiled fusions and a backend shared by all threads (nothing compiled yet).
void run_concurrently(const std::shared_ptr<Backend>& backend, Device device) {
  std::vector<Case> cases = make_cases();
  std::vector<std::unique_ptr<CompiledFusion>> compiled;
  for (const Case& c : cases)
    compiled.push_back(std::make_unique<CompiledFusion>(c.fusion, ExecutorOptions{.device = device}, backend));
  std::mutex errors_mutex;
  std::vector<std::string> errors;
  std::atomic<int> checked{0};
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int round = 0; round < kRounds; ++round)
        for (size_t k = 0; k < cases.size(); ++k) {
          const size_t i = (k + static_cast<size_t>(t)) % cases.size();
          const Case& c = cases[i];
          const bool shifted = (t + round) % 2 == 1;
          std::string error;
          try {
            std::vector<Tensor> outs = compiled[i]->run(upload(shifted ? c.shifted : c.contiguous, device));
            for (size_t o = 0; o < outs.size() && error.empty(); ++o) {
              Comparison cmp = compare_tensors(host_copy(outs[o]), c.expected[o],
                                               default_tolerance(c.fusion->outputs()[o]->dtype));
              if (!cmp.ok) error = "output " + std::to_string(o) + ": " + cmp.first_mismatch;
            }
          } catch (const std::exception& e) {
            error = e.what();
          }
          if (!error.empty()) {
            std::lock_guard lock(errors_mutex);
            errors.push_back("thread " + std::to_string(t) + ", " + c.name + (shifted ? " (offset inputs)" : "") +
                             ": " + error);
          }
          ++checked;
        }
    });
  }
  for (auto& th : threads) th.join();
  for (const std::string& e : errors) ADD_FAILURE() << e;
  EXPECT_EQ(checked.load(), kThreads * kRounds * static_cast<int>(cases.size()));
  // Every kernel was compiled once however many threads asked for it at the same time.
  const int64_t compiles = backend->compile_count();
  for (const auto& c : compiled) {
    c->run(upload(cases[&c - &compiled[0]].contiguous, device));
  }
  EXPECT_EQ(backend->compile_count(), compiles);
}

TEST(ConcurrentRuns, CpuBackend8Threads_MatchReference) {
  CpuBackendOptions options;
  options.inline_extent = 64;  // the thread pool is shared by the 8 callers too
  run_concurrently(std::make_shared<CpuBackend>(options), Device::Cpu);
}

// The same with kernels specialized in the background after their second launch: the callers race
// the specializing threads and launches switch kernels while others run. The first pass compiles
// the specialized kernels (its fusions' destruction waits for them); in the second, fresh prepared
// kernels find them in the backend's module cache and switch sooner.
TEST(ConcurrentRuns, CpuBackendSpecializing8Threads_MatchReference) {
  CpuBackendOptions options;
  options.inline_extent = 64;
  options.specialize = SpecializeMode::Background;
  auto backend = std::make_shared<CpuBackend>(options);
  const SpecializeStats& stats = backend->specialize_stats();
  run_concurrently(backend, Device::Cpu);
  EXPECT_GT(stats.made.load(), 0);
  run_concurrently(backend, Device::Cpu);
  EXPECT_GT(stats.launches.load(), 0);
  EXPECT_EQ(stats.failures.load(), 0);
}

TEST(ConcurrentRuns, CudaBackend8Threads_MatchReference) {
  VF_TEST_REQUIRE_GPU();
  run_concurrently(std::make_shared<CudaBackend>(0, std::filesystem::path()), Device::Cuda);
}

}  // namespace
}  // namespace vf
