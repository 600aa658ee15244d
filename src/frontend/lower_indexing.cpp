// The trace reader's gathers, scatters and the Thunder composites built on them: index_select,
// take_along_dim, gather, nll_loss_backward, index_add, scatter_add, embedding_backward, argmax and
// argmin.
#include "frontend/call_lowering.h"

namespace vf::detail {

// torch.index_select(t, dim, index): prims.take.
std::vector<Value*> CallLowering::index_select() {
  auto a = bind({"a", "dim", "index"}, 3);
  return emit(OpKind::Take, {tensor(*a[0]), tensor(*a[2])}, AxisAttrs{integer(*a[1], "dim")});
}

// torch.take_along_dim(t, indices, dim), with indices of t's shape outside dim: prims.take_along_axis.
std::vector<Value*> CallLowering::take_along_dim() {
  auto a = bind({"a", "indices", "dim"}, 3);
  return emit(OpKind::TakeAlongAxis, {tensor(*a[0]), tensor(*a[1])}, AxisAttrs{integer(*a[2], "dim")});
}

// torch.gather(t, dim, index): prims.gather.
std::vector<Value*> CallLowering::gather() {
  auto a = bind({"a", "dim", "index"}, 3);
  return emit(OpKind::Gather, {tensor(*a[0]), tensor(*a[2])}, AxisAttrs{integer(*a[1], "dim")});
}

// Thunder's nll_loss_backward(g, a, target, weight, reduction, ignore_index, total_weight), the
// gradient of nll_loss with respect to a (ATen's nll_loss_backward): at the target's class of each
// element, -g (divided by total_weight for 'mean', times weight[target] with a weight), where the
// target is not ignore_index; 0 elsewhere. a's shape, g's dtype. Written as elementwise prims over
// a's shape, the class of each element an iota, so that it fuses with the log-softmax backward
// beside it instead of writing a tensor of a's size that is almost all zeros. The arithmetic is
// the compute type's (float32 for 16-bit floats): ATen rounds total_weight to a's dtype first.
std::vector<Value*> CallLowering::nll_loss_backward() {
  auto a = bind({"g", "a", "target", "weight", "reduction", "ignore_index", "total_weight"}, 6);
  Value* g = tensor(*a[0]);
  Value* input = tensor(*a[1]);
  Value* target = tensor(*a[2]);
  Value* weight = is_none(a[3]) ? nullptr : tensor(*a[3]);
  if (a[4]->kind != Expr::Kind::String) fail(*a[4], "expected reduction as a string: 'none', 'sum' or 'mean'");
  const std::string& reduction = a[4]->text;
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    fail(*a[4], "expected reduction 'none', 'sum' or 'mean', got '", reduction, "'");
  const int64_t ignore_index = integer(*a[5], "ignore_index");
  Value* total = is_none(a[6]) ? nullptr : tensor(*a[6]);

  const int64_t rank = input->rank();
  if (rank < 1) fail(*a[1], "expected a of rank 1 or more, got ", input->type_string());
  if (!is_floating(input->dtype) || !is_floating(g->dtype))
    fail(call_, "expected floating g and a, got g ", g->type_string(), " and a ", input->type_string());
  if (!is_integral(target->dtype)) fail(*a[2], "expected an integer target, got ", target->type_string());
  const int64_t class_dim = rank >= 2 ? 1 : 0;
  const int64_t classes = input->shape[class_dim];
  Shape target_shape = input->shape;
  target_shape.erase(target_shape.begin() + class_dim);
  if (target->shape != target_shape)
    fail(*a[2], "expected target of shape ", shape_to_string(target_shape), " (a ", input->type_string(),
         " without its class dim ", class_dim, "), got ", target->type_string());
  if (weight && weight->shape != Shape{classes})
    fail(*a[3], "expected weight of shape [", classes, "] (one per class), got ", weight->type_string());
  const Shape g_shape = reduction == "none" ? target_shape : Shape{};
  if (g->shape != g_shape)
    fail(*a[0], "expected g of shape ", shape_to_string(g_shape), " for reduction '", reduction, "', got ",
         g->type_string());
  if (reduction == "mean" && (!total || total->rank() != 0))
    fail(a[6] ? *a[6] : call_, "expected total_weight as a tensor of rank 0 for reduction 'mean', got ",
         total ? total->type_string() : "None");

  std::vector<int64_t> other_dims;  // a's dims other than the class dim: where target's dims go
  for (int64_t d = 0; d < rank; ++d)
    if (d != class_dim) other_dims.push_back(d);
  auto spread = [&](Value* v, std::vector<int64_t> dims, std::string_view what) {
    return emit_step(OpKind::BroadcastInDim, {v}, BroadcastAttrs{input->shape, std::move(dims)}, what);
  };
  Value* class_of = spread(emit_step(OpKind::Iota, {}, IotaAttrs{classes, 0, 1, target->dtype}, "iota"),
                           {class_dim}, "classes");
  Value* target_of = spread(target, other_dims, "targets");
  Value* hit = emit_step(OpKind::Eq, {class_of, target_of}, NoAttrs{}, "hit");
  if (ignore_index >= 0 && ignore_index < classes) {  // other values of ignore_index never hit
    Value* kept = emit_step(OpKind::Ne, {target_of, scope_.fusion.add_constant(Scalar::from_int(ignore_index))},
                            NoAttrs{}, "kept");
    hit = emit_step(OpKind::BitwiseAnd, {hit, kept}, NoAttrs{}, "hit_kept");
  }
  // Prims take operands of one dtype: g, total_weight and weight are cast to the compute type.
  const DType compute = g->dtype == DType::Float64 ? DType::Float64 : DType::Float32;
  auto as_compute = [&](Value* v, std::string_view what) {
    return v->dtype == compute ? v : emit_step(OpKind::ConvertElementType, {v}, CastAttrs{compute}, what);
  };
  Value* g_of = spread(as_compute(g, "g_compute"), reduction == "none" ? other_dims : std::vector<int64_t>{}, "g");
  Value* grad = emit_step(OpKind::Neg, {g_of}, NoAttrs{}, "neg_g");
  if (reduction == "mean")
    grad = emit_step(OpKind::Div, {grad, spread(as_compute(total, "total_compute"), {}, "total_weight")}, NoAttrs{},
                     "mean");
  if (weight) {
    // take reads a 1-D index: the targets flattened, and their weights shaped back.
    // An ignore_index outside the classes would be out of range: its weight is never used, class 0's is read.
    Value* flat = emit_step(OpKind::Reshape, {target}, ReshapeAttrs{Shape{target->numel()}}, "flat_targets");
    if (ignore_index < 0 || ignore_index >= classes) {
      Value* ignore = scope_.fusion.add_constant(Scalar::from_int(ignore_index));
      Value* kept = emit_step(OpKind::Ne, {flat, ignore}, NoAttrs{}, "flat_kept");
      flat = emit_step(OpKind::Where, {kept, flat, scope_.fusion.add_constant(Scalar::from_int(0))}, NoAttrs{},
                       "flat_safe_targets");
    }
    Value* picked = emit_step(OpKind::Take, {as_compute(weight, "weight_compute"), flat}, AxisAttrs{0}, "flat_weights");
    picked = emit_step(OpKind::Reshape, {picked}, ReshapeAttrs{target_shape}, "weight_of_target");
    grad = emit_step(OpKind::Mul, {grad, spread(picked, other_dims, "weights")}, NoAttrs{}, "weighted");
  }
  Value* zero = scope_.fusion.add_constant(Scalar::from_float(0.0));
  if (compute == g->dtype) return emit(OpKind::Where, {hit, grad, zero}, NoAttrs{});
  Value* picked = emit_step(OpKind::Where, {hit, grad, zero}, NoAttrs{}, "grad");
  return emit(OpKind::ConvertElementType, {picked}, CastAttrs{g->dtype});
}

// prims.index_add(a, index, value, dim): value's slice k is added to a's slice index[k] along dim.
std::vector<Value*> CallLowering::index_add() {
  auto a = bind({"a", "index", "value", "dim"}, 4);
  return index_add_of(*a[0], *a[1], *a[2], *a[3], "value");
}

// torch.cumsum(a, dim, dtype=None): prims.cumsum of a converted to dtype, or, without one, of bool

// torch.scatter_add(a, dim, index, src): prims.scatter_add.
std::vector<Value*> CallLowering::torch_scatter_add() {
  auto a = bind({"a", "dim", "index", "src"}, 4);
  return emit(OpKind::ScatterAdd, {tensor(*a[0]), tensor(*a[2]), tensor(*a[3])}, AxisAttrs{integer(*a[1], "dim")});
}

// torch.index_add(a, dim, index, source): as prims.index_add.
std::vector<Value*> CallLowering::torch_index_add() {
  auto a = bind({"a", "dim", "index", "source", "alpha"}, 4);
  if (a[4]) {
    std::optional<Scalar> alpha = literal_number(scope_, *a[4]);
    if (!alpha || alpha->as_double() != 1) fail(*a[4], "alpha other than 1 is not supported");
  }
  return index_add_of(*a[0], *a[2], *a[3], *a[1], "source");
}

// index_add with a 0-D or 1-D index: prims.scatter_add with the index spread along value's other
// dims. `what` names value's argument in the messages.
std::vector<Value*> CallLowering::index_add_of(const Expr& a, const Expr& index_at, const Expr& value_at,
                                           const Expr& dim_at, std::string_view what) {
  Value* base = tensor(a);
  Value* index = tensor(index_at);
  Value* value = tensor(value_at);
  const int64_t dim = wrap_dim(integer(dim_at, "dim"), base->rank(), dim_at);
  if (index->rank() > 1) fail(index_at, "expected a 0-D or 1-D index, got ", index->type_string());
  if (value->rank() != base->rank())
    fail(value_at, "expected ", what, " of a's rank ", base->rank(), ", got ", value->type_string());
  if (base->rank() > 0 && value->shape[dim] != index->numel())
    fail(value_at, "expected ", what, "'s dim ", dim, " to have the index's ", index->numel(), " elements, got ",
         value->type_string());
  return emit(OpKind::ScatterAdd, {base, spread_index(index, value->shape, dim), value}, AxisAttrs{dim});
}

// Thunder's embedding_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq,
// sparse), the gradient of an embedding's weight: zeros of [num_weights, D] with each row of grad
// (flattened to [indices.numel(), D]) added at the row its index names, except where the index is
// padding_idx (-1: none). scale_grad_by_freq and sparse are not supported.
std::vector<Value*> CallLowering::embedding_backward() {
  auto a = bind({"grad", "indices", "num_weights", "padding_idx", "scale_grad_by_freq", "sparse"}, 6);
  Value* grad = tensor(*a[0]);
  Value* indices = tensor(*a[1]);
  const int64_t rows = integer(*a[2], "num_weights");
  const int64_t padding = integer(*a[3], "padding_idx");
  for (size_t k : {size_t{4}, size_t{5}}) {
    std::optional<Scalar> flag = literal_number(scope_, *a[k]);
    if (!flag || flag->kind != ScalarKind::Bool) fail(*a[k], "expected True or False");
    if (flag->i) fail(*a[k], k == 4 ? "scale_grad_by_freq=True" : "sparse=True", " is not supported");
  }
  if (grad->rank() < 1) fail(*a[0], "expected grad of rank 1 or more, got ", grad->type_string());
  if (!is_integral(indices->dtype)) fail(*a[1], "expected integer indices, got ", indices->type_string());
  if (rows < 0 || rows > kMaxNumel) fail(*a[2], "expected num_weights in [0, 2^48], got ", rows);
  const Shape index_shape(grad->shape.begin(), grad->shape.end() - 1);
  if (indices->shape != index_shape)
    fail(*a[1], "expected indices of shape ", shape_to_string(index_shape), " (grad ", grad->type_string(),
         " without its last dim), got ", indices->type_string());
  const int64_t count = indices->numel(), width = grad->shape.back();
  Value* flat = indices->rank() == 1 ? indices
                                     : emit_step(OpKind::Reshape, {indices}, ReshapeAttrs{Shape{count}}, "flat_indices");
  Value* rows_of = grad->rank() == 2 ? grad
                                     : emit_step(OpKind::Reshape, {grad}, ReshapeAttrs{Shape{count, width}}, "flat_grad");
  if (padding >= 0 && padding < rows) {  // the padding row gets nothing
    Value* kept = emit_step(OpKind::Ne, {flat, scope_.fusion.add_constant(Scalar::from_int(padding))}, NoAttrs{}, "kept");
    Value* kept_of = emit_step(OpKind::BroadcastInDim, {kept}, BroadcastAttrs{Shape{count, width}, {0}}, "kept_rows");
    rows_of = emit_step(OpKind::Where, {kept_of, rows_of, scope_.fusion.add_constant(Scalar::from_float(0.0))},
                        NoAttrs{}, "kept_grad");
  }
  Value* zeros = emit_step(OpKind::Full, {}, FullAttrs{Shape{rows, width}, Scalar::from_int(0), grad->dtype}, "zeros");
  return emit(OpKind::ScatterAdd, {zeros, spread_index(flat, Shape{count, width}, 0), rows_of}, AxisAttrs{0});
}

// prims.argmax(a, dim) and prims.argmin(a, dim): the int64 index along dim (along every dim,
// row-major, when dim is None) of the first largest (smallest) element, where a NaN counts as
// larger (smaller) than every number, as in torch. Written as two reductions over the same dims,
// which one reduction kernel computes in two phases: the extreme (amax or amin: a NaN propagates),
// then the least index whose element equals it, or is NaN where it is NaN.
std::vector<Value*> CallLowering::arg_extreme(OpKind extreme) {
  auto a = bind({"a", "dim"}, 1);
  Value* input = tensor(*a[0]);
  if (is_bool(input->dtype)) fail(*a[0], "expected a tensor of numbers, got ", input->type_string());
  const bool all_dims = is_none(a[1]);
  if (input->rank() == 0) {  // one element: its index is 0
    if (!all_dims) wrap_dim(integer(*a[1], "dim"), 0, *a[1]);
    return emit(OpKind::Full, {}, FullAttrs{Shape{}, Scalar::from_int(0), DType::Int64});
  }
  Value* x = input;
  int64_t dim = 0;
  if (all_dims) {
    if (input->numel() == 0) fail(call_, "expected dim for ", input->type_string(), " (it has no elements)");
    if (input->rank() > 1) x = emit_step(OpKind::Reshape, {input}, ReshapeAttrs{Shape{input->numel()}}, "flat");
  } else {
    dim = wrap_dim(integer(*a[1], "dim"), input->rank(), *a[1]);
  }
  const int64_t size = x->shape[dim];
  if (size == 0) fail(*a[1], "expected dim ", dim, " of ", input->type_string(), " to have elements");
  std::vector<int64_t> kept;  // the dims the result keeps
  for (int64_t d = 0; d < x->rank(); ++d)
    if (d != dim) kept.push_back(d);
  Value* best = emit_step(extreme, {x}, DimsAttrs{{dim}}, "extreme");
  Value* best_of = emit_step(OpKind::BroadcastInDim, {best}, BroadcastAttrs{x->shape, kept}, "extreme_of");
  Value* hit = emit_step(OpKind::Eq, {x, best_of}, NoAttrs{}, "hit");
  if (is_floating(x->dtype)) {  // NaN != NaN: where the extreme is NaN, the NaNs hit
    Value* x_nan = emit_step(OpKind::Ne, {x, x}, NoAttrs{}, "x_nan");
    Value* best_nan = emit_step(OpKind::Ne, {best_of, best_of}, NoAttrs{}, "extreme_nan");
    Value* both = emit_step(OpKind::BitwiseAnd, {x_nan, best_nan}, NoAttrs{}, "both_nan");
    hit = emit_step(OpKind::BitwiseOr, {hit, both}, NoAttrs{}, "hit_or_nan");
  }
  Value* iota = emit_step(OpKind::Iota, {}, IotaAttrs{size, 0, 1, DType::Int64}, "iota");
  Value* index = emit_step(OpKind::BroadcastInDim, {iota}, BroadcastAttrs{x->shape, {dim}}, "index");
  Value* none = scope_.fusion.add_constant(Scalar::from_int(size));
  Value* candidate = emit_step(OpKind::Where, {hit, index, none}, NoAttrs{}, "candidate");
  return emit(OpKind::Amin, {candidate}, DimsAttrs{{dim}});
}

}  // namespace vf::detail
