#include "analysis/alias_analysis.h"

#include "base/error.h"
#include "layout/view_algebra.h"

namespace vf {

AliasAnalysis analyze_aliases(const Fusion& fusion, const std::vector<Layout>& input_layouts) {
  VF_INTERNAL_CHECK(input_layouts.size() == fusion.inputs().size(), "got ", input_layouts.size(),
                    " layouts for ", fusion.inputs().size(), " inputs");
  std::vector<std::optional<AliasInfo>> known(fusion.values().size());
  for (size_t i = 0; i < fusion.inputs().size(); ++i) {
    const Value* in = fusion.inputs()[i];
    if (in->is_tensor) known[in->id] = AliasInfo{in, input_layouts[i]};
  }
  return analyze_aliases(fusion, std::move(known));
}

AliasAnalysis analyze_aliases(const Fusion& fusion, std::vector<std::optional<AliasInfo>> known) {
  VF_INTERNAL_CHECK(known.size() == fusion.values().size(), "known layouts for ", known.size(),
                    " values, the fusion has ", fusion.values().size());
  AliasAnalysis result;
  result.by_value = std::move(known);
  result.copy_reason.resize(fusion.values().size());
  for (const auto& node : fusion.nodes()) {
    const Value* out = node->output();
    if (!is_view_op(node->op) || result.by_value[out->id]) continue;
    const AliasInfo* in = result.find(node->inputs[0]);
    if (!in) {
      result.copy_reason[out->id] = "its input " + node->inputs[0]->name + " is computed in a kernel";
      continue;
    }
    ViewResult view = view_layout(*node, in->layout);
    if (view.is_view())
      result.by_value[out->id] = AliasInfo{in->source, std::move(*view.layout)};
    else
      result.copy_reason[out->id] = std::move(view.copy_reason);
  }
  return result;
}

}  // namespace vf
