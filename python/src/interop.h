// Python values to runtime arguments and runtime tensors back to torch tensors or numpy arrays.
#pragma once

#include <cstdint>
#include <vector>

#include <nanobind/nanobind.h>

#include "runtime/tensor.h"
#include "torch_api.h"

namespace vf::py {

namespace nb = nanobind;

// What the arguments of one call are made of, learned while wrapping them.
struct CallInfo {
  bool torch = false;   // any argument is a torch.Tensor: outputs are torch tensors
  Device device = Device::Cpu;
  int device_id = 0;
  bool device_set = false;  // a tensor argument has fixed the device
  // The torch fast path (torch_path.h) when every torch tensor of the call was read through it:
  // buffers, outputs and the stream then come from PyTorch's C++ API.
  const TorchApi* torch_api = nullptr;
  bool torch_attribute_path = false;  // a torch tensor was read through its Python attributes
  // The cache key: device, then per argument its dtype and shape (or its scalar kind).
  std::vector<int64_t> key;
};

// What keeps a runtime tensor's memory alive: a Python object (an input, or a buffer from
// torch.empty), or a buffer of the torch fast path. `base_offset` is the torch storage offset (in
// elements) of an input's data pointer: read with the tensor on the fast path, -1 until asked for
// on the attribute path, and for inputs that are not torch tensors.
struct PyOwner {
  nb::object object;
  bool is_input = false;
  int64_t base_offset = 0;
  void* torch_buffer = nullptr;  // a TorchApi::allocate handle, released by `api`
  const TorchApi* api = nullptr;
};

// One argument: a Python bool/int/float becomes a Scalar, anything that speaks DLPack (or the
// buffer protocol) becomes a Tensor over the same memory with its strides. Updates `info`.
Arg wrap_argument(nb::handle value, CallInfo& info);

// The owner shared_ptr of a Python object (dropped under the GIL); `base_offset` as in PyOwner.
std::shared_ptr<void> make_owner(nb::object object, bool is_input, int64_t base_offset = -1);

// Runtime dtypes to and from torch dtypes (torch imported on first use).
nb::object torch_dtype(DType dtype);
nb::object torch_device(const CallInfo& info);

// A buffer of `bytes` for a run on torch tensors, from PyTorch's allocator (its caching allocator
// on CUDA): TorchApi::allocate on the fast path (info.torch_api set), torch.empty otherwise.
Tensor torch_buffer(DType dtype, const Layout& layout, int64_t bytes, const CallInfo& info);

// An output as a torch tensor (a view of the buffer or input that owns its memory) or a numpy array.
nb::object to_python(const Tensor& t, const CallInfo& info);

// The torch current stream of the call's CUDA device, as a CUstream (null on CPU).
void* torch_current_stream(const CallInfo& info);

}  // namespace vf::py
