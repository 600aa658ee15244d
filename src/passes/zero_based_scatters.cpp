#include "passes/zero_based_scatters.h"

#include <limits>

#include "base/error.h"
#include "codegen/lower_kernel.h"

namespace vf {
namespace {

DType accumulation_dtype(DType dtype) {
  if (dtype == DType::Float16 || dtype == DType::BFloat16) return DType::Float32;
  if (dtype == DType::UInt8 || dtype == DType::Int8 || dtype == DType::Int16) return DType::Int64;
  return dtype;
}

// scatter_max's kernels take i32 and i64 onto a full of an integer.
DType max_dtype(DType dtype) { return dtype == DType::Int64 ? DType::Int64 : DType::Int32; }

bool is_integer_full(const Value* v) {
  const Node* p = v->producer;
  return p && p->op == OpKind::Full && p->attr<FullAttrs>().value.kind == ScalarKind::Int;
}

bool needs_rewrite(const Node& n) {
  const DType dtype = n.output()->dtype;
  if (n.op == OpKind::ScatterMax) return !is_integer_full(n.inputs[0]) || !scatter_accumulates(n.op, dtype);
  if (n.op != OpKind::ScatterAdd) return false;
  return !is_zero_full(n.inputs[0]) || accumulation_dtype(dtype) != dtype;
}

// r = scatter_max(a, index, src) -> s = scatter_max(full(lowest, acc), index, convert(src, acc))
//                                   r = convert(maximum(convert(a, acc), s), a.dtype)
// (acc int32 for the integers narrower than it): exact, max commutes with the widening.
std::string rewrite_max(FusionRewriter& r, const Node& n) {
  const Value* out = n.output();
  const DType dtype = out->dtype, acc = max_dtype(dtype);
  auto in_acc = [&](Value* v, const std::string& name) {
    return v->dtype == acc ? v : r.add(OpKind::ConvertElementType, {v}, CastAttrs{acc}, r.fresh(name), n.line);
  };
  const int64_t lowest = acc == DType::Int64 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int32_t>::min();
  Value* fill = r.add(OpKind::Full, {}, FullAttrs{out->shape, Scalar::from_int(lowest), acc},
                      r.fresh(out->name + "_lowest"), n.line);
  Value* src = in_acc(r.map(n.inputs[2]), n.inputs[2]->name + "_acc");
  Value* maxes = r.add(OpKind::ScatterMax, {fill, r.map(n.inputs[1]), src}, n.attrs, r.fresh(out->name + "_maxes"), n.line);
  const bool cast = acc != dtype;
  Value* result = r.add(OpKind::Maximum, {in_acc(r.map(n.inputs[0]), n.inputs[0]->name + "_acc"), maxes}, NoAttrs{},
                        cast ? r.fresh(out->name + "_acc") : out->name, n.line);
  if (cast) result = r.add(OpKind::ConvertElementType, {result}, CastAttrs{dtype}, out->name, n.line);
  r.replace(out, result);
  return detail::concat("prims.scatter_max ", out->name, ": onto the lowest ", dtype_short_name(acc),
                        ", then the largest with ", n.inputs[0]->name);
}

std::string rewrite(FusionRewriter& r, const Node& n) {
  if (n.op == OpKind::ScatterMax) return rewrite_max(r, n);
  const Value* out = n.output();
  const Value* base = n.inputs[0];
  const DType dtype = out->dtype, acc = accumulation_dtype(dtype);
  auto in_acc = [&](Value* v, const std::string& name) {
    return v->dtype == acc ? v : r.add(OpKind::ConvertElementType, {v}, CastAttrs{acc}, r.fresh(name), n.line);
  };
  Value* zeros = r.add(OpKind::Full, {}, FullAttrs{out->shape, is_floating(acc) ? Scalar::from_float(0) : Scalar::from_int(0), acc},
                       r.fresh(out->name + "_zeros"), n.line);
  Value* src = in_acc(r.map(n.inputs[2]), n.inputs[2]->name + "_acc");
  VF_INTERNAL_CHECK(scatter_accumulates(OpKind::ScatterAdd, acc), "no scatter kernel accumulates in ", dtype_short_name(acc));
  const bool zero_base = is_zero_full(base);
  Value* sums = r.add(OpKind::ScatterAdd, {zeros, r.map(n.inputs[1]), src}, n.attrs, r.fresh(out->name + "_sums"), n.line);
  Value* result = sums;
  if (!zero_base) {
    const bool cast = acc != dtype;
    result = r.add(OpKind::Add, {in_acc(r.map(base), base->name + "_acc"), sums}, NoAttrs{},
                   cast ? r.fresh(out->name + "_acc") : out->name, n.line);
  }
  if (acc != dtype) result = r.add(OpKind::ConvertElementType, {result}, CastAttrs{dtype}, out->name, n.line);
  r.replace(out, result);
  std::string note = detail::concat("prims.scatter_add ", out->name, ": ");
  if (!zero_base) note += detail::concat("adds onto zeros, then ", base->name, " is added");
  if (acc != dtype)
    note += detail::concat(zero_base ? "" : "; ", "accumulates in ", dtype_short_name(acc), " (CUDA has no atomic add of ",
                           dtype_short_name(dtype), "), rounded once");
  return note;
}

}  // namespace

RewrittenFusion zero_based_scatters(const Fusion& fusion) { return rewrite_nodes(fusion, needs_rewrite, rewrite); }

}  // namespace vf
