// The CUDA backend: generated kernels compiled with NVRTC, cached, and launched on the caller's stream.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>

#include "runtime/backend.h"
#include "runtime/cuda_kernel_cache.h"

namespace vf {

struct CudaDevice;

class CudaBackend : public Backend {
 public:
  // A backend for device `ordinal` with the default disk cache (default_cache_root()/cuda).
  // Throws DeviceError when the driver, the device or NVRTC is unavailable.
  explicit CudaBackend(int ordinal = 0);
  // The same with the disk cache in `cache_dir`; an empty path disables the disk cache.
  CudaBackend(int ordinal, std::filesystem::path cache_dir);

  Target target() const override { return Target::Cuda; }
  // generate_kernel(spec, Target::Cuda), then the kernel cache. Writes the source to
  // $VF_DUMP_KERNELS/<entry>_<hash>.cu when that variable is set.
  std::shared_ptr<const PreparedKernel> prepare(const KernelSpec& spec) override;
  int64_t compile_count() const override { return kernels_.compile_count(); }

  CudaKernelCache& kernel_cache() { return kernels_; }
  const CudaDevice& device() const { return kernels_.device(); }

 private:
  CudaKernelCache kernels_;
};

}  // namespace vf
