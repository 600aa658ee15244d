// Host tensors: a dtype and a layout over shared, aligned host storage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "base/dtype.h"
#include "layout/layout.h"

namespace vf {

// A block of host memory, 64-byte aligned and zero-filled. Counts itself in a process-wide
// tally so that tests can compare planned allocations with real ones.
class Storage {
 public:
  explicit Storage(int64_t nbytes);
  // Host memory owned elsewhere, kept alive by `owner`; not counted as an allocation.
  static std::shared_ptr<Storage> wrap(std::byte* data, int64_t nbytes, std::shared_ptr<void> owner);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  std::byte* data() const { return data_; }
  int64_t nbytes() const { return nbytes_; }

 private:
  Storage() = default;
  std::byte* data_ = nullptr;
  int64_t nbytes_ = 0;
  bool owns_ = true;             // false for wrapped memory, which this Storage does not free
  std::shared_ptr<void> owner_;  // keeps wrapped memory alive
};

// A strided view of a Storage. Copying a HostTensor shares the storage.
class HostTensor {
 public:
  HostTensor() = default;
  // A new contiguous tensor, zero-filled.
  static HostTensor empty(DType dtype, const Shape& shape);
  // A view of existing storage; checks that the layout stays inside it.
  static HostTensor view_of(DType dtype, Layout layout, std::shared_ptr<Storage> storage);

  DType dtype() const { return dtype_; }
  const Layout& layout() const { return layout_; }
  const Shape& shape() const { return layout_.sizes; }
  int64_t numel() const { return layout_.numel(); }
  int64_t rank() const { return layout_.rank(); }
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  bool defined() const { return storage_ != nullptr; }

  // Address of the element at a multi-index (layout offset and strides applied).
  std::byte* element(const int64_t* index) const;
  // Element values converted to double / int64 (bool as 0/1, halves widened exactly).
  double get_double(const int64_t* index) const;
  int64_t get_int64(const int64_t* index) const;

 private:
  DType dtype_ = DType::Float32;
  Layout layout_;
  std::shared_ptr<Storage> storage_;
};

// Calls fn(index) for every multi-index of shape in row-major order (index is an int64_t array).
template <typename Fn>
void for_each_index(const Shape& shape, Fn&& fn) {
  const size_t rank = shape.size();
  for (int64_t s : shape)
    if (s == 0) return;
  std::vector<int64_t> index(rank, 0);
  for (;;) {
    fn(static_cast<const int64_t*>(index.data()));
    size_t d = rank;
    while (d > 0) {
      --d;
      if (++index[d] < shape[d]) break;
      index[d] = 0;
      if (d == 0) return;
    }
    if (rank == 0) return;
  }
}

// Copies the elements of src into dst (same dtype and shape, any layouts).
void copy_elements(const HostTensor& src, const HostTensor& dst);

// Live and total bytes allocated by Storage in this process (for allocation accounting tests).
int64_t host_storage_live_bytes();
int64_t host_storage_allocated_bytes();

}  // namespace vf
