#include "passes/bookend.h"

#include <unordered_set>

namespace vf {

BookendSplit find_bookends(const Fusion& fusion) {
  const auto& nodes = fusion.nodes();
  BookendSplit split{std::vector<bool>(nodes.size(), false), std::vector<bool>(nodes.size(), false)};
  std::unordered_set<const Value*> peeled(fusion.inputs().begin(), fusion.inputs().end());
  for (const auto& node : nodes) {
    if (!is_view_op(node->op) || !peeled.count(node->inputs[0])) continue;
    split.leading[node->id] = true;
    peeled.insert(node->output());
  }
  // Backward, so that a chain of trailing view ops peels from its end.
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const Node& node = **it;
    if (!is_view_op(node.op) || split.leading[node.id]) continue;
    bool used_only_outside = true;
    for (const Node* use : node.output()->uses) used_only_outside &= split.trailing[use->id];
    split.trailing[node.id] = used_only_outside;
  }
  return split;
}

}  // namespace vf
