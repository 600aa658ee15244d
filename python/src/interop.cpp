#include "interop.h"

#include <map>
#include <tuple>

#include <nanobind/ndarray.h>

#include "base/error.h"
#include "torch_path.h"

namespace vf::py {

namespace {

constexpr uint32_t kOwnerMagic = 0x76665059;  // "vfPY": marks owners made by this module

struct OwnerBox {
  uint32_t magic = kOwnerMagic;
  PyOwner owner;
  ~OwnerBox() {
    if (owner.torch_buffer != nullptr) owner.api->release(owner.torch_buffer);
    if (owner.object.is_valid()) {
      nb::gil_scoped_acquire gil;
      owner.object.reset();
    }
  }
};

// Python objects this module keeps for the life of the process (never freed: they may outlive
// the interpreter's teardown order).
struct TorchCache {
  nb::object torch;
  nb::handle tensor_type;
  nb::object as_strided, empty, from_dlpack, raw_stream;
  nb::object dtypes[kNumDTypes];
};

TorchCache* torch_cache() {
  static TorchCache* cache = [] {
    auto* c = new TorchCache;
    c->torch = nb::module_::import_("torch");
    c->tensor_type = c->torch.attr("Tensor");
    c->as_strided = c->torch.attr("as_strided");
    c->empty = c->torch.attr("empty");
    if (nb::hasattr(c->torch.attr("_C"), "_cuda_getCurrentRawStream"))
      c->raw_stream = c->torch.attr("_C").attr("_cuda_getCurrentRawStream");
    static const char* names[kNumDTypes] = {"bool",    "uint8",   "int8",     "int16",   "int32",
                                            "int64",   "float16", "bfloat16", "float32", "float64"};
    for (int i = 0; i < kNumDTypes; ++i) c->dtypes[i] = c->torch.attr(names[i]);
    return c;
  }();
  return cache;
}

// True when torch is imported and `value` is a torch.Tensor (torch is never imported here for
// callers that do not use it).
bool is_torch_tensor(nb::handle value) {
  static TorchCache* cache = nullptr;
  if (!cache) {
    nb::object modules = nb::module_::import_("sys").attr("modules");
    if (!nb::bool_(modules.attr("__contains__")("torch"))) return false;
    cache = torch_cache();
  }
  return PyObject_TypeCheck(value.ptr(), reinterpret_cast<PyTypeObject*>(cache->tensor_type.ptr()));
}

DType dtype_from_dlpack(nb::dlpack::dtype d) {
  using Code = nb::dlpack::dtype_code;
  if (d.lanes == 1) {
    switch (static_cast<Code>(d.code)) {
      case Code::Bool:
        if (d.bits == 8) return DType::Bool;
        break;
      case Code::UInt:
        if (d.bits == 8) return DType::UInt8;
        break;
      case Code::Int:
        if (d.bits == 8) return DType::Int8;
        if (d.bits == 16) return DType::Int16;
        if (d.bits == 32) return DType::Int32;
        if (d.bits == 64) return DType::Int64;
        break;
      case Code::Float:
        if (d.bits == 16) return DType::Float16;
        if (d.bits == 32) return DType::Float32;
        if (d.bits == 64) return DType::Float64;
        break;
      case Code::Bfloat:
        if (d.bits == 16) return DType::BFloat16;
        break;
      default:
        break;
    }
  }
  VF_USER_ERROR("unsupported array dtype (DLPack code ", int(d.code), ", ", int(d.bits), " bits, ", int(d.lanes),
                " lanes); viewfuse takes bool, uint8, int8..int64, float16, bfloat16, float32 and float64");
}

nb::dlpack::dtype dlpack_dtype(DType d) {
  switch (d) {
    case DType::Bool: return nb::dtype<bool>();
    case DType::UInt8: return nb::dtype<uint8_t>();
    case DType::Int8: return nb::dtype<int8_t>();
    case DType::Int16: return nb::dtype<int16_t>();
    case DType::Int32: return nb::dtype<int32_t>();
    case DType::Int64: return nb::dtype<int64_t>();
    case DType::Float16: return {static_cast<uint8_t>(nb::dlpack::dtype_code::Float), 16, 1};
    case DType::Float32: return nb::dtype<float>();
    case DType::Float64: return nb::dtype<double>();
    case DType::BFloat16: break;
  }
  VF_USER_ERROR("numpy has no bfloat16: pass torch tensors to get bfloat16 outputs");
}

PyOwner& owner_of(const Tensor& t) {
  auto* box = static_cast<OwnerBox*>(t.owner.get());
  VF_INTERNAL_CHECK(box && box->magic == kOwnerMagic, "a torch output's buffer was not allocated through torch");
  return box->owner;
}

}  // namespace

// A torch tensor read through its attributes (faster than a DLPack export, and it needs no
// detach for tensors that require grad).
static Arg wrap_torch_tensor(nb::object source, CallInfo& info);
// A torch tensor read by the fast path (TorchApi::read), with no Python object created.
static Arg wrap_torch_view(nb::handle source, const TorchTensorView& view, const TorchApi* api, CallInfo& info);
// Sets the call's device from its first tensor; later tensors must be on the same one.
static void set_device(CallInfo& info, Device device, int device_id);

std::shared_ptr<void> make_owner(nb::object object, bool is_input, int64_t base_offset) {
  auto box = std::make_shared<OwnerBox>();
  box->owner.object = std::move(object);
  box->owner.is_input = is_input;
  box->owner.base_offset = is_input ? base_offset : 0;
  return box;
}

Arg wrap_argument(nb::handle value, CallInfo& info) {
  PyObject* o = value.ptr();
  if (PyBool_Check(o)) {
    info.key.push_back(-1);
    return Scalar::from_bool(o == Py_True);
  }
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    VF_USER_CHECK(!overflow, "an int argument does not fit in 64 bits");
    info.key.push_back(-2);
    return Scalar::from_int(v);
  }
  if (PyFloat_Check(o)) {
    info.key.push_back(-3);
    return Scalar::from_float(PyFloat_AS_DOUBLE(o));
  }
  if (is_torch_tensor(value)) {
    TorchTensorView view;
    const TorchApi* api = torch_api();
    if (api != nullptr && api->read(o, &view)) return wrap_torch_view(value, view, api, info);
    info.torch_attribute_path = true;
    return wrap_torch_tensor(nb::borrow(value), info);
  }
  nb::object source = nb::borrow(value);
  // Other arrays: DLPack (or the buffer protocol), host memory only; their outputs are numpy arrays.
  nb::ndarray<nb::ro> array;
  if (!nb::try_cast(source, array, /*convert=*/false))
    VF_USER_ERROR("expected a tensor (a torch.Tensor, a numpy array or any DLPack producer) or a number, got ",
                  nb::inst_name(value).c_str());
  VF_USER_CHECK(array.device_type() == nb::device::cpu::value || array.device_type() == nb::device::cuda_host::value,
                "arrays on DLPack device type ", array.device_type(), " are taken as torch tensors only (got ",
                nb::inst_name(value).c_str(), "); other arrays must be in host memory");
  set_device(info, Device::Cpu, 0);
  Tensor t;
  t.dtype = dtype_from_dlpack(array.dtype());
  t.device = Device::Cpu;
  size_t rank = array.ndim();
  t.layout.sizes.resize(rank);
  t.layout.strides.resize(rank);
  info.key.push_back(static_cast<int64_t>(t.dtype));
  info.key.push_back(static_cast<int64_t>(rank));
  for (size_t d = 0; d < rank; ++d) {
    t.layout.sizes[d] = static_cast<int64_t>(array.shape(d));
    t.layout.strides[d] = array.stride(d);
    info.key.push_back(t.layout.sizes[d]);
  }
  for (int64_t s : t.layout.strides)
    VF_USER_CHECK(s >= 0, "negative strides are not supported (got ", t.layout.to_string(), ")");
  t.data = const_cast<std::byte*>(static_cast<const std::byte*>(array.data()));
  t.buffer_bytes = t.layout.storage_extent() * dtype_size(t.dtype);
  t.owner = make_owner(std::move(source), true);
  return t;
}

static void set_device(CallInfo& info, Device device, int device_id) {
  if (!info.device_set) {
    info.device = device;
    info.device_id = device_id;
    info.device_set = true;
    return;
  }
  VF_USER_CHECK(info.device == device && info.device_id == device_id, "all tensors must be on one device: found ",
                device_name(info.device), ":", info.device_id, " and ", device_name(device), ":", device_id);
}

static void read_int_tuple(nb::handle tuple, std::vector<int64_t>& out) {
  PyObject* t = tuple.ptr();
  VF_INTERNAL_CHECK(PyTuple_Check(t), "torch returned a non-tuple shape or stride");
  Py_ssize_t n = PyTuple_GET_SIZE(t);
  out.resize(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = PyLong_AsLongLong(PyTuple_GET_ITEM(t, i));
}

// str(tensor.device), for messages (nb::str of the attribute accessor would not call str()).
static std::string device_text(const nb::object& tensor) {
  nb::object device = tensor.attr("device");
  return nb::str(device).c_str();
}

static Arg wrap_torch_tensor(nb::object source, CallInfo& info) {
  TorchCache* c = torch_cache();
  info.torch = true;
  Tensor t;
  nb::object dtype = source.attr("dtype");
  int found = -1;
  for (int i = 0; i < kNumDTypes; ++i)
    if (dtype.is(c->dtypes[i])) found = i;
  VF_USER_CHECK(found >= 0, "unsupported tensor dtype ", nb::str(dtype).c_str(),
                "; viewfuse takes bool, uint8, int8..int64, float16, bfloat16, float32 and float64");
  t.dtype = static_cast<DType>(found);
  int device_id = nb::cast<int>(source.attr("get_device")());  // -1 on the CPU
  if (device_id < 0) {
    VF_USER_CHECK(nb::bool_(source.attr("is_cpu")), "tensors on ", device_text(source),
                  " are not supported (CPU and CUDA only)");
    t.device = Device::Cpu;
    device_id = 0;
  } else {
    VF_USER_CHECK(nb::bool_(source.attr("is_cuda")), "tensors on ", device_text(source),
                  " are not supported (CPU and CUDA only)");
    t.device = Device::Cuda;
  }
  set_device(info, t.device, device_id);
  read_int_tuple(source.attr("shape"), t.layout.sizes);
  read_int_tuple(source.attr("stride")(), t.layout.strides);
  info.key.push_back(static_cast<int64_t>(t.dtype));
  info.key.push_back(t.layout.rank());
  info.key.insert(info.key.end(), t.layout.sizes.begin(), t.layout.sizes.end());
  t.data = reinterpret_cast<std::byte*>(static_cast<uintptr_t>(nb::cast<uint64_t>(source.attr("data_ptr")())));
  t.buffer_bytes = t.layout.storage_extent() * dtype_size(t.dtype);
  t.owner = make_owner(std::move(source), true);
  return t;
}

static Arg wrap_torch_view(nb::handle source, const TorchTensorView& view, const TorchApi* api, CallInfo& info) {
  info.torch = true;
  info.torch_api = api;
  Tensor t;
  t.dtype = static_cast<DType>(view.dtype);
  t.device = view.device_type == kTorchCuda ? Device::Cuda : Device::Cpu;
  set_device(info, t.device, view.device_index);
  t.layout.sizes.assign(view.sizes, view.sizes + view.rank);
  t.layout.strides.assign(view.strides, view.strides + view.rank);
  info.key.push_back(static_cast<int64_t>(t.dtype));
  info.key.push_back(view.rank);
  info.key.insert(info.key.end(), view.sizes, view.sizes + view.rank);
  t.data = static_cast<std::byte*>(view.data);
  t.buffer_bytes = t.layout.storage_extent() * dtype_size(t.dtype);
  t.owner = make_owner(nb::borrow(source), true, view.storage_offset);
  return t;
}

nb::object torch_dtype(DType dtype) { return torch_cache()->dtypes[static_cast<int>(dtype)]; }

nb::object torch_device(const CallInfo& info) {
  TorchCache* c = torch_cache();
  if (info.device == Device::Cpu) return c->torch.attr("device")("cpu");
  return c->torch.attr("device")("cuda", info.device_id);
}

namespace {

// torch.empty(numel) on the call's device (PyTorch's allocator: its caching allocator on CUDA),
// with dtype and device bound once per (device, index, dtype) and kept for the process.
nb::object torch_empty(DType dtype, const CallInfo& info, int64_t numel, std::byte** data) {
  static auto* makers = new std::map<std::tuple<int, int, int>, nb::object>;
  auto key = std::make_tuple(static_cast<int>(info.device), info.device_id, static_cast<int>(dtype));
  auto it = makers->find(key);
  if (it == makers->end()) {
    nb::object partial = nb::module_::import_("functools").attr("partial");
    TorchCache* c = torch_cache();
    it = makers->emplace(key, partial(c->empty, nb::arg("dtype") = torch_dtype(dtype),
                                      nb::arg("device") = torch_device(info))).first;
  }
  nb::object buffer = it->second(numel);
  *data = reinterpret_cast<std::byte*>(static_cast<uintptr_t>(nb::cast<uint64_t>(buffer.attr("data_ptr")())));
  return buffer;
}

}  // namespace

Tensor torch_buffer(DType dtype, const Layout& layout, int64_t bytes, const CallInfo& info) {
  const int64_t size = dtype_size(dtype), numel = (bytes + size - 1) / size;
  if (info.torch_api == nullptr) {
    std::byte* data = nullptr;
    nb::object buffer = torch_empty(dtype, info, numel, &data);
    return Tensor{dtype, layout, info.device, make_owner(std::move(buffer), false), data, bytes};
  }
  void* data = nullptr;
  const char* error = "";
  void* buffer = info.torch_api->allocate(static_cast<int>(dtype), info.device == Device::Cuda ? kTorchCuda : kTorchCpu,
                                          info.device_id, numel, &data, &error);
  if (buffer == nullptr)
    throw DeviceError(detail::concat("allocating a ", dtype_long_name(dtype), " buffer of ", bytes, " bytes on ",
                                     device_name(info.device), ":", info.device_id, " through torch failed: ", error));
  auto box = std::make_shared<OwnerBox>();
  box->owner.torch_buffer = buffer;
  box->owner.api = info.torch_api;
  return Tensor{dtype, layout, info.device, std::move(box), static_cast<std::byte*>(data), bytes};
}

void* torch_current_stream(const CallInfo& info) {
  if (info.device != Device::Cuda) return nullptr;
  if (info.torch_api != nullptr) {
    void* stream = nullptr;
    const char* error = "";
    if (!info.torch_api->current_stream(info.device_id, &stream, &error))
      throw DeviceError(detail::concat("torch's current stream of cuda:", info.device_id, " is unavailable: ", error));
    return stream;
  }
  TorchCache* c = torch_cache();
  nb::object s = c->raw_stream.is_valid()
                     ? c->raw_stream(info.device_id)
                     : c->torch.attr("cuda").attr("current_stream")(info.device_id).attr("cuda_stream");
  return reinterpret_cast<void*>(static_cast<uintptr_t>(nb::cast<uint64_t>(s)));
}

nb::object to_python(const Tensor& t, const CallInfo& info) {
  const size_t rank = t.layout.sizes.size();
  if (info.torch_api != nullptr) {
    const PyOwner& owner = owner_of(t);
    const int r = static_cast<int>(rank);
    PyObject* out = nullptr;
    if (owner.torch_buffer != nullptr) {
      out = info.torch_api->wrap(owner.torch_buffer, static_cast<int>(t.dtype), r, t.layout.sizes.data(),
                                 t.layout.strides.data(), t.layout.offset);
    } else {
      VF_USER_CHECK(owner.base_offset >= 0, "an output aliases a non-torch input while other inputs are "
                    "torch tensors; pass torch tensors only (or arrays only)");
      out = info.torch_api->view(owner.object.ptr(), r, t.layout.sizes.data(), t.layout.strides.data(),
                                 owner.base_offset + t.layout.offset);
    }
    if (out == nullptr) throw nb::python_error();
    return nb::steal(out);
  }
  if (info.torch) {
    PyOwner& owner = owner_of(t);
    if (owner.base_offset < 0) {
      VF_USER_CHECK(is_torch_tensor(owner.object), "an output aliases a non-torch input while other inputs are "
                    "torch tensors; pass torch tensors only (or arrays only)");
      owner.base_offset = nb::cast<int64_t>(owner.object.attr("storage_offset")());
    }
    nb::tuple sizes = nb::steal<nb::tuple>(PyTuple_New(static_cast<Py_ssize_t>(rank)));
    nb::tuple strides = nb::steal<nb::tuple>(PyTuple_New(static_cast<Py_ssize_t>(rank)));
    for (size_t d = 0; d < rank; ++d) {
      PyTuple_SET_ITEM(sizes.ptr(), d, PyLong_FromLongLong(t.layout.sizes[d]));
      PyTuple_SET_ITEM(strides.ptr(), d, PyLong_FromLongLong(t.layout.strides[d]));
    }
    return torch_cache()->as_strided(owner.object, sizes, strides, owner.base_offset + t.layout.offset);
  }
  std::vector<size_t> shape(t.layout.sizes.begin(), t.layout.sizes.end());
  auto* keep = new std::shared_ptr<void>(t.owner);
  nb::capsule capsule(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<void>*>(p); });
  std::byte* first = t.data + t.layout.offset * dtype_size(t.dtype);
  nb::ndarray<nb::numpy> out(first, rank, shape.data(), capsule, t.layout.strides.data(), dlpack_dtype(t.dtype),
                             nb::device::cpu::value, 0);
  return out.cast();
}

}  // namespace vf::py
