// The CUDA backend: generate a kernel, get it from the kernel cache, launch it with packed arguments,
// switching to the kernel specialized to the launch's sizes once it has one.
#include "runtime/cuda_backend.h"

#include <cstdio>
#include <string>
#include <utility>

#include "codegen/pack_launch.h"
#include "runtime/cuda_device.h"
#include "runtime/cuda_memory.h"
#include "runtime/nvrtc_compiler.h"

namespace vf {
namespace {

void dump_cuda_source(const GeneratedKernel& k) {
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(cuda_source_hash(k.source, k.entry)));
  dump_kernel_source(k.entry + (k.baked.empty() ? "_" : "_specialized_") + hash, k.source, ".cu");
}

// A generated kernel with its loaded function and its specializer. A launch packs the generic
// kernel's argument block, which the specialized kernel shares.
class CudaPreparedKernel : public PreparedKernel {
 public:
  CudaPreparedKernel(CudaKernelCache& cache, SpecializeMode mode, SpecializeStats& stats, GeneratedKernel generated,
                     std::shared_ptr<const CudaKernel> kernel)
      : generated_(std::move(generated)), kernel_(std::move(kernel)), sm_count_(cache.device().sm_count),
        specializer_(mode, load_with(cache), stats) {}

  void launch(const KernelArgs& args) const override {
    // One block per thread, reused across launches and kernels: no allocation once warm.
    thread_local LaunchBlock block;
    pack_launch(generated_, args, sm_count_, block);
    // A scatter's output starts as its base (kernel_ir.h LoopNest::scatter).
    for (const auto& f : generated_.abi.filled_outputs) {
      const KernelBuffer& out = args.outputs[static_cast<size_t>(f.output)];
      cuda_fill(out.data, f.bits, f.element, out.layout->storage_extent(), args.stream);
    }
    const CudaKernel* kernel = specializer_.pick(generated_, block);
    if (!kernel) kernel = kernel_.get();
    kernel->launch(block.args.data(), block.grid, block.block, block.shared_bytes, args.stream);
  }

 private:
  static Specializer<CudaKernel>::Load load_with(CudaKernelCache& cache) {
    return [&cache](const GeneratedKernel& k, bool& compiled) {
      dump_cuda_source(k);
      return cache.load(k.source, k.entry, &compiled);
    };
  }

  GeneratedKernel generated_;
  std::shared_ptr<const CudaKernel> kernel_;
  int sm_count_;
  Specializer<CudaKernel> specializer_;  // last: waits for a background specialization that reads generated_
};

// Fails early, with NVRTC's own message, when NVRTC is missing.
const CudaDevice& device_with_nvrtc(int ordinal) {
  const CudaDevice& device = cuda_device(ordinal);
  nvrtc_version_string();
  return device;
}

}  // namespace

CudaBackend::CudaBackend(int ordinal)
    : kernels_(device_with_nvrtc(ordinal), DiskCache::open_default("cuda", ".cubin")),
      specialize_(specialize_mode_from_env(SpecializeMode::Background)) {}

CudaBackend::CudaBackend(int ordinal, std::filesystem::path cache_dir)
    : CudaBackend(ordinal, std::move(cache_dir), specialize_mode_from_env(SpecializeMode::Background)) {}

CudaBackend::CudaBackend(int ordinal, std::filesystem::path cache_dir, SpecializeMode specialize)
    : kernels_(device_with_nvrtc(ordinal), std::make_unique<DiskCache>(std::move(cache_dir), ".cubin")),
      specialize_(specialize) {}

std::shared_ptr<const PreparedKernel> CudaBackend::prepare(const KernelSpec& spec, const KernelIR& ir) {
  GeneratedKernel generated = generate_kernel(spec, ir, Target::Cuda);
  dump_cuda_source(generated);
  bool compiled = false;
  std::shared_ptr<const CudaKernel> kernel = kernels_.load(generated.source, generated.entry, &compiled);
  if (compiled) ++generic_compiles_;
  return std::make_shared<CudaPreparedKernel>(kernels_, specialize_, specialized_, std::move(generated),
                                              std::move(kernel));
}

}  // namespace vf
