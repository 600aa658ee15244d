#include "tools/viewfuse/backends.h"

#include "base/error.h"
#include "codegen/generate_kernel.h"
#include "runtime/cpu_backend.h"
#include "runtime/cuda_backend.h"
#include "runtime/cuda_device.h"
#include "runtime/cuda_memory.h"

namespace vf::tool {

std::shared_ptr<Backend> make_backend(Device device) {
  if (device == Device::Cuda) return std::make_shared<CudaBackend>(0);
  return std::make_shared<CpuBackend>();
}

std::vector<Arg> upload(const std::vector<HostArg>& args, Device device) {
  std::vector<Arg> out;
  for (const HostArg& a : args) {
    const HostTensor* t = std::get_if<HostTensor>(&a);
    if (!t) {
      out.push_back(std::get<Scalar>(a));
      continue;
    }
    Tensor host = to_tensor(*t);
    if (device == Device::Cpu) {
      out.push_back(host);
      continue;
    }
    const int64_t bytes = host.buffer_bytes;
    std::byte* data = static_cast<std::byte*>(cuda_alloc(bytes));
    std::shared_ptr<void> owner(data, [bytes](void* p) { cuda_free(p, bytes); });
    cuda_copy_to_device(data, host.data, bytes);
    out.push_back(Tensor{host.dtype, host.layout, Device::Cuda, std::move(owner), data, bytes});
  }
  return out;
}

std::vector<HostTensor> download(const std::vector<Tensor>& tensors) {
  std::vector<HostTensor> out;
  for (const Tensor& t : tensors) {
    if (t.device == Device::Cpu) {
      out.push_back(as_host_tensor(t));
      continue;
    }
    cuda_synchronize();
    auto storage = std::make_shared<Storage>(t.buffer_bytes);
    cuda_copy_to_host(storage->data(), t.data, t.buffer_bytes);
    out.push_back(HostTensor::view_of(t.dtype, t.layout, std::move(storage)));
  }
  return out;
}

std::string kernel_source(const KernelSpec& spec, Target target) { return generate_kernel(spec, target).source; }

}  // namespace vf::tool
