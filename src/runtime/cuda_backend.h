// The CUDA backend: generated kernels compiled with NVRTC, cached, and launched on the caller's stream.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>

#include "runtime/backend.h"
#include "runtime/cuda_kernel_cache.h"
#include "runtime/specializer.h"

namespace vf {

struct CudaDevice;

class CudaBackend : public Backend {
 public:
  // A backend for device `ordinal` with the default disk cache (default_cache_root()/cuda).
  // Throws DeviceError when the driver, the device or NVRTC is unavailable.
  explicit CudaBackend(int ordinal = 0);
  // The same with the disk cache in `cache_dir` (an empty path disables it), and the given
  // specialization mode (runtime/specializer.h); without one, VF_SPECIALIZE's, Background when unset.
  CudaBackend(int ordinal, std::filesystem::path cache_dir);
  CudaBackend(int ordinal, std::filesystem::path cache_dir, SpecializeMode specialize);

  Target target() const override { return Target::Cuda; }
  // generate_kernel(spec, ir, Target::Cuda), then the kernel cache. Writes the source to
  // $VF_DUMP_KERNELS/<entry>_<hash>.cu when that variable is set (a specialized kernel's, when it
  // is made, to <entry>_specialized_<hash>.cu). A prepared kernel must not outlive its backend.
  std::shared_ptr<const PreparedKernel> prepare(const KernelSpec& spec, const KernelIR& ir) override;
  using Backend::prepare;
  // NVRTC compiles of generic kernels (counted on their own: a background specialization that
  // compiles meanwhile never shows here); those of specialized kernels are in specialize_stats().
  int64_t compile_count() const override { return generic_compiles_.load(); }
  const SpecializeStats& specialize_stats() const { return specialized_; }
  SpecializeMode specialize_mode() const { return specialize_; }

  CudaKernelCache& kernel_cache() { return kernels_; }
  const CudaDevice& device() const { return kernels_.device(); }

 private:
  CudaKernelCache kernels_;
  SpecializeMode specialize_;
  SpecializeStats specialized_;
  std::atomic<int64_t> generic_compiles_{0};
};

}  // namespace vf
