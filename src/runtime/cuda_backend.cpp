// The CUDA backend: generate a kernel, get it from the kernel cache, launch it with packed arguments.
#include "runtime/cuda_backend.h"

#include <cstdio>
#include <string>
#include <utility>

#include "codegen/generate_kernel.h"
#include "runtime/cuda_device.h"
#include "runtime/nvrtc_compiler.h"

namespace vf {
namespace {

// A generated kernel with its loaded function.
class CudaPreparedKernel : public PreparedKernel {
 public:
  CudaPreparedKernel(GeneratedKernel generated, std::shared_ptr<const CudaKernel> kernel, int sm_count)
      : generated_(std::move(generated)), kernel_(std::move(kernel)), sm_count_(sm_count) {}

  void launch(const KernelArgs& args) const override {
    // One block per thread, reused across launches and kernels: no allocation once warm.
    thread_local LaunchBlock block;
    pack_launch(generated_, args, sm_count_, block);
    kernel_->launch(block.args.data(), block.grid, block.block, block.shared_bytes, args.stream);
  }

 private:
  GeneratedKernel generated_;
  std::shared_ptr<const CudaKernel> kernel_;
  int sm_count_;
};

// Fails early, with NVRTC's own message, when NVRTC is missing.
const CudaDevice& device_with_nvrtc(int ordinal) {
  const CudaDevice& device = cuda_device(ordinal);
  nvrtc_version_string();
  return device;
}

}  // namespace

CudaBackend::CudaBackend(int ordinal)
    : kernels_(device_with_nvrtc(ordinal), DiskCache::open_default("cuda", ".cubin")) {}

CudaBackend::CudaBackend(int ordinal, std::filesystem::path cache_dir)
    : kernels_(device_with_nvrtc(ordinal), std::make_unique<DiskCache>(std::move(cache_dir), ".cubin")) {}

std::shared_ptr<const PreparedKernel> CudaBackend::prepare(const KernelSpec& spec) {
  GeneratedKernel generated = generate_kernel(spec, Target::Cuda);
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(cuda_source_hash(generated.source, generated.entry)));
  dump_kernel_source(generated.entry + "_" + hash, generated.source, ".cu");
  std::shared_ptr<const CudaKernel> kernel = kernels_.load(generated.source, generated.entry);
  return std::make_shared<CudaPreparedKernel>(std::move(generated), std::move(kernel), device().sm_count);
}

}  // namespace vf
