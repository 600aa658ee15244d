#include "layout/host_tensor.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "base/error.h"
#include "base/half.h"

namespace vf {
namespace {
std::atomic<int64_t> g_live_bytes{0};
std::atomic<int64_t> g_allocated_bytes{0};
}  // namespace

int64_t host_storage_live_bytes() { return g_live_bytes.load(); }
int64_t host_storage_allocated_bytes() { return g_allocated_bytes.load(); }

Storage::Storage(int64_t nbytes) : nbytes_(nbytes) {
  VF_INTERNAL_CHECK(nbytes >= 0, "negative storage size ", nbytes);
  // Round up so that 16-byte vector accesses near the end stay inside the block.
  size_t rounded = static_cast<size_t>((nbytes + 63) / 64 * 64);
  if (rounded == 0) rounded = 64;
  data_ = static_cast<std::byte*>(std::aligned_alloc(64, rounded));
  if (!data_) throw DeviceError(detail::concat("out of host memory allocating ", nbytes, " bytes"));
  std::memset(data_, 0, rounded);
  g_live_bytes += nbytes;
  g_allocated_bytes += nbytes;
}

std::shared_ptr<Storage> Storage::wrap(std::byte* data, int64_t nbytes, std::shared_ptr<void> owner) {
  std::shared_ptr<Storage> s(new Storage());
  s->data_ = data;
  s->nbytes_ = nbytes;
  s->owns_ = false;
  s->owner_ = std::move(owner);
  return s;
}

Storage::~Storage() {
  if (!owns_) return;
  std::free(data_);
  g_live_bytes -= nbytes_;
}

HostTensor HostTensor::empty(DType dtype, const Shape& shape) {
  for (int64_t s : shape) VF_USER_CHECK(s >= 0, "tensor sizes must be >= 0, got ", shape_to_string(shape));
  HostTensor t;
  t.dtype_ = dtype;
  t.layout_ = Layout::contiguous(shape);
  t.storage_ = std::make_shared<Storage>(shape_numel(shape) * dtype_size(dtype));
  return t;
}

HostTensor HostTensor::view_of(DType dtype, Layout layout, std::shared_ptr<Storage> storage) {
  VF_INTERNAL_CHECK(storage != nullptr, "view of no storage");
  VF_INTERNAL_CHECK(layout.strides.size() == layout.sizes.size(), "layout rank mismatch: ", layout.to_string());
  if (layout.numel() > 0) {
    VF_INTERNAL_CHECK(layout.offset >= 0, "negative offset in ", layout.to_string());
    for (int64_t s : layout.strides) VF_INTERNAL_CHECK(s >= 0, "negative stride in ", layout.to_string());
    VF_INTERNAL_CHECK(layout.storage_extent() * dtype_size(dtype) <= storage->nbytes(), "layout ",
                      layout.to_string(), " reaches past a storage of ", storage->nbytes(), " bytes");
  }
  HostTensor t;
  t.dtype_ = dtype;
  t.layout_ = std::move(layout);
  t.storage_ = std::move(storage);
  return t;
}

std::byte* HostTensor::element(const int64_t* index) const {
  int64_t e = layout_.offset;
  for (int64_t i = 0; i < layout_.rank(); ++i) e += index[i] * layout_.strides[i];
  return storage_->data() + e * dtype_size(dtype_);
}

void copy_elements(const HostTensor& src, const HostTensor& dst) {
  VF_INTERNAL_CHECK(src.dtype() == dst.dtype() && src.shape() == dst.shape(), "copy of ",
                    dtype_short_name(src.dtype()), shape_to_string(src.shape()), " into ",
                    dtype_short_name(dst.dtype()), shape_to_string(dst.shape()));
  const int64_t size = dtype_size(src.dtype());
  for_each_index(src.shape(), [&](const int64_t* index) { std::memcpy(dst.element(index), src.element(index), size); });
}

namespace {
template <typename T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
}  // namespace

double HostTensor::get_double(const int64_t* index) const {
  const std::byte* p = element(index);
  switch (dtype_) {
    case DType::Bool: return load<uint8_t>(p) != 0;
    case DType::UInt8: return load<uint8_t>(p);
    case DType::Int8: return load<int8_t>(p);
    case DType::Int16: return load<int16_t>(p);
    case DType::Int32: return load<int32_t>(p);
    case DType::Int64: return static_cast<double>(load<int64_t>(p));
    case DType::Float16: return half_to_float(load<uint16_t>(p));
    case DType::BFloat16: return bfloat16_to_float(load<uint16_t>(p));
    case DType::Float32: return load<float>(p);
    case DType::Float64: return load<double>(p);
  }
  VF_INTERNAL_ERROR("bad dtype");
}

int64_t HostTensor::get_int64(const int64_t* index) const {
  const std::byte* p = element(index);
  switch (dtype_) {
    case DType::Bool: return load<uint8_t>(p) != 0;
    case DType::UInt8: return load<uint8_t>(p);
    case DType::Int8: return load<int8_t>(p);
    case DType::Int16: return load<int16_t>(p);
    case DType::Int32: return load<int32_t>(p);
    case DType::Int64: return load<int64_t>(p);
    case DType::Float16: case DType::BFloat16: case DType::Float32: case DType::Float64:
      VF_INTERNAL_ERROR("get_int64 on a floating tensor of dtype ", dtype_short_name(dtype_));
  }
  VF_INTERNAL_ERROR("bad dtype");
}

}  // namespace vf
