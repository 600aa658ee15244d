// One compiled CUDA kernel loaded into a device's primary context, and its launch.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/cuda_api.h"

namespace vf {

struct CudaDevice;

class CudaKernel {
 public:
  // Loads `image` (CUBIN or NUL-terminated PTX) and finds `entry` in it. Throws DeviceError.
  CudaKernel(const CudaDevice& device, const std::vector<std::byte>& image, const std::string& entry);
  ~CudaKernel();
  CudaKernel(const CudaKernel&) = delete;
  CudaKernel& operator=(const CudaKernel&) = delete;

  // Launches a 1-D grid on `stream` (a CUstream; null is the legacy default stream). `args` points
  // to the bytes of the kernel's single by-value struct parameter. Raises the kernel's dynamic
  // shared memory limit first when shared_bytes is above the default 48 KiB. A grid of 0 blocks
  // launches nothing.
  void launch(const void* args, uint32_t grid, uint32_t block, uint32_t shared_bytes, void* stream) const;

  const std::string& entry() const { return entry_; }
  CUfunction function() const { return function_; }

 private:
  const CudaDevice& device_;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  std::string entry_;
  mutable std::atomic<uint32_t> shared_limit_{48 * 1024};
};

}  // namespace vf
