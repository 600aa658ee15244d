// The index maps of the view and movement ops: from the index of an element of an op's result to
// the index of the input element it is (for pad, or padding; for cat, and which input).
//
// Each op's map is written once, over an index algebra, and instantiated twice: by the reference
// executor with plain integers (reference/movement.cpp: IntIndices below) and by the kernel
// lowering with kernel-IR index expressions (codegen/lowering.h: NestIndices). The view algebra
// (view_algebra.h) states the same maps as layouts, for the ops and inputs where the map is a view;
// tests/layout/index_map_test.cpp checks that the two agree element by element.
//
// An algebra A provides
//   Index, Pred                                the types of an index and of a condition on indices
//   Index literal(int64_t v)                   a number of the map itself (the 0 of a squeezed dim)
//   Index constant(const Node& n, int slot, int64_t v)
//                                              a number taken from node n's attributes or shapes
//                                              (a slice's start, a reshape's size); the lowering
//                                              passes these as kernel arguments, one per (n, slot)
//   Index add/sub/mul/div/mod(Index, Index)    integer arithmetic (div and mod of non-negatives)
//   Pred always()                              the condition that always holds
//   Pred ge/lt/eq(Index, Index), both(Pred, Pred)
//   std::optional<std::vector<Index>> unflattened(Index flat, std::span<const int64_t> sizes)
//                                              indices of `sizes` whose row-major linearisation is
//                                              known to be `flat` (the lowering's split loop dims),
//                                              so that a reshape needs no division; or nullopt
//   std::optional<Index> flattened(std::span<const Index> indices, std::span<const int64_t> sizes)
//                                              the row-major linearisation of `indices` over
//                                              `sizes` when the algebra knows one already (the
//                                              lowering's split row dim), or nullopt
// Operations run in the order written, so that an algebra that builds expressions (hash-consed,
// numbered in order) builds the same ones every time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "base/error.h"
#include "ir/ir.h"

namespace vf {

// The dims of a reshape's input shape `is` and output shape `os` matched in groups of equal numel,
// in order: input dims [i0, i1) hold the same elements as output dims [j0, j1).
struct ReshapeGroup {
  size_t i0, i1, j0, j1;
};
std::vector<ReshapeGroup> reshape_groups(const Shape& is, const Shape& os);

// transpose: input dim perm[k] is output dim k.
template <class A>
std::vector<typename A::Index> transpose_index(A& a, const Node& n, const std::vector<typename A::Index>& out) {
  const auto& perm = n.attr<PermuteAttrs>().permutation;
  std::vector<typename A::Index> in = out;
  for (size_t k = 0; k < perm.size(); ++k) in[perm[k]] = out[k];
  return in;
}

// broadcast_in_dim: input dim k is output dim broadcast_dims[k], or 0 when it has size 1.
template <class A>
std::vector<typename A::Index> broadcast_in_dim_index(A& a, const Node& n, const std::vector<typename A::Index>& out) {
  const Shape& in_shape = n.inputs[0]->shape;
  const auto& dims = n.attr<BroadcastAttrs>().broadcast_dims;
  std::vector<typename A::Index> in;
  for (size_t k = 0; k < dims.size(); ++k) in.push_back(in_shape[k] == 1 ? a.literal(0) : out[dims[k]]);
  return in;
}

// slice_prim: start + index * step along each dim (constant slots 2d: step, 2d + 1: start).
template <class A>
std::vector<typename A::Index> slice_index(A& a, const Node& n, const std::vector<typename A::Index>& out) {
  const auto& s = n.attr<SliceAttrs>();
  std::vector<typename A::Index> in = out;
  for (size_t d = 0; d < in.size(); ++d) {
    const int slot = static_cast<int>(d) * 2;
    if (s.step[d] != 1) in[d] = a.mul(in[d], a.constant(n, slot, s.step[d]));
    if (s.start[d] != 0) in[d] = a.add(in[d], a.constant(n, slot + 1, s.start[d]));
  }
  return in;
}

// squeeze: the squeezed dims (of size 1) are 0, the others the output's dims in order.
template <class A>
std::vector<typename A::Index> squeeze_index(A& a, const Node& n, const std::vector<typename A::Index>& out) {
  const auto& dims = n.attr<DimsAttrs>().dims;
  std::vector<typename A::Index> in;
  size_t k = 0;
  for (int64_t d = 0; d < n.inputs[0]->rank(); ++d) {
    const bool squeezed = std::find(dims.begin(), dims.end(), d) != dims.end();
    in.push_back(squeezed ? a.literal(0) : out[k++]);
  }
  return in;
}

// flip: size - 1 - index along each flipped dim (constant slot d).
template <class A>
std::vector<typename A::Index> flip_index(A& a, const Node& n, const std::vector<typename A::Index>& out) {
  const Shape& shape = n.output()->shape;
  std::vector<typename A::Index> in = out;
  for (int64_t d : n.attr<DimsAttrs>().dims) in[d] = a.sub(a.constant(n, static_cast<int>(d), shape[d] - 1), out[d]);
  return in;
}

// reshape: within each group of reshape_groups, the output index is linearised row-major over the
// group's output dims and unravelled over its input dims (div and mod by the inner sizes); a
// group of one dim each way copies the index, and a linearisation of loop indices that the
// algebra knows (unflattened, flattened) is used as is. Constant slots are numbered in that order.
template <class A>
std::vector<typename A::Index> reshape_index(A& a, const Node& n, const std::vector<typename A::Index>& out) {
  const Shape& is = n.inputs[0]->shape;
  const Shape& os = n.output()->shape;
  std::vector<typename A::Index> in(is.size(), a.literal(0));
  if (n.inputs[0]->numel() == 0) return in;  // an empty tensor has no element to map
  int slot = 0;
  for (const ReshapeGroup& g : reshape_groups(is, os)) {
    if (g.i1 - g.i0 == 1 && g.j1 - g.j0 == 1) {
      in[g.i0] = out[g.j0];
      continue;
    }
    if (g.i1 - g.i0 == 1) {
      const std::span<const typename A::Index> indices(out.data() + g.j0, g.j1 - g.j0);
      if (std::optional<typename A::Index> flat = a.flattened(indices, std::span<const int64_t>(os.data() + g.j0, g.j1 - g.j0))) {
        in[g.i0] = *flat;
        continue;
      }
    }
    if (g.j1 - g.j0 == 1) {
      const std::span<const int64_t> sizes(is.data() + g.i0, g.i1 - g.i0);
      if (std::optional<std::vector<typename A::Index>> split = a.unflattened(out[g.j0], sizes)) {
        std::copy(split->begin(), split->end(), in.begin() + static_cast<std::ptrdiff_t>(g.i0));
        continue;
      }
    }
    typename A::Index flat = g.j1 > g.j0 ? out[g.j0] : a.literal(0);  // a group of size-1 input dims only
    for (size_t k = g.j0 + 1; k < g.j1; ++k) flat = a.add(a.mul(flat, a.constant(n, slot++, os[k])), out[k]);
    int64_t inner = 1;
    for (size_t k = g.i1; k-- > g.i0;) {
      typename A::Index q = inner == 1 ? flat : a.div(flat, a.constant(n, slot++, inner));
      if (k != g.i0) q = a.mod(q, a.constant(n, slot++, is[k]));
      in[k] = q;
      inner *= is[k];
    }
  }
  return in;
}

// The ops whose every result element is one input element (the view ops and flip): their map.
template <class A>
std::vector<typename A::Index> one_to_one_index(A& a, const Node& n, const std::vector<typename A::Index>& out) {
  switch (n.op) {
    case OpKind::Transpose: return transpose_index(a, n, out);
    case OpKind::Reshape: return reshape_index(a, n, out);
    case OpKind::BroadcastInDim: return broadcast_in_dim_index(a, n, out);
    case OpKind::SlicePrim: return slice_index(a, n, out);
    case OpKind::Squeeze: return squeeze_index(a, n, out);
    case OpKind::Flip: return flip_index(a, n, out);
    default: VF_INTERNAL_ERROR("prims.", op_name(n.op), " has no one-to-one index map");
  }
}

// take, take_along_axis, gather: the element of the index tensor (input 1) that output element
// `out` reads: take's out[dim] of a 1-D index (none of a 0-D one); the others' `out` itself.
template <class Index>
std::vector<Index> index_operand_index(const Node& n, const std::vector<Index>& out) {
  const int64_t dim = n.attr<AxisAttrs>().dim;
  if (n.op != OpKind::Take) return out;
  if (n.inputs.at(1)->rank() == 0) return {};
  return {out.at(static_cast<size_t>(dim))};
}

// ... and the source element (input 0) that it copies, given the index's value `at`, which must
// lie in [0, n.inputs[0]->shape[dim]): `out` with `at` along dim.
template <class Index>
std::vector<Index> gathered_index(const Node& n, const std::vector<Index>& out, Index at) {
  std::vector<Index> in = out;
  in.at(static_cast<size_t>(n.attr<AxisAttrs>().dim)) = at;
  return in;
}

// pad: along a padded dim, j = index - lo must be >= 0, a multiple of interior + 1, and
// j / (interior + 1) below the input's size (constant slots 3d: lo, 3d + 1: interior + 1,
// 3d + 2: size); elsewhere the element is the padding value. `valid` is always() when no dim is
// padded.
template <class A>
struct PadIndex {
  std::vector<typename A::Index> index;
  typename A::Pred valid;
};
template <class A>
PadIndex<A> pad_index(A& a, const Node& n, const std::vector<typename A::Index>& out) {
  const auto& config = n.attr<PadAttrs>().config;
  const Shape& in_shape = n.inputs[0]->shape;
  PadIndex<A> r{out, a.always()};
  for (size_t d = 0; d < config.size(); ++d) {
    const PadDim& p = config[d];
    if (p.lo == 0 && p.hi == 0 && p.interior == 0) continue;
    const int slot = static_cast<int>(d) * 3;
    typename A::Index j = a.sub(out[d], a.constant(n, slot, p.lo));
    typename A::Pred ok = a.ge(j, a.literal(0));
    if (p.interior != 0) {
      const typename A::Index step = a.constant(n, slot + 1, p.interior + 1);
      const typename A::Index rem = a.mod(j, step);
      ok = a.both(ok, a.eq(rem, a.literal(0)));
      j = a.div(j, step);
    }
    ok = a.both(ok, a.lt(j, a.constant(n, slot + 2, in_shape[d])));
    r.valid = a.both(r.valid, ok);
    r.index[d] = j;
  }
  return r;
}

// cat: each non-empty input k covers [lo, lo + size) of the dim (constant slots 2k: lo,
// 2k + 1: lo + size); `each(k, in_range, index)` is called for each such input in order with the
// condition that the output index is in its range and the index into it.
template <class A, class Each>
void cat_index(A& a, const Node& n, const std::vector<typename A::Index>& out, Each&& each) {
  const int64_t dim = n.attr<AxisAttrs>().dim;
  int64_t lo = 0;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const int64_t size = n.inputs[k]->shape[dim];
    if (size == 0) continue;
    const int slot = static_cast<int>(k) * 2;
    const typename A::Index lo_k = a.constant(n, slot, lo);
    const typename A::Pred below = a.lt(out[dim], a.constant(n, slot + 1, lo + size));
    const typename A::Pred above = a.ge(out[dim], lo_k);
    const typename A::Pred in_range = a.both(above, below);
    std::vector<typename A::Index> in = out;
    in[dim] = a.sub(out[dim], lo_k);
    each(k, in_range, in);
    lo += size;
  }
}

// The algebra of plain integers (the reference executor's).
struct IntIndices {
  using Index = int64_t;
  using Pred = bool;
  Index literal(int64_t v) const { return v; }
  Index constant(const Node&, int, int64_t v) const { return v; }
  Index add(Index x, Index y) const { return x + y; }
  Index sub(Index x, Index y) const { return x - y; }
  Index mul(Index x, Index y) const { return x * y; }
  Index div(Index x, Index y) const { return x / y; }
  Index mod(Index x, Index y) const { return x % y; }
  Pred always() const { return true; }
  Pred ge(Index x, Index y) const { return x >= y; }
  Pred lt(Index x, Index y) const { return x < y; }
  Pred eq(Index x, Index y) const { return x == y; }
  Pred both(Pred x, Pred y) const { return x && y; }
  std::optional<std::vector<Index>> unflattened(Index, std::span<const int64_t>) const { return std::nullopt; }
  std::optional<Index> flattened(std::span<const Index>, std::span<const int64_t>) const { return std::nullopt; }
};

}  // namespace vf
