#include "tools/viewfuse/backends.h"

#include "codegen/generate_kernel.h"
#include "codegen/specialize_kernel.h"
#include "runtime/cpu_backend.h"
#include "runtime/cuda_backend.h"

namespace vf::tool {

std::shared_ptr<Backend> make_backend(Device device) {
  if (device == Device::Cuda) return std::make_shared<CudaBackend>(0);
  CpuBackendOptions options;
  options.cache_dir = CpuBackend::default_cache_dir();
  return std::make_shared<CpuBackend>(options);
}

std::vector<Arg> upload(const std::vector<HostArg>& args, Device device) {
  std::vector<Arg> out;
  for (const HostArg& a : args) {
    if (const HostTensor* t = std::get_if<HostTensor>(&a))
      out.push_back(copy_to(to_tensor(*t), device));
    else
      out.push_back(std::get<Scalar>(a));
  }
  return out;
}

std::vector<HostTensor> download(const std::vector<Tensor>& tensors) {
  std::vector<HostTensor> out;
  for (const Tensor& t : tensors) out.push_back(host_copy(t));
  return out;
}

std::string kernel_source(const KernelSpec& spec, const KernelIR& ir, Target target, int sm_count) {
  GeneratedKernel kernel = generate_kernel(spec, ir, target);
  return sm_count > 0 ? specialize_for_spec(kernel, spec, sm_count).source : kernel.source;
}

}  // namespace vf::tool
