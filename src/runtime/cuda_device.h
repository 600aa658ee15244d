// The CUDA device viewfuse runs on: its properties and its primary context.
#pragma once

#include <string>

#include "runtime/cuda_api.h"

namespace vf {

struct CudaDevice {
  int ordinal = 0;
  CUdevice device = 0;
  CUcontext context = nullptr;  // the device's primary context (shared with the CUDA runtime, PyTorch)
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int max_shared_per_block_optin = 0;  // bytes of dynamic shared memory a kernel may opt in to
  std::string name;
};

// Device `ordinal`, initialised on first use (cuInit, primary context retained; thread-safe).
// Throws DeviceError when the driver is missing, there is no such device, or a call fails.
const CudaDevice& cuda_device(int ordinal = 0);

// Makes the device's primary context current on the calling thread if another (or none) is.
void cuda_make_current(const CudaDevice& device);

// Whether the driver loads and device 0 can be initialised. Never throws.
bool cuda_available();

// Blocks until all work on the device's primary context has finished.
void cuda_synchronize();

}  // namespace vf
