// KernelLowering a segment with reductions to one reduction nest (kernel_ir.h): rows, reduced dims,
// phases, and var / var_mean as two sums.
#include <algorithm>

#include "base/error.h"
#include "codegen/lowering.h"

namespace vf {
namespace {

// The reduced dims of a reduction node, ascending.
std::vector<int64_t> reduced_dims(const Node& n) {
  std::vector<int64_t> dims = n.op == OpKind::Var || n.op == OpKind::VarMean ? n.attr<VarAttrs>().dims
                                                                             : n.attr<DimsAttrs>().dims;
  std::sort(dims.begin(), dims.end());
  return dims;
}

}  // namespace

// Row sizes are the kept dims of `first`'s input, reduced sizes its reduced dims. An output of
// the input's shape is stored in the loop over the reduced dims; one of the result's shape is a
// row store.
void KernelLowering::lower_reduction_nest(const Node& first) {
  nest_ = &ir_.nests.emplace_back();
  nest_->flat = false;
  memo_.clear();
  linear_.clear();  // no loop space: the rows and reduced dims are the loop vars
  loop_sizes_.clear();
  const Shape& full = first.inputs[0]->shape;
  const std::vector<int64_t> dims = reduced_dims(first);
  Shape rows;
  std::vector<int> row_idx, full_idx;
  for (int64_t d = 0; d < static_cast<int64_t>(full.size()); ++d) {
    if (std::binary_search(dims.begin(), dims.end(), d)) continue;
    const int k = static_cast<int>(rows.size());
    nest_->extents.push_back(ir_.field(AbiFieldKind::Constant, first.id, kRowSlot + k, full[d]));
    rows.push_back(full[d]);
    row_idx.push_back(nest_->var(k));
  }
  for (size_t j = 0; j < dims.size(); ++j) {
    nest_->inner_extents.push_back(
        ir_.field(AbiFieldKind::Constant, first.id, kInnerSlot + static_cast<int>(j), full[dims[j]]));
    inner_sizes_.push_back(full[dims[j]]);
  }
  for (int64_t d = 0, r = 0, j = 0; d < static_cast<int64_t>(full.size()); ++d) {
    const bool reduced = std::binary_search(dims.begin(), dims.end(), d);
    full_idx.push_back(nest_->var(reduced ? static_cast<int64_t>(rows.size()) + j++ : r++));
  }
  AbiNest abi_nest;
  abi_nest.rows = shape_numel(rows);
  abi_nest.inner = shape_numel(inner_sizes_);
  abi_nest.inner_last = inner_sizes_.empty() ? 1 : inner_sizes_.back();
  abi_nest.inner_reduced = full.empty() || (!dims.empty() && dims.back() == static_cast<int64_t>(full.size()) - 1);
  ir_.abi.nests.push_back(abi_nest);
  for (size_t o = 0; o < fusion_.outputs().size(); ++o) {
    const Value* out = fusion_.outputs()[o];
    const Layout& l = spec_.output_layouts[o];
    VF_INTERNAL_CHECK(l.sizes == out->shape && l.strides.size() == l.sizes.size(), "output ", out->name,
                      " has layout ", l.to_string(), " for shape ", shape_to_string(out->shape));
    if (out->shape == rows)
      store_output(static_cast<int>(o), row_idx, true);
    else if (out->shape == full)
      store_output(static_cast<int>(o), full_idx, false);
    else
      unsupported(detail::concat("output ", out->name, " of shape ", shape_to_string(out->shape),
                                 " has neither the shape ", shape_to_string(full), " that prims.", op_name(first.op),
                                 " ", first.output()->name, " reduces nor its result's shape ",
                                 shape_to_string(rows)));
    if (!problem_.empty()) return;
  }
  clear_flat_offsets();
  nest_->assign_phases();
}

// Appends a reduction of `value` (of acc_dtype) and gives its result converted to result_dtype.
int KernelLowering::reduce(OpKind op, DType acc_dtype, int value, DType result_dtype) {
  ReduceStmt r;
  r.op = op;
  r.acc_dtype = acc_dtype;
  r.value = value;
  nest_->reductions.push_back(r);
  ValueExpr e;
  e.op = ValueOp::Reduced;
  e.dtype = result_dtype;
  e.operand_dtype = acc_dtype;
  e.param = static_cast<int>(nest_->reductions.size()) - 1;
  return nest_->value(e);
}

// A reduction's result at row index idx: its input at (idx over the kept dims, the nest's reduced
// loop vars over the reduced dims), combined over the reduced vars.
int KernelLowering::lower_reduction(const Node& n, const Value* out, const std::vector<int>& idx, int pred) {
  const auto row_rank = static_cast<int64_t>(nest_->extents.size());
  const Value* in = n.inputs[0];
  const std::vector<int64_t> dims = reduced_dims(n);
  Shape sizes;
  for (int64_t d : dims) sizes.push_back(in->shape[d]);
  if (sizes != inner_sizes_)
    return unsupported(detail::concat("prims.", op_name(n.op), " ", out->name, " reduces extents ",
                                      shape_to_string(sizes), ", the kernel's reduced extents are ",
                                      shape_to_string(inner_sizes_)));
  for (int i : idx)
    if (nest_->index_uses_vars_from(i, row_rank) || nest_->index_uses_vars_from(pred, row_rank))
      return unsupported(detail::concat("prims.", op_name(n.op), " ", out->name,
                                        " is read at a position that depends on the reduced dims"));
  std::vector<int> in_idx;
  for (int64_t d = 0, k = 0, j = 0; d < in->rank(); ++d) {
    const bool reduced = std::binary_search(dims.begin(), dims.end(), d);
    in_idx.push_back(reduced ? nest_->var(row_rank + j++) : idx.at(k++));
  }
  const int x = visit(in, in_idx, pred);
  auto cast = [&](int v, DType from, DType to) {
    if (from == to) return v;
    ValueExpr e;
    e.op = ValueOp::Cast;
    e.dtype = to;
    e.operand_dtype = from;
    e.args = {v};
    return nest_->value(e);
  };
  auto apply = [&](OpKind fn, DType dtype, std::vector<int> args) {
    ValueExpr e;
    e.op = ValueOp::Apply;
    e.fn = fn;
    e.dtype = dtype;
    e.operand_dtype = dtype;
    e.args = std::move(args);
    return nest_->value(e);
  };
  if (n.op != OpKind::Var && n.op != OpKind::VarMean) {
    DType acc = out->dtype;
    if (is_half(in->dtype)) acc = DType::Float32;
    if (is_integral(in->dtype) && (n.op == OpKind::Sum || n.op == OpKind::Prod)) acc = DType::Int64;
    return reduce(n.op, acc, cast(x, in->dtype, acc), out->dtype);
  }
  // var and var_mean: the mean by one sum, then the sum of squared deviations from it.
  const DType acc = in->dtype == DType::Float64 ? DType::Float64 : DType::Float32;
  const int xa = cast(x, in->dtype, acc);
  if (inner_count_ < 0) {
    ValueExpr count;
    count.op = ValueOp::Scalar;
    count.dtype = DType::Float64;
    count.param = ir_.field(AbiFieldKind::Constant, n.id, kWideConstantSlot + 2, shape_numel(inner_sizes_));
    inner_count_ = nest_->value(count);
  }
  const int count = cast(inner_count_, DType::Float64, acc);
  const int mean = apply(OpKind::Div, acc, {reduce(OpKind::Sum, acc, xa, acc), count});
  const int dev = apply(OpKind::Sub, acc, {xa, mean});
  const int m2 = reduce(OpKind::Sum, acc, apply(OpKind::Mul, acc, {dev, dev}), acc);
  ValueExpr correction;
  correction.op = ValueOp::Constant;
  correction.dtype = acc;
  correction.constant = Scalar::from_float(n.attr<VarAttrs>().correction);
  ValueExpr zero = correction;
  zero.constant = Scalar::from_float(0.0);
  const int divisor = apply(OpKind::Maximum, acc, {apply(OpKind::Sub, acc, {count, nest_->value(correction)}),
                                                   nest_->value(zero)});
  const int var = cast(apply(OpKind::Div, acc, {m2, divisor}), acc, n.outputs[0]->dtype);
  memo_.emplace(std::make_tuple(n.outputs[0], idx, pred), var);
  if (n.outputs.size() > 1) memo_.emplace(std::make_tuple(n.outputs[1], idx, pred), cast(mean, acc, n.outputs[1]->dtype));
  return out == n.outputs[0] ? var : cast(mean, acc, out->dtype);
}

}  // namespace vf
