#include "layout/layout.h"

#include <algorithm>
#include <numeric>
#include <sstream>

namespace vf {

Layout Layout::contiguous(const Shape& sizes, int64_t offset) {
  Layout l{sizes, std::vector<int64_t>(sizes.size(), 1), offset};
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 2; i >= 0; --i)
    l.strides[i] = l.strides[i + 1] * std::max<int64_t>(sizes[i + 1], 1);
  return l;
}

bool Layout::is_contiguous() const {
  if (numel() == 0) return true;
  int64_t expected = 1;
  for (int64_t i = rank() - 1; i >= 0; --i) {
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

int64_t Layout::storage_extent() const {
  if (numel() == 0) return 0;
  int64_t last = offset;
  for (int64_t i = 0; i < rank(); ++i) last += (sizes[i] - 1) * std::max<int64_t>(strides[i], 0);
  return last + 1;
}

bool Layout::is_non_overlapping() const {
  if (numel() <= 1) return true;
  // Sort the dims of size > 1 by stride; each must step over everything inside the smaller ones.
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < rank(); ++i)
    if (sizes[i] > 1) dims.push_back(i);
  std::sort(dims.begin(), dims.end(), [&](int64_t a, int64_t b) { return strides[a] < strides[b]; });
  int64_t span = 1;  // elements covered by the dims sorted so far
  for (int64_t d : dims) {
    if (strides[d] < span) return false;
    span = strides[d] * (sizes[d] - 1) + span;
  }
  return true;
}

std::string Layout::to_string() const {
  std::ostringstream out;
  out << "sizes " << shape_to_string(sizes) << " strides " << shape_to_string(strides) << " offset "
      << offset;
  return out.str();
}

}  // namespace vf
