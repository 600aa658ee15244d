// The index maps of layout/index_map.h: against the view algebra (for every view a random layout
// allows, the result layout addresses element o where the input layout addresses the mapped index)
// and against the definitions of reshape, pad and cat.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "layout/index_map.h"
#include "layout/view_algebra.h"
#include "random_layouts.h"

namespace vf {
namespace {

using test::RandomLayouts;

int64_t address_at(const Layout& l, const std::vector<int64_t>& index) {
  int64_t a = l.offset;
  for (size_t d = 0; d < index.size(); ++d) a += index[d] * l.strides[d];
  return a;
}

std::vector<int64_t> unravel(int64_t linear, const Shape& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = linear % shape[d];
    linear /= shape[d];
  }
  return index;
}

std::vector<int64_t> map_index(const Node& n, const std::vector<int64_t>& out) {
  IntIndices ints;
  return one_to_one_index(ints, n, out);
}

// A shape of rank in [1, max_rank] with sizes in [lo, hi].
Shape random_shape(RandomLayouts& random, int64_t max_rank, int64_t lo, int64_t hi) {
  Shape shape(static_cast<size_t>(random.uniform(1, max_rank)));
  for (int64_t& s : shape) s = random.uniform(lo, hi);
  return shape;
}

// A random view op's attributes for an input of `shape`.
std::pair<OpKind, OpAttrs> random_view_op(RandomLayouts& random, const Shape& shape) {
  const auto rank = static_cast<int64_t>(shape.size());
  switch (random.uniform(0, 4)) {
    case 0: {
      std::vector<int64_t> perm(shape.size());
      std::iota(perm.begin(), perm.end(), 0);
      random.shuffle(perm);
      return {OpKind::Transpose, PermuteAttrs{perm}};
    }
    case 1:
      return {OpKind::Reshape, ReshapeAttrs{random.shape_with_numel(shape_numel(shape))}};
    case 2: {
      SliceAttrs a;
      for (int64_t s : shape) {
        const int64_t start = random.uniform(0, s), end = random.uniform(start, s);
        a.start.push_back(start);
        a.end.push_back(end);
        a.step.push_back(random.uniform(1, 3));
      }
      return {OpKind::SlicePrim, a};
    }
    case 3: {
      DimsAttrs a;
      for (int64_t d = 0; d < rank; ++d)
        if (shape[d] == 1 && random.chance(60)) a.dims.push_back(d);
      return {OpKind::Squeeze, a};
    }
    default: {  // new dims anywhere, size-1 dims expanded
      BroadcastAttrs a;
      for (int64_t d = 0; d < rank; ++d) {
        while (random.chance(25)) a.shape.push_back(random.uniform(1, 3));
        a.broadcast_dims.push_back(static_cast<int64_t>(a.shape.size()));
        a.shape.push_back(shape[d] == 1 && random.chance(50) ? random.uniform(1, 3) : shape[d]);
      }
      if (random.chance(25)) a.shape.push_back(random.uniform(1, 3));
      return {OpKind::BroadcastInDim, a};
    }
  }
}

TEST(IndexMap, ViewLayouts_AddressTheMappedElements) {
  RandomLayouts random(20261204);
  std::map<OpKind, int> views;
  for (int iter = 0; iter < 20000; ++iter) {
    const Layout in = random.layout();
    Fusion f;
    Value* x = f.add_tensor_input("x", DType::Float32, in.sizes);
    const auto [op, attrs] = random_view_op(random, in.sizes);
    const Node& n = *f.add_node(op, {x}, attrs).at(0)->producer;
    const ViewResult r = view_layout(n, in);
    if (!r.is_view()) continue;  // a reshape that needs a copy: reshape_property_test.cpp
    ++views[op];
    const Shape& shape = n.output()->shape;
    ASSERT_EQ(r.layout->sizes, shape);
    for (int64_t k = 0; k < shape_numel(shape); ++k) {
      const std::vector<int64_t> o = unravel(k, shape);
      ASSERT_EQ(address_at(*r.layout, o), address_at(in, map_index(n, o)))
          << "prims." << op_name(op) << " of " << in.to_string() << " to " << r.layout->to_string() << ", element " << k;
    }
  }
  for (OpKind op : {OpKind::Transpose, OpKind::Reshape, OpKind::SlicePrim, OpKind::Squeeze, OpKind::BroadcastInDim})
    EXPECT_GT(views[op], 1000) << op_name(op);
}

// A reshape keeps the row-major order: the output's k-th element is the input's k-th.
TEST(IndexMap, Reshape_KeepsRowMajorOrder) {
  RandomLayouts random(5);
  for (int iter = 0; iter < 5000; ++iter) {
    const Shape is = random.shape_with_numel(random.uniform(0, 60));
    Fusion f;
    Value* x = f.add_tensor_input("x", DType::Float32, is);
    const Node& n = *f.add(OpKind::Reshape, {x}, ReshapeAttrs{random.shape_with_numel(shape_numel(is))})->producer;
    const Shape& os = n.output()->shape;
    for (int64_t k = 0; k < shape_numel(os); ++k)
      ASSERT_EQ(map_index(n, unravel(k, os)), unravel(k, is)) << shape_to_string(is) << " -> " << shape_to_string(os);
  }
}

// Pad: input element i lands at lo + i * (interior + 1) when that is inside the result; every other
// position is padding.
TEST(IndexMap, Pad_InputElementsWhereTheyLandOnly) {
  RandomLayouts random(11);
  IntIndices ints;
  for (int iter = 0; iter < 3000; ++iter) {
    const Shape is = random_shape(random, 3, 0, 4);
    PadAttrs a;
    for (int64_t s : is) {  // lo and hi crop at most what the dim holds
      const int64_t interior = random.uniform(0, 2), held = s + std::max<int64_t>(0, s - 1) * interior;
      const int64_t lo = random.uniform(-held, 3);
      a.config.push_back({lo, random.uniform(-std::min(held, held + lo), 3), interior});
    }
    Fusion f;
    Value* x = f.add_tensor_input("x", DType::Float32, is);
    const Value* y = f.add(OpKind::Pad, {x, f.add_constant(Scalar::from_float(0))}, a);
    const Shape& os = y->shape;
    std::map<std::vector<int64_t>, std::vector<int64_t>> lands;  // output index -> input index
    for (int64_t k = 0; k < shape_numel(is); ++k) {
      std::vector<int64_t> i = unravel(k, is), o(is.size());
      bool inside = true;
      for (size_t d = 0; d < is.size(); ++d) {
        o[d] = a.config[d].lo + i[d] * (a.config[d].interior + 1);
        inside = inside && o[d] >= 0 && o[d] < os[d];
      }
      if (inside) lands[o] = i;
    }
    for (int64_t k = 0; k < shape_numel(os); ++k) {
      const std::vector<int64_t> o = unravel(k, os);
      const PadIndex<IntIndices> p = pad_index(ints, *y->producer, o);
      const auto it = lands.find(o);
      ASSERT_EQ(p.valid, it != lands.end()) << shape_to_string(is) << " at " << shape_to_string(o);
      if (p.valid) {
        EXPECT_EQ(p.index, it->second);
      }
    }
  }
}

// Cat: each output element comes from exactly one input, at its position less the input's start.
TEST(IndexMap, Cat_EachElementFromOneInput) {
  RandomLayouts random(3);
  IntIndices ints;
  for (int iter = 0; iter < 2000; ++iter) {
    const Shape base = random_shape(random, 3, 1, 3);
    const int64_t dim = random.uniform(0, static_cast<int64_t>(base.size()) - 1);
    Fusion f;
    std::vector<Value*> inputs;
    std::vector<int64_t> starts;
    int64_t at = 0;
    for (int64_t k = 0, n = random.uniform(1, 4); k < n; ++k) {
      Shape s = base;
      s[dim] = random.uniform(0, 3);
      starts.push_back(at);
      at += s[dim];
      inputs.push_back(f.add_tensor_input("x" + std::to_string(k), DType::Float32, s));
    }
    const Value* y = f.add(OpKind::Cat, inputs, AxisAttrs{dim});
    for (int64_t k = 0; k < y->numel(); ++k) {
      const std::vector<int64_t> o = unravel(k, y->shape);
      int from = 0;
      cat_index(ints, *y->producer, o, [&](size_t input, bool in_range, const std::vector<int64_t>& index) {
        if (!in_range) return;
        ++from;
        EXPECT_GE(o[dim], starts[input]);
        EXPECT_LT(o[dim], starts[input] + inputs[input]->shape[dim]);
        EXPECT_EQ(index[dim], o[dim] - starts[input]);
      });
      ASSERT_EQ(from, 1) << shape_to_string(y->shape) << " at " << shape_to_string(o);
    }
  }
}

}  // namespace
}  // namespace vf
