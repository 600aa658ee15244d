#include "passes/elide_round_trip_casts.h"

#include <algorithm>
#include <vector>

#include "base/error.h"

namespace vf {
namespace {

bool is_wide_float(DType d) { return d == DType::Float32 || d == DType::Float64; }

// Whether every value of `from` is a value of `to`.
bool holds(DType to, DType from) {
  return to == from || (is_wide_float(to) && is_floating(from) && mantissa_bits(to) >= mantissa_bits(from));
}

enum class Trip { None, Exact, Rounding };

// Whether v is the result of arithmetic in the fusion (not an input, a constant, or a view, a
// movement or a cast of something).
bool computed(const Value* v) {
  if (!v->producer) return false;
  switch (op_category(v->producer->op)) {
    case OpCategory::Unary: case OpCategory::Binary: case OpCategory::Ternary: case OpCategory::Reduction:
      return true;
    default:
      return false;
  }
}

// What a cast of y to d2 is, where y is convert(x, d1).
Trip trip_of(const Value* y, DType d2, bool drop_roundings) {
  const Node* inner = y->producer;
  if (!inner || inner->op != OpKind::ConvertElementType) return Trip::None;
  const DType d0 = inner->inputs[0]->dtype, d1 = y->dtype;
  if (!is_floating(d0) || !is_floating(d1) || !is_floating(d2)) return Trip::None;
  if (holds(d1, d0)) return Trip::Exact;
  if (drop_roundings && is_half(d1) && is_wide_float(d0) && is_wide_float(d2) && computed(inner->inputs[0]))
    return Trip::Rounding;
  return Trip::None;
}

Trip trip_of(const Node& n, bool drop_roundings) {
  if (n.op != OpKind::ConvertElementType) return Trip::None;
  return trip_of(n.inputs[0], n.output()->dtype, drop_roundings);
}

// Whether a reader of z comes after a contraction that reads x (through any ops): a library call
// between them, which the value crosses in memory, in the rounded dtype where the trip is kept.
bool read_across_a_contraction(const Fusion& fusion, const Value* x, const Value* z) {
  std::vector<char> from_x(fusion.values().size()), after_call(fusion.values().size());
  for (const auto& n : fusion.nodes()) {  // in program order: inputs before outputs
    bool reads_x = false, after = false;
    for (const Value* in : n->inputs) {
      reads_x = reads_x || from_x[in->id];
      after = after || after_call[in->id];
    }
    after = after || (reads_x && op_category(n->op) == OpCategory::Contraction);
    for (const Value* out : n->outputs) {
      from_x[out->id] = reads_x || out == x;
      after_call[out->id] = after;
    }
  }
  return std::any_of(z->uses.begin(), z->uses.end(), [&](const Node* u) {
    return std::any_of(u->inputs.begin(), u->inputs.end(), [&](const Value* in) { return after_call[in->id] != 0; });
  });
}

}  // namespace

RewrittenFusion elide_round_trip_casts(const Fusion& fusion, bool drop_roundings) {
  bool any = false;
  for (const auto& n : fusion.nodes()) any = any || trip_of(*n, drop_roundings) != Trip::None;
  if (!any) return {};
  // Each cast is looked at on the rewritten values, so that the last of a chain of three casts
  // sees the first two already as one.
  FusionRewriter r(fusion);
  int exact = 0, rounding = 0, kept = 0;
  std::string values;
  for (const auto& n : fusion.nodes()) {
    const Value* z = n->op == OpKind::ConvertElementType ? n->output() : nullptr;
    Trip trip = z ? trip_of(r.map(n->inputs[0]), z->dtype, drop_roundings) : Trip::None;
    // A rounding whose float value a reader needs after a matmul that reads it stays: the value
    // crosses the call in memory, where the bf16 is half the bytes (a residual stream).
    if (trip == Trip::Rounding && read_across_a_contraction(fusion, n->inputs[0]->producer->inputs[0], z)) {
      trip = Trip::None;
      ++kept;
    }
    if (trip == Trip::None) {
      r.copy(*n);
      continue;
    }
    (trip == Trip::Exact ? exact : rounding) += 1;
    values += (values.empty() ? "" : ", ") + z->name;
    Value* x = r.map(n->inputs[0])->producer->inputs[0];
    if (x->dtype != z->dtype) x = r.add(OpKind::ConvertElementType, {x}, CastAttrs{z->dtype}, z->name, n->line);
    r.replace(z, x);
  }
  std::vector<std::string> notes;
  if (exact > 0)
    notes.push_back(detail::concat(exact, " cast(s) of a value widened without loss read the value before it"));
  if (rounding > 0)
    notes.push_back(detail::concat(rounding, " round trip(s) through bf16 or f16 keep the float value they rounded ",
                                   "(PlanOptions::elide_round_trips; the reference executor rounds)"));
  if (kept > 0)
    notes.push_back(detail::concat(kept, " round trip(s) through bf16 or f16 kept: a reader of the float value ",
                                   "comes after a matmul that reads it"));
  if (!values.empty()) notes.push_back("elided casts: " + values);
  return r.finish(std::move(notes));
}

}  // namespace vf
