// The CUDA driver and NVRTC entry points viewfuse uses, loaded at run time with dlopen.
#pragma once

// No toolkit header is needed: the few types and constants used here are declared below with
// the values of cuda.h and nvrtc.h (tests/runtime/cuda_abi_test.cpp checks them against the
// toolkit headers where the toolkit is installed). The library builds, links and runs on
// machines with neither the driver nor NVRTC; using them throws DeviceError there.

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace vf {

// ---- Driver API types (cuda.h) ----
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;

inline constexpr CUresult kCudaSuccess = 0;                 // CUDA_SUCCESS
inline constexpr CUresult kCudaErrorOutOfMemory = 2;        // CUDA_ERROR_OUT_OF_MEMORY
inline constexpr CUresult kCudaErrorDeinitialized = 4;      // CUDA_ERROR_DEINITIALIZED
inline constexpr CUresult kCudaErrorNoDevice = 100;         // CUDA_ERROR_NO_DEVICE
inline constexpr int kCuAttrMultiprocessorCount = 16;       // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
inline constexpr int kCuAttrComputeCapabilityMajor = 75;    // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
inline constexpr int kCuAttrComputeCapabilityMinor = 76;    // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
inline constexpr int kCuAttrMaxSharedPerBlockOptin = 97;    // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
inline constexpr int kCuFuncAttrMaxDynamicSharedBytes = 8;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES

// ---- NVRTC types (nvrtc.h) ----
using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;
inline constexpr nvrtcResult kNvrtcSuccess = 0;  // NVRTC_SUCCESS

// The driver functions, resolved from libcuda.so.1 (versioned symbols such as cuMemAlloc_v2
// where cuda.h maps the name to one).
struct CudaDriverApi {
  CUresult (*cuInit)(unsigned int flags) = nullptr;
  CUresult (*cuDriverGetVersion)(int* version) = nullptr;
  CUresult (*cuDeviceGetCount)(int* count) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device) = nullptr;
  CUresult (*cuDeviceGetName)(char* name, int length, CUdevice device) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device) = nullptr;
  CUresult (*cuCtxGetCurrent)(CUcontext* context) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext context) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule* module, const void* image) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule module) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module, const char* name) = nullptr;
  CUresult (*cuFuncSetAttribute)(CUfunction function, int attribute, int value) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                             unsigned block_x, unsigned block_y, unsigned block_z, unsigned shared_bytes,
                             CUstream stream, void** kernel_params, void** extra) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr* pointer, size_t bytes) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr pointer) = nullptr;
  CUresult (*cuMemGetInfo)(size_t* free_bytes, size_t* total_bytes) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void* src, size_t bytes) = nullptr;
  CUresult (*cuMemcpyDtoH)(void* dst, CUdeviceptr src, size_t bytes) = nullptr;
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream) = nullptr;
  CUresult (*cuMemcpyDtoHAsync)(void* dst, CUdeviceptr src, size_t bytes, CUstream stream) = nullptr;
  CUresult (*cuMemsetD8)(CUdeviceptr dst, unsigned char value, size_t count) = nullptr;
  CUresult (*cuMemsetD8Async)(CUdeviceptr dst, unsigned char value, size_t count, CUstream stream) = nullptr;
  CUresult (*cuMemsetD32Async)(CUdeviceptr dst, unsigned value, size_t count, CUstream stream) = nullptr;
  CUresult (*cuMemsetD2D32Async)(CUdeviceptr dst, size_t pitch, unsigned value, size_t width, size_t height,
                                 CUstream stream) = nullptr;
  CUresult (*cuMemcpyDtoD)(CUdeviceptr dst, CUdeviceptr src, size_t bytes) = nullptr;
  // Events, for GPU-time measurements (bench/kernel_bandwidth.cpp).
  CUresult (*cuEventCreate)(CUevent* event, unsigned int flags) = nullptr;
  CUresult (*cuEventRecord)(CUevent event, CUstream stream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent event) = nullptr;
  CUresult (*cuEventElapsedTime)(float* milliseconds, CUevent start, CUevent end) = nullptr;
  CUresult (*cuEventDestroy)(CUevent event) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream stream) = nullptr;
  CUresult (*cuGetErrorName)(CUresult error, const char** name) = nullptr;
  CUresult (*cuGetErrorString)(CUresult error, const char** text) = nullptr;
};

// The NVRTC functions. The supported-architecture queries may be absent in old releases (null).
struct NvrtcApi {
  nvrtcResult (*nvrtcVersion)(int* major, int* minor) = nullptr;
  const char* (*nvrtcGetErrorString)(nvrtcResult result) = nullptr;
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram* program, const char* source, const char* name,
                                    int num_headers, const char* const* headers,
                                    const char* const* include_names) = nullptr;
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram* program) = nullptr;
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram program, int num_options, const char* const* options) = nullptr;
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram program, size_t* size) = nullptr;
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram program, char* log) = nullptr;
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram program, size_t* size) = nullptr;
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram program, char* cubin) = nullptr;
  nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram program, size_t* size) = nullptr;
  nvrtcResult (*nvrtcGetPTX)(nvrtcProgram program, char* ptx) = nullptr;
  nvrtcResult (*nvrtcGetNumSupportedArchs)(int* count) = nullptr;
  nvrtcResult (*nvrtcGetSupportedArchs)(int* archs) = nullptr;
  int major = 0, minor = 0;  // nvrtcVersion, read once at load
  std::string path;          // the library that was loaded
};

// The process-wide tables, loaded on first use (thread-safe). Throw DeviceError, every time they
// are called, when the library or one of its symbols cannot be loaded.
const CudaDriverApi& cuda_driver_api();
const NvrtcApi& nvrtc_api();

// Whether NVRTC can be loaded. Never throws.
bool nvrtc_available();

// Load attempts with a given library name, for tests of the error paths. `error` is empty on
// success; the returned table is valid only then. The process-wide tables are not touched.
struct CudaDriverLoad {
  CudaDriverApi api;
  std::string error;
};
CudaDriverLoad load_cuda_driver(const char* library);
struct NvrtcLoad {
  NvrtcApi api;
  std::string error;
};
NvrtcLoad load_nvrtc(const char* library);

// The library names tried for NVRTC, in order: $VF_NVRTC_PATH alone when set, else the sonames
// and then the toolkit's lib64 folder.
std::string nvrtc_search_list();

// Resolves `name` in the dlopen handle into `slot`; records the first missing symbol in `missing`
// (the loaders of the driver, NVRTC and cuBLASLt).
template <typename Fn>
void dl_resolve(void* handle, const char* name, Fn& slot, std::string& missing) {
  slot = reinterpret_cast<Fn>(dlsym(handle, name));
  if (!slot && missing.empty()) missing = name;
}

// "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
std::string cuda_error_text(const char* call, CUresult result);
// Throws DeviceError with cuda_error_text when result is not CUDA_SUCCESS.
void cuda_check(CUresult result, const char* call);
// Throws DeviceError naming the call and NVRTC's error string when result is not NVRTC_SUCCESS.
void nvrtc_check(nvrtcResult result, const char* call);

}  // namespace vf
