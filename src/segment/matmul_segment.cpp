#include "segment/matmul_segment.h"

#include <algorithm>

#include "layout/strided_gemm.h"

namespace vf {

Layout matmul_result_layout(const Fusion& fusion, const Node* n, const Layout& a, const Layout& b, std::string* why) {
  const Value* out = n->output();
  const Layout dense = Layout::contiguous(out->shape);
  if (n->op != OpKind::Matmul || fusion.is_output(out) || out->uses.size() != 1 || out->uses[0]->op != OpKind::Transpose)
    return dense;
  const Node* t = out->uses[0];
  const std::vector<int64_t>& perm = t->attr<PermuteAttrs>().permutation;
  if (perm.back() != out->rank() - 1) return dense;
  // Whether the transpose's result is needed whole: returned, or read by a matmul, through views.
  bool needed_whole = false;
  for (const Value* v = t->output();;) {
    if (fusion.is_output(v) || std::any_of(v->uses.begin(), v->uses.end(), [](const Node* u) {
          return op_category(u->op) == OpCategory::Contraction;
        })) {
      needed_whole = true;
      break;
    }
    if (v->uses.size() != 1 || !is_view_op(v->uses[0]->op)) break;
    v = v->uses[0]->output();
  }
  if (!needed_whole) return dense;
  Layout l = dense;
  const Layout ordered = Layout::contiguous(t->output()->shape);
  for (size_t i = 0; i < perm.size(); ++i) l.strides[static_cast<size_t>(perm[i])] = ordered.strides[i];
  if (!strided_gemm(a, b, l, nullptr)) return dense;
  *why = "; result written in the order of its transpose " + t->output()->name + ", strides " + shape_to_string(l.strides);
  return l;
}

std::string matmul_elementwise_after(const Node* n) {
  std::string names;
  for (const Value* out : n->outputs)
    for (const Node* u : out->uses)
      if (is_elementwise(u->op)) names += (names.empty() ? "" : ", ") + u->output()->name + " (" + std::string(op_name(u->op)) + ")";
  return names.empty() ? "" : "; read by elementwise ops in kernels after it: " + names;
}

}  // namespace vf
