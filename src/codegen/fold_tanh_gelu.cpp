// fold_tanh_gelu: pattern rewrites of value nodes, in arena (topological) order.
#include "codegen/fold_tanh_gelu.h"

#include <optional>

namespace vf {
namespace {

bool float_apply(const ValueExpr& e, OpKind fn, DType dtype) {
  return e.op == ValueOp::Apply && e.fn == fn && e.dtype == dtype && e.operand_dtype == dtype;
}

bool is_constant(const LoopNest& nest, int id, DType dtype, double v) {
  const ValueExpr& c = nest.values[id];
  return c.op == ValueOp::Constant && c.dtype == dtype && c.constant.as_double() == v;
}

// 1 + tanh(u), tanh(u) + 1 or 1 - tanh(u) as OnePlusTanh; nullopt otherwise.
std::optional<ValueExpr> one_plus_tanh(const LoopNest& nest, const ValueExpr& e) {
  if ((!float_apply(e, OpKind::Add, e.dtype) && !float_apply(e, OpKind::Sub, e.dtype)) || e.args.size() != 2) return {};
  auto tanh_operand = [&](int id) { return float_apply(nest.values[id], OpKind::Tanh, e.dtype) ? nest.values[id].args[0] : -1; };
  int u = -1;
  if (is_constant(nest, e.args[0], e.dtype, 1.0)) u = tanh_operand(e.args[1]);
  if (u < 0 && e.fn == OpKind::Add && is_constant(nest, e.args[1], e.dtype, 1.0)) u = tanh_operand(e.args[0]);
  if (u < 0) return {};
  ValueExpr r;
  r.op = ValueOp::OnePlusTanh;
  r.fn = e.fn;
  r.dtype = r.operand_dtype = e.dtype;
  r.args = {u};
  return r;
}

// (0.5 * x) * OnePlusTanh(u) (of 1 + tanh(u)), either way round, as HalfXOnePlusTanh; nullopt otherwise.
std::optional<ValueExpr> half_x_one_plus_tanh(const LoopNest& nest, const ValueExpr& e) {
  if (!float_apply(e, OpKind::Mul, e.dtype) || e.args.size() != 2) return {};
  auto halved = [&](int id) {  // x of a product 0.5 * x or x * 0.5, or -1
    const ValueExpr& m = nest.values[id];
    if (!float_apply(m, OpKind::Mul, e.dtype)) return -1;
    return is_constant(nest, m.args[0], e.dtype, 0.5) ? m.args[1] : is_constant(nest, m.args[1], e.dtype, 0.5) ? m.args[0] : -1;
  };
  for (int k = 0; k < 2; ++k) {
    const int x = halved(e.args[k]);
    const ValueExpr& other = nest.values[e.args[1 - k]];
    if (x < 0 || other.op != ValueOp::OnePlusTanh || other.fn != OpKind::Add || other.dtype != e.dtype) continue;
    ValueExpr r;
    r.op = ValueOp::HalfXOnePlusTanh;
    r.dtype = r.operand_dtype = e.dtype;
    r.args = {x, other.args[0]};
    return r;
  }
  return {};
}

}  // namespace

int fold_tanh_gelu(KernelIR& ir) {
  int rewritten = 0;
  for (LoopNest& nest : ir.nests) {
    for (size_t id = 0; id < nest.values.size(); ++id) {
      const ValueExpr& e = nest.values[id];
      if (e.dtype != DType::Float32 && e.dtype != DType::Float64) continue;
      std::optional<ValueExpr> r = one_plus_tanh(nest, e);
      if (!r) r = half_x_one_plus_tanh(nest, e);
      if (!r) continue;
      nest.replace_value(static_cast<int>(id), *r);
      ++rewritten;
    }
  }
  return rewritten;
}

}  // namespace vf
