#include "passes/compact_row_scatters.h"

#include <algorithm>
#include <limits>

#include "base/error.h"

namespace vf {
namespace {

// The 1-D index that n's index spreads along its scatter dim, or null.
const Value* row_ids(const Node& n) {
  const Node* b = n.inputs[1]->producer;
  const int64_t dim = n.attr<AxisAttrs>().dim;
  if (!b || b->op != OpKind::BroadcastInDim || b->attr<BroadcastAttrs>().broadcast_dims != std::vector<int64_t>{dim})
    return nullptr;
  return b->inputs[0];
}

bool compacts(const Fusion& fusion, const Node& n) {
  if (n.op != OpKind::ScatterAdd || !is_zero_full(n.inputs[0]) || !row_ids(n)) return false;
  const Value* out = n.output();
  const int64_t dim = n.attr<AxisAttrs>().dim;
  const int64_t rows = out->shape[dim], tokens = n.inputs[1]->shape[dim];
  const int64_t width = rows == 0 ? 0 : out->numel() / rows;
  if (row_ids(n)->shape[0] != tokens || tokens == 0 || tokens * 2 > rows || width < 16 || tokens >= std::numeric_limits<int32_t>::max())
    return false;
  if (fusion.is_output(out) || out->uses.empty()) return false;
  return std::none_of(out->uses.begin(), out->uses.end(), [](const Node* u) { return is_view_op(u->op); });
}

std::string compact(FusionRewriter& r, const Node& n) {
  const Value* out = n.output();
  const int64_t dim = n.attr<AxisAttrs>().dim;
  const Value* index = n.inputs[1];
  const int64_t rows = out->shape[dim], tokens = index->shape[dim];
  const int line = n.line;
  Value* ids = r.map(row_ids(n));
  Value* one = r.constant(Scalar::from_int(1));
  Value* zero = r.constant(Scalar::from_int(0));
  // code[row] = 1 + the last token whose id is row; 0 for the rows no token names.
  Value* order = r.add(OpKind::Iota, {}, IotaAttrs{tokens, 1, 1, DType::Int32}, r.fresh(out->name + "_token"), line);
  Value* none = r.add(OpKind::Full, {}, FullAttrs{Shape{rows}, Scalar::from_int(0), DType::Int32},
                      r.fresh(out->name + "_untouched"), line);
  Value* code = r.add(OpKind::ScatterMax, {none, ids, order}, AxisAttrs{0}, r.fresh(out->name + "_row_token"), line);
  // Each token's row of the sums: the row its id's code names.
  Value* token_code = r.add(OpKind::Take, {code, ids}, AxisAttrs{0}, r.fresh(out->name + "_token_code"), line);
  Value* slot = r.add(OpKind::Sub, {token_code, one}, NoAttrs{}, r.fresh(out->name + "_slot"), line);
  Value* slots = r.add(OpKind::BroadcastInDim, {slot}, BroadcastAttrs{index->shape, {dim}}, r.fresh(out->name + "_slots"),
                       line);
  Shape compact = out->shape;
  compact[dim] = tokens;
  const Scalar zero_value = is_floating(out->dtype) ? Scalar::from_float(0) : Scalar::from_int(0);
  Value* zeros = r.add(OpKind::Full, {}, FullAttrs{compact, zero_value, out->dtype}, r.fresh(out->name + "_token_zeros"),
                       line);
  Value* sums = r.add(OpKind::ScatterAdd, {zeros, slots, r.map(n.inputs[2])}, AxisAttrs{dim},
                      r.fresh(out->name + "_token_sums"), line);
  // The result: the sums' row of each touched row, zeros elsewhere.
  Value* touched = r.add(OpKind::Gt, {code, zero}, NoAttrs{}, r.fresh(out->name + "_touched"), line);
  Value* last = r.add(OpKind::Sub, {code, one}, NoAttrs{}, r.fresh(out->name + "_last"), line);
  Value* row = r.add(OpKind::Maximum, {last, zero}, NoAttrs{}, r.fresh(out->name + "_sum_row"), line);
  Value* gathered = r.add(OpKind::Take, {sums, row}, AxisAttrs{dim}, r.fresh(out->name + "_gathered"), line);
  Value* mask = r.add(OpKind::BroadcastInDim, {touched}, BroadcastAttrs{out->shape, {dim}}, r.fresh(out->name + "_mask"),
                      line);
  Value* result = r.add(OpKind::Where, {mask, gathered, r.constant(zero_value)}, NoAttrs{}, out->name, line);
  r.replace(out, result);
  return detail::concat("prims.scatter_add ", out->name, ": the ", tokens, " rows of ", index->name,
                        " add into a row each (", dtype_short_name(out->dtype), shape_to_string(compact),
                        "), read back at the ", rows, " rows they name");
}

}  // namespace

RewrittenFusion compact_row_scatters(const Fusion& fusion) {
  return rewrite_nodes(fusion, [&](const Node& n) { return compacts(fusion, n); }, compact);
}

}  // namespace vf
