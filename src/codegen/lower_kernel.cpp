// Lowering a pointwise segment to loop nests: index mapping through view and movement ops.
#include "codegen/lower_kernel.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "base/error.h"
#include "layout/view_algebra.h"

namespace vf {
namespace {

// A value that is an input buffer seen through a chain of pure view ops.
struct ViewOf {
  int input = 0;
  std::vector<const Node*> steps;  // empty: the input itself
  Layout layout;
};

// A size-1 dim's index is always 0, so its stride never matters: it is baked as Zero.
StrideClass dim_class(const Layout& l, int64_t d) {
  return l.sizes[d] == 1 ? StrideClass::Zero : stride_class(l.strides[d]);
}

// Constant fields for iota's start and step are never narrowed to 32 bits (see finalize_abi).
constexpr int32_t kWideConstantSlot = 1000;

class Lowering {
 public:
  explicit Lowering(const KernelSpec& spec) : spec_(spec), fusion_(*spec.fusion) {}

  KernelIR run() {
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
    return std::move(ir_);
  }

 private:
  // Forward: which values are pure views of an input buffer, with their composed layouts.
  void find_views() {
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

  void lower_group(const std::vector<int>& outs) {
    nest_ = &ir_.nests.emplace_back();
    memo_.clear();
    flat_inputs_.clear();
    flat_views_.clear();
    flat_outputs_.clear();
    const Value* first = fusion_.outputs()[outs[0]];
    ir_.abi.nests.push_back({outs[0]});
    std::vector<int> idx;
    for (int64_t d = 0; d < first->rank(); ++d) {
      nest_->extents.push_back(ir_.field(AbiFieldKind::OutputSize, outs[0], static_cast<int32_t>(d)));
      idx.push_back(nest_->var(d));
    }
    for (int o : outs) {
      const Value* out = fusion_.outputs()[o];
      const int value = visit(out, idx, -1);
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
      nest_->stores.push_back(s);
    }
    if (nest_->flat) {
      auto append = [](std::vector<int32_t>& to, const std::vector<int32_t>& from) {
        for (int32_t x : from)
          if (std::find(to.begin(), to.end(), x) == to.end()) to.push_back(x);
      };
      append(ir_.abi.contiguous_inputs, flat_inputs_);
      append(ir_.abi.contiguous_views, flat_views_);
      append(ir_.abi.contiguous_outputs, flat_outputs_);
    } else {
      for (StoreStmt& s : nest_->stores) s.flat_offset = -1;
      for (ValueExpr& e : nest_->values) e.flat_offset = -1;
    }
  }

  int add(int a, int b) { return nest_->binary(IndexOp::Add, a, b); }
  int sub(int a, int b) { return nest_->binary(IndexOp::Sub, a, b); }
  int mul(int a, int b) { return nest_->binary(IndexOp::Mul, a, b); }
  int land(int a, int b) { return a < 0 ? b : b < 0 ? a : nest_->binary(IndexOp::And, a, b); }
  int constant_field(const Node& n, int slot, int64_t v) {
    return nest_->param(ir_.field(AbiFieldKind::Constant, n.id, slot, v));
  }
  int scaled(int i, StrideClass c, AbiFieldKind kind, int buffer, int64_t d) {
    switch (c) {
      case StrideClass::Zero: return nest_->constant(0);
      case StrideClass::One: return i;
      case StrideClass::Any: return mul(i, nest_->param(ir_.field(kind, buffer, static_cast<int32_t>(d))));
    }
    return i;
  }

  int input_index(const Value* v) const {
    const auto& inputs = fusion_.inputs();
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i] == v) return static_cast<int>(i);
    VF_INTERNAL_ERROR("value ", v->name, " is neither a fusion input nor computed in the segment");
  }

  // A scalar operand (constant or scalar input) converted to dtype.
  int scalar(const Value* v, DType dtype) {
    ValueExpr e;
    e.dtype = dtype;
    if (v->is_constant()) {
      e.op = ValueOp::Constant;
      e.constant = *v->constant;
    } else {
      e.op = ValueOp::Scalar;
      const AbiFieldKind k = v->scalar_kind == ScalarKind::Float ? AbiFieldKind::ScalarF64 : AbiFieldKind::ScalarI64;
      e.param = ir_.field(k, input_index(v));
    }
    return nest_->value(e);
  }

  // An elementwise operand. Weak scalars are converted to the compute type (float, unrounded,
  // for the half types), as the reference does.
  int operand(const Value* v, const std::vector<int>& idx, int pred, DType dtype) {
    return v->is_tensor ? visit(v, idx, pred) : scalar(v, is_half(dtype) ? DType::Float32 : dtype);
  }

  int load(const Value* v, const ViewOf& view, const std::vector<int>& idx, int pred) {
    AbiFieldKind stride_kind = AbiFieldKind::InputStride, offset_kind = AbiFieldKind::InputOffset;
    int buffer = view.input;
    std::vector<uint8_t>* classes = &ir_.abi.input_classes[view.input];
    if (!view.steps.empty()) {
      auto it = view_ids_.find(v);
      if (it == view_ids_.end()) {
        AbiView av;
        av.input = view.input;
        for (const Node* n : view.steps) {
          Node step;
          step.id = n->id;
          step.op = n->op;
          step.attrs = n->attrs;
          av.steps.push_back(std::move(step));
        }
        av.spec_input_layout = spec_.input_layouts[view.input];
        av.spec_view_layout = view.layout;
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
      index = add(index, scaled(idx[d], c, stride_kind, buffer, d));
    }
    ValueExpr e;
    const bool in_order = pred < 0 && idx.size() == nest_->extents.size() && view.layout.is_contiguous() &&
                          [&] {
                            for (size_t d = 0; d < idx.size(); ++d)
                              if (idx[d] != nest_->var(static_cast<int64_t>(d))) return false;
                            return true;
                          }();
    if (in_order) {
      e.flat_offset = ir_.field(offset_kind, buffer);
      (view.steps.empty() ? flat_inputs_ : flat_views_).push_back(buffer);
    } else {
      nest_->flat = false;
    }
    for (int64_t d = 0; d < view.layout.rank(); ++d) {
      if (static_cast<StrideClass>((*classes)[d]) != StrideClass::One) continue;
      for (size_t k = 0; k < nest_->extents.size(); ++k)
        if (idx[d] == nest_->var(static_cast<int64_t>(k))) e.unit_var = static_cast<int>(k);
    }
    e.op = ValueOp::Load;
    e.dtype = v->dtype;
    e.param = ir_.field(AbiFieldKind::InputData, view.input);
    e.index = index;
    e.pred = pred;
    return nest_->value(e);
  }

  int select(int pred, int a, int b, DType dtype) {
    ValueExpr e;
    e.op = ValueOp::Select;
    e.dtype = dtype;
    e.pred = pred;
    e.args = {a, b};
    return nest_->value(e);
  }

  // The value of tensor v at index idx (one index expression per dim of v); loads are guarded
  // by pred (-1: unguarded).
  int visit(const Value* v, const std::vector<int>& idx, int pred) {
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

  int lower_node(const Node& n, const Value* out, const std::vector<int>& idx, int pred);
  int lower_reshape(const Node& n, const std::vector<int>& idx, int pred);
  int lower_pad(const Node& n, const std::vector<int>& idx, int pred);
  int lower_cat(const Node& n, const std::vector<int>& idx, int pred);

  const KernelSpec& spec_;
  const Fusion& fusion_;
  KernelIR ir_;
  LoopNest* nest_ = nullptr;
  std::unordered_map<const Value*, ViewOf> views_;
  std::unordered_map<const Value*, int> view_ids_;
  std::map<std::tuple<const Value*, std::vector<int>, int>, int> memo_;
  std::vector<int32_t> flat_inputs_, flat_views_, flat_outputs_;  // of the current nest
};

// Reshape: dims of the input and output shapes are matched in groups of equal numel; within a
// group the output index is linearised and unravelled over the input dims (/ and %).
int Lowering::lower_reshape(const Node& n, const std::vector<int>& idx, int pred) {
  const Value* in = n.inputs[0];
  const Shape& is = in->shape;
  const Shape& os = n.output()->shape;
  std::vector<int> in_idx(is.size(), nest_->constant(0));
  if (in->numel() == 0) return visit(in, in_idx, pred);  // never evaluated
  int slot = 0;
  size_t i = 0, j = 0;
  while (i < is.size() || j < os.size()) {
    size_t i0 = i, j0 = j;
    int64_t pin = 1, pout = 1;
    if (i < is.size()) pin *= is[i++];
    if (j < os.size()) pout *= os[j++];
    while (pin != pout) {
      if (pin < pout) {
        VF_INTERNAL_CHECK(i < is.size(), "reshape groups of ", shape_to_string(is));
        pin *= is[i++];
      } else {
        VF_INTERNAL_CHECK(j < os.size(), "reshape groups of ", shape_to_string(os));
        pout *= os[j++];
      }
    }
    if (i - i0 == 1 && j - j0 == 1) {
      in_idx[i0] = idx[j0];
      continue;
    }
    int flat = nest_->constant(0);
    for (size_t k = j0; k < j; ++k)
      flat = k == j0 ? idx[k] : add(mul(flat, constant_field(n, slot++, os[k])), idx[k]);
    int64_t inner = 1;
    for (size_t k = i; k-- > i0;) {
      int q = inner == 1 ? flat : nest_->binary(IndexOp::Div, flat, constant_field(n, slot++, inner));
      if (k != i0) q = nest_->binary(IndexOp::Mod, q, constant_field(n, slot++, is[k]));
      in_idx[k] = q;
      inner *= is[k];
    }
  }
  return visit(in, in_idx, pred);
}

// Pad: input position j = i - lo must be >= 0, a multiple of interior + 1, and j / (interior + 1)
// must be below the input size; elsewhere the result is the padding value.
int Lowering::lower_pad(const Node& n, const std::vector<int>& idx, int pred) {
  const Value* in = n.inputs[0];
  const auto& config = n.attr<PadAttrs>().config;
  std::vector<int> in_idx = idx;
  int valid = -1;
  for (size_t d = 0; d < config.size(); ++d) {
    const PadDim& p = config[d];
    if (p.lo == 0 && p.hi == 0 && p.interior == 0) continue;
    const int slot = static_cast<int>(d) * 3;
    int j = sub(idx[d], constant_field(n, slot, p.lo));
    int ok = nest_->binary(IndexOp::Ge, j, nest_->constant(0));
    if (p.interior != 0) {
      const int step = constant_field(n, slot + 1, p.interior + 1);
      ok = land(ok, nest_->binary(IndexOp::Eq, nest_->binary(IndexOp::Mod, j, step), nest_->constant(0)));
      j = nest_->binary(IndexOp::Div, j, step);
    }
    ok = land(ok, nest_->binary(IndexOp::Lt, j, constant_field(n, slot + 2, in->shape[d])));
    valid = land(valid, ok);
    in_idx[d] = j;
  }
  const DType dtype = n.output()->dtype;
  if (valid < 0) return visit(in, in_idx, pred);
  const int inner = visit(in, in_idx, land(pred, valid));
  return select(valid, inner, scalar(n.inputs[1], dtype), dtype);
}

// Cat: each non-empty source covers [lo, lo + size) along the dim; loads of each source are
// guarded by its range.
int Lowering::lower_cat(const Node& n, const std::vector<int>& idx, int pred) {
  const int64_t dim = n.attr<CatAttrs>().dim;
  const DType dtype = n.output()->dtype;
  std::vector<std::pair<int, int>> parts;  // (range predicate, value)
  int64_t lo = 0;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const Value* src = n.inputs[k];
    const int64_t size = src->shape[dim];
    if (size == 0) continue;
    const int slot = static_cast<int>(k) * 2;
    const int lo_i = constant_field(n, slot, lo);
    const int in_range =
        land(nest_->binary(IndexOp::Ge, idx[dim], lo_i),
             nest_->binary(IndexOp::Lt, idx[dim], constant_field(n, slot + 1, lo + size)));
    std::vector<int> src_idx = idx;
    src_idx[dim] = sub(idx[dim], lo_i);
    parts.emplace_back(in_range, visit(src, src_idx, land(pred, in_range)));
    lo += size;
  }
  if (parts.empty()) {  // the result is empty: never evaluated
    ValueExpr zero;
    zero.dtype = dtype;
    return nest_->value(zero);
  }
  int result = parts.back().second;
  for (size_t k = parts.size() - 1; k-- > 0;) result = select(parts[k].first, parts[k].second, result, dtype);
  return result;
}

int Lowering::lower_node(const Node& n, const Value* out, const std::vector<int>& idx, int pred) {
  const DType dtype = out->dtype;
  switch (n.op) {
    case OpKind::Transpose: {
      const auto& perm = n.attr<PermuteAttrs>().permutation;
      std::vector<int> in_idx(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) in_idx[perm[i]] = idx[i];
      return visit(n.inputs[0], in_idx, pred);
    }
    case OpKind::Reshape:
      return lower_reshape(n, idx, pred);
    case OpKind::BroadcastInDim: {
      const Value* in = n.inputs[0];
      const auto& bdims = n.attr<BroadcastAttrs>().broadcast_dims;
      std::vector<int> in_idx(in->shape.size());
      for (size_t j = 0; j < bdims.size(); ++j)
        in_idx[j] = in->shape[j] == 1 ? nest_->constant(0) : idx[bdims[j]];
      return visit(in, in_idx, pred);
    }
    case OpKind::SlicePrim: {
      const auto& a = n.attr<SliceAttrs>();
      std::vector<int> in_idx = idx;
      for (size_t d = 0; d < idx.size(); ++d) {
        const int slot = static_cast<int>(d) * 2;
        if (a.step[d] != 1) in_idx[d] = mul(in_idx[d], constant_field(n, slot, a.step[d]));
        if (a.start[d] != 0) in_idx[d] = add(in_idx[d], constant_field(n, slot + 1, a.start[d]));
      }
      return visit(n.inputs[0], in_idx, pred);
    }
    case OpKind::Squeeze: {
      const auto& dims = n.attr<DimsAttrs>().dims;
      std::vector<int> in_idx;
      size_t k = 0;
      for (int64_t d = 0; d < n.inputs[0]->rank(); ++d) {
        const bool squeezed = std::find(dims.begin(), dims.end(), d) != dims.end();
        in_idx.push_back(squeezed ? nest_->constant(0) : idx[k++]);
      }
      return visit(n.inputs[0], in_idx, pred);
    }
    case OpKind::Pad:
      return lower_pad(n, idx, pred);
    case OpKind::Cat:
      return lower_cat(n, idx, pred);
    case OpKind::Flip: {
      std::vector<int> in_idx = idx;
      for (int64_t d : n.attr<DimsAttrs>().dims)
        in_idx[d] = sub(constant_field(n, static_cast<int>(d), out->shape[d] - 1), idx[d]);
      return visit(n.inputs[0], in_idx, pred);
    }
    case OpKind::ConvertElementType: {
      const Value* in = n.inputs[0];
      const int arg = operand(in, idx, pred, dtype);
      if (!in->is_tensor || in->dtype == dtype) return arg;
      ValueExpr e;
      e.op = ValueOp::Cast;
      e.dtype = dtype;
      e.operand_dtype = in->dtype;
      e.args = {arg};
      return nest_->value(e);
    }
    case OpKind::Full: {
      const auto& a = n.attr<FullAttrs>();
      ValueExpr e;
      e.op = ValueOp::Constant;
      e.dtype = a.dtype;
      e.constant = a.value;
      return nest_->value(e);
    }
    case OpKind::Iota: {
      const auto& a = n.attr<IotaAttrs>();
      nest_->flat = false;  // iota reads the loop index
      ValueExpr e;
      e.op = ValueOp::Iota;
      e.dtype = a.dtype;
      e.index = idx.at(0);
      e.param = ir_.field(AbiFieldKind::Constant, n.id, kWideConstantSlot, a.start);
      e.param2 = ir_.field(AbiFieldKind::Constant, n.id, kWideConstantSlot + 1, a.step);
      return nest_->value(e);
    }
    case OpKind::Sum: case OpKind::Prod: case OpKind::Amax: case OpKind::Amin: case OpKind::Var:
    case OpKind::VarMean:
      VF_INTERNAL_ERROR("lower_kernel: prims.", op_name(n.op), " (", out->name,
                        ") is a reduction; pointwise kernels cannot compute it");
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
  for (size_t i = 0; i < n.inputs.size(); ++i)
    e.args.push_back(operand(n.inputs[i], idx, pred, i < first ? DType::Bool : operand_dtype));
  return nest_->value(e);
}

}  // namespace

KernelIR lower_kernel(const KernelSpec& spec) {
  VF_INTERNAL_CHECK(spec.fusion != nullptr, "kernel spec without a fusion");
  return Lowering(spec).run();
}

}  // namespace vf
