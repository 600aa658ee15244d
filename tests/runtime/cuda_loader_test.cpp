// Tests of loading the CUDA driver and NVRTC at run time, and of the constants declared without cuda.h.
// cuda_api.h comes first so that its opaque types are declared in namespace vf, as everywhere else.
#include "runtime/cuda_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_support.h"
#include "base/error.h"
#include "runtime/cuda_device.h"

#ifdef VF_HAVE_CUDA_HEADERS
#include <cuda.h>
#include <nvrtc.h>
#endif

namespace vf {
namespace {

using ::testing::HasSubstr;

TEST(CudaDriverLoad, MissingLibrary_ClearMessage) {
  CudaDriverLoad load = load_cuda_driver("libcuda_does_not_exist.so.1");
  EXPECT_THAT(load.error, HasSubstr("CUDA driver (libcuda_does_not_exist.so.1) not found: --device cuda needs an "
                                    "NVIDIA driver"));
}

TEST(CudaDriverLoad, LibraryWithoutDriverSymbols_NamesMissingSymbol) {
  // libxxhash is loadable but is no CUDA driver.
  CudaDriverLoad load = load_cuda_driver("libxxhash.so.0");
  EXPECT_THAT(load.error, HasSubstr("lacks the symbol cuInit"));
}

// On a machine without the driver (the build machines), every use reports the same clear error.
TEST(CudaDriver, AbsentOnThisMachine_DeviceErrorEveryTime) {
  if (load_cuda_driver("libcuda.so.1").error.empty()) GTEST_SKIP() << "libcuda.so.1 is installed on this machine";
  EXPECT_FALSE(cuda_available());
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      cuda_driver_api();
      FAIL() << "cuda_driver_api() did not throw";
    } catch (const DeviceError& e) {
      EXPECT_THAT(e.what(), HasSubstr("CUDA driver (libcuda.so.1) not found: --device cuda needs an NVIDIA driver"));
    }
  }
  EXPECT_THROW(cuda_device(0), DeviceError);
  try {
    cuda_device(0);
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("libcuda.so.1"));
  }
}

TEST(CudaDevice, BadOrdinal_DeviceError) {
  try {
    cuda_device(-1);
    FAIL() << "cuda_device(-1) did not throw";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("got -1"));
  }
}

TEST(NvrtcLoad, MissingLibrary_NamesLibrary) {
  NvrtcLoad load = load_nvrtc("/nonexistent/libnvrtc.so");
  EXPECT_THAT(load.error, HasSubstr("NVRTC (/nonexistent/libnvrtc.so) could not be loaded"));
}

TEST(NvrtcLoad, LibraryWithoutNvrtcSymbols_NamesMissingSymbol) {
  NvrtcLoad load = load_nvrtc("libxxhash.so.0");
  EXPECT_THAT(load.error, HasSubstr("lacks the symbol nvrtcVersion"));
}

TEST(NvrtcLoad, ToolkitLibrary_ReportsVersion) {
  NvrtcLoad load = load_nvrtc("/usr/local/cuda/lib64/libnvrtc.so");
  if (!load.error.empty()) GTEST_SKIP() << "no CUDA toolkit at /usr/local/cuda: " << load.error;
  EXPECT_GE(load.api.major, 11);
  EXPECT_EQ(load.api.path, "/usr/local/cuda/lib64/libnvrtc.so");
  EXPECT_NE(load.api.nvrtcGetCUBIN, nullptr);
}

TEST(NvrtcSearch, ListsToolkitFallback) {
  if (std::getenv("VF_NVRTC_PATH")) GTEST_SKIP() << "VF_NVRTC_PATH is set, replacing the search list";
  EXPECT_EQ(nvrtc_search_list(),
            "libnvrtc.so, libnvrtc.so.13, libnvrtc.so.12, /usr/local/cuda/lib64/libnvrtc.so");
}

TEST(NvrtcCheck, Failure_NamesCall) {
  VF_TEST_REQUIRE_NVRTC();
  try {
    nvrtc_check(6, "nvrtcCompileProgram");  // NVRTC_ERROR_COMPILATION
    FAIL() << "nvrtc_check did not throw";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("nvrtcCompileProgram failed: NVRTC_ERROR_COMPILATION"));
  }
}

TEST(CudaCheck, Failure_NamesCallAndCode) {
  try {
    cuda_check(kCudaErrorOutOfMemory, "cuMemAlloc");
    FAIL() << "cuda_check did not throw";
  } catch (const DeviceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cuMemAlloc failed"));
    EXPECT_THAT(e.what(), HasSubstr("2"));
  }
}

#ifdef VF_HAVE_CUDA_HEADERS
// The values cuda_api.h declares by hand agree with the toolkit headers.
TEST(CudaAbi, ConstantsMatchToolkitHeaders) {
  EXPECT_EQ(kCudaSuccess, CUDA_SUCCESS);
  EXPECT_EQ(kCudaErrorOutOfMemory, CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(kCudaErrorDeinitialized, CUDA_ERROR_DEINITIALIZED);
  EXPECT_EQ(kCudaErrorNoDevice, CUDA_ERROR_NO_DEVICE);
  EXPECT_EQ(kCuAttrMultiprocessorCount, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  EXPECT_EQ(kCuAttrComputeCapabilityMajor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  EXPECT_EQ(kCuAttrComputeCapabilityMinor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  EXPECT_EQ(kCuAttrMaxSharedPerBlockOptin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  EXPECT_EQ(kCuFuncAttrMaxDynamicSharedBytes, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
  EXPECT_EQ(kNvrtcSuccess, NVRTC_SUCCESS);
  static_assert(sizeof(vf::CUdeviceptr) == sizeof(::CUdeviceptr));
  static_assert(sizeof(vf::CUdevice) == sizeof(::CUdevice));
  static_assert(sizeof(vf::CUresult) == sizeof(::CUresult));
  static_assert(sizeof(vf::nvrtcResult) == sizeof(::nvrtcResult));
}
#endif

}  // namespace
}  // namespace vf
