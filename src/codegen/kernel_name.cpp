#include "codegen/kernel_name.h"

#include <algorithm>
#include <string_view>
#include <vector>

namespace vf {

std::string kernel_name(const Fusion& segment, const KernelIR& ir) {
  std::string name = "vf_pointwise";
  bool scatter = false;
  for (size_t k = 0; k < ir.nests.size(); ++k)
    if (ir.nests[k].scatter) {
      scatter = true;
      name = ir.nests[k].stores.at(0).op == OpKind::Amax ? "vf_scatter_max" : "vf_scatter_add";
    } else if (ir.nests[k].scan) {
      name = "vf_scan";
    } else if (ir.nests[k].is_reduction()) {
      name = ir.nests[k].serial ? "vf_column_reduction"
             : ir.abi.nests.at(k).inner_reduced ? "vf_reduction"
                                                 : "vf_outer_reduction";
      break;
    }
  std::vector<std::string_view> ops;
  for (const auto& n : segment.nodes()) {
    const OpCategory c = op_category(n->op);
    if (c == OpCategory::View || c == OpCategory::Cast || ((c == OpCategory::Creation || c == OpCategory::Scatter) && scatter)) continue;
    if (ops.size() < static_cast<size_t>(kMaxNamedOps) && std::find(ops.begin(), ops.end(), op_name(n->op)) == ops.end())
      ops.push_back(op_name(n->op));
  }
  if (ops.empty() && !scatter) ops.push_back("copy");
  for (std::string_view op : ops) (name += '_') += op;
  return name;
}

}  // namespace vf
