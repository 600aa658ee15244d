// Names and categories of the ops in ops.def.
#include <array>

#include "ir/ir.h"

namespace vf {
namespace {
struct OpInfo {
  std::string_view name;
  OpCategory category;
};
constexpr std::array kOps = {
#define VF_OP(name, prim, category) OpInfo{prim, OpCategory::category},
#include "ir/ops.def"
#undef VF_OP
};
}  // namespace

std::string_view op_name(OpKind op) { return kOps[static_cast<size_t>(op)].name; }
OpCategory op_category(OpKind op) { return kOps[static_cast<size_t>(op)].category; }
const char* op_category_name(OpCategory c) {
  switch (c) {
    case OpCategory::View: return "view";
    case OpCategory::Movement: return "movement";
    case OpCategory::Cast: return "cast";
    case OpCategory::Unary: return "unary";
    case OpCategory::Binary: return "binary";
    case OpCategory::Ternary: return "ternary";
    case OpCategory::Reduction: return "reduction";
    case OpCategory::Creation: return "creation";
    case OpCategory::Scatter: return "scatter";
    case OpCategory::Scan: return "scan";
    case OpCategory::Contraction: return "contraction";
  }
  return "?";
}
int op_num_outputs(OpKind op) { return op == OpKind::VarMean || op == OpKind::MatmulGelu ? 2 : 1; }

ContractionSlots contraction_slots(const Node& n) {
  const int operands = n.op == OpKind::MatmulAdd ? 3 : 2;
  return {n.op == OpKind::MatmulAdd ? 2 : -1, static_cast<int>(n.inputs.size()) > operands ? operands : -1};
}

std::optional<OpKind> op_from_name(std::string_view prim_name) {
  for (size_t i = 0; i < kOps.size(); ++i)
    if (kOps[i].name == prim_name) return static_cast<OpKind>(i);
  return std::nullopt;
}

}  // namespace vf
