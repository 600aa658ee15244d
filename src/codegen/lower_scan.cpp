// KernelLowering a segment whose output is a cumsum to one scan nest (kernel_ir.h): a nest over the
// result's shape whose lines along the scanned dim are walked in order, each point adding the
// operand there to the line's running sum and storing it.
#include "base/error.h"
#include "codegen/lowering.h"

namespace vf {
namespace {

// Constant slots of a scan nest's extents (the result's shape): slot + dim.
constexpr int32_t kScanSlot = 400;

}  // namespace

void KernelLowering::lower_scan_nest(const Node& n) {
  const auto& outputs = fusion_.outputs();
  const Value* in = n.inputs[0];
  const Value* out = n.output();
  VF_INTERNAL_CHECK(outputs.size() == 1 && outputs[0] == out, "a scan's segment writes ", outputs.size(),
                    " outputs; it must write the scan's result ", out->name, " alone");
  VF_INTERNAL_CHECK(out->rank() > 0 && out->numel() > 0, "prims.cumsum ", out->name, " of ", out->type_string(),
                    ": a scan nest needs a dim to walk (passes/fold_trivial_reductions.h folds the others)");
  const int64_t dim = n.attr<AxisAttrs>().dim;
  nest_ = &ir_.nests.emplace_back();
  nest_->scan = true;
  nest_->walk_dim = static_cast<int>(dim);
  nest_->flat = false;
  memo_.clear();
  // A work item (CPU) or thread (CUDA) per line.
  ir_.abi.nests.push_back({-1, out->numel() / out->shape[static_cast<size_t>(dim)], 0});
  ir_.abi.nests.back().team = 1;
  for (const auto& node : fusion_.nodes()) {
    const OpCategory c = op_category(node->op);
    if (c == OpCategory::Reduction || c == OpCategory::Scatter || (node.get() != &n && c == OpCategory::Scan)) {
      unsupported(detail::concat("the operand of prims.cumsum ", out->name, " needs prims.", op_name(node->op), " ",
                                 node->output()->name, ", which a scan's kernel does not compute"));
      return;
    }
  }
  std::vector<int> at;  // the loop vars: a position of the result
  for (int64_t d = 0; d < out->rank(); ++d) {
    nest_->extents.push_back(ir_.field(AbiFieldKind::Constant, n.id, kScanSlot + static_cast<int32_t>(d), out->shape[d]));
    at.push_back(nest_->var(d));
  }
  loop_sizes_ = out->shape;
  linear_.clear();
  const DType acc = is_floating(out->dtype) ? (out->dtype == DType::Float64 ? DType::Float64 : DType::Float32)
                                            : DType::Int64;
  ValueExpr e;
  e.op = ValueOp::Scanned;
  e.dtype = e.operand_dtype = acc;
  e.args = {cast(visit(in, at, -1), in->dtype, acc)};
  store_output(0, at, false, cast(nest_->value(e), acc, out->dtype));
  nest_->flat = false;
}

}  // namespace vf
