// KernelLowering a segment whose output is a scatter_add or scatter_max to one scatter nest
// (kernel_ir.h): a loop over the index's positions that evaluates the index and the source there
// and adds (maxes) the source into the output at the position the index names.
#include <optional>
#include <string_view>

#include "base/error.h"
#include "codegen/lowering.h"

namespace vf {
namespace {

// Constant slots of a scatter nest's extents (the index's shape): slot + dim.
constexpr int32_t kScatterSlot = 400;

// The bits a scatter's output is filled with at launch: its base's value, a full of +0
// (scatter_add) or of an integer (scatter_max), as passes/zero_based_scatters.h makes them; nullopt
// for any other base.
std::optional<uint64_t> fill_bits(const Node& n) {
  const Node* p = n.inputs[0]->producer;
  if (!p || p->op != OpKind::Full) return std::nullopt;
  const Scalar& x = p->attr<FullAttrs>().value;
  if (n.op == OpKind::ScatterMax) {
    if (x.kind != ScalarKind::Int) return std::nullopt;
    const int64_t bytes = dtype_size(n.output()->dtype);
    return static_cast<uint64_t>(x.i) & (bytes == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * bytes)) - 1);
  }
  return is_zero_full(n.inputs[0]) ? std::optional<uint64_t>(0) : std::nullopt;
}

}  // namespace

bool scatter_accumulates(OpKind op, DType dtype) {
  if (op == OpKind::ScatterMax) return dtype == DType::Int32 || dtype == DType::Int64;
  return dtype == DType::Float32 || dtype == DType::Float64 || dtype == DType::Int32 || dtype == DType::Int64;
}

void KernelLowering::lower_scatter_nest(const Node& n) {
  const auto& outputs = fusion_.outputs();
  VF_INTERNAL_CHECK(outputs.size() == 1 && outputs[0] == n.output(), "a scatter's segment writes ", outputs.size(),
                    " outputs; it must write the scatter's result ", n.output()->name, " alone");
  const Value* base = n.inputs[0];
  const Value* index = n.inputs[1];
  const Value* src = n.inputs[2];
  const Value* out = n.output();
  const std::string_view name = op_name(n.op);
  const std::optional<uint64_t> fill = fill_bits(n);
  VF_INTERNAL_CHECK(fill && scatter_accumulates(n.op, out->dtype), "prims.", name, " ", out->name, " of ",
                    out->type_string(), " onto ", base->name,
                    ": the kernels take scatter_add onto zeros of f32, f64, i32 or i64 and scatter_max onto a full of "
                    "i32 or i64 (passes/zero_based_scatters.h)");
  nest_ = &ir_.nests.emplace_back();
  nest_->scatter = true;
  nest_->walk_dim = static_cast<int>(n.attr<AxisAttrs>().dim);
  nest_->flat = false;
  memo_.clear();
  ir_.abi.nests.push_back({-1, index->numel(), 0});
  ir_.abi.nests.back().team = 1;
  for (const auto& node : fusion_.nodes())
    if (op_category(node->op) == OpCategory::Reduction || (node.get() != &n && op_category(node->op) == OpCategory::Scatter)) {
      unsupported(detail::concat("the index or source of prims.", name, " ", out->name, " needs prims.",
                                 op_name(node->op), " ", node->output()->name, ", which a scatter's kernel does not compute"));
      return;
    }
  std::vector<int> at;  // the loop vars: a position of the index
  for (int64_t d = 0; d < index->rank(); ++d) {
    nest_->extents.push_back(ir_.field(AbiFieldKind::Constant, n.id, kScatterSlot + static_cast<int32_t>(d),
                                       index->shape[d]));
    at.push_back(nest_->var(d));
  }
  loop_sizes_ = index->shape;
  linear_.clear();
  const int64_t dim = n.attr<AxisAttrs>().dim, size = out->shape.at(static_cast<size_t>(dim));
  const int value = visit(src, at, -1);
  const int where = cast(visit(index, at, -1), index->dtype, DType::Int64);
  const auto gather = static_cast<int>(ir_.abi.gathers.size());
  ir_.abi.gathers.push_back(detail::concat("prims.", name, " ", out->name, " (dim ", dim, " of size ", size, " of ",
                                           out->type_string(), ")"));
  const int bound = constant_field(n, 0, size);
  const int target = nest_->gathered(where, bound, ir_.field(AbiFieldKind::IndexError, 0), gather);
  // One node per statement: the order of evaluation of function arguments is unspecified, and the
  // node numbering (the kernel's text, its cache key) must not depend on the compiler.
  const int at_least_zero = nest_->binary(IndexOp::Ge, target, nest_->constant(0));
  const int below_bound = nest_->binary(IndexOp::Lt, target, bound);
  const int in_range = land(at_least_zero, below_bound);
  const Layout& l = spec_.output_layouts[0];
  auto& classes = ir_.abi.output_classes[0];
  classes.clear();
  int offset = nest_->param(ir_.field(AbiFieldKind::OutputOffset, 0));
  for (int64_t d = 0; d < l.rank(); ++d) {
    const StrideClass c = l.sizes[d] == 1 ? StrideClass::Zero : stride_class(l.strides[d]);
    classes.push_back(static_cast<uint8_t>(c));
    offset = add(offset, scaled(d == dim ? target : at[d], c, AbiFieldKind::OutputStride, 0, d));
  }
  StoreStmt s;
  s.param = ir_.field(AbiFieldKind::OutputData, 0);
  s.dtype = out->dtype;
  s.index = offset;
  s.value = value;
  s.accumulate = true;
  s.op = n.op == OpKind::ScatterMax ? OpKind::Amax : OpKind::Sum;
  s.pred = in_range;
  nest_->stores.push_back(s);
  ir_.abi.filled_outputs.push_back({0, static_cast<int32_t>(dtype_size(out->dtype)), *fill});
}

}  // namespace vf
