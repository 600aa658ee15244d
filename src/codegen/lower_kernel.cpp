// KernelLowering a segment to loop nests: the pointwise nests, and index mapping through view and
// movement ops (reduction nests: lower_reduction.cpp).
#include "codegen/lower_kernel.h"

#include <algorithm>

#include "base/error.h"
#include "codegen/lowering.h"
#include "layout/index_map.h"
#include "layout/view_algebra.h"

namespace vf {
namespace {

// A size-1 dim's index is always 0, so its stride never matters: it is baked as Zero.
StrideClass dim_class(const Layout& l, int64_t d) {
  return l.sizes[d] == 1 ? StrideClass::Zero : stride_class(l.strides[d]);
}

// Constant fields holding the extents of split loop dims (see KernelLowering::loop_space): slot
// kSplitSlot + 16 * output dim + factor, below kWideConstantSlot so they narrow to 32 bits.
constexpr int32_t kSplitSlot = 500;

}  // namespace

LoweredKernel KernelLowering::run() {
  const auto& inputs = fusion_.inputs();
  const auto& outputs = fusion_.outputs();
  VF_INTERNAL_CHECK(spec_.input_layouts.size() == inputs.size(), "kernel spec has ",
                    spec_.input_layouts.size(), " input layouts for ", inputs.size(), " inputs");
  VF_INTERNAL_CHECK(spec_.output_layouts.size() == outputs.size(), "kernel spec has ",
                    spec_.output_layouts.size(), " output layouts for ", outputs.size(), " outputs");
  ir_.abi.input_classes.resize(inputs.size());
  ir_.abi.output_classes.resize(outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]->is_tensor) continue;
    const Layout& l = spec_.input_layouts[i];
    VF_INTERNAL_CHECK(l.sizes == inputs[i]->shape && l.strides.size() == l.sizes.size(),
                      "input ", inputs[i]->name, " has layout ", l.to_string(), " for shape ",
                      shape_to_string(inputs[i]->shape));
    views_[inputs[i]] = ViewOf{static_cast<int>(i), {}, l};
  }
  find_views();
  for (const auto& node : fusion_.nodes()) {
    if (op_category(node->op) == OpCategory::Scatter && node->output() == outputs.at(0)) {
      lower_scatter_nest(*node);
      return finish();
    }
    if (op_category(node->op) == OpCategory::Scan && node->output() == outputs.at(0)) {
      lower_scan_nest(*node);
      return finish();
    }
  }
  for (const auto& node : fusion_.nodes()) {
    if (op_category(node->op) == OpCategory::Reduction) {
      lower_reduction_nest(*node);
      return finish();
    }
  }
  // Group outputs by shape, in order of first appearance.
  std::vector<std::vector<int>> groups;
  for (size_t o = 0; o < outputs.size(); ++o) {
    const Layout& l = spec_.output_layouts[o];
    VF_INTERNAL_CHECK(l.sizes == outputs[o]->shape && l.strides.size() == l.sizes.size(),
                      "output ", outputs[o]->name, " has layout ", l.to_string(), " for shape ",
                      shape_to_string(outputs[o]->shape));
    bool placed = false;
    for (auto& g : groups) {
      if (outputs[g[0]]->shape == outputs[o]->shape) {
        g.push_back(static_cast<int>(o));
        placed = true;
        break;
      }
    }
    if (!placed) groups.push_back({static_cast<int>(o)});
  }
  for (const auto& g : groups) lower_group(g);
  return finish();
}

LoweredKernel KernelLowering::finish() {
  if (!problem_.empty()) return LoweredKernel{{}, std::move(problem_)};
  return LoweredKernel{std::move(ir_), {}};
}

int KernelLowering::unsupported(std::string problem) {
  if (problem_.empty()) problem_ = std::move(problem);
  return nest_->value(ValueExpr{});
}

void KernelLowering::find_views() {
  for (const auto& node : fusion_.nodes()) {
    if (!is_view_op(node->op)) continue;
    auto it = views_.find(node->inputs.at(0));
    if (it == views_.end()) continue;
    ViewResult r = view_layout(*node, it->second.layout);
    if (!r.is_view()) continue;
    ViewOf v{it->second.input, it->second.steps, *r.layout};
    v.steps.push_back(node.get());
    views_[node->output()] = std::move(v);
  }
}

void KernelLowering::lower_group(const std::vector<int>& outs) {
  nest_ = &ir_.nests.emplace_back();
  memo_.clear();
  flat_inputs_.clear();
  flat_views_.clear();
  flat_outputs_.clear();
  ir_.abi.nests.push_back({outs[0], 0, 0});
  const std::vector<int> idx = loop_space(outs[0]);
  for (int o : outs) store_output(o, idx, false);
  if (nest_->flat) {
    auto append = [](std::vector<int32_t>& to, const std::vector<int32_t>& from) {
      for (int32_t x : from)
        if (std::find(to.begin(), to.end(), x) == to.end()) to.push_back(x);
    };
    append(ir_.abi.contiguous_inputs, flat_inputs_);
    append(ir_.abi.contiguous_views, flat_views_);
    append(ir_.abi.contiguous_outputs, flat_outputs_);
  } else {
    clear_flat_offsets();
  }
}

void KernelLowering::clear_flat_offsets() {
  for (StoreStmt& s : nest_->stores) s.flat_offset = -1;
  for (ValueExpr& e : nest_->values) e.flat_offset = -1;
}

std::vector<int> KernelLowering::loop_space(int out) {
  const Shape& shape = fusion_.outputs()[out]->shape;
  std::vector<std::vector<int64_t>> split(shape.size());
  std::vector<int32_t> split_node(shape.size(), 0);
  for (const auto& node : fusion_.nodes()) {
    if (node->op != OpKind::Reshape || node->output()->shape != shape || node->output()->numel() == 0) continue;
    const Shape& is = node->inputs[0]->shape;
    for (const ReshapeGroup& g : reshape_groups(is, shape)) {
      if (g.j1 - g.j0 != 1 || g.i1 - g.i0 < 2 || g.i1 - g.i0 > 16 || !split[g.j0].empty()) continue;
      split[g.j0].assign(is.begin() + static_cast<std::ptrdiff_t>(g.i0), is.begin() + static_cast<std::ptrdiff_t>(g.i1));
      split_node[g.j0] = node->id;
    }
  }
  linear_.clear();
  loop_sizes_.clear();
  std::vector<int> idx;
  for (size_t d = 0; d < shape.size(); ++d) {
    const auto dim = static_cast<int32_t>(d);
    if (split[d].empty()) {
      const auto v = static_cast<int64_t>(nest_->extents.size());
      nest_->extents.push_back(ir_.field(AbiFieldKind::OutputSize, out, dim));
      loop_sizes_.push_back(shape[d]);
      idx.push_back(nest_->var(v));
      linear_[idx.back()] = {v};
      continue;
    }
    int index = -1;
    std::vector<int64_t> vars;
    for (size_t k = 0; k < split[d].size(); ++k) {
      const auto v = static_cast<int64_t>(nest_->extents.size());
      const int extent = ir_.field(AbiFieldKind::Constant, split_node[d],
                                   kSplitSlot + 16 * dim + static_cast<int32_t>(k), split[d][k]);
      nest_->extents.push_back(extent);
      loop_sizes_.push_back(split[d][k]);
      linear_[nest_->var(v)] = {v};
      const int var = nest_->var(v);
      index = index < 0 ? var : add(mul(index, nest_->param(extent)), var);
      vars.push_back(v);
    }
    idx.push_back(index);
    linear_[index] = vars;
  }
  return idx;
}

int NestIndices::literal(int64_t v) { return l_.nest_->constant(v); }
int NestIndices::constant(const Node& n, int slot, int64_t v) { return l_.constant_field(n, slot, v); }
int NestIndices::both(int a, int b) { return l_.land(a, b); }
int NestIndices::binary(IndexOp op, int a, int b) { return l_.nest_->binary(op, a, b); }

int KernelLowering::constant_field(const Node& n, int slot, int64_t v) {
  return nest_->param(ir_.field(AbiFieldKind::Constant, n.id, slot, v));
}

int KernelLowering::scaled(int i, StrideClass c, AbiFieldKind kind, int buffer, int64_t d) {
  switch (c) {
    case StrideClass::Zero: return nest_->constant(0);
    case StrideClass::One: return i;
    case StrideClass::Any: return mul(i, nest_->param(ir_.field(kind, buffer, static_cast<int32_t>(d))));
  }
  return i;
}

int KernelLowering::input_index(const Value* v) const {
  const auto& inputs = fusion_.inputs();
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i] == v) return static_cast<int>(i);
  VF_INTERNAL_ERROR("value ", v->name, " is neither a fusion input nor computed in the segment");
}

int KernelLowering::scalar(const Value* v, DType dtype) {
  if (v->is_constant()) return constant(dtype, *v->constant);
  ValueExpr e;
  e.op = ValueOp::Scalar;
  e.dtype = dtype;
  const AbiFieldKind k = v->scalar_kind == ScalarKind::Float ? AbiFieldKind::ScalarF64 : AbiFieldKind::ScalarI64;
  e.param = ir_.field(k, input_index(v));
  return nest_->value(e);
}

int KernelLowering::operand(const Value* v, const std::vector<int>& idx, int pred, DType dtype) {
  return v->is_tensor ? visit(v, idx, pred) : scalar(v, is_half(dtype) ? DType::Float32 : dtype);
}

int KernelLowering::load(const Value* v, const ViewOf& view, const std::vector<int>& idx, int pred, bool pred_in_bounds) {
  AbiFieldKind stride_kind = AbiFieldKind::InputStride, offset_kind = AbiFieldKind::InputOffset;
  int buffer = view.input;
  std::vector<uint8_t>* classes = &ir_.abi.input_classes[view.input];
  if (!view.steps.empty()) {
    auto it = view_ids_.find(v);
    if (it == view_ids_.end()) {
      AbiView av;
      av.input = view.input;
      for (const Node* n : view.steps) av.steps.push_back(Node{n->id, n->op, {}, {}, n->attrs});  // no inputs, outputs
      av.spec_input_layout = spec_.input_layouts[view.input];
      av.spec_view_layout = view.layout;
      // A view reads the stride fields of the first view with its strides (RoPE's halves of q and
      // k: same_view_strides is an equivalence, so that one reads its own), or its own.
      const auto& views = ir_.abi.views;
      auto same = [&](const AbiView& w) { return w.input == av.input && same_view_strides(w.steps, av.steps); };
      stride_view_.push_back(static_cast<int>(std::find_if(views.begin(), views.end(), same) - views.begin()));
      ir_.abi.views.push_back(std::move(av));
      ir_.abi.view_classes.emplace_back();
      it = view_ids_.emplace(v, static_cast<int>(ir_.abi.views.size()) - 1).first;
    }
    buffer = it->second;
    stride_kind = AbiFieldKind::ViewStride;
    offset_kind = AbiFieldKind::ViewOffset;
    classes = &ir_.abi.view_classes[buffer];
  }
  classes->clear();
  int index = nest_->param(ir_.field(offset_kind, buffer));
  for (int64_t d = 0; d < view.layout.rank(); ++d) {
    const StrideClass c = dim_class(view.layout, d);
    classes->push_back(static_cast<uint8_t>(c));
    index = add(index, scaled(idx[d], c, stride_kind, view.steps.empty() ? buffer : stride_view_[buffer], d));
  }
  ValueExpr e;
  // In order: the dims' indices are the loop vars in order, each dim's the row-major
  // linearisation of one or more of them (split loop dims, see loop_space). Nests without a
  // loop_space (linear_ empty) need dim d's index to be loop var d.
  const bool in_order = pred < 0 && view.layout.is_contiguous() && [&] {
    if (linear_.empty()) {
      if (idx.size() != nest_->extents.size()) return false;
      for (size_t d = 0; d < idx.size(); ++d)
        if (idx[d] != nest_->var(static_cast<int64_t>(d))) return false;
      return true;
    }
    int64_t next = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      auto it = linear_.find(idx[d]);
      if (it == linear_.end()) return false;
      int64_t size = 1;
      for (int64_t v : it->second) {
        if (v != next++) return false;
        size *= loop_sizes_[static_cast<size_t>(v)];
      }
      // A slice from 0 reads the loop vars in order over a longer dim: not the flat order.
      if (size != view.layout.sizes[d]) return false;
    }
    return next == static_cast<int64_t>(nest_->extents.size());
  }();
  if (in_order) {
    e.flat_offset = ir_.field(offset_kind, buffer);
    (view.steps.empty() ? flat_inputs_ : flat_views_).push_back(buffer);
  } else {
    nest_->flat = false;
  }
  auto loop_var_of = [&](int64_t d) {  // the loop dim that is buffer dim d's whole index, or -1
    for (size_t k = 0; k < nest_->extents.size(); ++k)
      if (idx[d] == nest_->var(static_cast<int64_t>(k))) return static_cast<int>(k);
    return -1;
  };
  int64_t unit_dim = -1;
  for (int64_t d = 0; d < view.layout.rank(); ++d) {
    if (static_cast<StrideClass>((*classes)[d]) != StrideClass::One || loop_var_of(d) < 0) continue;
    e.unit_var = loop_var_of(d);
    unit_dim = d;
  }
  // The next row: a dim whose stride is the unit dim's size, when the loop walks the whole unit dim.
  if (unit_dim >= 0 && !loop_sizes_.empty() &&
      loop_sizes_[static_cast<size_t>(e.unit_var)] == view.layout.sizes[unit_dim])
    for (int64_t d = 0; d < view.layout.rank(); ++d)
      if (d != unit_dim && view.layout.sizes[d] > 1 && view.layout.strides[d] == view.layout.sizes[unit_dim] &&
          loop_var_of(d) >= 0)
        e.row_var = loop_var_of(d);
  e.op = ValueOp::Load;
  e.dtype = v->dtype;
  e.param = ir_.field(AbiFieldKind::InputData, view.input);
  e.index = index;
  e.pred = pred;
  e.pred_in_bounds = pred >= 0 && pred_in_bounds;
  return nest_->value(e);
}

int KernelLowering::select(int pred, int a, int b, DType dtype) {
  nest_->flat = false;  // the predicate reads the loop index
  ValueExpr e;
  e.op = ValueOp::Select;
  e.dtype = dtype;
  e.pred = pred;
  e.args = {a, b};
  return nest_->value(e);
}

int KernelLowering::visit(const Value* v, const std::vector<int>& idx, int pred) {
  if (!problem_.empty()) return unsupported({});  // the kernel is not made: nothing more to lower
  auto key = std::make_tuple(v, idx, pred);
  auto it = memo_.find(key);
  if (it != memo_.end()) return it->second;
  int result;
  if (auto view = views_.find(v); view != views_.end())
    result = load(v, view->second, idx, pred);
  else {
    VF_INTERNAL_CHECK(v->producer != nullptr, "value ", v->name, " has no producer");
    result = lower_node(*v->producer, v, idx, pred);
  }
  memo_.emplace(std::move(key), result);
  return result;
}

// Stores output o at loop index idx (one index per output dim); a row store of a reduction nest
// when `row`.
void KernelLowering::store_output(int o, const std::vector<int>& idx, bool row, int value) {
  const Value* out = fusion_.outputs()[o];
  if (value < 0) value = visit(out, idx, -1);
  const Layout& l = spec_.output_layouts[o];
  auto& classes = ir_.abi.output_classes[o];
  classes.clear();
  int index = nest_->param(ir_.field(AbiFieldKind::OutputOffset, o));
  for (int64_t d = 0; d < l.rank(); ++d) {
    const StrideClass c = dim_class(l, d);
    classes.push_back(static_cast<uint8_t>(c));
    index = add(index, scaled(idx[d], c, AbiFieldKind::OutputStride, o, d));
  }
  StoreStmt s;
  if (l.is_contiguous()) {
    s.flat_offset = ir_.field(AbiFieldKind::OutputOffset, o);
    flat_outputs_.push_back(o);
  } else {
    nest_->flat = false;
  }
  s.param = ir_.field(AbiFieldKind::OutputData, o);
  s.dtype = out->dtype;
  s.index = index;
  s.value = value;
  s.row = row;
  nest_->stores.push_back(s);
}

// Cat: each non-empty source covers a range along the dim (layout/index_map.h cat_index); its
// loads are guarded by its range, and a select chain picks the value.
int KernelLowering::lower_cat(const Node& n, const std::vector<int>& idx, int pred) {
  const DType dtype = n.output()->dtype;
  std::vector<std::pair<int, int>> parts;  // (range predicate, value)
  cat_index(ix_, n, idx, [&](size_t k, int in_range, const std::vector<int>& src_idx) {
    parts.emplace_back(in_range, visit(n.inputs[k], src_idx, land(pred, in_range)));
  });
  if (parts.empty()) {  // the result is empty: never evaluated
    return zero(dtype);
  }
  int result = parts.back().second;
  for (size_t k = parts.size() - 1; k-- > 0;) result = select(parts[k].first, parts[k].second, result, dtype);
  return result;
}

// uniform_philox: the generator's u at the element's row-major position (the loop's own
// linearisation where it has one, else each index times the product of the later sizes, which are
// kernel arguments), then minval + (maxval - minval) * u in u's type with the bounds rounded to it (as the
// reference computes it), then rounded to the dtype.
int KernelLowering::lower_uniform(const Node& n, const std::vector<int>& idx) {
  const auto& a = n.attr<UniformAttrs>();
  nest_->flat = false;  // reads the loop indices
  int position = idx.empty() ? ix_.literal(0) : idx[0];
  if (idx.size() > 1) {
    if (std::optional<int> known = ix_.flattened(idx, a.shape)) {
      position = *known;
    } else {
      for (size_t d = 1; d < idx.size(); ++d)
        position = ix_.add(ix_.mul(position, ix_.constant(n, static_cast<int>(d), a.shape[d])), idx[d]);
    }
  }
  const DType u_dtype = a.dtype == DType::Float64 ? DType::Float64 : DType::Float32;
  ValueExpr u;
  u.op = ValueOp::Uniform;
  u.dtype = u_dtype;
  u.index = position;
  u.args = {scalar(n.inputs[0], DType::Int64), scalar(n.inputs[1], DType::Int64)};
  int v = nest_->value(u);
  auto rounded = [&](double x) { return u_dtype == DType::Float32 ? static_cast<double>(static_cast<float>(x)) : x; };
  if (a.minval != 0 || a.maxval != 1) {
    const double lo = rounded(a.minval), range = rounded(rounded(a.maxval) - lo);
    const int scaled = apply(OpKind::Mul, u_dtype, {constant(u_dtype, Scalar::from_float(range)), v});
    v = apply(OpKind::Add, u_dtype, {constant(u_dtype, Scalar::from_float(lo)), scaled});
  }
  return cast(v, u_dtype, a.dtype);
}

// take, take_along_axis, gather: the index's element, as a Gathered index node (kernel_ir.h), is
// the source's index along dim; the source is lowered there like any operand, through views and
// math, its loads guarded by the range test, and an index out of range gives 0.
int KernelLowering::lower_gather(const Node& n, const std::vector<int>& idx, int pred) {
  const Value* source = n.inputs[0];
  const int64_t dim = n.attr<AxisAttrs>().dim, size = source->shape.at(static_cast<size_t>(dim));
  const DType dtype = n.output()->dtype;
  const int at_value = visit(n.inputs[1], index_operand_index(n, idx), pred);
  const auto gather = static_cast<int>(ir_.abi.gathers.size());
  ir_.abi.gathers.push_back(detail::concat("prims.", op_name(n.op), " ", n.output()->name, " (dim ", dim, " of size ", size,
                                           " of ", source->name, " ", source->type_string(), ")"));
  const int bound = constant_field(n, 0, size);
  const int at = nest_->gathered(at_value, bound, ir_.field(AbiFieldKind::IndexError, 0), gather);
  // One statement per node: the order of a call's arguments is unspecified, and the arena's order
  // is the kernel's text (and its cache key).
  const int at_least_zero = nest_->binary(IndexOp::Ge, at, nest_->constant(0));
  const int below_bound = nest_->binary(IndexOp::Lt, at, bound);
  const int in_range = land(at_least_zero, below_bound);
  const std::vector<int> source_idx = gathered_index(n, idx, at);
  const int inner = visit(source, source_idx, land(pred, in_range));
  return select(in_range, inner, zero(dtype), dtype);
}

int KernelLowering::zero(DType dtype) {
  ValueExpr e;  // a Constant of the default Scalar, 0
  e.dtype = dtype;
  return nest_->value(e);
}

int KernelLowering::constant(DType dtype, Scalar value) {
  ValueExpr e;
  e.op = ValueOp::Constant;
  e.dtype = dtype;
  e.constant = value;
  return nest_->value(e);
}

int KernelLowering::cast(int v, DType from, DType to) {
  if (from == to) return v;
  ValueExpr e;
  e.op = ValueOp::Cast;
  e.dtype = to;
  e.operand_dtype = from;
  e.args = {v};
  return nest_->value(e);
}

int KernelLowering::apply(OpKind fn, DType dtype, std::vector<int> args) {
  ValueExpr e;
  e.op = ValueOp::Apply;
  e.fn = fn;
  e.dtype = e.operand_dtype = dtype;
  e.args = std::move(args);
  return nest_->value(e);
}

// The known linearisation of loop vars `run` (more than one), if any.
std::optional<int> KernelLowering::linear_of(const std::vector<int64_t>& run) const {
  for (const auto& [flat, vars] : linear_)
    if (vars == run) return flat;
  return std::nullopt;
}

std::optional<std::vector<int>> NestIndices::unflattened(int flat, std::span<const int64_t> sizes) {
  auto it = l_.linear_.find(flat);
  if (it == l_.linear_.end()) return std::nullopt;
  const std::vector<int64_t>& vars = it->second;
  // Each size takes the next vars whose extents multiply to it: one var is itself, several their
  // known linearisation (a serial nest's split row dim inside a merged one).
  // A var of extent 1 (always 0) is a size-1 dim's index, and is left out of a longer one's run.
  auto extent = [&](size_t k) { return l_.loop_sizes_[static_cast<size_t>(vars[k])]; };
  std::vector<int> out;
  size_t k = 0;
  for (int64_t size : sizes) {
    if (size == 1) {
      out.push_back(k < vars.size() && extent(k) == 1 ? l_.nest_->var(vars[k++]) : literal(0));
      continue;
    }
    std::vector<int64_t> run;
    int64_t product = 1;
    while (k < vars.size() && product < size) {
      if (extent(k) != 1) {
        product *= extent(k);
        run.push_back(vars[k]);
      }
      ++k;
    }
    if (product != size) return std::nullopt;
    if (run.empty()) {
      out.push_back(literal(0));
    } else if (run.size() == 1) {
      out.push_back(l_.nest_->var(run[0]));
    } else {
      const std::optional<int> f = l_.linear_of(run);
      if (!f) return std::nullopt;
      out.push_back(*f);
    }
  }
  for (; k < vars.size(); ++k)
    if (extent(k) != 1) return std::nullopt;
  return out;
}

std::optional<int> NestIndices::flattened(std::span<const int> indices, std::span<const int64_t> sizes) {
  if (indices.size() < 2) return std::nullopt;
  std::vector<int64_t> run;
  for (size_t k = 0; k < indices.size(); ++k) {
    const IndexExpr& e = l_.nest_->indices[static_cast<size_t>(indices[k])];
    if (e.op != IndexOp::Var || l_.loop_sizes_.size() <= static_cast<size_t>(e.value) ||
        l_.loop_sizes_[static_cast<size_t>(e.value)] != sizes[k])
      return std::nullopt;
    run.push_back(e.value);
  }
  return l_.linear_of(run);
}

int KernelLowering::lower_node(const Node& n, const Value* out, const std::vector<int>& idx, int pred) {
  const DType dtype = out->dtype;
  switch (n.op) {
    case OpKind::Transpose: case OpKind::Reshape: case OpKind::BroadcastInDim: case OpKind::SlicePrim:
    case OpKind::Squeeze: case OpKind::Flip:
      return visit(n.inputs[0], one_to_one_index(ix_, n, idx), pred);
    case OpKind::Pad: {
      // Elsewhere than the input's elements the result is the padding value.
      const PadIndex<NestIndices> p = pad_index(ix_, n, idx);
      if (p.valid < 0) return visit(n.inputs[0], p.index, pred);
      const int inner = visit(n.inputs[0], p.index, land(pred, p.valid));
      return select(p.valid, inner, scalar(n.inputs[1], dtype), dtype);
    }
    case OpKind::Cat:
      return lower_cat(n, idx, pred);
    case OpKind::Take: case OpKind::TakeAlongAxis: case OpKind::Gather:
      return lower_gather(n, idx, pred);
    case OpKind::ConvertElementType: {
      const Value* in = n.inputs[0];
      const int arg = operand(in, idx, pred, dtype);
      return in->is_tensor ? cast(arg, in->dtype, dtype) : arg;
    }
    case OpKind::Full: {
      const auto& a = n.attr<FullAttrs>();
      return constant(a.dtype, a.value);
    }
    case OpKind::Iota: {
      const auto& a = n.attr<IotaAttrs>();
      nest_->flat = false;  // iota reads the loop index
      ValueExpr e;
      e.op = ValueOp::Iota;
      e.dtype = a.dtype;
      e.index = idx.at(0);
      e.iota_start = a.start;  // literals in the source: start 0 and step 1 fold away
      e.iota_step = a.step;
      return nest_->value(e);
    }
    case OpKind::UniformPhilox:
      return lower_uniform(n, idx);
    case OpKind::Sum: case OpKind::Prod: case OpKind::Amax: case OpKind::Amin: case OpKind::Var:
    case OpKind::VarMean:
      return lower_reduction(n, out, idx, pred);
    case OpKind::ScatterAdd: case OpKind::ScatterMax:  // complete only after its own kernel: read from its buffer
      return unsupported(detail::concat("prims.", op_name(n.op), " ", out->name, " is read in the kernel that computes it"));
    case OpKind::Matmul: case OpKind::MatmulGelu: case OpKind::MatmulAdd:  // a library segment's (planned before the kernels that read it)
      return unsupported(detail::concat("prims.", op_name(n.op), " ", out->name, " is computed by a library call"));
    case OpKind::Cumsum:  // likewise: each element needs the line before it
      return unsupported(detail::concat("prims.cumsum ", out->name, " is read in the kernel that computes it"));
    default:
      break;
  }
  VF_INTERNAL_CHECK(is_elementwise(n.op), "lower_kernel: unexpected prims.", op_name(n.op));
  // Elementwise: operands share one dtype (the first tensor's; where's condition is bool).
  const size_t first = n.op == OpKind::Where ? 1 : 0;
  DType operand_dtype = dtype;
  for (size_t i = first; i < n.inputs.size(); ++i) {
    if (n.inputs[i]->is_tensor) {
      operand_dtype = n.inputs[i]->dtype;
      break;
    }
  }
  ValueExpr e;
  e.op = ValueOp::Apply;
  e.fn = n.op;
  e.dtype = dtype;
  e.operand_dtype = operand_dtype;
  // where(c, a, b) with c a comparison of loop indices: an input operand that c discards is not
  // read, and c is tested in index math (a select).
  const int index_cond =
      n.op == OpKind::Where && pred < 0 ? index_condition(*nest_, operand(n.inputs[0], idx, pred, DType::Bool)) : -1;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const auto view = index_cond >= 0 && i >= first ? views_.find(n.inputs[i]) : views_.end();
    if (view != views_.end())
      e.args.push_back(load(n.inputs[i], view->second, idx, i == 1 ? index_cond : index_not(*nest_, index_cond), true));
    else
      e.args.push_back(operand(n.inputs[i], idx, pred, i < first ? DType::Bool : operand_dtype));
  }
  if (index_cond >= 0) return select(index_cond, e.args[1], e.args[2], dtype);
  // A float to the power 1, 2 or 3 (RMS norm's square and its backward's x^1): the operand, or
  // its products; powf is some forty instructions an element. x^1 and x^2 are exact (one rounding
  // of the exact product); x^3 rounds twice (within an ulp), so only where the product is not
  // rounded to a half type in between.
  if (n.op == OpKind::Pow && is_floating(dtype) && dtype == operand_dtype && n.inputs[1]->is_constant()) {
    const double p = n.inputs[1]->constant->as_double();
    const bool wide = dtype == DType::Float32 || dtype == DType::Float64;
    if (p == 1) return e.args[0];
    if (p == 2 || (p == 3 && wide)) {
      const int square = apply(OpKind::Mul, dtype, {e.args[0], e.args[0]});
      return p == 2 ? square : apply(OpKind::Mul, dtype, {square, e.args[0]});
    }
  }
  return nest_->value(e);
}

LoweredKernel lower_kernel(const KernelSpec& spec) {
  VF_INTERNAL_CHECK(spec.fusion != nullptr, "kernel spec without a fusion");
  return KernelLowering(spec).run();
}

PartlyRead partly_read_inputs(const KernelSpec& spec, const KernelIR& ir) {
  PartlyRead r;
  auto add = [](std::vector<std::string>& to, const std::string& name) {
    if (std::find(to.begin(), to.end(), name) == to.end()) to.push_back(name);
  };
  for (const LoopNest& nest : ir.nests) {
    for (const ValueExpr& e : nest.values) {
      if (e.op != ValueOp::Load) continue;
      const std::string& name = spec.fusion->inputs().at(static_cast<size_t>(ir.abi.fields.at(e.param).a))->name;
      if (e.pred_in_bounds) add(r.masked, name);
      if (nest.indices[static_cast<size_t>(e.index)].dynamic) add(r.gathered, name);
    }
  }
  return r;
}

}  // namespace vf
