// FusionRewriter: builds the rewritten copy of a fusion that a pass returns, node by node.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/ir.h"

namespace vf {

// What a fusion pass returns: the rewritten fusion (null when nothing was rewritten), whose
// inputs and outputs match the original's, and a line per rewrite, for explain.
struct RewrittenFusion {
  std::shared_ptr<const Fusion> fusion;
  std::vector<std::string> notes;
};

class FusionRewriter {
 public:
  // Starts the copy with the original's inputs, under their names.
  explicit FusionRewriter(const Fusion& original);

  // The copy of an original value (constants are copied on first use).
  Value* map(const Value* original);
  void set(const Value* original, Value* rewritten) { mapped_[original] = rewritten; }
  Value* constant(const Scalar& value) { return fusion_->add_constant(value); }
  // A name that neither fusion has, from `base`.
  std::string fresh(const std::string& base) const;
  // Appends n unchanged (on the copies of its inputs) and maps its outputs.
  void copy(const Node& n);
  // Appends a node of one output named `name`.
  Value* add(OpKind op, std::vector<Value*> inputs, OpAttrs attrs, const std::string& name, int line);
  // Appends a node of any number of outputs.
  const std::vector<Value*>& add_node(OpKind op, std::vector<Value*> inputs, OpAttrs attrs,
                                         std::vector<std::string> names, int line) {
    return fusion_->add_node(op, std::move(inputs), std::move(attrs), std::move(names), line);
  }
  // Maps original output `out` to `result`, which must have its shape and dtype.
  void replace(const Value* out, Value* result);
  // Adds the outputs and gives the fusion.
  RewrittenFusion finish(std::vector<std::string> notes);

 private:
  const Fusion& original_;
  std::shared_ptr<Fusion> fusion_;
  std::unordered_map<const Value*, Value*> mapped_;
};

// The skeleton of a pass: the nodes for which applies(node) holds are rewritten by
// rewrite(rewriter, node), which returns the note for explain; the others are copied. {} when
// applies holds for no node.
template <class Applies, class Rewrite>
RewrittenFusion rewrite_nodes(const Fusion& fusion, const Applies& applies, const Rewrite& rewrite) {
  if (std::none_of(fusion.nodes().begin(), fusion.nodes().end(), [&](const auto& n) { return applies(*n); })) return {};
  FusionRewriter r(fusion);
  std::vector<std::string> notes;
  for (const auto& n : fusion.nodes()) {
    if (applies(*n))
      notes.push_back(rewrite(r, *n));
    else
      r.copy(*n);
  }
  return r.finish(std::move(notes));
}

}  // namespace vf
