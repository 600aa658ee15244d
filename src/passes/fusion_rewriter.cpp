#include "passes/fusion_rewriter.h"

#include "base/error.h"

namespace vf {

FusionRewriter::FusionRewriter(const Fusion& original) : original_(original), fusion_(std::make_shared<Fusion>()) {
  for (const Value* in : original_.inputs())
    mapped_[in] = in->is_tensor ? fusion_->add_tensor_input(in->name, in->dtype, in->shape)
                                : fusion_->add_scalar_input(in->name, in->scalar_kind);
}

Value* FusionRewriter::map(const Value* v) {
  if (auto it = mapped_.find(v); it != mapped_.end()) return it->second;
  VF_INTERNAL_CHECK(v->is_constant(), "rewrite: ", v->name, " is used before it is defined");
  return mapped_[v] = fusion_->add_constant(*v->constant);
}

std::string FusionRewriter::fresh(const std::string& base) const {
  std::string name = base;
  for (int k = 2; original_.find(name) || fusion_->find(name); ++k) name = base + "_" + std::to_string(k);
  return name;
}

void FusionRewriter::copy(const Node& n) {
  std::vector<Value*> inputs;
  for (const Value* in : n.inputs) inputs.push_back(map(in));
  std::vector<std::string> names;
  for (const Value* out : n.outputs) names.push_back(out->name);
  const auto& outs = fusion_->add_node(n.op, std::move(inputs), n.attrs, std::move(names), n.line);
  for (size_t i = 0; i < outs.size(); ++i) mapped_[n.outputs[i]] = outs[i];
}

Value* FusionRewriter::add(OpKind op, std::vector<Value*> inputs, OpAttrs attrs, const std::string& name, int line) {
  return fusion_->add_node(op, std::move(inputs), std::move(attrs), {name}, line).at(0);
}

void FusionRewriter::replace(const Value* out, Value* result) {
  VF_INTERNAL_CHECK(result->shape == out->shape && result->dtype == out->dtype, "the rewrite of ", out->name,
                    " gives ", result->type_string(), ", not ", out->type_string());
  mapped_[out] = result;
}

RewrittenFusion FusionRewriter::finish(std::vector<std::string> notes) {
  for (const Value* out : original_.outputs()) fusion_->add_output(map(out));
  return {std::move(fusion_), std::move(notes)};
}

}  // namespace vf
