// The C function table that viewfuse._torch_fast hands to _viewfuse in a capsule: torch tensors read
// and torch outputs made through PyTorch's C++ API. Plain C types only, so that _viewfuse needs no
// torch header and both sides agree on the layout through kTorchApiVersion alone.
#pragma once

#include <Python.h>

#include <cstdint>

namespace vf::py {

// Raised whenever a field or function of TorchApi changes.
inline constexpr uint32_t kTorchApiVersion = 1;
// The capsule's name, as PyCapsule_New and PyCapsule_GetPointer see it.
inline constexpr const char* kTorchApiCapsuleName = "viewfuse._torch_fast.api";

enum TorchDevice : int { kTorchCpu = 0, kTorchCuda = 1 };

// What the fast path reads of one torch tensor. `sizes` and `strides` point into the tensor's own
// metadata and stay valid while the tensor lives and is not resized.
struct TorchTensorView {
  int dtype;        // a vf::DType
  int device_type;  // a TorchDevice
  int device_index;
  int rank;
  const int64_t* sizes;
  const int64_t* strides;
  int64_t storage_offset;  // in elements
  void* data;              // the first element
};

// Every function runs with the GIL held. A function returning a PyObject* returns a new reference,
// or null with a Python exception set; `error` outputs point to a thread-local message that stays
// valid until the next failing call on the same thread.
struct TorchApi {
  uint32_t version;           // kTorchApiVersion of the build that made the table
  uint32_t size;              // sizeof(TorchApi) there
  const char* torch_version;  // torch.__version__ of the torch the module was compiled against

  // Reads `tensor` when it is a plain strided torch.Tensor (or nn.Parameter) of a dtype viewfuse
  // takes, on the CPU or a CUDA device: returns 1 and fills `out`. Returns 0 for anything else
  // (a subclass, a sparse or meta tensor, another dtype, symbolic sizes): the caller reads it
  // through its Python attributes instead, which gives the errors their usual messages.
  int (*read)(PyObject* tensor, TorchTensorView* out);

  // A new buffer of `numel` elements of `dtype` (a vf::DType) on the device, from at::empty (so
  // PyTorch's caching allocator on CUDA, on the device's current stream). Returns an owning handle
  // and sets `data`, or returns null and sets `error` (out of memory, for one).
  void* (*allocate)(int dtype, int device_type, int device_index, int64_t numel, void** data, const char** error);
  // Drops the reference a handle from `allocate` holds.
  void (*release)(void* buffer);

  // A torch tensor of `dtype` with these sizes, strides and offset (elements) over the buffer's
  // storage: a tensor of its own (no view of another tensor, no autograd history).
  PyObject* (*wrap)(void* buffer, int dtype, int rank, const int64_t* sizes, const int64_t* strides,
                    int64_t offset);
  // base.as_strided(sizes, strides, storage_offset): a view of the torch tensor `base`, sharing its
  // storage and autograd history as torch.as_strided does.
  PyObject* (*view)(PyObject* base, int rank, const int64_t* sizes, const int64_t* strides,
                    int64_t storage_offset);

  // Sets `stream` to torch's current stream of the CUDA device, as a CUstream (null for the legacy
  // default stream) and returns 1; returns 0 and sets `error` on failure.
  int (*current_stream)(int device_index, void** stream, const char** error);
};

}  // namespace vf::py
