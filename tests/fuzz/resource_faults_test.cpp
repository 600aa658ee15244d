// Resource faults: out of memory, unusable or corrupt kernel caches and compiler failures give
// clear errors or fall back to compiling, leak nothing, and leave the process usable.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <span>

#include "test_support.h"
#include "codegen/generate_kernel.h"
#include "frontend/trace_reader.h"
#include "reference/compare.h"
#include "reference/random_inputs.h"
#include "runtime/cpu_backend.h"
#include "runtime/cuda_api.h"
#include "runtime/cuda_backend.h"
#include "runtime/cuda_device.h"
#include "runtime/cuda_memory.h"
#include "runtime/executor.h"
#include "runtime/nvrtc_compiler.h"
#include "segment/plan_fusion.h"

namespace vf {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// exp of x broadcast to [n, n]: one kernel whose output is n*n floats.
std::shared_ptr<Fusion> broadcast_exp(int64_t n) {
  auto f = std::make_shared<Fusion>();
  Value* x = f->add_tensor_input("x", DType::Float32, {n});
  Value* b = f->add(OpKind::BroadcastInDim, {x}, BroadcastAttrs{{n, n}, {1}});
  f->add_output(f->add(OpKind::Exp, {b}));
  return f;
}

// Runs the fusion on `device` and compares its outputs with the reference; "" when equal.
std::string run_and_compare(CompiledFusion& compiled, Device device) {
  const Fusion& fusion = compiled.fusion();
  std::vector<HostArg> host = random_inputs(fusion, 3);
  std::vector<Arg> args;
  for (const HostArg& a : host) args.push_back(copy_to(to_tensor(std::get<HostTensor>(a)), device));
  std::vector<Tensor> outs = compiled.run(args);
  std::vector<HostTensor> expected = run_reference(fusion, host);
  for (size_t i = 0; i < outs.size(); ++i) {
    Comparison c = compare_tensors(host_copy(outs[i]), expected[i], default_tolerance(expected[i].dtype()));
    if (!c.ok) return "output " + std::to_string(i) + ": " + c.first_mismatch;
  }
  return "";
}

// [2^25, 2^25] floats is 4 PiB: no machine has it.
constexpr int64_t kHuge = int64_t{1} << 25;

TEST(HostMemory, TooLargeOutput_DeviceErrorNoLeakThenUsable) {
  CompiledFusion compiled(broadcast_exp(kHuge), {}, std::make_shared<CpuBackend>());
  const int64_t live_before = host_storage_live_bytes();
  Tensor x = to_tensor(HostTensor::empty(DType::Float32, {kHuge}));
  try {
    compiled.run({x});
    FAIL() << "a 4 PiB output was allocated";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("out of host memory allocating 4503599627370496 bytes"));
  }
  x = Tensor{};
  EXPECT_EQ(host_storage_live_bytes(), live_before);
  CompiledFusion ok(broadcast_exp(5), {}, std::make_shared<CpuBackend>());
  EXPECT_EQ(run_and_compare(ok, Device::Cpu), "");
}

TEST(DeviceMemory, TooLargeOutput_DeviceErrorNoLeakThenUsable) {
  VF_TEST_REQUIRE_GPU();
  auto backend = std::make_shared<CudaBackend>(0, fs::path());
  CompiledFusion compiled(broadcast_exp(kHuge), ExecutorOptions{.device = Device::Cuda}, backend);
  Tensor x = allocate_tensor(Device::Cuda, DType::Float32, Layout::contiguous({kHuge}), kHuge * 4);
  const int64_t live_before = cuda_live_bytes();
  try {
    compiled.run({x});
    FAIL() << "a 4 PiB output was allocated";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("out of device memory allocating 4503599627370496 bytes"));
  }
  EXPECT_EQ(cuda_live_bytes(), live_before);
  // The same backend (its kernel now compiled) keeps working.
  CompiledFusion ok(broadcast_exp(300), ExecutorOptions{.device = Device::Cuda}, backend);
  EXPECT_EQ(run_and_compare(ok, Device::Cuda), "");
}

// The CUDA backend with a cache directory that cannot be created (under a regular file) compiles
// every kernel and runs correctly.
TEST(CudaDiskCache, UnusableDirectory_CompilesAndRuns) {
  VF_TEST_REQUIRE_GPU();
  const fs::path file = test::fresh_dir("vf_cache_file");
  std::ofstream(file) << "not a directory";
  auto backend = std::make_shared<CudaBackend>(0, file / "cache");
  CompiledFusion compiled(broadcast_exp(33), ExecutorOptions{.device = Device::Cuda}, backend);
  EXPECT_EQ(run_and_compare(compiled, Device::Cuda), "");
  EXPECT_EQ(backend->compile_count(), 1);
  EXPECT_GE(backend->kernel_cache().disk_cache().stats().write_failures, 1);
  fs::remove(file);
}

// Overwrites every entry file in `dir`: fault 0 flips every byte after the header, fault 1 cuts the
// file in half, fault 2 keeps the entry well formed (same key, checksums right) around a payload
// that no loader accepts. Returns the number of entries with that extension.
int damage_entries(const fs::path& dir, int fault, const std::string& extension) {
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != extension) continue;
    ++entries;
    std::ifstream in(e.path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    in.close();
    if (fault == 2) {
      uint64_t key_length = 0;
      for (int i = 0; i < 8; ++i) key_length |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[16 + i])) << (8 * i);
      const std::string key = bytes.substr(DiskCache::kHeaderBytes, key_length);
      const std::string garbage = "this is not a shared object";
      DiskCache(dir, extension).put(key, std::as_bytes(std::span<const char>(garbage.data(), garbage.size())));
      continue;
    }
    if (fault == 0)
      for (size_t i = DiskCache::kHeaderBytes; i < bytes.size(); ++i) bytes[i] = static_cast<char>(~bytes[i]);
    else
      bytes.resize(bytes.size() / 2);
    std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << bytes;
  }
  return entries;
}

// The CPU backend's disk cache: a damaged entry is rebuilt, a removed directory recreated, and the
// results stay right; a healthy entry is loaded without compiling.
TEST(CpuDiskCache, DamagedOrMissing_Recompiles) {
  const fs::path dir = test::fresh_dir("vf_cpu_cache_faults");
  auto run_with_cache = [&](int64_t expect_compiles, int64_t expect_hits) {
    CpuBackendOptions options;
    options.cache_dir = dir.string();
    options.specialize = SpecializeMode::Off;  // one entry per kernel, whatever VF_SPECIALIZE says
    auto backend = std::make_shared<CpuBackend>(options);
    CompiledFusion compiled(broadcast_exp(33), {}, backend);
    EXPECT_EQ(run_and_compare(compiled, Device::Cpu), "");
    EXPECT_EQ(backend->compile_count(), expect_compiles);
    EXPECT_EQ(backend->disk_hits(), expect_hits);
  };
  run_with_cache(1, 0);
  run_with_cache(0, 1);
  for (int fault = 0; fault < 4; ++fault) {
    SCOPED_TRACE(fault == 0 ? "corrupt" : fault == 1 ? "truncated" : fault == 2 ? "not a shared object" : "missing");
    if (fault == 3)
      fs::remove_all(dir);
    else
      ASSERT_EQ(damage_entries(dir, fault, ".so"), 1);
    run_with_cache(1, 0);
    run_with_cache(0, 1);  // the rebuilt entry is found again
  }
  fs::remove_all(dir);
}

// A cache directory that cannot be created (under a regular file): every kernel is compiled, the
// results are right and nothing throws.
TEST(CpuDiskCache, UnusableDirectory_CompilesAndRuns) {
  const fs::path file = test::fresh_dir("vf_cpu_cache_file");
  std::ofstream(file) << "not a directory";
  CpuBackendOptions options;
  options.cache_dir = (file / "cache").string();
  auto backend = std::make_shared<CpuBackend>(options);
  CompiledFusion compiled(broadcast_exp(33), {}, backend);
  EXPECT_EQ(run_and_compare(compiled, Device::Cpu), "");
  EXPECT_EQ(backend->compile_count(), 1);
  EXPECT_EQ(backend->disk_hits(), 0);
  fs::remove(file);
}

// The same faults for the CUDA backend's disk cache; an image the driver rejects is rebuilt too.
TEST(CudaDiskCache, DamagedOrMissing_Recompiles) {
  VF_TEST_REQUIRE_GPU();
  const fs::path dir = test::fresh_dir("vf_cuda_cache_faults");
  auto run_with_cache = [&](int64_t expect_compiles) {
    // One entry per kernel, whatever VF_SPECIALIZE says.
    auto backend = std::make_shared<CudaBackend>(0, dir, SpecializeMode::Off);
    CompiledFusion compiled(broadcast_exp(33), ExecutorOptions{.device = Device::Cuda}, backend);
    EXPECT_EQ(run_and_compare(compiled, Device::Cuda), "");
    EXPECT_EQ(backend->compile_count(), expect_compiles);
    EXPECT_EQ(backend->kernel_cache().disk_hits(), 1 - expect_compiles);
  };
  run_with_cache(1);
  run_with_cache(0);
  for (int fault = 0; fault < 4; ++fault) {
    SCOPED_TRACE(fault == 0 ? "corrupt" : fault == 1 ? "truncated" : fault == 2 ? "not an image" : "missing");
    if (fault == 3)
      fs::remove_all(dir);
    else
      ASSERT_EQ(damage_entries(dir, fault, ".cubin"), 1);
    run_with_cache(1);
    run_with_cache(0);
  }
  fs::remove_all(dir);
}

// A generated kernel that NVRTC rejects: DeviceError with NVRTC's log and the failing source saved
// byte for byte. Needs NVRTC only, not a GPU.
TEST(NvrtcFailure, BrokenGeneratedKernel_DeviceErrorWithSavedSource) {
  VF_TEST_REQUIRE_NVRTC();
  auto fusion = broadcast_exp(33);
  Plan plan = plan_fusion(*fusion, contiguous_input_layouts(*fusion), PlanOptions{});
  const Segment* kernel = nullptr;
  for (const Segment& s : plan.segments)
    if (s.kind == SegmentKind::Kernel) kernel = &s;
  ASSERT_NE(kernel, nullptr);
  GeneratedKernel generated = generate_kernel(kernel->spec, Target::Cuda);
  const std::string broken = generated.source + "\nstatic_assert(sizeof(int) == 3, \"vf deliberately broken\");\n";
  try {
    nvrtc_compile(broken, generated.entry, 9, 0);
    FAIL() << "the broken source compiled";
  } catch (const DeviceError& e) {
    const std::string message = e.what();
    EXPECT_THAT(message, HasSubstr("NVRTC failed to compile kernel " + generated.entry));
    EXPECT_THAT(message, HasSubstr("vf deliberately broken"));
    const std::string marker = "the failing source is saved at ";
    const size_t at = message.find(marker);
    ASSERT_NE(at, std::string::npos) << message;
    const fs::path path = message.substr(at + marker.size());
    std::ifstream in(path);
    EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), broken);
    fs::remove(path);
  }
  // The unbroken source still compiles afterwards.
  EXPECT_FALSE(nvrtc_compile(generated.source, generated.entry, 9, 0).image.empty());
}

}  // namespace
}  // namespace vf
