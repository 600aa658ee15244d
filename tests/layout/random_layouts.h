// Random small layouts for the layout tests: permuted, sliced, partly expanded buffers.
#pragma once

#include <algorithm>
#include <numeric>
#include <random>

#include "layout/layout.h"

namespace vf::test {

// The address of the element with row-major linear index `linear`.
inline int64_t address(const Layout& l, int64_t linear) {
  int64_t addr = l.offset;
  for (int64_t d = l.rank() - 1; d >= 0; --d) {
    addr += (linear % l.sizes[d]) * l.strides[d];
    linear /= l.sizes[d];
  }
  return addr;
}

// Layouts and shapes from a seeded generator.
class RandomLayouts {
 public:
  explicit RandomLayouts(uint32_t seed) : rng_(seed) {}

  int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  bool chance(int percent) { return uniform(1, 100) <= percent; }
  template <class T>
  void shuffle(std::vector<T>& v) {
    std::shuffle(v.begin(), v.end(), rng_);
  }

  // A contiguous buffer, permuted, sliced, partly expanded, with size-1 dims of odd strides.
  Layout layout() {
    Shape sizes(uniform(0, 4));
    for (int64_t& s : sizes) s = chance(8) ? 0 : uniform(1, 4);
    Layout buffer = Layout::contiguous(sizes, uniform(0, 3));
    std::vector<int64_t> perm(sizes.size());
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng_);
    Layout l{{}, {}, buffer.offset};
    for (int64_t d : perm) {
      int64_t n = buffer.sizes[d], stride = buffer.strides[d];
      if (chance(40)) {  // slice
        int64_t start = uniform(0, n), end = uniform(start, n), step = uniform(1, 3);
        l.offset += start * stride;
        n = (end - start + step - 1) / step;
        stride *= step;
      }
      if (n == 1 && chance(40)) {  // expand
        n = uniform(2, 3);
        stride = 0;
      }
      l.sizes.push_back(n);
      l.strides.push_back(stride);
    }
    if (chance(25)) {  // a size-1 dim with an arbitrary stride
      int64_t at = uniform(0, l.rank());
      l.sizes.insert(l.sizes.begin() + at, 1);
      l.strides.insert(l.strides.begin() + at, uniform(0, 50));
    }
    return l;
  }

  // A random shape with `numel` elements and rank at most 5.
  Shape shape_with_numel(int64_t numel) {
    Shape shape;
    if (numel == 0) {
      shape.assign(uniform(1, 4), 0);
      for (int64_t& s : shape) s = uniform(0, 4);
      shape[uniform(0, static_cast<int64_t>(shape.size()) - 1)] = 0;
      return shape;
    }
    shape.assign(uniform(numel > 1 ? 1 : 0, 4), 1);
    for (int64_t p = 2, n = numel; n > 1; ++p)
      for (; n % p == 0; n /= p) shape[uniform(0, static_cast<int64_t>(shape.size()) - 1)] *= p;
    if (chance(30)) shape.insert(shape.begin() + uniform(0, static_cast<int64_t>(shape.size())), 1);
    return shape;
  }

 private:
  std::mt19937 rng_;
};

}  // namespace vf::test
