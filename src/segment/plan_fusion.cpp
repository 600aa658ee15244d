// The planning pipeline, in order:
//
//  0. Rewrites of the fusion (segment/rewrite_for_planning.h, which gives their order and its
//     reasons), and the rest of the pipeline plans the rewritten one. First, because they change
//     the ops there are.
//  1. Bookend split (only with PlanOptions::bookend): leading and trailing view ops are set apart.
//     It runs first among the rest because it decides which ops the fused part holds at all.
//  2. Leading eager ops: each becomes a view or a copy of its input, as eager PyTorch would do.
//  2b. Scatters and scans: a kernel each, whose result is complete only when it ends (so no
//     consumer shares it); before the alias analysis, which then sees their buffers as placed
//     storage.
//  3. Alias analysis over the whole fusion, seeded with every value whose storage is now known.
//     Outputs of the fused part that are views of known storage become alias segments.
//  4. Output layouts: the values the kernel must produce are grouped into buffers, so that values
//     related by view ops share one buffer (segment/output_layouts.h). This must precede kernel
//     extraction, which writes only the chosen buffers.
//  5. Kernel extraction: the nodes the written buffers need, with every view op between them
//     kept inside as index math, in one kernel when the kernel generator can compute them as one
//     (codegen/lower_kernel.h: lowered once, kept on the Segment). Otherwise, as when reductions of different
//     extents meet, each reduction gets a kernel of its own whose results go to new buffers, and
//     a last kernel computes the rest from them. Without PlanOptions::reductions_in_kernels,
//     segments holding reductions run on the host.
//  6. Trailing eager ops, like step 2, on the fused part's results.
//  7. Memory plan: buffer lifetimes, bytes allocated and the peak (segment/memory_plan.h). Last,
//     because it reads every segment.
//
// The steps are member functions of the Planner (segment/planner.h): this file holds the pipeline
// and steps 1 to 4, plan_ordered_ops.cpp step 2b, plan_kernels.cpp the kernels of steps 2b and 5.
#include "segment/plan_fusion.h"

#include <algorithm>
#include <optional>
#include <unordered_set>

#include "analysis/alias_analysis.h"
#include "base/error.h"
#include "layout/view_algebra.h"
#include "passes/bookend.h"
#include "segment/memory_plan.h"
#include "segment/output_layouts.h"
#include "segment/planner.h"
#include "segment/rewrite_for_planning.h"

namespace vf {

Planner::Planner(const Fusion& fusion, const std::vector<Layout>& input_layouts, const PlanOptions& options)
    : fusion_(fusion), options_(options) {
  VF_INTERNAL_CHECK(input_layouts.size() == fusion.inputs().size(), "got ", input_layouts.size(),
                    " layouts for ", fusion.inputs().size(), " inputs");
  plan_.options = options;
  plan_.placement.resize(fusion.values().size());
  for (size_t i = 0; i < fusion.inputs().size(); ++i) {
    const Value* in = fusion.inputs()[i];
    if (in->is_tensor) place(in, Placement{in, input_layouts[i]});
  }
}

Plan Planner::run() {
  const auto& nodes = fusion_.nodes();
  BookendSplit split = options_.bookend ? find_bookends(fusion_)
                                        : BookendSplit{std::vector<bool>(nodes.size()), std::vector<bool>(nodes.size())};
  for (const auto& n : nodes)
    if (split.leading[n->id]) eager_view(*n);
  flush_alias_segment();
  plan_fused(split);
  for (const auto& n : nodes)
    if (split.trailing[n->id]) eager_view(*n);
  flush_alias_segment();
  plan_outputs();
  std::sort(plan_.view_ops.begin(), plan_.view_ops.end(),
            [](const ViewOpPlan& a, const ViewOpPlan& b) { return a.node->id < b.node->id; });
  plan_memory(plan_);
  return std::move(plan_);
}

void Planner::eager_view(const Node& n) {
  const Placement* in = placement(n.inputs[0]);
  VF_INTERNAL_CHECK(in, "bookend op ", n.output()->name, " reads unplaced ", n.inputs[0]->name);
  ViewResult r = view_layout(n, in->layout);
  if (r.is_view()) {
    place(n.output(), Placement{in->storage, std::move(*r.layout)});
    pending_alias_.nodes.push_back(&n);
    pending_alias_.views.push_back(n.output());
    decide(&n, ViewDecision::Alias, "bookend: run eagerly as a view");
    return;
  }
  flush_alias_segment();
  decide(&n, ViewDecision::Copy, "bookend: run eagerly as a copy, because " + r.copy_reason);
  add_kernel({&n}, {n.output()}, {{n.output(), Placement{n.output(), Layout::contiguous(n.output()->shape)}}});
}

AliasAnalysis Planner::aliases_of_placed() const {
  std::vector<std::optional<AliasInfo>> known(fusion_.values().size());
  for (const auto& v : fusion_.values())
    if (const Placement* p = placement(v.get())) known[v->id] = AliasInfo{p->storage, p->layout};
  return analyze_aliases(fusion_, std::move(known));
}

void Planner::place_view_chain(const Value* v, const AliasAnalysis& aliases, std::unordered_set<const Node*>& nodes) {
  for (const Value* cur = v; !placement(cur); cur = cur->producer->inputs[0]) {
    const AliasInfo* info = aliases.find(cur);
    place(cur, Placement{info->source, info->layout});
    pending_alias_.views.insert(pending_alias_.views.begin(), cur);
    nodes.insert(cur->producer);
  }
}

void Planner::flush_alias_segment(const std::unordered_set<const Node*>& nodes) {
  for (const auto& n : fusion_.nodes())
    if (nodes.count(n.get())) pending_alias_.nodes.push_back(n.get());
  flush_alias_segment();
}

void Planner::flush_alias_segment() {
  if (pending_alias_.views.empty()) return;
  pending_alias_.kind = SegmentKind::Alias;
  plan_.segments.push_back(std::move(pending_alias_));
  pending_alias_ = Segment{};
}

void Planner::plan_fused(const BookendSplit& split) {
  in_group_.assign(fusion_.nodes().size(), false);
  for (const auto& n : fusion_.nodes()) in_group_[n->id] = !split.leading[n->id] && !split.trailing[n->id];

  // The values the fused part must make available: fusion outputs it defines, and inputs of
  // trailing ops.
  std::vector<const Value*> needed;
  auto need = [&](const Value* v) {
    if (group_has(v->producer) && std::find(needed.begin(), needed.end(), v) == needed.end()) needed.push_back(v);
  };
  for (const Value* out : fusion_.outputs()) need(out);
  for (const auto& n : fusion_.nodes())
    if (split.trailing[n->id]) need(n->inputs[0]);
  needed_.assign(fusion_.values().size(), false);
  for (const Value* v : needed) needed_[v->id] = true;
  live_.assign(fusion_.nodes().size(), false);  // the rewrites may leave nodes nothing reads
  for (const Node* n : nodes_for(needed)) live_[n->id] = true;

  plan_ordered_ops(needed);

  // Step 3: alias analysis seeded with every placed value.
  const AliasAnalysis aliases = aliases_of_placed();

  std::vector<const Value*> produced;
  std::unordered_set<const Node*> alias_nodes;
  for (const Value* v : needed) {
    const AliasInfo* a = aliases.find(v);
    if (!a) {
      produced.push_back(v);
      continue;
    }
    place_view_chain(v, aliases, alias_nodes);
  }
  flush_alias_segment(alias_nodes);

  // Step 4: empty values need no kernel; the others get buffers.
  std::vector<std::pair<const Value*, Placement>> empties;
  std::vector<const Value*> to_write;
  for (const Value* v : produced) {
    if (is_empty_value(v))
      empties.push_back({v, Placement{v, Layout::contiguous(v->shape)}});
    else
      to_write.push_back(v);
  }
  WrittenBuffers written = choose_output_layouts(
      to_write, [this](const Node* n) { return group_has(n); }, [&](const Value* v) { return placement(v); });

  // Step 5: the nodes the roots need, in program order.
  const std::vector<const Node*> ordered = nodes_for(written.roots);
  std::vector<std::pair<const Value*, Placement>> root_placements, derived;
  for (auto& [v, p] : written.placements)
    (p.storage == v ? root_placements : derived).push_back({v, p});
  if (!ordered.empty()) add_kernels(ordered, written.roots, root_placements);
  decide_fused_views(ordered, aliases, alias_nodes, in_group_);

  // Values returned as views of a written buffer, and empty values, come after the kernel.
  for (auto& [v, p] : derived) {
    place(v, p);
    pending_alias_.views.push_back(v);
  }
  for (auto& [v, p] : empties) {
    place(v, p);
    pending_alias_.views.push_back(v);
    plan_.buffers.push_back({v, 0, static_cast<int>(plan_.segments.size()), 0});
  }
  flush_alias_segment();
}

void Planner::decide_fused_views(const std::vector<const Node*>& kernel_nodes, const AliasAnalysis& aliases,
                                 const std::unordered_set<const Node*>& alias_nodes, const std::vector<bool>& in_group) {
  for (const auto& n : fusion_.nodes()) {
    const auto seg = kernel_of_.find(n.get());
    const int kernel = seg == kernel_of_.end() ? -1 : seg->second;
    if (!is_view_op(n->op) || !in_group[n->id]) continue;
    const Value* out = n->output();
    // In a kernel of step 5, or of a scatter (step 2b).
    const bool in_kernel = kernel >= 0;
    const std::vector<const Node*>& kernel_of_n =
        std::find(kernel_nodes.begin(), kernel_nodes.end(), n.get()) != kernel_nodes.end() || !in_kernel
            ? kernel_nodes
            : plan_.segments[static_cast<size_t>(kernel)].nodes;
    if (alias_nodes.count(n.get()) || (!in_kernel && placement(out))) {
      decide(n.get(), ViewDecision::Alias, "the view algebra gives its layout in the storage of " +
                                               placement(out)->storage->name);
    } else if (in_kernel && placement(out) && placement(out)->storage == out && only_views_above(n.get(), kernel_of_n)) {
      const auto gemm = gemm_copy_reason_.find(out);
      const std::string& why = gemm != gemm_copy_reason_.end() ? gemm->second : aliases.copy_reason[out->id];
      decide(n.get(), ViewDecision::Copy, why + "; segment #" + std::to_string(kernel) + " writes it");
    } else if (in_kernel) {
      std::string why = "folded into the index math of segment #" + std::to_string(kernel);
      if (!aliases.copy_reason[out->id].empty()) why += " (" + aliases.copy_reason[out->id] + ")";
      decide(n.get(), ViewDecision::Index, why);
    } else {
      decide(n.get(), ViewDecision::Index, "unused: no output needs it");
    }
  }
}

bool Planner::only_views_above(const Node* n, const std::vector<const Node*>& kernel_nodes) {
  for (const Value* in : n->inputs) {
    const Node* p = in->producer;
    if (!p || std::find(kernel_nodes.begin(), kernel_nodes.end(), p) == kernel_nodes.end()) continue;
    if (!is_view_op(p->op) || !only_views_above(p, kernel_nodes)) return false;
  }
  return true;
}

void Planner::plan_outputs() {
  for (const Value* out : fusion_.outputs()) {
    const Placement* p = placement(out);
    VF_INTERNAL_CHECK(p, "output ", out->name, " was never placed");
    const Value* alias_of = nullptr;
    if (p->storage != out && (fusion_.is_input(p->storage) || fusion_.is_output(p->storage))) alias_of = p->storage;
    for (const OutputPlan& earlier : plan_.outputs)
      if (earlier.value == out) alias_of = out;  // returned twice: the second shares the first
    plan_.outputs.push_back({out, alias_of, p->layout});
  }
}

Plan plan_fusion(const Fusion& fusion, const std::vector<Layout>& input_layouts, const PlanOptions& options) {
  RewrittenFusion r = rewrite_for_planning(fusion, options);
  if (!r.fusion) return Planner(fusion, input_layouts, options).run();
  Plan plan = Planner(*r.fusion, input_layouts, options).run();
  plan.rewritten = std::move(r.fusion);
  plan.rewrites = std::move(r.notes);
  return plan;
}

std::vector<Layout> contiguous_input_layouts(const Fusion& fusion) {
  std::vector<Layout> layouts;
  for (const Value* in : fusion.inputs()) layouts.push_back(in->is_tensor ? Layout::contiguous(in->shape) : Layout{});
  return layouts;
}

}  // namespace vf
