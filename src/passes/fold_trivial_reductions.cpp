#include "passes/fold_trivial_reductions.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"

namespace vf {
namespace {

enum class Fold { None, Identity, Drop };

bool is_variance(OpKind op) { return op == OpKind::Var || op == OpKind::VarMean; }

const std::vector<int64_t>* reduced_dims(const Node& n) {
  if (is_variance(n.op)) return &n.attr<VarAttrs>().dims;
  if (n.op == OpKind::Sum || n.op == OpKind::Prod || n.op == OpKind::Amax || n.op == OpKind::Amin)
    return &n.attr<DimsAttrs>().dims;
  return nullptr;
}

// The reduced dims longer than 1, ascending.
std::vector<int64_t> real_dims(const Node& n) {
  std::vector<int64_t> dims;
  for (int64_t d : *reduced_dims(n))
    if (n.inputs[0]->shape[d] != 1) dims.push_back(d);
  std::sort(dims.begin(), dims.end());
  return dims;
}

// A cumsum along a dim of size 1 (or of a 0-dim tensor) sums one element per result.
bool trivial_scan(const Node& n) {
  return n.op == OpKind::Cumsum && (n.inputs[0]->rank() == 0 || n.inputs[0]->shape[n.attr<AxisAttrs>().dim] == 1);
}

Fold fold_of(const Node& n) {
  if (trivial_scan(n)) return Fold::Drop;
  const std::vector<int64_t>* dims = reduced_dims(n);
  if (!dims || n.output()->numel() == 0) return Fold::None;
  const Value* in = n.inputs[0];
  const bool empty = std::any_of(dims->begin(), dims->end(), [&](int64_t d) { return in->shape[d] == 0; });
  if (empty) return is_variance(n.op) ? Fold::None : Fold::Identity;
  const size_t real = real_dims(n).size();
  if (real == dims->size() || (real == 0 && is_variance(n.op))) return Fold::None;
  return Fold::Drop;
}

// The result of op over no elements, as the reference executor starts its accumulators.
Scalar identity(OpKind op, DType dtype) {
  const bool floating = is_floating(dtype);
  switch (op) {
    case OpKind::Sum: return floating ? Scalar::from_float(0) : Scalar::from_int(0);
    case OpKind::Prod: return floating ? Scalar::from_float(1) : Scalar::from_int(1);
    case OpKind::Amax: case OpKind::Amin: {
      const bool max = op == OpKind::Amax;
      if (floating) return Scalar::from_float(max ? -INFINITY : INFINITY);
      if (dtype == DType::Bool) return Scalar::from_bool(!max);
      const int bits = static_cast<int>(8 * dtype_size(dtype));
      if (dtype == DType::UInt8) return Scalar::from_int(max ? 0 : 255);
      const int64_t high = static_cast<int64_t>((uint64_t{1} << (bits - 1)) - 1);
      return Scalar::from_int(max ? -high - 1 : high);
    }
    default: VF_INTERNAL_ERROR("prims.", op_name(op), " has no identity");
  }
}

// The rewrite of reduction n (its fold not None), and its note.
std::string fold_reduction(FusionRewriter& r, const Node& n) {
  const Fold fold = fold_of(n);
  const Value* in = n.inputs[0];
  const std::string head = detail::concat("prims.", op_name(n.op), " ", n.output()->name, ": ");
  if (trivial_scan(n)) {
    const Value* out = n.output();
    r.replace(out, r.add(OpKind::Reshape, {r.map(in)}, ReshapeAttrs{out->shape}, out->name, n.line));
    return head + "sums along a dim of size 1 of " + shape_to_string(in->shape) + ", so it is a reshape";
  }
  if (fold == Fold::Identity) {
    const Value* out = n.output();
    r.replace(out, r.add(OpKind::Full, {}, FullAttrs{out->shape, identity(n.op, out->dtype), out->dtype}, out->name,
                         n.line));
    return head + "reduces an empty dim of " + shape_to_string(in->shape) + ", so it is full of its identity";
  }
  // The input without its size-1 dims; the reduced dims among the rest, renumbered.
  const std::vector<int64_t> real = real_dims(n);
  Shape squeezed;
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < in->rank(); ++d) {
    if (in->shape[d] == 1) continue;
    if (std::binary_search(real.begin(), real.end(), d)) dims.push_back(static_cast<int64_t>(squeezed.size()));
    squeezed.push_back(in->shape[d]);
  }
  Value* x = r.map(in);
  if (squeezed != in->shape) x = r.add(OpKind::Reshape, {x}, ReshapeAttrs{squeezed}, r.fresh(in->name + "_squeezed"), n.line);
  std::vector<Value*> results;
  if (dims.empty()) {
    results.push_back(x);
  } else {
    OpAttrs attrs = DimsAttrs{dims};
    if (is_variance(n.op)) attrs = VarAttrs{dims, n.attr<VarAttrs>().correction};
    std::vector<std::string> names;
    for (const Value* out : n.outputs) names.push_back(r.fresh(out->name + "_kept"));
    const auto& outs = r.add_node(n.op, {x}, std::move(attrs), std::move(names), n.line);
    results.assign(outs.begin(), outs.end());
  }
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    const Value* out = n.outputs[k];
    Value* v = results[k];
    const bool cast = v->dtype != out->dtype;
    v = r.add(OpKind::Reshape, {v}, ReshapeAttrs{out->shape}, cast ? r.fresh(out->name + "_same") : out->name, n.line);
    if (cast) v = r.add(OpKind::ConvertElementType, {v}, CastAttrs{out->dtype}, out->name, n.line);
    r.replace(out, v);
  }
  return head + (dims.empty() ? "reduces only dims of size 1 of " + shape_to_string(in->shape) + ", so it is a reshape"
                              : "reduces " + shape_to_string(dims) + " of " + shape_to_string(squeezed) + ", its input " +
                                    shape_to_string(in->shape) + " without the dims of size 1");
}

}  // namespace

RewrittenFusion fold_trivial_reductions(const Fusion& fusion) {
  return rewrite_nodes(fusion, [](const Node& n) { return fold_of(n) != Fold::None; }, fold_reduction);
}

}  // namespace vf
