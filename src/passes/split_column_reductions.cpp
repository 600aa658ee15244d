#include "passes/split_column_reductions.h"

#include <algorithm>

#include "base/error.h"
#include "codegen/lower_kernel.h"

namespace vf {
namespace {

static_assert(kColumnMaxChunk <= kMaxSerialRows, "a chunk's rows must be walkable by one team");

// The leading reduced dims' count k and the chunk C of a column reduction, or C = 0.
struct ColumnSplit {
  int64_t k = 0, chunk = 0;
};

ColumnSplit column_split_of(const Node& n, int64_t chunks) {
  if (n.op != OpKind::Sum && n.op != OpKind::Prod && n.op != OpKind::Amax && n.op != OpKind::Amin) return {};
  const Value* in = n.inputs[0];
  if (is_bool(in->dtype) || in->numel() == 0) return {};
  std::vector<int64_t> dims = n.attr<DimsAttrs>().dims;
  std::sort(dims.begin(), dims.end());
  const auto k = static_cast<int64_t>(dims.size());
  if (k == 0 || k >= in->rank() || dims.back() != k - 1) return {};  // the leading dims, some kept
  int64_t rows = 1, columns = 1;
  for (int64_t d = 0; d < in->rank(); ++d) (d < k ? rows : columns) *= in->shape[d];
  if (rows < 2 * chunks || columns < kColumnMinColumns) return {};
  for (int64_t c = kColumnMaxChunk; c >= 2; c /= 2)
    if (in->shape[k - 1] % c == 0 && rows / c >= chunks) return {k, c};
  return {};
}

// The rewrite of column reduction n (its split's chunk > 0), and its note.
std::string split_columns(FusionRewriter& r, const Node& n, int64_t chunks) {
  const ColumnSplit s = column_split_of(n, chunks);
  const Value* in = n.inputs[0];
  const Value* out = n.output();
  Value* x = r.map(in);
  DType wide = in->dtype;
  if (n.op == OpKind::Sum || n.op == OpKind::Prod) {
    if (is_half(wide)) wide = DType::Float32;
    if (is_integral(wide)) wide = DType::Int64;
  }
  if (wide != in->dtype)
    x = r.add(OpKind::ConvertElementType, {x}, CastAttrs{wide}, r.fresh(out->name + "_wide_in"), n.line);
  Shape chunked = in->shape;
  chunked[static_cast<size_t>(s.k - 1)] /= s.chunk;
  chunked.insert(chunked.begin() + s.k, s.chunk);
  x = r.add(OpKind::Reshape, {x}, ReshapeAttrs{chunked}, r.fresh(out->name + "_chunks"), n.line);
  const std::string partials = r.fresh(out->name + "_partial");
  Value* partial = r.add(n.op, {x}, DimsAttrs{{s.k}}, partials, n.line);
  std::vector<int64_t> leading;
  for (int64_t d = 0; d < s.k; ++d) leading.push_back(d);
  const bool narrow = wide != out->dtype;
  Value* result = r.add(n.op, {partial}, DimsAttrs{leading}, narrow ? r.fresh(out->name + "_wide") : out->name, n.line);
  if (narrow) result = r.add(OpKind::ConvertElementType, {result}, CastAttrs{out->dtype}, out->name, n.line);
  r.replace(out, result);
  return detail::concat("prims.", op_name(n.op), " ", out->name, ": ", in->numel() / out->numel(), " rows of ",
                        shape_to_string(out->shape), ", chunks of ", s.chunk,
                        " rows reduced where the rows are computed (partials ", partials, " ", partial->type_string(),
                        "), then the partials");
}

}  // namespace

RewrittenFusion split_column_reductions(const Fusion& fusion, int64_t chunks) {
  VF_USER_CHECK(chunks >= 1, "PlanOptions::column_chunks must be at least 1, got ", chunks);
  return rewrite_nodes(
      fusion, [&](const Node& n) { return column_split_of(n, chunks).chunk > 0; },
      [&](FusionRewriter& r, const Node& n) { return split_columns(r, n, chunks); });
}

}  // namespace vf
