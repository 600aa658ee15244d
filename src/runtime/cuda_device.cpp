// Initialising CUDA devices and their primary contexts.
#include "runtime/cuda_device.h"

#include <array>
#include <memory>
#include <mutex>

#include "base/error.h"

namespace vf {
namespace {

constexpr int kMaxDevices = 64;

struct DeviceSlot {
  std::once_flag once;
  std::unique_ptr<CudaDevice> device;
  std::string error;
};

std::array<DeviceSlot, kMaxDevices>& device_slots() {
  static std::array<DeviceSlot, kMaxDevices> slots;
  return slots;
}

// cuInit runs once per process; its failure is remembered and reported on every use.
void init_driver(const CudaDriverApi& api) {
  static std::once_flag once;
  static std::string error;
  std::call_once(once, [&] {
    CUresult result = api.cuInit(0);
    if (result == kCudaErrorNoDevice)
      error = "no CUDA device found: --device cuda needs an NVIDIA GPU (cuInit: CUDA_ERROR_NO_DEVICE)";
    else if (result != kCudaSuccess)
      error = cuda_error_text("cuInit", result);
  });
  if (!error.empty()) throw DeviceError(error);
}

std::unique_ptr<CudaDevice> open_device(int ordinal) {
  const CudaDriverApi& api = cuda_driver_api();
  init_driver(api);
  int count = 0;
  cuda_check(api.cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (ordinal >= count)
    throw DeviceError(detail::concat("CUDA device ", ordinal, " requested but ", count, " device(s) found"));
  auto dev = std::make_unique<CudaDevice>();
  dev->ordinal = ordinal;
  cuda_check(api.cuDeviceGet(&dev->device, ordinal), "cuDeviceGet");
  cuda_check(api.cuDeviceGetAttribute(&dev->cc_major, kCuAttrComputeCapabilityMajor, dev->device),
             "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)");
  cuda_check(api.cuDeviceGetAttribute(&dev->cc_minor, kCuAttrComputeCapabilityMinor, dev->device),
             "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)");
  cuda_check(api.cuDeviceGetAttribute(&dev->sm_count, kCuAttrMultiprocessorCount, dev->device),
             "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
  cuda_check(api.cuDeviceGetAttribute(&dev->max_shared_per_block_optin, kCuAttrMaxSharedPerBlockOptin, dev->device),
             "cuDeviceGetAttribute(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)");
  std::array<char, 256> name{};
  cuda_check(api.cuDeviceGetName(name.data(), static_cast<int>(name.size()), dev->device), "cuDeviceGetName");
  dev->name = name.data();
  // The primary context stays retained for the life of the process.
  cuda_check(api.cuDevicePrimaryCtxRetain(&dev->context, dev->device), "cuDevicePrimaryCtxRetain");
  return dev;
}

}  // namespace

const CudaDevice& cuda_device(int ordinal) {
  if (ordinal < 0 || ordinal >= kMaxDevices)
    throw DeviceError(detail::concat("CUDA device ordinal must be in [0, ", kMaxDevices, "), got ", ordinal));
  DeviceSlot& slot = device_slots()[ordinal];
  std::call_once(slot.once, [&] {
    try {
      slot.device = open_device(ordinal);
    } catch (const Error& e) {
      slot.error = e.what();
    }
  });
  if (!slot.device) throw DeviceError(slot.error);
  return *slot.device;
}

void cuda_make_current(const CudaDevice& device) {
  const CudaDriverApi& api = cuda_driver_api();
  CUcontext current = nullptr;
  cuda_check(api.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current != device.context) cuda_check(api.cuCtxSetCurrent(device.context), "cuCtxSetCurrent");
}

bool cuda_available() {
  try {
    cuda_device(0);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

void cuda_synchronize() {
  const CudaDevice& device = cuda_device(0);
  cuda_make_current(device);
  cuda_check(cuda_driver_api().cuCtxSynchronize(), "cuCtxSynchronize");
}

}  // namespace vf
