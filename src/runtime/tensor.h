// Runtime tensors: a dtype and a layout over a buffer in host or device memory.
#pragma once

#include <cstddef>
#include <memory>
#include <variant>

#include "base/scalar.h"
#include "layout/host_tensor.h"

namespace vf {

enum class Device : uint8_t { Cpu, Cuda };
const char* device_name(Device d);  // "cpu", "cuda"

struct Tensor {
  DType dtype = DType::Float32;
  Layout layout;
  Device device = Device::Cpu;
  std::shared_ptr<void> owner;  // keeps the buffer alive
  std::byte* data = nullptr;    // the buffer's first byte (layout.offset is applied on access)
  int64_t buffer_bytes = 0;

  const Shape& shape() const { return layout.sizes; }
  bool defined() const { return owner != nullptr || data != nullptr; }
};

// A new buffer of `bytes` on `device` holding a tensor with `layout` (host memory is zero-filled).
Tensor allocate_tensor(Device device, DType dtype, const Layout& layout, int64_t bytes);
// The tensor's whole buffer copied to `device` (or shared, when it is there already).
Tensor copy_to(const Tensor& t, Device device);
// A HostTensor of the tensor's values: the same memory on the CPU, a copy of its buffer otherwise.
HostTensor host_copy(const Tensor& t);

// A host tensor as a runtime tensor, sharing its storage.
Tensor to_tensor(const HostTensor& t);
// A runtime tensor in host memory as a HostTensor view of the same memory.
HostTensor as_host_tensor(const Tensor& t);

using Arg = std::variant<Tensor, Scalar>;

}  // namespace vf
