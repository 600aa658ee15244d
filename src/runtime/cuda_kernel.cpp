// Loading a CUDA module, finding its entry point, and launching it.
#include "runtime/cuda_kernel.h"

#include "base/error.h"
#include "runtime/cuda_device.h"

namespace vf {
namespace {
constexpr uint32_t kDefaultSharedLimit = 48 * 1024;
}  // namespace

CudaKernel::CudaKernel(const CudaDevice& device, const std::vector<std::byte>& image, const std::string& entry)
    : device_(device), entry_(entry) {
  const CudaDriverApi& api = cuda_driver_api();
  cuda_make_current(device_);
  CUresult loaded = api.cuModuleLoadData(&module_, image.data());
  if (loaded != kCudaSuccess)
    throw DeviceError(detail::concat(cuda_error_text("cuModuleLoadData", loaded), " loading kernel ", entry));
  CUresult found = api.cuModuleGetFunction(&function_, module_, entry.c_str());
  if (found != kCudaSuccess) {
    api.cuModuleUnload(module_);
    throw DeviceError(detail::concat(cuda_error_text("cuModuleGetFunction", found), " looking up kernel ", entry));
  }
}

CudaKernel::~CudaKernel() {
  // At process exit the driver may be shut down already; the module goes with it then.
  const CudaDriverApi& api = cuda_driver_api();
  CUcontext current = nullptr;
  if (api.cuCtxGetCurrent(&current) == kCudaSuccess && current != device_.context)
    api.cuCtxSetCurrent(device_.context);
  api.cuModuleUnload(module_);
}

void CudaKernel::launch(const void* args, uint32_t grid, uint32_t block, uint32_t shared_bytes, void* stream) const {
  if (grid == 0) return;
  const CudaDriverApi& api = cuda_driver_api();
  cuda_make_current(device_);
  if (shared_bytes > kDefaultSharedLimit && shared_bytes > shared_limit_.load(std::memory_order_relaxed)) {
    if (static_cast<int64_t>(shared_bytes) > device_.max_shared_per_block_optin)
      throw DeviceError(detail::concat("kernel ", entry_, " needs ", shared_bytes,
                                       " bytes of shared memory; the device allows ",
                                       device_.max_shared_per_block_optin));
    cuda_check(api.cuFuncSetAttribute(function_, kCuFuncAttrMaxDynamicSharedBytes, static_cast<int>(shared_bytes)),
               "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
    // Racing launches may both set the attribute; remembering the larger value is what matters.
    uint32_t seen = shared_limit_.load();
    while (seen < shared_bytes && !shared_limit_.compare_exchange_weak(seen, shared_bytes)) {
    }
  }
  // The kernel takes one by-value struct: kernelParams holds a pointer to its bytes.
  void* params[] = {const_cast<void*>(args)};
  CUresult result = api.cuLaunchKernel(function_, grid, 1, 1, block, 1, 1, shared_bytes,
                                       static_cast<CUstream>(stream), params, nullptr);
  if (result != kCudaSuccess)
    throw DeviceError(detail::concat(cuda_error_text("cuLaunchKernel", result), " launching ", entry_, " with grid ",
                                     grid, ", block ", block, ", shared ", shared_bytes, " bytes"));
}

}  // namespace vf
