// The view algebra: for each view op, the layout after the op, or why the op needs a copy.
//
// This is the single source of truth about aliasing. Alias analysis, segmentation, bookend and the
// kernel lowering all ask these functions; none of them reasons about strides on its own.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "layout/layout.h"

namespace vf {

// The layout of a view op's result, or the reason it cannot be one (and needs a copy).
struct ViewResult {
  std::optional<Layout> layout;
  std::string copy_reason;  // set when !layout, e.g. "merging dims 2 and 3: stride 128 != 1 * 16"

  bool is_view() const { return layout.has_value(); }
  static ViewResult view(Layout l) { return {std::move(l), {}}; }
  static ViewResult copy(std::string why) { return {std::nullopt, std::move(why)}; }
};

// One function per view op. Arguments are canonical (as Fusion::add_node leaves them).
ViewResult transpose_layout(const Layout& in, const std::vector<int64_t>& permutation);
// A view whenever PyTorch's view() is one (ATen computeStride: dims group into chunks that are
// contiguous with respect to each other, size-1 dims never break a chunk, stride-0 dims split
// freely, empty tensors always view), and in any other case where one set of strides exists.
ViewResult reshape_layout(const Layout& in, const Shape& shape);
ViewResult broadcast_in_dim_layout(const Layout& in, const Shape& shape,
                                   const std::vector<int64_t>& broadcast_dims);
ViewResult slice_layout(const Layout& in, const std::vector<int64_t>& start,
                        const std::vector<int64_t>& end, const std::vector<int64_t>& step);
ViewResult squeeze_layout(const Layout& in, const std::vector<int64_t>& dims);

// Whether two chains of view ops (each a node's op and attrs) applied to the same layout give the
// same strides whatever that layout is: they are the same chain but for slices with unit steps
// (which move the offset and shrink sizes, never strides), and after such a slice come only
// transposes, squeezes and such slices (a reshape's or a broadcast's strides depend on the sizes
// the slice changed). The kernel lowering lets such views share their stride arguments.
bool same_view_strides(const std::vector<Node>& a, const std::vector<Node>& b);

// Dispatch on a node with one tensor input. View ops use the functions above; every other op
// (pad, cat, flip, compute) gives a copy whose reason says the op always writes new memory.
ViewResult view_layout(const Node& node, const Layout& in);

}  // namespace vf
