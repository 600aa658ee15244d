// Property tests of reshape_layout on random small layouts. The oracle is the definition of a
// reshape: the i-th element in row-major order of the result is the i-th element in row-major
// order of the input, so both layouts must give it the same address.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "layout/view_algebra.h"

namespace vf {
namespace {

// The address of the element with row-major linear index `linear`.
int64_t address(const Layout& l, int64_t linear) {
  int64_t addr = l.offset;
  for (int64_t d = l.rank() - 1; d >= 0; --d) {
    addr += (linear % l.sizes[d]) * l.strides[d];
    linear /= l.sizes[d];
  }
  return addr;
}

class RandomLayouts {
 public:
  explicit RandomLayouts(uint32_t seed) : rng_(seed) {}

  int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  bool chance(int percent) { return uniform(1, 100) <= percent; }

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

// Whether some layout of `shape` addresses the elements of `in` in row-major order. Each dim's
// stride is forced by stepping once along it from element 0; the layout exists iff those strides
// reproduce every address.
bool view_exists(const Layout& in, const Shape& shape) {
  if (in.numel() == 0) return true;
  Layout candidate = Layout::contiguous(shape, address(in, 0));
  Layout unit = Layout::contiguous(shape);
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] > 1) candidate.strides[d] = address(in, unit.strides[d]) - candidate.offset;
  for (int64_t i = 0; i < in.numel(); ++i)
    if (address(candidate, i) != address(in, i)) return false;
  return true;
}

TEST(ReshapeLayoutProperty, RandomLayouts_ViewsAddressSameElementsInOrder) {
  RandomLayouts random(20240611);
  int views = 0, copies = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    Layout in = random.layout();
    Shape shape = random.shape_with_numel(in.numel());
    SCOPED_TRACE(in.to_string() + " -> " + shape_to_string(shape));
    ViewResult r = reshape_layout(in, shape);
    if (!r.is_view()) {
      ++copies;
      EXPECT_FALSE(r.copy_reason.empty());
      continue;
    }
    ++views;
    ASSERT_EQ(r.layout->sizes, shape);
    ASSERT_EQ(r.layout->strides.size(), shape.size());
    for (int64_t i = 0; i < in.numel(); ++i)
      ASSERT_EQ(address(*r.layout, i), address(in, i)) << "element " << i << " of " << r.layout->to_string();
  }
  // Both outcomes must be exercised for the property to mean anything.
  EXPECT_GT(views, 2000);
  EXPECT_GT(copies, 500);
}

TEST(ReshapeLayoutProperty, RandomLayouts_CopyOnlyWhenNoStridesExist) {
  RandomLayouts random(7);
  for (int iter = 0; iter < 20000; ++iter) {
    Layout in = random.layout();
    Shape shape = random.shape_with_numel(in.numel());
    ViewResult r = reshape_layout(in, shape);
    EXPECT_EQ(r.is_view(), view_exists(in, shape))
        << in.to_string() << " -> " << shape_to_string(shape) << ": " << r.copy_reason;
  }
}

TEST(ReshapeLayoutProperty, ContiguousInputs_AlwaysView) {
  RandomLayouts random(99);
  for (int iter = 0; iter < 2000; ++iter) {
    Shape sizes = random.shape_with_numel(random.uniform(0, 48));
    Layout in = Layout::contiguous(sizes, random.uniform(0, 5));
    Shape shape = random.shape_with_numel(in.numel());
    ViewResult r = reshape_layout(in, shape);
    ASSERT_TRUE(r.is_view()) << in.to_string() << " -> " << shape_to_string(shape);
    if (in.numel() > 0) {
      EXPECT_TRUE(r.layout->is_contiguous()) << r.layout->to_string();
    }
    EXPECT_EQ(r.layout->offset, in.offset);
  }
}

}  // namespace
}  // namespace vf
