#include "segment/extract_segment.h"

#include <unordered_map>
#include <unordered_set>

#include "base/error.h"

namespace vf {

std::vector<const Value*> segment_inputs(const std::vector<const Node*>& nodes) {
  std::unordered_set<const Value*> defined, seen;
  for (const Node* n : nodes) defined.insert(n->outputs.begin(), n->outputs.end());
  std::vector<const Value*> inputs;
  for (const Node* n : nodes)
    for (const Value* v : n->inputs)
      if (!v->is_constant() && !defined.count(v) && seen.insert(v).second) inputs.push_back(v);
  return inputs;
}

ExtractedSegment extract_segment(const std::vector<const Node*>& nodes,
                                 const std::vector<const Value*>& outputs) {
  ExtractedSegment result;
  result.fusion = std::make_shared<Fusion>();
  Fusion& f = *result.fusion;
  std::unordered_map<const Value*, Value*> mapped;
  result.inputs = segment_inputs(nodes);
  for (const Value* v : result.inputs)
    mapped[v] = v->is_tensor ? f.add_tensor_input(v->name, v->dtype, v->shape) : f.add_scalar_input(v->name, v->scalar_kind);
  auto map_input = [&](const Value* v) -> Value* {
    if (auto it = mapped.find(v); it != mapped.end()) return it->second;
    return mapped[v] = f.add_constant(*v->constant);  // the rest are constants
  };
  for (const Node* node : nodes) {
    std::vector<Value*> inputs;
    for (const Value* in : node->inputs) inputs.push_back(map_input(in));
    std::vector<std::string> names;
    for (const Value* out : node->outputs) names.push_back(out->name);
    const auto& outs = f.add_node(node->op, std::move(inputs), node->attrs, names, node->line);
    for (size_t i = 0; i < outs.size(); ++i) mapped[node->outputs[i]] = outs[i];
  }
  for (const Value* out : outputs) {
    auto it = mapped.find(out);
    VF_INTERNAL_CHECK(it != mapped.end(), "segment output '", out->name, "' is not defined by its nodes");
    f.add_output(it->second);
  }
  return result;
}

}  // namespace vf
