// Step 2b of the planning pipeline (plan_fusion.cpp): a kernel per scatter or scan, whose result
// is complete only when it ends, and a library segment per matmul, each with its operands placed
// or written first.
#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "base/error.h"
#include "codegen/lower_kernel.h"
#include "layout/strided_gemm.h"
#include "segment/extract_segment.h"
#include "segment/matmul_segment.h"
#include "segment/planner.h"

namespace vf {

void Planner::plan_ordered_ops(const std::vector<const Value*>& needed) {
  auto unplaced = [&](const Value* v) { return group_has(v->producer) && !placement(v); };
  auto ordered_op = [](const Node* n) {
    return op_category(n->op) == OpCategory::Scatter || op_category(n->op) == OpCategory::Scan;
  };
  auto needs_reduction = [&](const Value* v) {
    for (const Node* n : nodes_for({v}))
      if (op_category(n->op) == OpCategory::Reduction || ordered_op(n)) return true;
    return false;
  };
  for (const Node* n : nodes_for(needed)) {
    if (op_category(n->op) == OpCategory::Contraction && !is_empty_value(n->output())) {
      plan_library_call(n);
      continue;
    }
    if (!ordered_op(n) || is_empty_value(n->output())) continue;  // an empty result is placed in step 4
    const bool scan = op_category(n->op) == OpCategory::Scan;
    const Value* out = n->output();
    const std::vector<std::pair<const Value*, Placement>> placed = {{out, Placement{out, Layout::contiguous(out->shape)}}};
    Candidate c = make_kernel(nodes_for({out}), {out}, placed);
    if (!c.problem.empty()) {
      std::vector<const Value*> operands;
      std::vector<std::pair<const Value*, Placement>> operand_placements;
      const std::vector<const Value*> inputs = scan ? std::vector<const Value*>{n->inputs[0]}
                                                    : std::vector<const Value*>{n->inputs[1], n->inputs[2]};
      for (const Value* v : inputs) {
        if (!unplaced(v) || !needs_reduction(v)) continue;
        // Down the chain, the narrowest value (a bf16 gradient rather than its float32 source).
        const Value* narrowest = v;
        while (unplaced(v) && (is_view_op(v->producer->op) || v->producer->op == OpKind::ConvertElementType)) {
          v = v->producer->inputs[0];
          if (dtype_size(v->dtype) < dtype_size(narrowest->dtype) || is_view_op(narrowest->producer->op)) narrowest = v;
        }
        v = narrowest;
        if (!unplaced(v) || std::find(operands.begin(), operands.end(), v) != operands.end()) continue;
        operands.push_back(v);
        operand_placements.push_back({v, Placement{v, Layout::contiguous(v->shape)}});
      }
      add_kernels(nodes_for(operands), operands, operand_placements);
      const std::string why = c.problem;
      c = make_kernel(nodes_for({out}), {out}, placed);
      VF_INTERNAL_CHECK(c.problem.empty(), "the kernel of prims.", op_name(n->op), " ", out->name,
                        " cannot be generated: ", c.problem);
      std::string written;
      for (const Value* v : operands) written += (written.empty() ? "" : ", ") + v->name;
      c.segment.note = "reads " + written + ", written first, because " + why;
    }
    const std::string adds =
        scan ? "scan: " + out->name + "'s lines along dim " + std::to_string(n->attr<AxisAttrs>().dim) +
                   " summed in order, a line per thread"
         : n->op == OpKind::ScatterMax ? "scatter: the largest into " + out->name + ", filled with its base at launch, "
                                         "CUDA: atomic maxes (their order does not matter)"
             : "scatter: adds into " + out->name + ", zeroed at launch, " +
                   (options_.deterministic_scatters ? "in the index's order (deterministic)"
                                                    : "CUDA: atomic adds in any order");
    c.segment.note = c.segment.note.empty() ? adds : adds + "; " + c.segment.note;
    commit_kernel(std::move(c.segment), placed);
  }
}

void Planner::plan_library_call(const Node* n) {
  const AliasAnalysis aliases = aliases_of_placed();
  std::unordered_set<const Node*> views;
  std::vector<const Value*> written;
  std::vector<std::pair<const Value*, Placement>> written_placements;
  std::string operands;
  const ContractionSlots slots = contraction_slots(*n);
  for (size_t i = 0; i < n->inputs.size(); ++i) {
    const Value* v = n->inputs[i];
    enum Role { A, B, Addend, Bias };
    const int k = static_cast<int>(i);
    const Role role = k == slots.addend ? Addend : k == slots.bias ? Bias : Role(k);
    static constexpr const char* kRoles[] = {"a = ", "b = ", "c = ", "bias = "};
    operands += std::string(operands.empty() ? "" : "; ") + kRoles[role] + v->name + ", ";
    auto problem_of = [role](const Layout& l) {
      return role == Bias ? gemm_bias_problem(l) : role == Addend ? gemm_addend_problem(l) : gemm_operand_problem(l);
    };
    if (const Placement* p = placement(v)) {
      const std::string problem = problem_of(p->layout);
      const auto by = group_has(v->producer) ? kernel_of_.find(v->producer) : kernel_of_.end();
      operands += p->storage != v       ? "passed as layout: a view of " + p->storage->name + ", strides " +
                                              shape_to_string(p->layout.strides)
                  : by != kernel_of_.end() ? "written by segment #" + std::to_string(by->second) + ", strides " +
                                                 shape_to_string(p->layout.strides)
                                           : "read in place, strides " + shape_to_string(p->layout.strides);
      if (!problem.empty()) operands += " (CUDA reads it through the host: " + problem + ")";
      continue;
    }
    const AliasInfo* info = aliases.find(v);
    const std::string problem = info ? problem_of(info->layout) : "";
    if (info && problem.empty()) {
      place_view_chain(v, aliases, views);
      operands += "passed as layout: a view of " + info->source->name + ", strides " + shape_to_string(info->layout.strides);
      continue;
    }
    const std::string& why = aliases.copy_reason[v->id];
    const std::string reason = info          ? "a view of " + info->source->name + " whose " + problem.substr(4)
                               : !why.empty() ? why
                                              : "computed by " + std::string(op_name(v->producer->op));
    operands += "copied, contiguous: " + reason;
    gemm_copy_reason_[v] = "a matmul operand, " + reason;
    if (std::find(written.begin(), written.end(), v) == written.end()) {
      written.push_back(v);
      written_placements.push_back({v, Placement{v, Layout::contiguous(v->shape)}});
    }
  }
  flush_alias_segment(views);
  if (!written.empty()) {
    add_later_operands(n, aliases, written, written_placements);
    add_kernels(nodes_for(written), written, written_placements);
  }
  const Value* out = n->output();
  std::string order;
  std::vector<const Value*> roots = {out};
  const Layout layout = matmul_result_layout(fusion_, n, placement(n->inputs[0])->layout, placement(n->inputs[1])->layout, &order);
  std::vector<std::pair<const Value*, Placement>> placed = {{out, Placement{out, layout}}};
  std::string epilogue = slots.bias >= 0 ? "bias" : "";
  if (slots.addend >= 0) epilogue = std::string("+ c (C, beta = 1)") + (epilogue.empty() ? "" : ", then bias");
  if (n->op == OpKind::MatmulGelu) {
    epilogue += (epilogue.empty() ? "" : ", ") + std::string("tanh gelu");
    const Value* r = n->outputs[1];  // the matmul's own result: cuBLASLt's aux output, where it is read
    if (fusion_.is_output(r) || !r->uses.empty()) {
      roots.push_back(r);
      placed.push_back({r, Placement{r, Layout::contiguous(r->shape)}});
      epilogue += "; aux output " + r->name + " (before the gelu)";
    }
  }
  Candidate c = make_kernel({n}, roots, placed);
  c.segment.note = "library call (CUDA: cuBLASLt; CPU: the reference's loop): " + operands + order +
                   (epilogue.empty() ? "" : "; epilogue: " + epilogue) + matmul_elementwise_after(n);
  commit_kernel(std::move(c.segment), placed);
}

void Planner::add_later_operands(const Node* call, const AliasAnalysis& aliases, std::vector<const Value*>& written,
                                 std::vector<std::pair<const Value*, Placement>>& placements) {
  const std::vector<const Value*> read = segment_inputs(nodes_for(written));
  const std::unordered_set<const Value*> reads(read.begin(), read.end());
  auto elementwise_only = [](const std::vector<const Node*>& nodes) {
    return std::all_of(nodes.begin(), nodes.end(), [](const Node* x) { return is_elementwise(x->op) || is_view_op(x->op); });
  };
  auto in_written = [&](const Value* x) { return std::find(written.begin(), written.end(), x) != written.end(); };
  bool after = false;
  for (const auto& node : fusion_.nodes()) {
    const Node* m = node.get();
    after = after || m == call;
    if (!after || m == call || op_category(m->op) != OpCategory::Contraction || !group_has(m) || !live_[m->id] ||
        placement(m->output()))
      continue;
    for (const Value* operand : m->inputs) {
      // A view's source: the view is then a layout of the buffer written here, where its strides
      // allow (a weight gradient's transposed operand).
      const Value* v = operand;
      while (!in_written(v) && v->producer && is_view_op(v->producer->op) && group_has(v->producer) && !placement(v))
        v = v->producer->inputs[0];
      if (!v->is_tensor || !group_has(v->producer) || is_empty_value(v) || placement(v) || aliases.find(v) ||
          in_written(v))
        continue;
      const std::vector<const Node*> need = nodes_for({v});
      const std::vector<const Value*> its_reads = segment_inputs(need);
      if (!elementwise_only(need) ||
          std::none_of(its_reads.begin(), its_reads.end(), [&](const Value* in) { return in->is_tensor && reads.count(in); }))
        continue;
      written.push_back(v);
      placements.push_back({v, Placement{v, Layout::contiguous(v->shape)}});
      if (!make_kernel(nodes_for(written), written, placements).problem.empty()) {
        written.pop_back();
        placements.pop_back();
        continue;
      }
      gemm_copy_reason_[v] = "a matmul operand, computed by " + std::string(op_name(v->producer->op)) +
                             ", written beside the operands of the call before it";
    }
  }
}

}  // namespace vf
