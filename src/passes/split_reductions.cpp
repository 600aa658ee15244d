#include "passes/split_reductions.h"

#include <algorithm>

#include "base/error.h"

namespace vf {
namespace {

struct Split {
  int64_t rows = 0, row = 0, chunk = 0;
};

// The split of a reduction node, or chunk 0 when it stays whole.
Split split_of(const Node& n) {
  const bool variance = n.op == OpKind::Var || n.op == OpKind::VarMean;
  if (n.op != OpKind::Sum && n.op != OpKind::Prod && n.op != OpKind::Amax && n.op != OpKind::Amin && !variance) return {};
  const Value* in = n.inputs[0];
  if (!is_floating(in->dtype) || in->numel() == 0) return {};
  Split s;
  s.row = 1;
  for (int64_t d : variance ? n.attr<VarAttrs>().dims : n.attr<DimsAttrs>().dims) s.row *= in->shape[d];
  s.rows = in->numel() / s.row;
  if (s.rows >= kSplitFewRows || s.row <= kSplitLongRow) return {};
  for (int64_t c = kSplitMaxChunk; c >= kSplitMinChunk && s.chunk == 0; --c)
    if (s.row % c == 0) s.chunk = c;
  return s;
}

// Rewrites split reductions into a FusionRewriter; each rewrite returns its note.
class Splitter {
 public:
  explicit Splitter(FusionRewriter& r) : r_(r) {}

  std::string rewrite(const Node& n) {
    const Split s = split_of(n);
    return n.op == OpKind::Var || n.op == OpKind::VarMean ? split_variance(n, s) : split(n, s);
  }

 private:
  // op over `dims` of x (a value of the rewritten fusion) in two stages, the result named `name`
  // and of type `dtype`. The chunks replace the reduced dims where those are adjacent (an outer
  // reduction keeps its memory order, so that its loads stay coalesced); otherwise a transpose
  // moves the kept dims first and the chunks follow them. Sets `partials` to the first stage's name.
  Value* two_stages(OpKind op, Value* x, std::vector<int64_t> dims, const Split& s, const std::string& name,
                    DType dtype, int line, std::string& partials) {
    const Shape in_shape = x->shape;
    std::sort(dims.begin(), dims.end());
    Shape shape;
    int64_t at = 0;  // the dim of the chunk count; the chunk's elements are dim at + 1
    if (dims.back() - dims.front() + 1 == static_cast<int64_t>(dims.size())) {
      at = dims.front();
      shape.assign(in_shape.begin(), in_shape.begin() + at);
      shape.push_back(s.row / s.chunk);
      shape.push_back(s.chunk);
      shape.insert(shape.end(), in_shape.begin() + dims.back() + 1, in_shape.end());
    } else {
      std::vector<int64_t> perm;
      for (int64_t d = 0; d < static_cast<int64_t>(in_shape.size()); ++d)
        if (!std::binary_search(dims.begin(), dims.end(), d)) {
          perm.push_back(d);
          shape.push_back(in_shape[static_cast<size_t>(d)]);
        }
      at = static_cast<int64_t>(shape.size());
      perm.insert(perm.end(), dims.begin(), dims.end());
      x = r_.add(OpKind::Transpose, {x}, PermuteAttrs{perm}, r_.fresh(name + "_kept_first"), line);
      shape.push_back(s.row / s.chunk);
      shape.push_back(s.chunk);
    }
    x = r_.add(OpKind::Reshape, {x}, ReshapeAttrs{shape}, r_.fresh(name + "_chunks"), line);
    const bool widen = (op == OpKind::Sum || op == OpKind::Prod) && dtype_size(x->dtype) < 4;
    if (widen)
      x = r_.add(OpKind::ConvertElementType, {x}, CastAttrs{DType::Float32}, r_.fresh(name + "_f32_in"), line);
    partials = r_.fresh(name + "_partial");
    Value* partial = r_.add(op, {x}, DimsAttrs{{at + 1}}, partials, line);
    if (!widen) return r_.add(op, {partial}, DimsAttrs{{at}}, name, line);
    Value* wide = r_.add(op, {partial}, DimsAttrs{{at}}, r_.fresh(name + "_f32"), line);
    return r_.add(OpKind::ConvertElementType, {wide}, CastAttrs{dtype}, name, line);
  }

  std::string split(const Node& n, const Split& s) {
    const Value* out = n.output();
    std::string partials;
    Value* result = two_stages(n.op, r_.map(n.inputs[0]), n.attr<DimsAttrs>().dims, s, out->name, out->dtype, n.line, partials);
    r_.replace(out, result);
    return detail::concat("prims.", op_name(n.op), " ", out->name, ": ", s.rows, " row(s) of ", s.row,
                          " elements, split into ", s.row / s.chunk, " chunks of ", s.chunk, " (partials ",
                          partials, (result->producer->op == OpKind::ConvertElementType ? ", float32" : ""),
                          ")");
  }

  // var and var_mean as the kernels compute them, two passes: the mean, then the sum of squared
  // deviations from it divided by max(0, n - correction); each of the two sums in two stages (a
  // Welford merge of partial variances would need an op of its own). In float32 for the 16-bit
  // types and float32, float64 for float64.
  std::string split_variance(const Node& n, const Split& s) {
    const Value* in = n.inputs[0];
    const VarAttrs& attrs = n.attr<VarAttrs>();
    const std::string& name = n.outputs[0]->name;
    const DType acc = in->dtype == DType::Float64 ? DType::Float64 : DType::Float32;
    auto add = [&](OpKind op, std::vector<Value*> inputs, OpAttrs attrs_, const std::string& base) {
      return r_.add(op, std::move(inputs), std::move(attrs_), r_.fresh(base), n.line);
    };
    // Output k of the node from `r`: r itself when it has the output's type, else converted.
    // (r is named after the output already when it needs no conversion.)
    auto output = [&](size_t k, Value* r) {
      const Value* out = n.outputs[k];
      if (r->dtype != out->dtype) r = r_.add(OpKind::ConvertElementType, {r}, CastAttrs{out->dtype}, out->name, n.line);
      r_.replace(out, r);
    };
    auto name_of = [&](size_t k, const std::string& base) {
      return k < n.outputs.size() && n.outputs[k]->dtype == acc ? n.outputs[k]->name : r_.fresh(base);
    };
    auto constant = [&](double v) { return r_.constant(Scalar::from_float(v)); };
    Value* x = r_.map(in);
    if (x->dtype != acc) x = add(OpKind::ConvertElementType, {x}, CastAttrs{acc}, name + "_acc_in");
    std::string sum_partials, squares_partials;
    Value* total = two_stages(OpKind::Sum, x, attrs.dims, s, r_.fresh(name + "_sum"), acc, n.line, sum_partials);
    const auto count = static_cast<double>(s.row);
    Value* mean = r_.add(OpKind::Div, {total, constant(count)}, {}, name_of(1, name + "_mean"), n.line);
    if (n.outputs.size() > 1) output(1, mean);
    std::vector<int64_t> kept;
    for (int64_t d = 0; d < in->rank(); ++d)
      if (std::find(attrs.dims.begin(), attrs.dims.end(), d) == attrs.dims.end()) kept.push_back(d);
    Value* spread = add(OpKind::BroadcastInDim, {mean}, BroadcastAttrs{in->shape, kept}, name + "_mean_spread");
    Value* deviation = add(OpKind::Sub, {x, spread}, {}, name + "_deviation");
    Value* square = add(OpKind::Mul, {deviation, deviation}, {}, name + "_square");
    Value* squares = two_stages(OpKind::Sum, square, attrs.dims, s, r_.fresh(name + "_squares"), acc, n.line, squares_partials);
    output(0, r_.add(OpKind::Div, {squares, constant(std::max(0.0, count - attrs.correction))}, {},
                     name_of(0, name + "_acc"), n.line));
    return detail::concat("prims.", op_name(n.op), " ", name, ": ", s.rows, " row(s) of ", s.row,
                          " elements, split into ", s.row / s.chunk, " chunks of ", s.chunk,
                          " (two passes: the mean's sum, partials ", sum_partials,
                          ", then the squared deviations' sum, partials ", squares_partials,
                          (acc == DType::Float32 ? "; float32" : "; float64"), ")");
  }

  FusionRewriter& r_;
};

}  // namespace

RewrittenFusion split_long_reductions(const Fusion& fusion) {
  return rewrite_nodes(fusion, [](const Node& n) { return split_of(n).chunk > 0; },
                       [](FusionRewriter& r, const Node& n) { return Splitter(r).rewrite(n); });
}

}  // namespace vf
