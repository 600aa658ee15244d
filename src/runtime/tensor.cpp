#include "runtime/tensor.h"

#include "base/error.h"
#include "runtime/cuda_memory.h"

namespace vf {

const char* device_name(Device d) { return d == Device::Cpu ? "cpu" : "cuda"; }

Tensor allocate_tensor(Device device, DType dtype, const Layout& layout, int64_t bytes) {
  if (device == Device::Cuda) {
    std::byte* data = static_cast<std::byte*>(cuda_alloc(bytes));
    std::shared_ptr<void> owner(data, [bytes](void* p) { cuda_free(p, bytes); });
    return Tensor{dtype, layout, device, std::move(owner), data, bytes};
  }
  auto storage = std::make_shared<Storage>(bytes);
  return Tensor{dtype, layout, device, storage, storage->data(), bytes};
}

Tensor copy_to(const Tensor& t, Device device) {
  if (t.device == device) return t;
  Tensor out = allocate_tensor(device, t.dtype, t.layout, t.buffer_bytes);
  if (device == Device::Cuda)
    cuda_copy_to_device(out.data, t.data, t.buffer_bytes);
  else
    cuda_copy_to_host(out.data, t.data, t.buffer_bytes);
  return out;
}

HostTensor host_copy(const Tensor& t) { return as_host_tensor(copy_to(t, Device::Cpu)); }

Tensor to_tensor(const HostTensor& t) {
  return Tensor{t.dtype(), t.layout(), Device::Cpu, t.storage(), t.storage()->data(), t.storage()->nbytes()};
}

HostTensor as_host_tensor(const Tensor& t) {
  VF_INTERNAL_CHECK(t.device == Device::Cpu, "as_host_tensor of a ", device_name(t.device), " tensor");
  return HostTensor::view_of(t.dtype, t.layout, Storage::wrap(t.data, t.buffer_bytes, t.owner));
}

}  // namespace vf
