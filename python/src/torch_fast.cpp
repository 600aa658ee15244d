// viewfuse._torch_fast: the TorchApi table (torch_api.h) over PyTorch's C++ API, and a testing hook
// that counts Python object allocations. The only translation unit that includes torch headers.
#include <ATen/core/Tensor.h>
#include <c10/core/Allocator.h>
#include <c10/core/Storage.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/csrc/autograd/python_variable.h>

#include <string>

#include "base/dtype.h"
#include "torch_api.h"

#ifndef VF_TORCH_VERSION
#error "VF_TORCH_VERSION (torch.__version__ of the torch compiled against) must be defined"
#endif

namespace {

using vf::DType;
using vf::py::TorchTensorView;

// The torch dtype of a vf::DType, and back (false for dtypes viewfuse does not take).
c10::ScalarType scalar_type(int dtype) {
  switch (static_cast<DType>(dtype)) {
    case DType::Bool: return c10::kBool;
    case DType::UInt8: return c10::kByte;
    case DType::Int8: return c10::kChar;
    case DType::Int16: return c10::kShort;
    case DType::Int32: return c10::kInt;
    case DType::Int64: return c10::kLong;
    case DType::Float16: return c10::kHalf;
    case DType::BFloat16: return c10::kBFloat16;
    case DType::Float32: return c10::kFloat;
    case DType::Float64: return c10::kDouble;
  }
  return c10::ScalarType::Undefined;
}

bool vf_dtype(c10::ScalarType type, int* dtype) {
  for (int d = 0; d < vf::kNumDTypes; ++d) {
    if (scalar_type(d) == type) {
      *dtype = d;
      return true;
    }
  }
  return false;
}

// The message of the last failed call on this thread (TorchApi's `error` outputs point into it).
const char* remember_error(const char* message) {
  thread_local std::string last;
  last = message;
  return last.c_str();
}

const char* message_of(const std::exception& e) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e)) return c10_error->what_without_backtrace();
  return e.what();
}

int read(PyObject* object, TorchTensorView* out) {
  if (!THPVariable_CheckExact(object)) return 0;
  try {
    const at::Tensor& t = THPVariable_Unpack(object);
    if (t.layout() != c10::kStrided || !t.has_storage() || t.is_conj() || t.is_neg() ||
        t.unsafeGetTensorImpl()->has_symbolic_sizes_strides())
      return 0;
    const c10::Device device = t.device();
    if (device.is_cpu()) {
      out->device_type = vf::py::kTorchCpu;
      out->device_index = 0;
    } else if (device.is_cuda()) {
      out->device_type = vf::py::kTorchCuda;
      out->device_index = device.index();
    } else {
      return 0;
    }
    if (!vf_dtype(t.scalar_type(), &out->dtype)) return 0;
    out->rank = static_cast<int>(t.dim());
    out->sizes = t.sizes().data();
    out->strides = t.strides().data();
    out->storage_offset = t.storage_offset();
    out->data = t.data_ptr();  // as Tensor.data_ptr() reads it
    return 1;
  } catch (const std::exception&) {
    return 0;  // the attribute path reports what is wrong with this tensor
  }
}

// A buffer of numel elements from the device's allocator (on CUDA, PyTorch's caching allocator,
// which takes the block from the device's current stream), as at::empty's storage but without
// dispatching an op or making a tensor: the call is on every kernel launch's path.
void* allocate(int dtype, int device_type, int device_index, int64_t numel, void** data, const char** error) {
  try {
    const c10::Device device = device_type == vf::py::kTorchCuda
                                   ? c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(device_index))
                                   : c10::Device(c10::kCPU);
    const c10::DeviceGuard guard(device);  // the caching allocator allocates on the current device
    const size_t bytes = static_cast<size_t>(numel) * c10::elementSize(scalar_type(dtype));
    c10::Storage storage(c10::Storage::use_byte_size_t(), bytes, c10::GetAllocator(device.type()), /*resizable=*/false);
    *data = storage.mutable_data();
    return storage.unsafeReleaseStorageImpl();
  } catch (const std::exception& e) {
    *error = remember_error(message_of(e));
    return nullptr;
  }
}

void release(void* buffer) {
  c10::intrusive_ptr<c10::StorageImpl>::reclaim(static_cast<c10::StorageImpl*>(buffer));
}

PyObject* set_python_error(const std::exception& e) {
  PyErr_SetString(PyExc_RuntimeError, message_of(e));
  return nullptr;
}

PyObject* wrap(void* buffer, int dtype, int rank, const int64_t* sizes, const int64_t* strides, int64_t offset) {
  try {
    c10::Storage storage(c10::intrusive_ptr<c10::StorageImpl>::reclaim_copy(static_cast<c10::StorageImpl*>(buffer)));
    // The dispatch key of a dense tensor on the storage's device, as at::empty would give it.
    const c10::DispatchKeySet keys(storage.device_type() == c10::kCUDA ? c10::DispatchKey::CUDA
                                                                        : c10::DispatchKey::CPU);
    at::Tensor t = at::detail::make_tensor<c10::TensorImpl>(std::move(storage), keys,
                                                            c10::scalarTypeToTypeMeta(scalar_type(dtype)));
    t.unsafeGetTensorImpl()->set_sizes_and_strides(c10::IntArrayRef(sizes, rank), c10::IntArrayRef(strides, rank),
                                                    offset);
    return THPVariable_Wrap(std::move(t));
  } catch (const std::exception& e) {
    return set_python_error(e);
  }
}

PyObject* view(PyObject* base, int rank, const int64_t* sizes, const int64_t* strides, int64_t storage_offset) {
  try {
    const at::Tensor& t = THPVariable_Unpack(base);
    return THPVariable_Wrap(
        t.as_strided(c10::IntArrayRef(sizes, rank), c10::IntArrayRef(strides, rank), storage_offset));
  } catch (const std::exception& e) {
    return set_python_error(e);
  }
}

int current_stream(int device_index, void** stream, const char** error) {
  try {
    const c10::impl::DeviceGuardImplInterface* impl = c10::impl::getDeviceGuardImpl(c10::kCUDA);
    const c10::Stream s = impl->getStream(c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(device_index)));
    *stream = impl->getStreamNativeHandle(s);
    return 1;
  } catch (const std::exception& e) {
    *error = remember_error(message_of(e));
    return 0;
  }
}

vf::py::TorchApi api_table = {vf::py::kTorchApiVersion, sizeof(vf::py::TorchApi), VF_TORCH_VERSION, read, allocate,
                              release, wrap, view, current_stream};

// count_object_allocations(fn, arg, n): calls fn(arg) n times, dropping the results, and returns
// how many blocks the object allocator (PYMEM_DOMAIN_OBJ: every Python object not taken from a
// free list, and parts of some, such as dict key tables) handed out meanwhile: malloc, calloc and
// realloc of null. The hook wraps
// the installed allocator, as tracemalloc does, and is removed before returning.
struct CountingAllocator {
  PyMemAllocatorEx wrapped;
  long long blocks = 0;
};
CountingAllocator counting;

void* counting_malloc(void*, size_t size) {
  ++counting.blocks;
  return counting.wrapped.malloc(counting.wrapped.ctx, size);
}
void* counting_calloc(void*, size_t count, size_t size) {
  ++counting.blocks;
  return counting.wrapped.calloc(counting.wrapped.ctx, count, size);
}
void* counting_realloc(void*, void* p, size_t size) {
  if (p == nullptr) ++counting.blocks;
  return counting.wrapped.realloc(counting.wrapped.ctx, p, size);
}
void counting_free(void*, void* p) { counting.wrapped.free(counting.wrapped.ctx, p); }

PyObject* count_object_allocations(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  long long n = 0;
  if (nargs != 3 || (n = PyLong_AsLongLong(args[2])) < 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "count_object_allocations(fn, arg, n): n >= 0");
    return nullptr;
  }
  PyMem_GetAllocator(PYMEM_DOMAIN_OBJ, &counting.wrapped);
  PyMemAllocatorEx hook = {nullptr, counting_malloc, counting_calloc, counting_realloc, counting_free};
  counting.blocks = 0;
  PyMem_SetAllocator(PYMEM_DOMAIN_OBJ, &hook);
  bool ok = true;
  for (long long i = 0; i < n && ok; ++i) {
    PyObject* result = PyObject_CallOneArg(args[0], args[1]);
    ok = result != nullptr;
    Py_XDECREF(result);
  }
  PyMem_SetAllocator(PYMEM_DOMAIN_OBJ, &counting.wrapped);
  return ok ? PyLong_FromLongLong(counting.blocks) : nullptr;
}

PyMethodDef methods[] = {
    {"count_object_allocations", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(count_object_allocations)),
     METH_FASTCALL, "count_object_allocations(fn, arg, n): object-domain blocks allocated by n calls fn(arg)"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_torch_fast",
                          "viewfuse's torch fast path: a TorchApi table in the capsule `api`", -1, methods,
                          nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__torch_fast() {
  if (THPVariableClass == nullptr) {
    PyErr_SetString(PyExc_ImportError, "viewfuse._torch_fast: import torch first");
    return nullptr;
  }
  PyObject* module = PyModule_Create(&module_def);
  if (module == nullptr) return nullptr;
  PyObject* capsule = PyCapsule_New(&api_table, vf::py::kTorchApiCapsuleName, nullptr);
  const int added = capsule != nullptr ? PyModule_AddObjectRef(module, "api", capsule) : -1;
  Py_XDECREF(capsule);
  if (added < 0 || PyModule_AddStringConstant(module, "TORCH_VERSION", VF_TORCH_VERSION) < 0) {
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
