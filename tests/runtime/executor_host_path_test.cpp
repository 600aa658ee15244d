// The executor's cached path: heap allocations on a cache hit (counted by a replaced operator new
// in this test binary) and parallel kernel compiles when a plan is prepared.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <new>
#include <thread>

#include "frontend/trace_reader.h"
#include "reference/compare.h"
#include "reference/random_inputs.h"
#include "reference/reference_executor.h"
#include "runtime/cpu_backend.h"
#include "runtime/executor.h"

// Allocations through operator new on the thread that counts (the executor and the CPU backend
// allocate through it; host tensor storage uses aligned_alloc and is not counted).
// GCC sees free() of memory from operator new below; both are this file's malloc and free.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace {
std::atomic<int64_t> g_news{0};
thread_local bool t_counting = false;

void* counted_alloc(std::size_t n, std::size_t align) {
  if (t_counting) g_news.fetch_add(1, std::memory_order_relaxed);
  if (n == 0) n = 1;
  if (align <= alignof(std::max_align_t)) return std::malloc(n);
  return std::aligned_alloc(align, (n + align - 1) / align * align);
}
void* counted_new(std::size_t n, std::size_t align = 0) {
  if (void* p = counted_alloc(n, align)) return p;
  throw std::bad_alloc();
}
}  // namespace

// Every replaceable form, so that all of them pair with the free() below (sanitizers check that).
void* operator new(std::size_t n) { return counted_new(n); }
void* operator new[](std::size_t n) { return counted_new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted_alloc(n, 0); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted_alloc(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) { return counted_new(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted_new(n, static_cast<std::size_t>(a)); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return counted_alloc(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return counted_alloc(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

namespace vf {
namespace {

// Counts the operator-new calls `fn` makes on this thread.
template <typename Fn>
int64_t count_news(Fn&& fn) {
  g_news.store(0);
  t_counting = true;
  fn();
  t_counting = false;
  return g_news.load();
}

std::vector<Arg> to_args(const std::vector<HostArg>& host) {
  std::vector<Arg> args;
  for (const HostArg& a : host) {
    if (const HostTensor* t = std::get_if<HostTensor>(&a))
      args.emplace_back(to_tensor(*t));
    else
      args.emplace_back(std::get<Scalar>(a));
  }
  return args;
}

// What returning these outputs costs at least: the result vector, and per output a Tensor
// holding a copy of its layout, plus the owner of a fresh buffer for outputs that alias nothing.
int64_t output_news(const std::vector<Tensor>& outs, int fresh_buffers) {
  return count_news([&] {
    std::vector<Tensor> copy;
    copy.reserve(outs.size());
    for (const Tensor& t : outs) {
      Tensor c;
      c.layout = t.layout;
      copy.push_back(std::move(c));
    }
    for (int i = 0; i < fresh_buffers; ++i) std::shared_ptr<int> owner = std::make_shared<int>(0);
  });
}

void expect_matches_reference(const Fusion& fusion, const std::vector<HostArg>& host,
                              const std::vector<Tensor>& outs) {
  std::vector<HostTensor> expected = run_reference(fusion, host);
  ASSERT_EQ(outs.size(), expected.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    Comparison c = compare_tensors(as_host_tensor(outs[i]), expected[i], default_tolerance(expected[i].dtype()));
    EXPECT_TRUE(c.ok) << c.first_mismatch;
  }
}

constexpr const char* kPointwise = R"(def pointwise(a, b, c):
  # a: "cpu f32[4, 256]"
  # b: "cpu f32[4, 256]"
  # c: "cpu f32[4, 256]"
  t0 = prims.add(a, b)  # t0: "cpu f32[4, 256]"
  t1 = prims.mul(t0, c)  # t1: "cpu f32[4, 256]"
  t2 = prims.sub(t1, a)  # t2: "cpu f32[4, 256]"
  return t2
)";

constexpr const char* kAliasOnly = R"(def views(x):
  # x: "cpu f32[2, 16, 8, 16]"
  t0 = prims.reshape(x, (2, 16, 128))  # t0: "cpu f32[2, 16, 128]"
  t1 = prims.transpose(t0, (0, 2, 1))  # t1: "cpu f32[2, 128, 16]"
  return t1
)";

TEST(ExecutorHostPath, KernelFusionCacheHit_AllocatesOnlyItsOutput) {
  auto fusion = std::make_shared<Fusion>(read_trace(kPointwise));
  CompiledFusion compiled(fusion, {}, std::make_shared<CpuBackend>());
  std::vector<HostArg> host = random_inputs(*fusion, 7);
  std::vector<Arg> args = to_args(host);
  ExecutionStats stats;
  compiled.run(args);  // plans, compiles, and warms the per-call scratch
  std::vector<Tensor> outs;
  const int64_t news = count_news([&] { outs = compiled.run(args, &stats); });
  EXPECT_EQ(stats.kernels_launched, 1);
  EXPECT_EQ(news, output_news(outs, 1)) << "operator new calls on a cache hit";
  expect_matches_reference(*fusion, host, outs);
}

TEST(ExecutorHostPath, AliasOnlyCacheHit_AllocatesOnlyTheResult) {
  auto fusion = std::make_shared<Fusion>(read_trace(kAliasOnly));
  CompiledFusion compiled(fusion, {}, std::make_shared<CpuBackend>());
  std::vector<HostArg> host = random_inputs(*fusion, 8);
  std::vector<Arg> args = to_args(host);
  ExecutionStats stats;
  compiled.run(args);
  std::vector<Tensor> outs;
  const int64_t news = count_news([&] { outs = compiled.run(args, &stats); });
  EXPECT_EQ(stats.kernels_launched, 0);
  EXPECT_EQ(stats.allocated_bytes, 0);
  EXPECT_EQ(news, output_news(outs, 0)) << "operator new calls on a cache hit";
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].data, std::get<Tensor>(args[0]).data);  // shares the input's buffer
  expect_matches_reference(*fusion, host, outs);
}

TEST(ExecutorHostPath, RunsFromEightThreads_EqualReference) {
  auto fusion = std::make_shared<Fusion>(read_trace(kPointwise));
  CompiledFusion compiled(fusion, {}, std::make_shared<CpuBackend>());
  std::vector<std::vector<HostArg>> hosts;
  for (int i = 0; i < 8; ++i) hosts.push_back(random_inputs(*fusion, 100 + i));
  std::vector<std::vector<Tensor>> outs(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      std::vector<Arg> args = to_args(hosts[i]);
      for (int k = 0; k < 50; ++k) outs[i] = compiled.run(args);
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 8; ++i) expect_matches_reference(*fusion, hosts[i], outs[i]);
}

// A backend whose compiles wait (up to 5 s) for `expected` compiles to run at once and record the
// most that did; its kernels do nothing.
class RendezvousBackend : public Backend {
 public:
  explicit RendezvousBackend(int expected) : expected_(expected) {}
  struct NoKernel : PreparedKernel {
    void launch(const KernelArgs&) const override {}
  };
  Target target() const override { return Target::Cpu; }
  std::shared_ptr<const PreparedKernel> prepare(const KernelSpec&, const KernelIR&) override {
    std::unique_lock<std::mutex> lock(mutex_);
    most_ = std::max(most_, ++running_);
    met_.notify_all();
    met_.wait_for(lock, std::chrono::seconds(5), [&] { return running_ >= expected_ || most_ >= expected_; });
    --running_;
    ++compiles_;
    return std::make_shared<NoKernel>();
  }
  int64_t compile_count() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return compiles_;
  }
  int most_at_once() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return most_;
  }

 private:
  const int expected_;
  mutable std::mutex mutex_;
  std::condition_variable met_;
  int running_ = 0, most_ = 0;
  int64_t compiles_ = 0;
};

TEST(ExecutorHostPath, PlanWithTwoKernels_CompilesThemInParallel) {
  auto fusion = std::make_shared<Fusion>(
      read_trace_file(std::string(VF_SOURCE_DIR) + "/tests/segment/golden/compute_then_merge_heads.py"));
  auto backend = std::make_shared<RendezvousBackend>(2);
  ExecutorOptions options;
  options.plan.bookend = true;  // two kernel segments (tests/segment/plan_test.cpp)
  CompiledFusion compiled(fusion, options, backend);
  std::vector<Arg> args = to_args(random_inputs(*fusion, 1));
  EXPECT_EQ(compiled.plan_for(args).kernel_count(), 2);
  EXPECT_EQ(backend->compile_count(), 2);
  EXPECT_EQ(backend->most_at_once(), 2);
}

}  // namespace
}  // namespace vf
