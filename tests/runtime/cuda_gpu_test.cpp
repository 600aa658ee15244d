// Tests that need a CUDA GPU: memory, copies, hand-written kernels through the kernel cache.
// Every test skips, with the reason, where cuda_available() is false (the build machines).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "test_support.h"
#include "base/error.h"
#include "runtime/cuda_kernel_cache.h"
#include "runtime/cuda_device.h"
#include "runtime/cuda_memory.h"
#include "saxpy_kernel.h"

namespace vf {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

using test::kSaxpy;
struct SaxpyArgs {
  const float* x;
  float* y;
  float a;
  long long n;
};

// Reverses n ints through 64 KiB + of dynamic shared memory (needs the opt-in attribute).
constexpr const char* kReverseShared = R"(
struct ReverseArgs { const int* in; int* out; int n; };
extern "C" __global__ void vf_test_reverse(ReverseArgs args) {
  extern __shared__ int tile[];
  for (int i = threadIdx.x; i < args.n; i += blockDim.x) tile[i] = args.in[i];
  __syncthreads();
  for (int i = threadIdx.x; i < args.n; i += blockDim.x) args.out[i] = tile[args.n - 1 - i];
}
)";
struct ReverseArgs {
  const int* in;
  int* out;
  int n;
};

TEST(CudaDevice, Device0_HasPlausibleProperties) {
  VF_TEST_REQUIRE_GPU();
  const CudaDevice& device = cuda_device(0);
  EXPECT_GE(device.cc_major, 7);
  EXPECT_GT(device.sm_count, 0);
  EXPECT_GE(device.max_shared_per_block_optin, 48 * 1024);
  EXPECT_NE(device.context, nullptr);
  EXPECT_FALSE(device.name.empty());
}

TEST(CudaMemory, AllocCopyRoundTrip_Accounted) {
  VF_TEST_REQUIRE_GPU();
  const int64_t live_before = cuda_live_bytes(), total_before = cuda_allocated_bytes();
  std::vector<int32_t> host(1000);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<int32_t>(i * i - 7);
  {
    DeviceBuffer buffer(4000);
    EXPECT_EQ(cuda_live_bytes() - live_before, 4000);
    cuda_copy_to_device(buffer.data(), host.data(), 4000);
    std::vector<int32_t> back(1000, 0);
    cuda_copy_to_host(back.data(), buffer.data(), 4000);
    EXPECT_EQ(back, host);
    cuda_memset(buffer.data(), 0xff, 8);
    cuda_copy_to_host(back.data(), buffer.data(), 4000);
    EXPECT_EQ(back[0], -1);
    EXPECT_EQ(back[1], -1);
    EXPECT_EQ(back[2], host[2]);
  }
  EXPECT_EQ(cuda_live_bytes(), live_before);
  EXPECT_EQ(cuda_allocated_bytes() - total_before, 4000);
}

TEST(CudaMemory, ZeroBytes_DistinctValidPointers) {
  VF_TEST_REQUIRE_GPU();
  DeviceBuffer a(0), b(0);
  EXPECT_NE(a.data(), nullptr);
  EXPECT_NE(a.data(), b.data());
}

TEST(CudaMemory, OutOfMemory_DeviceErrorThenUsable) {
  VF_TEST_REQUIRE_GPU();
  const int64_t live_before = cuda_live_bytes();
  const int64_t huge = int64_t{1} << 50;  // 1 PiB
  try {
    cuda_alloc(huge);
    FAIL() << "allocating 1 PiB succeeded";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("out of device memory allocating 1125899906842624 bytes"));
  }
  EXPECT_EQ(cuda_live_bytes(), live_before);
  DeviceBuffer small(1024);
  int value = 42, back = 0;
  cuda_copy_to_device(small.data(), &value, sizeof value);
  cuda_copy_to_host(&back, small.data(), sizeof back);
  EXPECT_EQ(back, 42);
}

TEST(CudaKernelCache, HandWrittenSaxpy_ComputesAndCaches) {
  VF_TEST_REQUIRE_GPU_AND_NVRTC();
  const fs::path dir = test::fresh_dir("vf_cuda_cache");
  const int n = 100000;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = 0.5f * static_cast<float>(i % 97);
    y[i] = static_cast<float>(i % 13) - 6.0f;
  }
  DeviceBuffer dx(n * 4), dy(n * 4);
  cuda_copy_to_device(dx.data(), x.data(), n * 4);
  cuda_copy_to_device(dy.data(), y.data(), n * 4);
  {
    CudaKernelCache backend(cuda_device(0), std::make_unique<DiskCache>(dir, ".cubin"));
    std::shared_ptr<const CudaKernel> kernel = backend.load(kSaxpy, "vf_test_saxpy");
    EXPECT_EQ(backend.compile_count(), 1);
    EXPECT_EQ(backend.load(kSaxpy, "vf_test_saxpy"), kernel);  // in-memory hit
    EXPECT_EQ(backend.compile_count(), 1);
    SaxpyArgs args{static_cast<const float*>(dx.data()), static_cast<float*>(dy.data()), 3.0f, n};
    kernel->launch(&args, (n + 255) / 256, 256, 0, nullptr);
    cuda_synchronize();
  }
  std::vector<float> out(n);
  cuda_copy_to_host(out.data(), dy.data(), n * 4);
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], 3.0f * x[i] + y[i]) << "at " << i;

  // A second backend (as in a new process) finds the CUBIN on disk and does not compile.
  CudaKernelCache second(cuda_device(0), std::make_unique<DiskCache>(dir, ".cubin"));
  std::shared_ptr<const CudaKernel> again = second.load(kSaxpy, "vf_test_saxpy");
  EXPECT_EQ(second.compile_count(), 0);
  EXPECT_EQ(second.disk_hits(), 1);
  fs::remove_all(dir);
}

TEST(CudaKernelCache, CorruptDiskEntry_Recompiled) {
  VF_TEST_REQUIRE_GPU_AND_NVRTC();
  const fs::path dir = test::fresh_dir("vf_cuda_cache");
  { CudaKernelCache(cuda_device(0), std::make_unique<DiskCache>(dir, ".cubin")).load(kSaxpy, "vf_test_saxpy"); }
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    std::FILE* file = std::fopen(entry.path().c_str(), "r+b");
    std::fseek(file, -4, SEEK_END);
    std::fputs("XXXX", file);
    std::fclose(file);
  }
  CudaKernelCache backend(cuda_device(0), std::make_unique<DiskCache>(dir, ".cubin"));
  backend.load(kSaxpy, "vf_test_saxpy");
  EXPECT_EQ(backend.compile_count(), 1);
  EXPECT_EQ(backend.disk_cache().stats().rejected, 1);
  fs::remove_all(dir);
}

TEST(CudaKernelCache, LargeDynamicShared_OptsIn) {
  VF_TEST_REQUIRE_GPU_AND_NVRTC();
  const int n = 20000;  // 80000 bytes of shared memory
  if (cuda_device(0).max_shared_per_block_optin < n * 4) GTEST_SKIP() << "device allows less than 80000 shared bytes";
  CudaKernelCache backend(cuda_device(0), std::make_unique<DiskCache>(fs::path(), ".cubin"));
  auto kernel = backend.load(kReverseShared, "vf_test_reverse");
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = i * 3 + 1;
  DeviceBuffer din(n * 4), dout(n * 4);
  cuda_copy_to_device(din.data(), in.data(), n * 4);
  ReverseArgs args{static_cast<const int*>(din.data()), static_cast<int*>(dout.data()), n};
  kernel->launch(&args, 1, 256, n * 4, nullptr);
  cuda_synchronize();
  std::vector<int> out(n);
  cuda_copy_to_host(out.data(), dout.data(), n * 4);
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], in[n - 1 - i]) << "at " << i;
}

TEST(CudaKernelCache, ConcurrentLoads_CompileOnce) {
  VF_TEST_REQUIRE_GPU_AND_NVRTC();
  CudaKernelCache backend(cuda_device(0), std::make_unique<DiskCache>(fs::path(), ".cubin"));
  std::vector<std::shared_ptr<const CudaKernel>> kernels(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] { kernels[t] = backend.load(kSaxpy, "vf_test_saxpy"); });
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(backend.compile_count(), 1);
  for (const auto& kernel : kernels) EXPECT_EQ(kernel, kernels[0]);
}

TEST(CudaKernelCache, CompileError_DeviceErrorThenRetry) {
  VF_TEST_REQUIRE_GPU_AND_NVRTC();
  CudaKernelCache backend(cuda_device(0), std::make_unique<DiskCache>(fs::path(), ".cubin"));
  const char* bad = "extern \"C\" __global__ void vf_test_bad() { undeclared_name(); }";
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      backend.load(bad, "vf_test_bad");
      FAIL() << "a bad source compiled";
    } catch (const DeviceError& e) {
      EXPECT_THAT(e.what(), HasSubstr("undeclared_name"));
    }
  }
}

TEST(CudaKernelCache, MissingEntry_NamesEntry) {
  VF_TEST_REQUIRE_GPU_AND_NVRTC();
  CudaKernelCache backend(cuda_device(0), std::make_unique<DiskCache>(fs::path(), ".cubin"));
  try {
    backend.load(kSaxpy, "vf_no_such_entry");
    FAIL() << "a missing entry point was found";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cuModuleGetFunction failed"));
    EXPECT_THAT(e.what(), HasSubstr("vf_no_such_entry"));
  }
}

}  // namespace
}  // namespace vf
