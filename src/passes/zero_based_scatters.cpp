#include "passes/zero_based_scatters.h"

#include <cmath>

#include "base/error.h"
#include "codegen/lower_kernel.h"

namespace vf {
namespace {

DType accumulation_dtype(DType dtype) {
  if (dtype == DType::Float16 || dtype == DType::BFloat16) return DType::Float32;
  if (dtype == DType::UInt8 || dtype == DType::Int8 || dtype == DType::Int16) return DType::Int64;
  return dtype;
}

bool is_zero_full(const Value* v) {
  const Node* p = v->producer;
  if (!p || p->op != OpKind::Full) return false;
  const Scalar& x = p->attr<FullAttrs>().value;
  return x.kind == ScalarKind::Float ? x.f == 0 && !std::signbit(x.f) : x.i == 0;
}

bool needs_rewrite(const Node& n) {
  if (n.op != OpKind::ScatterAdd) return false;
  const DType dtype = n.output()->dtype;
  return !is_zero_full(n.inputs[0]) || accumulation_dtype(dtype) != dtype;
}

std::string rewrite(FusionRewriter& r, const Node& n) {
  const Value* out = n.output();
  const Value* base = n.inputs[0];
  const DType dtype = out->dtype, acc = accumulation_dtype(dtype);
  auto in_acc = [&](Value* v, const std::string& name) {
    return v->dtype == acc ? v : r.add(OpKind::ConvertElementType, {v}, CastAttrs{acc}, r.fresh(name), n.line);
  };
  Value* zeros = r.add(OpKind::Full, {}, FullAttrs{out->shape, is_floating(acc) ? Scalar::from_float(0) : Scalar::from_int(0), acc},
                       r.fresh(out->name + "_zeros"), n.line);
  Value* src = in_acc(r.map(n.inputs[2]), n.inputs[2]->name + "_acc");
  VF_INTERNAL_CHECK(scatter_accumulates(acc), "no scatter kernel accumulates in ", dtype_short_name(acc));
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
