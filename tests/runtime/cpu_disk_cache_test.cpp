// The CPU backend's disk cache: kernels found there are loaded without compiling; corrupt,
// truncated or missing entries are rebuilt; the key covers the compiler flags; an unusable
// directory falls back to compiling; the per-user default directory follows the environment.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "test_support.h"
#include "reference/compare.h"
#include "reference/random_inputs.h"
#include "reference/reference_executor.h"
#include "runtime/cpu_backend.h"
#include "runtime/executor.h"

namespace vf {
namespace {

namespace fs = std::filesystem;

// A permute + reshape feeding exp: one kernel with index math.
std::shared_ptr<Fusion> permute_exp() {
  auto f = std::make_shared<Fusion>();
  Value* x = f->add_tensor_input("x", DType::Float32, {2, 3, 4, 5});
  Value* t = f->add(OpKind::Transpose, {x}, PermuteAttrs{{0, 2, 1, 3}});
  f->add_output(f->add(OpKind::Exp, {f->add(OpKind::Reshape, {t}, ReshapeAttrs{{2, 4, 15}})}));
  return f;
}

// Runs the fusion through `backend` and compares with the reference executor; "" when equal.
std::string run_and_compare(const std::shared_ptr<Backend>& backend) {
  std::shared_ptr<Fusion> fusion = permute_exp();
  CompiledFusion compiled(fusion, {}, backend);
  const std::vector<HostArg> host = random_inputs(*fusion, 5);
  std::vector<Arg> args;
  for (const HostArg& a : host) args.push_back(to_tensor(std::get<HostTensor>(a)));
  const std::vector<Tensor> outs = compiled.run(args);
  const std::vector<HostTensor> expected = run_reference(*fusion, host);
  for (size_t i = 0; i < outs.size(); ++i) {
    const Comparison c = compare_tensors(host_copy(outs[i]), expected[i], default_tolerance(expected[i].dtype()));
    if (!c.ok) return "output " + std::to_string(i) + ": " + c.first_mismatch;
  }
  return "";
}

std::shared_ptr<CpuBackend> backend_in(const fs::path& dir, const std::string& flags = "") {
  CpuBackendOptions options;
  options.cache_dir = dir.string();
  if (!flags.empty()) options.flags = flags;
  options.specialize = SpecializeMode::Off;  // one entry per kernel, whatever VF_SPECIALIZE says
  return std::make_shared<CpuBackend>(options);
}

int entries_in(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().extension() == ".so";
  return n;
}

TEST(CpuDiskCache, SecondBackend_LoadsWithoutCompiling) {
  const fs::path dir = test::fresh_dir("vf_cpu_cache");
  auto first = backend_in(dir);
  ASSERT_EQ(run_and_compare(first), "");
  EXPECT_EQ(first->compile_count(), 1);
  EXPECT_EQ(first->disk_hits(), 0);
  EXPECT_EQ(first->disk_cache().stats().writes, 1);
  EXPECT_EQ(entries_in(dir), 1);

  auto second = backend_in(dir);
  EXPECT_EQ(run_and_compare(second), "");
  EXPECT_EQ(second->compile_count(), 0);
  EXPECT_EQ(second->disk_hits(), 1);
  fs::remove_all(dir);
}

TEST(CpuDiskCache, OtherFlags_AreAnotherEntry) {
  const fs::path dir = test::fresh_dir("vf_cpu_cache_flags");
  ASSERT_EQ(run_and_compare(backend_in(dir)), "");
  auto other = backend_in(dir, "-O1 -std=c++17 -shared -fPIC");
  EXPECT_EQ(run_and_compare(other), "");
  EXPECT_EQ(other->compile_count(), 1);
  EXPECT_EQ(other->disk_hits(), 0);
  EXPECT_EQ(entries_in(dir), 2);
  fs::remove_all(dir);
}

// Entries corrupted (every byte after the header flipped) or truncated are rejected and rebuilt; a
// removed directory is recreated; after the rebuilds a new backend finds the entry again.
TEST(CpuDiskCache, CorruptTruncatedOrMissing_Recompiles) {
  const fs::path dir = test::fresh_dir("vf_cpu_cache_faults");
  ASSERT_EQ(run_and_compare(backend_in(dir)), "");
  for (int fault = 0; fault < 3; ++fault) {
    SCOPED_TRACE(fault == 0 ? "corrupt" : fault == 1 ? "truncated" : "missing");
    if (fault == 2) {
      fs::remove_all(dir);
    } else {
      ASSERT_EQ(entries_in(dir), 1);
      for (const auto& e : fs::directory_iterator(dir)) {
        std::ifstream in(e.path(), std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), {});
        in.close();
        if (fault == 0)
          for (size_t i = DiskCache::kHeaderBytes; i < bytes.size(); ++i) bytes[i] = static_cast<char>(~bytes[i]);
        else
          bytes.resize(bytes.size() / 2);
        std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << bytes;
      }
    }
    auto backend = backend_in(dir);
    EXPECT_EQ(run_and_compare(backend), "");
    EXPECT_EQ(backend->compile_count(), 1);
    EXPECT_EQ(backend->disk_cache().stats().rejected, fault == 2 ? 0 : 1);
    EXPECT_EQ(entries_in(dir), 1);
  }
  auto backend = backend_in(dir);
  EXPECT_EQ(run_and_compare(backend), "");
  EXPECT_EQ(backend->compile_count(), 0);
  fs::remove_all(dir);
}

// A cache directory that cannot be created (under a regular file): compiled every time, correct.
TEST(CpuDiskCache, UnusableDirectory_CompilesAndRuns) {
  const fs::path file = test::fresh_dir("vf_cpu_cache_file");
  std::ofstream(file) << "not a directory";
  auto backend = backend_in(file / "cache");
  EXPECT_EQ(run_and_compare(backend), "");
  EXPECT_EQ(backend->compile_count(), 1);
  EXPECT_FALSE(backend->disk_cache().usable());
  fs::remove(file);
}

// No cache directory: nothing is written anywhere, and a second backend compiles again.
TEST(CpuDiskCache, NoDirectory_Disabled) {
  auto first = backend_in(fs::path());
  ASSERT_EQ(run_and_compare(first), "");
  auto second = backend_in(fs::path());
  EXPECT_EQ(run_and_compare(second), "");
  EXPECT_EQ(second->compile_count(), 1);
  EXPECT_EQ(second->disk_cache().stats().writes, 0);
}

using test::ScopedEnv;

TEST(CpuDiskCache, DefaultDirectory_FollowsEnvironment) {
  {
    ScopedEnv disable("VF_DISABLE_DISK_CACHE", nullptr);
    ScopedEnv root("VF_CACHE_DIR", "/tmp/vf_cache_root_test");
    EXPECT_EQ(CpuBackend::default_cache_dir(), "/tmp/vf_cache_root_test/cpu");
  }
  {
    ScopedEnv disable("VF_DISABLE_DISK_CACHE", nullptr);
    ScopedEnv root("VF_CACHE_DIR", nullptr);
    ScopedEnv xdg("XDG_CACHE_HOME", "/tmp/vf_xdg_test");
    EXPECT_EQ(CpuBackend::default_cache_dir(), "/tmp/vf_xdg_test/viewfuse/cpu");
  }
  {
    ScopedEnv disable("VF_DISABLE_DISK_CACHE", "1");
    ScopedEnv root("VF_CACHE_DIR", "/tmp/vf_cache_root_test");
    EXPECT_EQ(CpuBackend::default_cache_dir(), "");
  }
}

}  // namespace
}  // namespace vf
