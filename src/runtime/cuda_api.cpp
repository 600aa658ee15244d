// Loading the CUDA driver and NVRTC with dlopen, and checking their results.
#include "runtime/cuda_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "base/error.h"

namespace vf {
namespace {

std::string dl_error_text() {
  const char* text = dlerror();
  return text ? text : "unknown dlopen error";
}

}  // namespace

CudaDriverLoad load_cuda_driver(const char* library) {
  CudaDriverLoad load;
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    load.error = detail::concat("CUDA driver (", library,
                                ") not found: --device cuda needs an NVIDIA driver (dlopen: ", dl_error_text(), ")");
    return load;
  }
  CudaDriverApi& api = load.api;
  std::string missing;
  dl_resolve(handle, "cuInit", api.cuInit, missing);
  dl_resolve(handle, "cuDriverGetVersion", api.cuDriverGetVersion, missing);
  dl_resolve(handle, "cuDeviceGetCount", api.cuDeviceGetCount, missing);
  dl_resolve(handle, "cuDeviceGet", api.cuDeviceGet, missing);
  dl_resolve(handle, "cuDeviceGetAttribute", api.cuDeviceGetAttribute, missing);
  dl_resolve(handle, "cuDeviceGetName", api.cuDeviceGetName, missing);
  dl_resolve(handle, "cuDevicePrimaryCtxRetain", api.cuDevicePrimaryCtxRetain, missing);
  dl_resolve(handle, "cuCtxGetCurrent", api.cuCtxGetCurrent, missing);
  dl_resolve(handle, "cuCtxSetCurrent", api.cuCtxSetCurrent, missing);
  dl_resolve(handle, "cuCtxSynchronize", api.cuCtxSynchronize, missing);
  dl_resolve(handle, "cuModuleLoadData", api.cuModuleLoadData, missing);
  dl_resolve(handle, "cuModuleUnload", api.cuModuleUnload, missing);
  dl_resolve(handle, "cuModuleGetFunction", api.cuModuleGetFunction, missing);
  dl_resolve(handle, "cuFuncSetAttribute", api.cuFuncSetAttribute, missing);
  dl_resolve(handle, "cuLaunchKernel", api.cuLaunchKernel, missing);
  dl_resolve(handle, "cuMemAlloc_v2", api.cuMemAlloc, missing);
  dl_resolve(handle, "cuMemFree_v2", api.cuMemFree, missing);
  dl_resolve(handle, "cuMemGetInfo_v2", api.cuMemGetInfo, missing);
  dl_resolve(handle, "cuMemcpyHtoD_v2", api.cuMemcpyHtoD, missing);
  dl_resolve(handle, "cuMemcpyDtoH_v2", api.cuMemcpyDtoH, missing);
  dl_resolve(handle, "cuMemcpyHtoDAsync_v2", api.cuMemcpyHtoDAsync, missing);
  dl_resolve(handle, "cuMemcpyDtoHAsync_v2", api.cuMemcpyDtoHAsync, missing);
  dl_resolve(handle, "cuMemsetD8_v2", api.cuMemsetD8, missing);
  dl_resolve(handle, "cuMemsetD8Async", api.cuMemsetD8Async, missing);
  dl_resolve(handle, "cuMemsetD32Async", api.cuMemsetD32Async, missing);
  dl_resolve(handle, "cuMemsetD2D32Async", api.cuMemsetD2D32Async, missing);
  dl_resolve(handle, "cuMemcpyDtoD_v2", api.cuMemcpyDtoD, missing);
  dl_resolve(handle, "cuEventCreate", api.cuEventCreate, missing);
  dl_resolve(handle, "cuEventRecord", api.cuEventRecord, missing);
  dl_resolve(handle, "cuEventSynchronize", api.cuEventSynchronize, missing);
  dl_resolve(handle, "cuEventElapsedTime", api.cuEventElapsedTime, missing);
  dl_resolve(handle, "cuEventDestroy_v2", api.cuEventDestroy, missing);
  dl_resolve(handle, "cuStreamSynchronize", api.cuStreamSynchronize, missing);
  dl_resolve(handle, "cuGetErrorName", api.cuGetErrorName, missing);
  dl_resolve(handle, "cuGetErrorString", api.cuGetErrorString, missing);
  if (!missing.empty()) {
    load.error = detail::concat("CUDA driver (", library, ") lacks the symbol ", missing,
                                ": the NVIDIA driver is too old for viewfuse");
    dlclose(handle);
  }
  // On success the handle stays open for the life of the process.
  return load;
}

NvrtcLoad load_nvrtc(const char* library) {
  NvrtcLoad load;
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    load.error = detail::concat("NVRTC (", library, ") could not be loaded: ", dl_error_text());
    return load;
  }
  NvrtcApi& api = load.api;
  std::string missing;
  dl_resolve(handle, "nvrtcVersion", api.nvrtcVersion, missing);
  dl_resolve(handle, "nvrtcGetErrorString", api.nvrtcGetErrorString, missing);
  dl_resolve(handle, "nvrtcCreateProgram", api.nvrtcCreateProgram, missing);
  dl_resolve(handle, "nvrtcDestroyProgram", api.nvrtcDestroyProgram, missing);
  dl_resolve(handle, "nvrtcCompileProgram", api.nvrtcCompileProgram, missing);
  dl_resolve(handle, "nvrtcGetProgramLogSize", api.nvrtcGetProgramLogSize, missing);
  dl_resolve(handle, "nvrtcGetProgramLog", api.nvrtcGetProgramLog, missing);
  dl_resolve(handle, "nvrtcGetCUBINSize", api.nvrtcGetCUBINSize, missing);
  dl_resolve(handle, "nvrtcGetCUBIN", api.nvrtcGetCUBIN, missing);
  dl_resolve(handle, "nvrtcGetPTXSize", api.nvrtcGetPTXSize, missing);
  dl_resolve(handle, "nvrtcGetPTX", api.nvrtcGetPTX, missing);
  if (!missing.empty()) {
    load.error = detail::concat("NVRTC (", library, ") lacks the symbol ", missing, ": NVRTC 11.1 or newer is needed");
    dlclose(handle);
    return load;
  }
  std::string optional_missing;
  dl_resolve(handle, "nvrtcGetNumSupportedArchs", api.nvrtcGetNumSupportedArchs, optional_missing);
  dl_resolve(handle, "nvrtcGetSupportedArchs", api.nvrtcGetSupportedArchs, optional_missing);
  if (api.nvrtcVersion(&api.major, &api.minor) != kNvrtcSuccess) {
    load.error = detail::concat("NVRTC (", library, ") failed to report its version");
    dlclose(handle);
    return load;
  }
  api.path = library;
  return load;
}

namespace {

std::vector<std::string> nvrtc_candidates() {
  if (const char* path = std::getenv("VF_NVRTC_PATH"); path && *path) return {path};
  return {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "/usr/local/cuda/lib64/libnvrtc.so"};
}

struct DriverState {
  std::once_flag once;
  CudaDriverApi api;
  std::string error;
};

struct NvrtcState {
  std::once_flag once;
  NvrtcApi api;
  std::string error;
};

DriverState& driver_state() {
  static DriverState state;
  std::call_once(state.once, [&] {
    CudaDriverLoad load = load_cuda_driver("libcuda.so.1");
    state.api = load.api;
    state.error = load.error;
  });
  return state;
}

NvrtcState& nvrtc_state() {
  static NvrtcState state;
  std::call_once(state.once, [&] {
    std::string errors;
    for (const std::string& candidate : nvrtc_candidates()) {
      NvrtcLoad load = load_nvrtc(candidate.c_str());
      if (load.error.empty()) {
        state.api = load.api;
        return;
      }
      errors += "\n  " + load.error;
    }
    state.error = detail::concat("NVRTC not found: --device cuda needs the CUDA runtime compiler (libnvrtc, ",
                                 "CUDA 12 or 13); set VF_NVRTC_PATH to its full path. Tried:", errors);
  });
  return state;
}

}  // namespace

std::string nvrtc_search_list() {
  std::string list;
  for (const std::string& candidate : nvrtc_candidates()) list += (list.empty() ? "" : ", ") + candidate;
  return list;
}

const CudaDriverApi& cuda_driver_api() {
  DriverState& state = driver_state();
  if (!state.error.empty()) throw DeviceError(state.error);
  return state.api;
}

const NvrtcApi& nvrtc_api() {
  NvrtcState& state = nvrtc_state();
  if (!state.error.empty()) throw DeviceError(state.error);
  return state.api;
}

bool nvrtc_available() { return nvrtc_state().error.empty(); }

std::string cuda_error_text(const char* call, CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  DriverState& state = driver_state();
  if (state.error.empty()) {
    if (state.api.cuGetErrorName(result, &name) != kCudaSuccess) name = nullptr;
    if (state.api.cuGetErrorString(result, &text) != kCudaSuccess) text = nullptr;
  }
  return detail::concat(call, " failed: ", name ? name : "CUresult", " ", result, " (",
                        text ? text : "no description", ")");
}

void cuda_check(CUresult result, const char* call) {
  if (result != kCudaSuccess) throw DeviceError(cuda_error_text(call, result));
}

void nvrtc_check(nvrtcResult result, const char* call) {
  if (result == kNvrtcSuccess) return;
  const char* text = nullptr;
  NvrtcState& state = nvrtc_state();
  if (state.error.empty()) text = state.api.nvrtcGetErrorString(result);
  throw DeviceError(detail::concat(call, " failed: ", text ? text : "nvrtcResult", " (", result, ")"));
}

}  // namespace vf
