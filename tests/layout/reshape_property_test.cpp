// Property tests of reshape_layout on random small layouts. The oracle is the definition of a
// reshape: the i-th element in row-major order of the result is the i-th element in row-major
// order of the input, so both layouts must give it the same address.
#include <gtest/gtest.h>

#include "layout/view_algebra.h"
#include "random_layouts.h"

namespace vf {
namespace {

using test::address;
using test::RandomLayouts;

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
