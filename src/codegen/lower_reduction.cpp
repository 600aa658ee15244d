// KernelLowering a segment with reductions to one reduction nest (kernel_ir.h): rows, reduced dims,
// phases, and var / var_mean as two sums.
#include <algorithm>
#include <functional>
#include <optional>

#include "base/error.h"
#include "codegen/lowering.h"
#include "layout/index_map.h"

namespace vf {
namespace {

// The reduced dims of a reduction node, ascending.
std::vector<int64_t> reduced_dims(const Node& n) {
  std::vector<int64_t> dims = n.op == OpKind::Var || n.op == OpKind::VarMean ? n.attr<VarAttrs>().dims
                                                                             : n.attr<DimsAttrs>().dims;
  std::sort(dims.begin(), dims.end());
  return dims;
}

// Constant slots of a padded output's border positions (store_padded).
constexpr int kPadSlot = 300;
constexpr int64_t kMaxPadBorder = 16;

// Whether `out` is a pad of a value of the nest's full shape along its last dim only (a reduced
// dim, no interior padding, at most kMaxPadBorder new elements), which the row's loops store.
bool padded_along_row(const Value& out, const Shape& full, const std::vector<int64_t>& dims) {
  const Node* p = out.producer;
  if (!p || p->op != OpKind::Pad || p->inputs[0]->shape != full || full.empty() || dims.empty() ||
      dims.back() != static_cast<int64_t>(full.size()) - 1)
    return false;
  const auto& config = p->attr<PadAttrs>().config;
  for (size_t d = 0; d + 1 < config.size(); ++d)
    if (!(config[d] == PadDim{})) return false;
  const PadDim& last = config.back();
  return last.interior == 0 && last.lo >= 0 && last.hi >= 0 && last.lo + last.hi <= kMaxPadBorder;
}

struct ColumnReduction {
  const Node* reshape = nullptr;  // reshape(x, ...), the reduction's input
  Shape rows;                     // R, x's leading dims
  int64_t chunk = 0;              // C
  Shape inner;                    // I, x's other dims
};

// A column reduction (passes/split_reductions.h makes them): over the C dim of reshape(x, [R0, ..,
// R_{k-1} / C, C, I...]), x of shape [R0, .., R_{k-1}, I...] (I not empty, C at most
// kMaxSerialRows), its result each chunk of C rows' partial result.
std::optional<ColumnReduction> column_reduction(const Node& n) {
  if (n.op != OpKind::Sum && n.op != OpKind::Prod && n.op != OpKind::Amax && n.op != OpKind::Amin) return std::nullopt;
  const Node* reshape = n.inputs[0]->producer;
  const auto& dims = n.attr<DimsAttrs>().dims;
  if (!reshape || reshape->op != OpKind::Reshape || dims.size() != 1) return std::nullopt;
  const Shape& xs = reshape->inputs[0]->shape;
  const Shape& ys = n.inputs[0]->shape;
  const auto k = static_cast<size_t>(dims[0]);
  if (k < 1 || ys.size() != xs.size() + 1 || k + 1 >= ys.size()) return std::nullopt;
  for (size_t d = 0; d < ys.size(); ++d) {
    if (d + 1 == k || d == k) continue;
    if (ys[d] != xs[d < k ? d : d - 1]) return std::nullopt;
  }
  if (ys[k] < 2 || ys[k] > kMaxSerialRows || ys[k - 1] * ys[k] != xs[k - 1]) return std::nullopt;
  return ColumnReduction{reshape, Shape(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(k)), ys[k],
                         Shape(xs.begin() + static_cast<std::ptrdiff_t>(k), xs.end())};
}

}  // namespace

std::optional<std::vector<int>> KernelLowering::index_merging(const Shape& shape, const Shape& space,
                                                              const std::vector<int>& idx,
                                                              const std::function<int(size_t)>& size_of) {
  if (shape == space) return idx;
  if (shape_numel(shape) != shape_numel(space) || shape_numel(shape) == 0) return std::nullopt;
  std::vector<int> out(shape.size(), -1);
  for (const ReshapeGroup& g : reshape_groups(space, shape)) {
    std::vector<size_t> long_dims;  // the group's dims of `shape` longer than 1
    for (size_t j = g.j0; j < g.j1; ++j)
      if (shape[j] != 1) long_dims.push_back(j);
    if (long_dims.size() > 1) return std::nullopt;
    for (size_t j = g.j0; j < g.j1; ++j) out[j] = nest_->constant(0);
    if (long_dims.empty()) continue;
    int flat = -1;
    std::vector<int64_t> vars;  // the loop vars the linearisation is, in order
    bool known = true;
    for (size_t i = g.i0; i < g.i1; ++i) {
      if (space[i] == 1) continue;
      flat = flat < 0 ? idx[i] : add(mul(flat, size_of(i)), idx[i]);
      const IndexExpr& e = nest_->indices[static_cast<size_t>(idx[i])];
      if (e.op == IndexOp::Var) {
        vars.push_back(e.value);
      } else if (auto it = linear_.find(idx[i]); it != linear_.end()) {
        vars.insert(vars.end(), it->second.begin(), it->second.end());
      } else {
        known = false;
      }
    }
    if (known && vars.size() > 1) linear_.emplace(flat, vars);
    out[long_dims[0]] = flat;
  }
  return out;
}

// Row sizes are the kept dims of `first`'s input, reduced sizes its reduced dims. An output of
// the input's shape is stored in the loop over the reduced dims; one of the result's shape is a
// row store (either up to merges of adjacent dims and dims of size 1). With column reductions the nest is
// serial: their rows R and columns I give its rows and reduced dims, R's last dim split into
// chunks of C rows (the serial dim), and their results are column stores.
void KernelLowering::lower_reduction_nest(const Node& first) {
  nest_ = &ir_.nests.emplace_back();
  nest_->flat = false;
  memo_.clear();
  linear_.clear();  // the rows and reduced dims are the loop vars (a serial nest: and the split)
  loop_sizes_.clear();
  std::optional<ColumnReduction> column;
  for (const auto& node : fusion_.nodes()) {
    const std::optional<ColumnReduction> c = column_reduction(*node);
    if (!c) continue;
    if (!column) {
      column = c;
    } else if (c->rows != column->rows || c->chunk != column->chunk || c->inner != column->inner) {
      unsupported(detail::concat("prims.", op_name(node->op), " ", node->output()->name, " reduces chunks of ",
                                 c->chunk, " of rows ", shape_to_string(c->rows), " of ", shape_to_string(c->inner),
                                 ", the kernel's chunks are of ", column->chunk, " of rows ",
                                 shape_to_string(column->rows), " of ", shape_to_string(column->inner)));
      return;
    }
  }
  Shape full, rows;
  std::vector<int64_t> dims;
  const Node* id_node = &first;  // the node whose Constant fields hold the extents
  if (column) {
    rows = column->rows;
    full = rows;
    full.insert(full.end(), column->inner.begin(), column->inner.end());
    for (size_t j = 0; j < column->inner.size(); ++j) dims.push_back(static_cast<int64_t>(rows.size() + j));
    id_node = column->reshape;
  } else {
    full = first.inputs[0]->shape;
    dims = reduced_dims(first);
    for (int64_t d = 0; d < static_cast<int64_t>(full.size()); ++d)
      if (!std::binary_search(dims.begin(), dims.end(), d)) rows.push_back(full[d]);
  }
  // The loop's row dims: the rows, the last split in (chunks, C) in a serial nest.
  Shape loop_rows = rows;
  if (column) {
    loop_rows.back() /= column->chunk;
    loop_rows.push_back(column->chunk);
    nest_->serial = true;
  }
  std::vector<int> row_idx, full_idx, column_idx;
  for (size_t k = 0; k < loop_rows.size(); ++k) {
    nest_->extents.push_back(ir_.field(AbiFieldKind::Constant, id_node->id, kRowSlot + static_cast<int>(k), loop_rows[k]));
    loop_sizes_.push_back(loop_rows[k]);
    row_idx.push_back(nest_->var(static_cast<int64_t>(k)));
  }
  if (column) {  // the row's index in the rows: chunk * C + the serial var, known as the split's
    const auto last = static_cast<int64_t>(loop_rows.size()) - 1;
    column_idx.assign(row_idx.begin(), row_idx.end() - 1);
    row_idx.pop_back();
    const int outer = nest_->binary(IndexOp::Mul, row_idx.back(), nest_->param(nest_->extents.back()));
    row_idx.back() = nest_->binary(IndexOp::Add, outer, nest_->var(last));
    linear_[row_idx.back()] = {last - 1, last};
  }
  for (size_t j = 0; j < dims.size(); ++j) {
    nest_->inner_extents.push_back(
        ir_.field(AbiFieldKind::Constant, id_node->id, kInnerSlot + static_cast<int>(j), full[dims[j]]));
    inner_sizes_.push_back(full[dims[j]]);
  }
  for (int64_t d = 0, r = 0, j = 0; d < static_cast<int64_t>(full.size()); ++d) {
    const bool reduced = std::binary_search(dims.begin(), dims.end(), d);
    full_idx.push_back(reduced ? nest_->var(static_cast<int64_t>(loop_rows.size()) + j++) : row_idx[r++]);
  }
  for (size_t j = 0; j < dims.size(); ++j) column_idx.push_back(nest_->var(static_cast<int64_t>(loop_rows.size() + j)));
  // Each dim's size as an index expression (the split row dim: chunks * C), for index_merging.
  auto row_size = [&](size_t k) {
    const int size = nest_->param(nest_->extents[k]);
    return column && k + 1 == rows.size() ? mul(size, nest_->param(nest_->extents.back())) : size;
  };
  auto full_size = [&](size_t d) {
    const auto reduced = std::lower_bound(dims.begin(), dims.end(), static_cast<int64_t>(d));
    if (reduced != dims.end() && *reduced == static_cast<int64_t>(d))
      return nest_->param(nest_->inner_extents[static_cast<size_t>(reduced - dims.begin())]);
    return row_size(d - static_cast<size_t>(reduced - dims.begin()));
  };
  AbiNest abi_nest;
  abi_nest.rows = shape_numel(rows) / (column ? column->chunk : 1);
  abi_nest.serial = column ? column->chunk : 1;
  abi_nest.inner = shape_numel(inner_sizes_);
  abi_nest.inner_last = inner_sizes_.empty() ? 1 : inner_sizes_.back();
  // A serial nest's team takes the reduced dims (its columns) as a row reduction's does.
  abi_nest.inner_reduced =
      column || full.empty() || (!dims.empty() && dims.back() == static_cast<int64_t>(full.size()) - 1);
  ir_.abi.nests.push_back(abi_nest);
  for (size_t o = 0; o < fusion_.outputs().size(); ++o) {
    const Value* out = fusion_.outputs()[o];
    const Layout& l = spec_.output_layouts[o];
    VF_INTERNAL_CHECK(l.sizes == out->shape && l.strides.size() == l.sizes.size(), "output ", out->name,
                      " has layout ", l.to_string(), " for shape ", shape_to_string(out->shape));
    const std::optional<ColumnReduction> c = out->producer ? column_reduction(*out->producer) : std::nullopt;
    if (c) {
      store_column(static_cast<int>(o), *out->producer, column_idx);
    } else if (auto idx = index_merging(out->shape, rows, row_idx, row_size)) {
      store_output(static_cast<int>(o), *idx, true);
    } else if (auto idx = index_merging(out->shape, full, full_idx, full_size)) {
      store_output(static_cast<int>(o), *idx, false);
    } else if (padded_along_row(*out, full, dims)) {
      store_padded(static_cast<int>(o), full_idx, static_cast<int64_t>(full.size()) - 1);
    } else {
      const std::string what = column ? detail::concat("the shape ", shape_to_string(full), " whose rows ",
                                                       shape_to_string(rows), " prims.", op_name(id_node->op), " ",
                                                       id_node->output()->name, " splits in chunks")
                                      : detail::concat("the shape ", shape_to_string(full), " that prims.",
                                                       op_name(first.op), " ", first.output()->name, " reduces");
      unsupported(detail::concat("output ", out->name, " of shape ", shape_to_string(out->shape), " has neither ", what,
                                 " nor its result's shape ", shape_to_string(rows)));
    }
    if (!problem_.empty()) return;
  }
  clear_flat_offsets();
  nest_->assign_phases();
}

// Output o, a pad of a full-shape value along the last dim (a reduced one): the value is stored
// at its place in the row, and the padding elements, few, as row stores of the padding value
// (cross-entropy's log-softmax padded with one column for nll_loss's ignored targets).
void KernelLowering::store_padded(int o, const std::vector<int>& full_idx, int64_t dim) {
  const Node& pad = *fusion_.outputs()[o]->producer;
  const PadDim& p = pad.attr<PadAttrs>().config[static_cast<size_t>(dim)];
  const int64_t n = pad.inputs[0]->shape[static_cast<size_t>(dim)];
  std::vector<int> idx = full_idx;
  if (p.lo != 0) idx.back() = add(idx.back(), constant_field(pad, kPadSlot, p.lo));
  store_output(o, idx, false, visit(pad.inputs[0], full_idx, -1));
  std::vector<int> row_idx;
  for (size_t d = 0; d + 1 < full_idx.size(); ++d) row_idx.push_back(full_idx[d]);
  const int fill = scalar(pad.inputs[1], pad.output()->dtype);
  for (int64_t k = 0; k < p.lo + p.hi; ++k) {
    const int64_t at = k < p.lo ? k : n + k;  // the border positions: [0, lo) and [n + lo, n + lo + hi)
    row_idx.push_back(constant_field(pad, kPadSlot + 1 + static_cast<int>(k), at));
    store_output(o, row_idx, true, fill);
    row_idx.pop_back();
  }
}

// Output o, the result of column reduction n: each chunk's partial result, combined over the
// serial dim in a column store at idx (the chunk's row vars and the reduced vars).
void KernelLowering::store_column(int o, const Node& n, const std::vector<int>& idx) {
  const Value* out = fusion_.outputs()[o];
  if (is_half(out->dtype) && (n.op == OpKind::Sum || n.op == OpKind::Prod)) {
    unsupported(detail::concat("prims.", op_name(n.op), " ", out->name, " sums chunks in ", dtype_long_name(out->dtype),
                               " (column partials are summed in float32)"));
    return;
  }
  std::vector<int> in_idx(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(nest_->extents.size() - 1));
  in_idx.push_back(nest_->var(static_cast<int64_t>(nest_->extents.size()) - 1));  // the serial var
  in_idx.insert(in_idx.end(), idx.begin() + static_cast<std::ptrdiff_t>(nest_->extents.size() - 1), idx.end());
  store_output(o, idx, false, visit(n.inputs[0], in_idx, -1));
  StoreStmt& s = nest_->stores.back();
  s.column = true;
  s.op = n.op;
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
  if (column_reduction(n))
    return unsupported(detail::concat("prims.", op_name(n.op), " ", out->name,
                                      " (a column reduction's partial results) is read in its own kernel"));
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
  const int correction = constant(acc, Scalar::from_float(n.attr<VarAttrs>().correction));
  const int divisor = apply(OpKind::Maximum, acc, {apply(OpKind::Sub, acc, {count, correction}),
                                                   constant(acc, Scalar::from_float(0.0))});
  const int var = cast(apply(OpKind::Div, acc, {m2, divisor}), acc, n.outputs[0]->dtype);
  memo_.emplace(std::make_tuple(n.outputs[0], idx, pred), var);
  if (n.outputs.size() > 1) memo_.emplace(std::make_tuple(n.outputs[1], idx, pred), cast(mean, acc, n.outputs[1]->dtype));
  return out == n.outputs[0] ? var : cast(mean, acc, out->dtype);
}

}  // namespace vf
