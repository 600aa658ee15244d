#include "ir/verify.h"

#include <algorithm>
#include <unordered_set>

#include "base/error.h"
#include "ir/infer_types.h"

namespace vf {

void verify_fusion(const Fusion& fusion) {
  std::unordered_set<const Value*> defined;
  std::unordered_set<std::string> names;
  for (const auto& v : fusion.values())
    VF_INTERNAL_CHECK(names.insert(v->name).second, "value name '", v->name, "' is not unique");
  for (const Value* in : fusion.inputs()) {
    VF_INTERNAL_CHECK(in->producer == nullptr, "input '", in->name, "' has a producer");
    defined.insert(in);
  }
  for (const auto& v : fusion.values())
    if (v->is_constant()) defined.insert(v.get());

  for (const auto& node : fusion.nodes()) {
    const std::string where = "node " + std::to_string(node->id) + " (prims." +
                              std::string(op_name(node->op)) + ")";
    for (const Value* in : node->inputs) {
      VF_INTERNAL_CHECK(defined.count(in), where, " reads '", in->name, "' before it is defined");
      VF_INTERNAL_CHECK(std::count(in->uses.begin(), in->uses.end(), node.get()) == 1, where,
                        " is not listed once among the uses of '", in->name, "'");
    }
    VF_INTERNAL_CHECK(static_cast<int>(node->outputs.size()) == op_num_outputs(node->op), where,
                      " has ", node->outputs.size(), " results");
    OpAttrs attrs = node->attrs;
    std::vector<ValueType> types = infer_types(node->op, node->inputs, attrs);
    VF_INTERNAL_CHECK(attrs == node->attrs, where, " has attributes that are not canonical");
    for (size_t i = 0; i < node->outputs.size(); ++i) {
      const Value* out = node->outputs[i];
      VF_INTERNAL_CHECK(out->producer == node.get(), where, " result '", out->name, "' names another producer");
      VF_INTERNAL_CHECK(defined.insert(out).second, "'", out->name, "' is defined twice");
      VF_INTERNAL_CHECK(out->is_tensor == types[i].is_tensor && out->dtype == types[i].dtype &&
                            out->shape == types[i].shape,
                        where, " result '", out->name, "' has type ", out->type_string(),
                        " but the op gives ", dtype_short_name(types[i].dtype), shape_to_string(types[i].shape));
    }
  }
  for (const auto& v : fusion.values())
    for (const Node* use : v->uses)
      VF_INTERNAL_CHECK(std::count(use->inputs.begin(), use->inputs.end(), v.get()) > 0, "'", v->name,
                        "' lists node ", use->id, " as a use, but the node does not read it");
  for (const Value* out : fusion.outputs())
    VF_INTERNAL_CHECK(defined.count(out), "output '", out->name, "' is never defined");
}

}  // namespace vf
