// The view algebra: result layouts of view ops, or the reason a copy is needed.
#include "layout/view_algebra.h"

#include <algorithm>

#include "base/error.h"

namespace vf {

ViewResult transpose_layout(const Layout& in, const std::vector<int64_t>& permutation) {
  VF_INTERNAL_CHECK(static_cast<int64_t>(permutation.size()) == in.rank(), "permutation ",
                    shape_to_string(permutation), " for ", in.to_string());
  Layout out{Shape(in.rank()), std::vector<int64_t>(in.rank()), in.offset};
  for (int64_t i = 0; i < in.rank(); ++i) {
    const int64_t d = permutation[i];
    VF_INTERNAL_CHECK(d >= 0 && d < in.rank(), "permutation entry ", d, " for ", in.to_string());
    out.sizes[i] = in.sizes[d];
    out.strides[i] = in.strides[d];
  }
  return ViewResult::view(std::move(out));
}

// Follows ATen's computeStride. Walking the old dims from the innermost, dims are grouped into
// chunks in which each dim's stride is the stride of the next inner dim times that dim's size
// (size-1 dims never end a chunk, and stride-0 dims chain with each other). A chunk spans the
// elements {k * base_stride} for k below its numel, so any run of new dims that multiplies out to
// exactly that numel views it with row-major strides scaled by base_stride. A new dim that would
// straddle two chunks merges dims that are not contiguous with each other: that needs a copy.
ViewResult reshape_layout(const Layout& in, const Shape& shape) {
  VF_INTERNAL_CHECK(shape_numel(shape) == in.numel(), "reshape of ", in.to_string(), " to ",
                    shape_to_string(shape));
  if (in.sizes == shape) return ViewResult::view(in);
  // Any strides address an empty or a rank-0 tensor's elements in order.
  if (in.numel() == 0 || in.rank() == 0) return ViewResult::view(Layout::contiguous(shape, in.offset));

  Layout out{shape, std::vector<int64_t>(shape.size(), 0), in.offset};
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t base_stride = in.strides.back();
  int64_t chunk_numel = 1, view_numel = 1;
  for (int64_t d = in.rank() - 1; d >= 0; --d) {
    chunk_numel *= in.sizes[d];
    const bool chunk_ends =
        d == 0 || (in.sizes[d - 1] != 1 && in.strides[d - 1] != chunk_numel * base_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < chunk_numel || shape[view_d] == 1)) {
      out.strides[view_d] = view_numel * base_stride;
      view_numel *= shape[view_d];
      --view_d;
    }
    if (view_numel != chunk_numel) {
      // A new dim covers dim d - 1 and part of the chunk starting at d; name the chunk's outermost
      // dim of size > 1, whose stride dim d - 1 would have to continue.
      int64_t inner = d;
      while (in.sizes[inner] == 1) ++inner;
      return ViewResult::copy(detail::concat(
          "merging dims ", d - 1, " and ", inner, " of sizes ", shape_to_string(in.sizes),
          " strides ", shape_to_string(in.strides), ": stride ", in.strides[d - 1], " != ",
          in.sizes[inner], " * ", in.strides[inner]));
    }
    if (d > 0) {
      base_stride = in.strides[d - 1];
      chunk_numel = 1;
      view_numel = 1;
    }
  }
  VF_INTERNAL_CHECK(view_d == -1, "reshape of ", in.to_string(), " to ", shape_to_string(shape),
                    " left new dims without strides");
  return ViewResult::view(std::move(out));
}

ViewResult broadcast_in_dim_layout(const Layout& in, const Shape& shape,
                                   const std::vector<int64_t>& broadcast_dims) {
  VF_INTERNAL_CHECK(static_cast<int64_t>(broadcast_dims.size()) == in.rank(),
                    "broadcast_dims ", shape_to_string(broadcast_dims), " for ", in.to_string());
  Layout out{shape, std::vector<int64_t>(shape.size(), 0), in.offset};
  for (int64_t i = 0; i < in.rank(); ++i) {
    const int64_t d = broadcast_dims[i];
    VF_INTERNAL_CHECK(d >= 0 && d < static_cast<int64_t>(shape.size()), "broadcast dim ", d,
                      " for shape ", shape_to_string(shape));
    // A kept dim keeps its stride; a size-1 dim that grows repeats its one element.
    if (in.sizes[i] == shape[d]) out.strides[d] = in.strides[i];
  }
  return ViewResult::view(std::move(out));
}

ViewResult slice_layout(const Layout& in, const std::vector<int64_t>& start,
                        const std::vector<int64_t>& end, const std::vector<int64_t>& step) {
  VF_INTERNAL_CHECK(static_cast<int64_t>(start.size()) == in.rank() &&
                        static_cast<int64_t>(end.size()) == in.rank() &&
                        static_cast<int64_t>(step.size()) == in.rank(),
                    "slice of ", in.to_string(), " with start ", shape_to_string(start), " end ",
                    shape_to_string(end), " step ", shape_to_string(step));
  Layout out = in;
  for (int64_t i = 0; i < in.rank(); ++i) {
    VF_INTERNAL_CHECK(step[i] >= 1 && start[i] <= end[i], "slice dim ", i, " of ", in.to_string());
    out.offset += start[i] * in.strides[i];
    out.strides[i] = in.strides[i] * step[i];
    out.sizes[i] = (end[i] - start[i] + step[i] - 1) / step[i];
  }
  return ViewResult::view(std::move(out));
}

ViewResult squeeze_layout(const Layout& in, const std::vector<int64_t>& dims) {
  Layout out{{}, {}, in.offset};
  for (int64_t i = 0; i < in.rank(); ++i) {
    if (std::find(dims.begin(), dims.end(), i) != dims.end()) {
      VF_INTERNAL_CHECK(in.sizes[i] == 1, "squeezing dim ", i, " of ", in.to_string());
      continue;
    }
    out.sizes.push_back(in.sizes[i]);
    out.strides.push_back(in.strides[i]);
  }
  return ViewResult::view(std::move(out));
}

namespace {

ViewResult view_op_layout(const Node& node, const Layout& in) {
  switch (node.op) {
    case OpKind::Transpose:
      return transpose_layout(in, node.attr<PermuteAttrs>().permutation);
    case OpKind::Reshape:
      return reshape_layout(in, node.attr<ReshapeAttrs>().shape);
    case OpKind::BroadcastInDim: {
      const auto& a = node.attr<BroadcastAttrs>();
      return broadcast_in_dim_layout(in, a.shape, a.broadcast_dims);
    }
    case OpKind::SlicePrim: {
      const auto& a = node.attr<SliceAttrs>();
      return slice_layout(in, a.start, a.end, a.step);
    }
    case OpKind::Squeeze:
      return squeeze_layout(in, node.attr<DimsAttrs>().dims);
    default:
      VF_INTERNAL_ERROR("prims.", op_name(node.op), " is not a view op");
  }
}

// The steps of a view chain that decide its strides (unit-step slices dropped), or nullopt where a
// dropped slice precedes a step whose strides depend on sizes.
std::optional<std::vector<const Node*>> stride_steps(const std::vector<Node>& steps) {
  std::vector<const Node*> kept;
  bool sliced = false;
  for (const Node& n : steps) {
    if (n.op == OpKind::SlicePrim) {
      const std::vector<int64_t>& step = n.attr<SliceAttrs>().step;
      if (std::all_of(step.begin(), step.end(), [](int64_t k) { return k == 1; })) {
        sliced = true;
        continue;
      }
    }
    if (sliced && n.op != OpKind::Transpose && n.op != OpKind::Squeeze) return std::nullopt;
    kept.push_back(&n);
  }
  return kept;
}

}  // namespace

bool same_view_strides(const std::vector<Node>& a, const std::vector<Node>& b) {
  const auto x = stride_steps(a), y = stride_steps(b);
  if (!x || !y || x->size() != y->size()) return false;
  for (size_t k = 0; k < x->size(); ++k)
    if ((*x)[k]->op != (*y)[k]->op || !((*x)[k]->attrs == (*y)[k]->attrs)) return false;
  return true;
}

ViewResult view_layout(const Node& node, const Layout& in) {
  const std::string prim = "prims." + std::string(op_name(node.op));
  switch (op_category(node.op)) {
    case OpCategory::View:
      return view_op_layout(node, in);
    case OpCategory::Movement:
      return ViewResult::copy(prim + " always writes new memory (it moves data, never aliases)");
    case OpCategory::Cast:
    case OpCategory::Unary:
    case OpCategory::Binary:
    case OpCategory::Ternary:
    case OpCategory::Reduction:
    case OpCategory::Creation:
    case OpCategory::Scatter:
    case OpCategory::Scan:
    case OpCategory::Contraction:
      return ViewResult::copy(prim + " always writes new memory (it computes new values)");
  }
  VF_INTERNAL_ERROR("unhandled op category for prims.", op_name(node.op));
}

}  // namespace vf
