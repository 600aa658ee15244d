#include "runtime/tensor.h"

#include "base/error.h"

namespace vf {

const char* device_name(Device d) { return d == Device::Cpu ? "cpu" : "cuda"; }

Tensor to_tensor(const HostTensor& t) {
  return Tensor{t.dtype(), t.layout(), Device::Cpu, t.storage(), t.storage()->data(), t.storage()->nbytes()};
}

HostTensor as_host_tensor(const Tensor& t) {
  VF_INTERNAL_CHECK(t.device == Device::Cpu, "as_host_tensor of a ", device_name(t.device), " tensor");
  return HostTensor::view_of(t.dtype, t.layout, Storage::wrap(t.data, t.buffer_bytes, t.owner));
}

}  // namespace vf
