// Python values to runtime arguments and runtime tensors back to torch tensors or numpy arrays.
#pragma once

#include <cstdint>
#include <vector>

#include <nanobind/nanobind.h>

#include "runtime/tensor.h"

namespace vf::py {

namespace nb = nanobind;

// What the arguments of one call are made of, learned while wrapping them.
struct CallInfo {
  bool torch = false;   // any argument is a torch.Tensor: outputs are torch tensors
  Device device = Device::Cpu;
  int device_id = 0;
  bool device_set = false;  // a tensor argument has fixed the device
  // The cache key: device, then per argument its dtype and shape (or its scalar kind).
  std::vector<int64_t> key;
};

// A Python object kept alive by a runtime tensor's owner; `base_offset` is the torch storage
// offset (in elements) of the tensor's data pointer, -1 until asked for.
struct PyOwner {
  nb::object object;
  bool is_input = false;
  int64_t base_offset = 0;
};

// One argument: a Python bool/int/float becomes a Scalar, anything that speaks DLPack (or the
// buffer protocol) becomes a Tensor over the same memory with its strides. Updates `info`.
Arg wrap_argument(nb::handle value, CallInfo& info);

// The owner shared_ptr of a Python object; its deleter takes the GIL.
std::shared_ptr<void> make_owner(nb::object object, bool is_input);

// Runtime dtypes to and from torch dtypes (torch imported on first use).
nb::object torch_dtype(DType dtype);
nb::object torch_device(const CallInfo& info);

// A new torch tensor of `numel` elements on the call's device (PyTorch's allocator: its caching
// allocator on CUDA) and its data pointer.
nb::object torch_allocate(DType dtype, const CallInfo& info, int64_t numel, std::byte** data);

// An output as a torch tensor (a view of the buffer or input that owns its memory) or a numpy array.
nb::object to_python(const Tensor& t, const CallInfo& info);

// The torch current stream of the call's CUDA device, as a CUstream (null on CPU).
void* torch_current_stream(const CallInfo& info);

}  // namespace vf::py
