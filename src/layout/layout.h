// Layouts: how a tensor's elements sit in a buffer (sizes, strides in elements, storage offset).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace vf {

struct Layout {
  Shape sizes;
  std::vector<int64_t> strides;  // in elements; 0 for broadcast (expanded) dims
  int64_t offset = 0;            // in elements, from the start of the buffer

  static Layout contiguous(const Shape& sizes, int64_t offset = 0);  // row-major
  int64_t rank() const { return static_cast<int64_t>(sizes.size()); }
  int64_t numel() const { return shape_numel(sizes); }
  // Row-major contiguous; size-1 dims may have any stride. An empty tensor is contiguous.
  bool is_contiguous() const;
  // Element index of the storage one past the furthest element (offset included); 0 when empty.
  int64_t storage_extent() const;
  // True when no two distinct indices map to the same element (no stride-0 dim of size > 1, ...).
  bool is_non_overlapping() const;
  std::string to_string() const;  // "sizes [2, 8] strides [8, 1] offset 0"
  bool operator==(const Layout&) const = default;
};

}  // namespace vf
