#include "segment/output_layouts.h"

#include <algorithm>
#include <numeric>
#include <optional>

#include "base/error.h"
#include "layout/view_algebra.h"

namespace vf {
namespace {

// The layout of a view op's input given the layout of its result, when the op is invertible as a
// view: transposes invert, and ops that keep the element count (reshape, squeeze, unsqueeze,
// full slices) invert as a reshape back. Asks the view algebra in both cases.
std::optional<Layout> invert_view(const Node& node, const Layout& out) {
  const Value& in = *node.inputs[0];
  ViewResult r;
  if (node.op == OpKind::Transpose) {
    const auto& perm = node.attr<PermuteAttrs>().permutation;
    std::vector<int64_t> inverse(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
    r = transpose_layout(out, inverse);
  } else if (in.numel() == node.output()->numel()) {
    r = reshape_layout(out, in.shape);
  } else {
    return std::nullopt;
  }
  return r.layout;
}

// The chain of view nodes leading to v from the nearest value in `members`, or nothing.
struct Chain {
  const Value* from = nullptr;
  std::vector<const Node*> nodes;  // from `from` towards v
};
Chain view_chain_to(const Value* v, const std::vector<const Value*>& members,
                    const std::function<bool(const Node*)>& in_group) {
  Chain chain;
  const Value* cur = v;
  while (cur->producer && is_view_op(cur->producer->op) && in_group(cur->producer)) {
    chain.nodes.push_back(cur->producer);
    cur = cur->producer->inputs[0];
    if (std::find(members.begin(), members.end(), cur) != members.end()) {
      std::reverse(chain.nodes.begin(), chain.nodes.end());
      chain.from = cur;
      return chain;
    }
  }
  return {};
}

// Dense strides for `shape` whose dims are ordered like `order_of`'s strides (largest first).
Layout dense_like(const Shape& shape, const Layout& order_of) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> dims(rank);
  std::iota(dims.begin(), dims.end(), 0);
  std::stable_sort(dims.begin(), dims.end(),
                   [&](int64_t a, int64_t b) { return order_of.strides[a] > order_of.strides[b]; });
  Layout l{shape, std::vector<int64_t>(rank, 0), 0};
  int64_t stride = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    l.strides[dims[i]] = stride;
    stride *= std::max<int64_t>(shape[dims[i]], 1);
  }
  return l;
}

Layout dominant_layout(const Value* v, const std::function<bool(const Node*)>& in_group,
                       const std::function<const Placement*(const Value*)>& placement_of);

// For a value that is a chain of view ops of a value computed here: the source's layout carried
// through the views, where that is dense (a permutation of a contiguous layout): the memory order
// its computation has, as eager leaves it.
std::optional<Layout> layout_through_views(const Value* v, const std::function<bool(const Node*)>& in_group,
                                           const std::function<const Placement*(const Value*)>& placement_of) {
  std::vector<const Node*> chain;  // from v towards its source
  const Value* source = v;
  while (source->producer && in_group(source->producer) && is_view_op(source->producer->op)) {
    chain.push_back(source->producer);
    source = source->producer->inputs[0];
  }
  if (chain.empty() || !source->producer || !in_group(source->producer)) return std::nullopt;
  std::optional<Layout> l = dominant_layout(source, in_group, placement_of);
  for (auto n = chain.rbegin(); n != chain.rend() && l; ++n) l = view_layout(**n, *l).layout;
  if (!l || l->offset != 0 || !l->is_non_overlapping() || l->storage_extent() != l->numel()) return std::nullopt;
  return l;
}

// Whether the last dim longer than 1 has unit stride (or there is none): a kernel that iterates
// over the value's shape then writes it in packs along the innermost dim.
bool innermost_unit(const Layout& l) {
  for (int64_t d = l.rank() - 1; d >= 0; --d)
    if (l.sizes[d] > 1) return l.strides[d] == 1;
  return true;
}

// The layout a lone produced value gets: the order of the value it is a view of
// (layout_through_views), where its innermost dim keeps unit stride (Llama's RoPE region returns q
// and k as transposes of [B, S, H, D] values: written [B, S, H, D] in memory, cuDNN's attention
// output comes back in that order and its transpose back to [B, S, H * D] is a view, not a copy);
// else the memory order of its dominant input.
Layout dominant_layout(const Value* v, const std::function<bool(const Node*)>& in_group,
                       const std::function<const Placement*(const Value*)>& placement_of) {
  std::optional<Layout> through = layout_through_views(v, in_group, placement_of);
  if (through && innermost_unit(*through)) return *std::move(through);
  std::vector<const Value*> stack{v};
  const Placement* best = nullptr;
  const Value* best_value = nullptr;
  while (!stack.empty()) {
    const Value* cur = stack.back();
    stack.pop_back();
    if (cur->shape != v->shape || !cur->is_tensor) continue;
    if (cur->producer && in_group(cur->producer)) {
      if (is_elementwise(cur->producer->op))
        for (const Value* in : cur->producer->inputs) stack.push_back(in);
      continue;
    }
    const Placement* p = placement_of(cur);
    if (p && (!best || cur->nbytes() > best_value->nbytes())) best = p, best_value = cur;
  }
  if (!best || best->layout.is_contiguous()) return Layout::contiguous(v->shape);
  return dense_like(v->shape, best->layout);
}

}  // namespace

WrittenBuffers choose_output_layouts(const std::vector<const Value*>& produced,
                                     const std::function<bool(const Node*)>& in_group,
                                     const std::function<const Placement*(const Value*)>& placement_of) {
  WrittenBuffers result;
  // Each produced value's parent: the nearest produced value it is a view chain of.
  std::vector<Chain> parent(produced.size());
  for (size_t i = 0; i < produced.size(); ++i) parent[i] = view_chain_to(produced[i], produced, in_group);
  auto index_of = [&](const Value* v) {
    return static_cast<size_t>(std::find(produced.begin(), produced.end(), v) - produced.begin());
  };
  std::vector<bool> placed(produced.size(), false);

  for (size_t r = 0; r < produced.size(); ++r) {
    if (parent[r].from || placed[r]) continue;  // r is the root of a family (no produced parent)
    std::vector<size_t> family{r};
    for (size_t k = 0; k < family.size(); ++k)
      for (size_t j = 0; j < produced.size(); ++j)
        if (parent[j].from == produced[family[k]]) family.push_back(j);

    // Try each member as the one laid out densely, most downstream first, and derive the others
    // from it. The first choice that makes every member a view wins; with none, each member is
    // written on its own below. A member that is a permuted view of the value computed (the
    // transpose of a gradient that a weight-gradient matmul reads) comes after the others: the
    // kernel iterates over the chosen member's shape, and writing a buffer laid out in that
    // member's order while computing in another's made nanoGPT's cross-entropy backward a
    // transposing kernel (7.3 ms against 0.8 in the step that merged that transpose in).
    std::vector<size_t> candidates(family.rbegin(), family.rend());
    std::stable_partition(candidates.begin(), candidates.end(), [&](size_t k) {
      std::optional<Layout> through = layout_through_views(produced[k], in_group, placement_of);
      return !through || through->is_contiguous();
    });
    for (auto c = candidates.begin(); c != candidates.end(); ++c) {
      std::vector<std::optional<Layout>> layouts(produced.size());
      layouts[*c] = dominant_layout(produced[*c], in_group, placement_of);
      // Up from c to the family root through inverse views...
      for (size_t cur = *c; parent[cur].from && layouts[cur];) {
        std::optional<Layout> l = layouts[cur];
        for (auto n = parent[cur].nodes.rbegin(); n != parent[cur].nodes.rend() && l; ++n) l = invert_view(**n, *l);
        cur = index_of(parent[cur].from);
        layouts[cur] = l;
        if (!l) break;
      }
      // ...then down from every derived member to its children, in family order.
      for (size_t k : family) {
        if (!layouts[k]) continue;
        for (size_t j : family) {
          if (parent[j].from != produced[k] || layouts[j]) continue;
          std::optional<Layout> l = layouts[k];
          for (const Node* n : parent[j].nodes) {
            if (!l) break;
            l = view_layout(*n, *l).layout;
          }
          layouts[j] = l;
        }
      }
      bool all_views = std::all_of(family.begin(), family.end(), [&](size_t k) { return layouts[k].has_value(); });
      if (all_views) {
        for (size_t k : family) {
          if (k == *c) continue;
          result.placements.push_back({produced[k], Placement{produced[*c], *layouts[k]}});
          placed[k] = true;
        }
        result.roots.push_back(produced[*c]);
        result.placements.push_back({produced[*c], Placement{produced[*c], *layouts[*c]}});
        placed[*c] = true;
        break;
      }
    }
  }
  // Whatever is left (families that could not share one buffer) is written on its own.
  for (size_t i = 0; i < produced.size(); ++i) {
    if (placed[i]) continue;
    Layout l = dominant_layout(produced[i], in_group, placement_of);
    result.roots.push_back(produced[i]);
    result.placements.push_back({produced[i], Placement{produced[i], std::move(l)}});
  }
  return result;
}

}  // namespace vf
