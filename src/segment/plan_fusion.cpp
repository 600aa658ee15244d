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
#include "segment/plan_fusion.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "analysis/alias_analysis.h"
#include "base/error.h"
#include "codegen/lower_kernel.h"
#include "layout/strided_gemm.h"
#include "layout/view_algebra.h"
#include "passes/bookend.h"
#include "segment/extract_segment.h"
#include "segment/matmul_segment.h"
#include "segment/memory_plan.h"
#include "segment/output_layouts.h"
#include "segment/rewrite_for_planning.h"

namespace vf {
namespace {

bool is_empty_value(const Value* v) { return v->is_tensor && v->numel() == 0; }

// Each element of the buffer read once: the product of the sizes of the dims that advance.
int64_t distinct_bytes(const Value* v, const Layout& l) {
  int64_t n = 1;
  for (int64_t i = 0; i < l.rank(); ++i)
    if (l.strides[i] != 0) n *= l.sizes[i];
  return l.numel() == 0 ? 0 : n * dtype_size(v->dtype);
}

class Planner {
 public:
  Planner(const Fusion& fusion, const std::vector<Layout>& input_layouts, const PlanOptions& options)
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

  Plan run() {
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

 private:
  void place(const Value* v, Placement p) { plan_.placement[v->id] = std::move(p); }
  const Placement* placement(const Value* v) const {
    const Placement& p = plan_.placement[v->id];
    return p.storage ? &p : nullptr;
  }
  bool group_has(const Node* n) const { return n && in_group_[n->id]; }
  void decide(const Node* n, ViewDecision d, std::string reason) {
    plan_.view_ops.push_back({n, d, std::move(reason)});
  }

  // Bookend's eager step: a view where the view algebra allows, else a copy kernel.
  void eager_view(const Node& n) {
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

  // The alias analysis of the fusion seeded with every value placed so far.
  AliasAnalysis aliases_of_placed() const {
    std::vector<std::optional<AliasInfo>> known(fusion_.values().size());
    for (const auto& v : fusion_.values())
      if (const Placement* p = placement(v.get())) known[v->id] = AliasInfo{p->storage, p->layout};
    return analyze_aliases(fusion_, std::move(known));
  }

  // Places v, an alias of placed storage, and the chain of view ops leading to it as layout
  // arithmetic in the pending alias segment; adds the chain's nodes to `nodes`.
  void place_view_chain(const Value* v, const AliasAnalysis& aliases, std::unordered_set<const Node*>& nodes) {
    for (const Value* cur = v; !placement(cur); cur = cur->producer->inputs[0]) {
      const AliasInfo* info = aliases.find(cur);
      place(cur, Placement{info->source, info->layout});
      pending_alias_.views.insert(pending_alias_.views.begin(), cur);
      nodes.insert(cur->producer);
    }
  }

  // The pending alias segment, holding `nodes` in program order.
  void flush_alias_segment(const std::unordered_set<const Node*>& nodes) {
    for (const auto& n : fusion_.nodes())
      if (nodes.count(n.get())) pending_alias_.nodes.push_back(n.get());
    flush_alias_segment();
  }

  void flush_alias_segment() {
    if (pending_alias_.views.empty()) return;
    pending_alias_.kind = SegmentKind::Alias;
    plan_.segments.push_back(std::move(pending_alias_));
    pending_alias_ = Segment{};
  }

  // Steps 3 to 5 on the nodes no bookend step took.
  void plan_fused(const BookendSplit& split) {
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

  // Step 2b: a kernel per scatter or scan that `needed` depends on, in program order, whose result
  // is a buffer of its own: it is complete only when its kernel ends. The values its operands need
  // are computed in that kernel (they fuse), or, when one kernel cannot (a reduction among them),
  // the operands that need the reduction are written first by kernels of their own, each as the
  // narrowest value down its chain of views and casts (the bf16 gradient rows an embedding's
  // backward adds, not their float32 copy; never an index spread over them), together with the
  // results of their reductions that later kernels read (add_kernel_sharing_reductions).
  void plan_ordered_ops(const std::vector<const Value*>& needed) {
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

  // Step 2b for a matmul: a library segment of its own, its result a dense buffer in the order
  // matmul_result_layout gives. An operand that is a view of placed storage whose matrices are
  // row- or column-major (layout/strided_gemm.h) is passed with its layout (an alias segment places
  // it first); any other is written first, contiguous, by the kernels of step 5's rules. A fusion
  // input is read as it comes.
  void plan_library_call(const Node* n) {
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
        operands += p->storage == v ? "read in place, strides " + shape_to_string(p->layout.strides)
                                    : "passed as layout: a view of " + p->storage->name + ", strides " +
                                          shape_to_string(p->layout.strides);
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
    if (!written.empty()) add_kernels(nodes_for(written), written, written_placements);
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

  // The nodes of the fused part that `roots` need and that are not placed yet, in program order.
  std::vector<const Node*> nodes_for(const std::vector<const Value*>& roots) const {
    std::unordered_set<const Node*> found;
    std::vector<const Value*> stack(roots.begin(), roots.end());
    while (!stack.empty()) {
      const Value* v = stack.back();
      stack.pop_back();
      if (!group_has(v->producer) || placement(v) || !found.insert(v->producer).second) continue;
      for (const Value* in : v->producer->inputs) stack.push_back(in);
    }
    std::vector<const Node*> ordered;
    for (const auto& n : fusion_.nodes())
      if (found.count(n.get())) ordered.push_back(n.get());
    return ordered;
  }

  // Step 5's kernels for `nodes` writing `roots`: one when the lowering can make one. Otherwise
  // the reductions go into as few kernels as it can make (grouped below), each kernel also
  // writing the roots it can compute, and a last kernel computes the roots left.
  void add_kernels(const std::vector<const Node*>& nodes, const std::vector<const Value*>& roots,
                   const std::vector<std::pair<const Value*, Placement>>& root_placements) {
    if (add_kernel_sharing_reductions(nodes, roots, root_placements)) return;
    Candidate whole = make_kernel(nodes, roots, root_placements);
    if (whole.problem.empty()) {
      commit_kernel(std::move(whole.segment), root_placements);
      return;
    }
    auto placement_of = [&](const Value* v) {
      for (const auto& [root, p] : root_placements)
        if (root == v) return p;
      return Placement{v, Layout::contiguous(v->shape)};
    };
    auto is_used = [&](const Value* v) {
      if (std::find(roots.begin(), roots.end(), v) != roots.end()) return true;
      for (const Node* n : nodes)
        if (std::find(n->inputs.begin(), n->inputs.end(), v) != n->inputs.end()) return true;
      return false;
    };
    std::vector<ReductionGroup> pending;
    for (const Node* r : nodes) {
      if (op_category(r->op) != OpCategory::Reduction) continue;
      ReductionGroup g;
      g.reductions.push_back(r);
      for (const Value* v : r->outputs)
        if (is_used(v)) g.results.push_back({v, placement_of(v)});
      if (!g.results.empty()) pending.push_back(std::move(g));
    }
    // Rounds: a reduction whose operand needs another's result that is not placed yet waits for
    // that result's round, unless it joins that reduction's kernel (a later phase of one nest).
    const std::string first_problem = whole.problem;
    while (!pending.empty()) {
      std::vector<ReductionGroup> groups, waiting;
      for (ReductionGroup& r : pending) {
        const std::vector<const Node*> needs = unplaced_reductions(r);
        bool placed = false;
        std::string why;
        for (ReductionGroup& g : groups) {
          const bool covers = std::all_of(needs.begin(), needs.end(), [&](const Node* n) {
            return std::find(g.reductions.begin(), g.reductions.end(), n) != g.reductions.end();
          });
          if (!covers) continue;
          std::vector<std::pair<const Value*, Placement>> results = g.results;
          results.insert(results.end(), r.results.begin(), r.results.end());
          std::string problem = try_kernel(results);
          if (problem.empty()) {
            g.reductions.push_back(r.reductions[0]);
            g.results = std::move(results);
            placed = true;
            break;
          }
          if (why.empty()) why = std::move(problem);
        }
        if (placed) continue;
        if (!needs.empty()) {
          r.waited_for = needs;
          waiting.push_back(std::move(r));
          continue;
        }
        if (!r.waited_for.empty()) {
          why = "it reduces what an earlier kernel writes:";
          for (const Node* n : r.waited_for)
            why += detail::concat(" prims.", op_name(n->op), " ", n->output()->name, " (segment #", kernel_of_.at(n), ")");
        }
        r.why = why.empty() ? first_problem : why;
        groups.push_back(std::move(r));
      }
      VF_INTERNAL_CHECK(!groups.empty(), "no reduction of a split segment can be computed first");
      for (size_t k = 0; k < groups.size(); ++k) {
        std::vector<const Node*> later;  // the reductions that kernels after this one compute
        for (size_t j = k + 1; j < groups.size(); ++j) later.insert(later.end(), groups[j].reductions.begin(), groups[j].reductions.end());
        for (const ReductionGroup& w : waiting) later.insert(later.end(), w.reductions.begin(), w.reductions.end());
        commit_group(groups[k], later, roots, root_placements);
      }
      pending = std::move(waiting);
    }
    std::vector<const Value*> rest;
    std::vector<std::pair<const Value*, Placement>> rest_placements;
    for (const auto& [v, p] : root_placements) {
      if (placement(v)) continue;
      rest.push_back(v);
      rest_placements.push_back({v, p});
    }
    if (rest.empty()) return;
    Candidate last = make_kernel(nodes_for(rest), rest, rest_placements);
    VF_INTERNAL_CHECK(last.problem.empty(), "the kernel of the rest of a split segment cannot be generated: ",
                      last.problem);
    Segment& seg = last.segment;
    seg.note = "split: the outputs no reduction's kernel writes, because " + first_problem +
               (seg.note.empty() ? "" : "; " + seg.note);
    commit_kernel(std::move(seg), rest_placements);
  }

  // One kernel for `nodes` that also writes the results of its reductions that nodes of the fused
  // part outside `nodes` read (a scatter's or a matmul's operands are written first, and the
  // kernels after them need the same row statistics): then those kernels read them rather than
  // computing them again. It also computes, in the same pass, the other reductions that later
  // kernels need and that read a tensor `nodes` read (the partials of a norm weight's gradient
  // beside an embedding gradient's source rows), where one kernel can: then no later kernel reads
  // those tensors again. False, committing nothing, when there is nothing to add or one kernel
  // cannot write `roots` and what its reductions share.
  bool add_kernel_sharing_reductions(const std::vector<const Node*>& nodes, const std::vector<const Value*>& roots,
                                     const std::vector<std::pair<const Value*, Placement>>& root_placements) {
    std::vector<const Value*> all = roots;
    std::vector<std::pair<const Value*, Placement>> placements = root_placements;
    auto add = [&](const Value* v) {
      all.push_back(v);
      placements.push_back({v, Placement{v, Layout::contiguous(v->shape)}});
    };
    auto added = [&](const Value* v) { return placement(v) || std::find(all.begin(), all.end(), v) != all.end(); };
    const std::unordered_set<const Node*> in_nodes(nodes.begin(), nodes.end());
    std::string shared, joined;
    // Whether kernels come after this one (else it writes everything the fused part returns).
    const bool kernels_after = std::any_of(fusion_.nodes().begin(), fusion_.nodes().end(), [&](const auto& n) {
      return group_has(n.get()) && live_[n->id] && !in_nodes.count(n.get()) && !placement(n->output());
    });
    for (const Node* r : nodes) {
      if (op_category(r->op) != OpCategory::Reduction) continue;
      for (const Value* v : r->outputs) {
        if (!((kernels_after && needed_[v->id]) || read_after(v, in_nodes, roots)) || added(v)) continue;
        add(v);
        shared += (shared.empty() ? "" : ", ") + v->name;
      }
    }
    // The later reductions that read a tensor `nodes` read, before any kernel is lowered: with
    // none and nothing shared, add_kernels lowers the kernel itself.
    const std::vector<const Value*> read = segment_inputs(nodes);
    const std::unordered_set<const Value*> reads(read.begin(), read.end());
    std::vector<const Node*> joinable;
    for (const auto& node : fusion_.nodes()) {
      const Node* r = node.get();
      if (op_category(r->op) != OpCategory::Reduction || !group_has(r) || !live_[r->id] || in_nodes.count(r) ||
          added(r->output()))
        continue;
      const std::vector<const Value*> own_reads = segment_inputs(nodes_for({r->output()}));
      if (std::any_of(own_reads.begin(), own_reads.end(), [&](const Value* v) { return v->is_tensor && reads.count(v); }))
        joinable.push_back(r);
    }
    // The values `nodes` compute that the fused part returns (written here rather than computed
    // again at the end: a forward's saved statistics and residual sums), and those later kernels
    // read where computing one again would read more than twice its bytes (writing it once and
    // reading it back: a residual stream's gradient between two matmuls, which each later kernel
    // would otherwise compute from every layer's tensors before it; views and casts of placed
    // storage read what they are). Views of such values stay views (step 4).
    std::vector<const Value*> carried;
    auto carry = [&](const Value* v) {
      if (std::find(carried.begin(), carried.end(), v) == carried.end()) carried.push_back(v);
    };
    for (const Node* n : kernels_after ? nodes : std::vector<const Node*>{}) {
      if (op_category(n->op) == OpCategory::Reduction) continue;
      for (const Value* v : n->outputs) {
        if (!v->is_tensor || is_empty_value(v) || added(v)) continue;
        if (!is_view_op(n->op)) {
          if (needed_[v->id] || (read_outside(v, in_nodes) && recompute_bytes(v) > 2 * v->numel() * dtype_size(v->dtype)))
            carry(v);
          continue;
        }
        if (!needed_[v->id]) continue;
        const Value* base = v;  // a returned view: its source, which the view then reads
        while (in_nodes.count(base->producer) && is_view_op(base->producer->op)) base = base->producer->inputs[0];
        if (in_nodes.count(base->producer) && op_category(base->producer->op) != OpCategory::Reduction &&
            !added(base) && !is_empty_value(base))
          carry(base);
      }
    }
    // And the returned values a few elementwise ops beyond `nodes` that read nothing `nodes` do
    // not (the bf16 copy of a residual sum whose float value an operand needs), with those ops.
    for (const auto& value : kernels_after ? fusion_.values() : decltype(fusion_.values()){}) {
      const Value* v = value.get();
      if (!needed_[v->id] || !v->is_tensor || is_empty_value(v) || added(v) || in_nodes.count(v->producer)) continue;
      const Value* base = v;
      while (group_has(base->producer) && !placement(base) && is_view_op(base->producer->op)) base = base->producer->inputs[0];
      if (added(base) || !group_has(base->producer) || !is_elementwise(base->producer->op)) continue;
      std::unordered_set<const Node*> extra;
      for (const Node* x : nodes_for({base}))
        if (!in_nodes.count(x)) extra.insert(x);
      const bool near = std::all_of(extra.begin(), extra.end(), [&](const Node* x) {
        return is_elementwise(x->op) && std::all_of(x->inputs.begin(), x->inputs.end(), [&](const Value* in) {
                 return !in->is_tensor || in_nodes.count(in->producer) || extra.count(in->producer) || reads.count(in);
               });
      });
      if (near && extra.size() <= 4) carry(base);
    }
    if (shared.empty() && joinable.empty() && carried.empty()) return false;
    Candidate c = make_kernel(nodes, all, placements);
    if (!c.problem.empty()) return false;
    std::string kept;
    for (const Value* v : carried) {
      add(v);
      Candidate more = make_kernel(nodes_for(all), all, placements);
      if (!more.problem.empty()) {
        all.pop_back();
        placements.pop_back();
        continue;
      }
      c = std::move(more);
      kept += (kept.empty() ? "" : ", ") + v->name;
    }
    for (const Node* r : joinable) {
      const size_t before = all.size();
      for (const Value* v : r->outputs) add(v);
      Candidate more = make_kernel(nodes_for(all), all, placements);
      if (!more.problem.empty()) {
        all.resize(before);
        placements.resize(before);
        continue;
      }
      c = std::move(more);
      joined += (joined.empty() ? "" : ", ") + r->output()->name;
    }
    if (shared.empty() && joined.empty() && kept.empty()) return false;
    std::string note;
    if (!shared.empty()) note = "also writes " + shared + ", which later kernels read rather than reduce again";
    if (!kept.empty())
      note += (note.empty() ? "" : "; ") + std::string("also writes ") + kept +
              ", which the fusion returns or later kernels read, rather than computing them again";
    if (!joined.empty())
      note += (note.empty() ? "" : "; ") + std::string("also computes ") + joined +
              " in the same pass over the tensors it reads, which no later kernel then reads again";
    c.segment.note = c.segment.note.empty() ? note : note + "; " + c.segment.note;
    commit_kernel(std::move(c.segment), placements);
    return true;
  }

  // Whether a node of the fused part outside `nodes` that an output needs reads v: through the ops
  // of `nodes`, short of the `roots` they write.
  bool read_after(const Value* v, const std::unordered_set<const Node*>& nodes, const std::vector<const Value*>& roots) const {
    std::unordered_set<const Value*> seen;
    std::vector<const Value*> stack = {v};
    while (!stack.empty()) {
      const Value* w = stack.back();
      stack.pop_back();
      if (!seen.insert(w).second) continue;
      for (const Node* u : w->uses) {
        if (!group_has(u) || !live_[u->id]) continue;
        if (!nodes.count(u)) return true;
        for (const Value* out : u->outputs)
          if (std::find(roots.begin(), roots.end(), out) == roots.end()) stack.push_back(out);
      }
    }
    return false;
  }

  // Whether a live node of the fused part outside `nodes`, not placed yet, reads v.
  bool read_outside(const Value* v, const std::unordered_set<const Node*>& nodes) const {
    return std::any_of(v->uses.begin(), v->uses.end(), [&](const Node* u) {
      return group_has(u) && live_[u->id] && !nodes.count(u) &&
             std::none_of(u->outputs.begin(), u->outputs.end(), [&](const Value* o) { return placement(o) != nullptr; });
    });
  }

  // The bytes a kernel computing v anew reads: each placed tensor its unplaced ops read, once.
  int64_t recompute_bytes(const Value* v) const {
    int64_t bytes = 0;
    for (const Value* in : segment_inputs(nodes_for({v})))
      if (const Placement* p = placement(in); p && in->is_tensor) bytes += distinct_bytes(in, p->layout);
    return bytes;
  }

  // Reductions that share a kernel, the results they write, and why they are not in an earlier one.
  struct ReductionGroup {
    std::vector<const Node*> reductions;
    std::vector<std::pair<const Value*, Placement>> results;
    std::string why;
    std::vector<const Node*> waited_for;  // the reductions whose kernels it waited for
  };

  // The reductions of the fused part whose results g's operands need and that are not placed yet,
  // g's own excepted.
  std::vector<const Node*> unplaced_reductions(const ReductionGroup& g) const {
    std::vector<const Node*> found;
    std::unordered_set<const Value*> seen;
    std::vector<const Value*> stack;
    for (const Node* r : g.reductions) stack.insert(stack.end(), r->inputs.begin(), r->inputs.end());
    while (!stack.empty()) {
      const Value* v = stack.back();
      stack.pop_back();
      if (!group_has(v->producer) || placement(v) || !seen.insert(v).second) continue;
      const Node* p = v->producer;
      if (op_category(p->op) == OpCategory::Reduction &&
          std::find(g.reductions.begin(), g.reductions.end(), p) == g.reductions.end())
        if (std::find(found.begin(), found.end(), p) == found.end()) found.push_back(p);
      stack.insert(stack.end(), p->inputs.begin(), p->inputs.end());
    }
    return found;
  }

  // Why one kernel cannot write `results` ("" when it can).
  std::string try_kernel(const std::vector<std::pair<const Value*, Placement>>& results) const {
    std::vector<const Value*> values;
    for (const auto& [v, p] : results) values.push_back(v);
    return make_kernel(nodes_for(values), values, results).problem;
  }

  // Commits g's kernel, with the roots not placed yet that it can also write; of its reductions'
  // other results, those that the roots left or the `later` reductions need.
  void commit_group(const ReductionGroup& g, const std::vector<const Node*>& later, const std::vector<const Value*>& roots,
                    const std::vector<std::pair<const Value*, Placement>>& root_placements) {
    std::vector<std::pair<const Value*, Placement>> results = g.results;
    auto written = [&](const Value* v) {
      return std::any_of(results.begin(), results.end(), [&](const auto& r) { return r.first == v; });
    };
    for (const auto& [v, p] : root_placements) {
      if (written(v) || placement(v)) continue;
      results.push_back({v, p});
      if (!try_kernel(results).empty()) results.pop_back();
    }
    // What the kernels after this one read of it: walk back from their roots and reductions
    // through what is not placed, stopping at this kernel's roots.
    std::unordered_set<const Value*> needed;
    std::vector<const Value*> stack;
    for (const Value* root : roots)
      if (!placement(root) && !written(root)) stack.push_back(root);
    for (const Node* r : later) stack.insert(stack.end(), r->inputs.begin(), r->inputs.end());
    while (!stack.empty()) {
      const Value* v = stack.back();
      stack.pop_back();
      if (!group_has(v->producer) || placement(v) || !needed.insert(v).second) continue;
      if (written(v) && std::find(roots.begin(), roots.end(), v) != roots.end()) continue;
      stack.insert(stack.end(), v->producer->inputs.begin(), v->producer->inputs.end());
    }
    std::erase_if(results, [&](const auto& r) {
      return std::find(roots.begin(), roots.end(), r.first) == roots.end() && !needed.count(r.first);
    });
    // Roots first, in their order, then the reductions' other results.
    std::vector<std::pair<const Value*, Placement>> ordered;
    for (const Value* root : roots)
      for (const auto& r : results)
        if (r.first == root) ordered.push_back(r);
    for (const auto& r : results)
      if (std::find(roots.begin(), roots.end(), r.first) == roots.end()) ordered.push_back(r);
    // An earlier kernel may have computed the group's reductions on the way to the roots it wrote
    // (the roots it could also write): then nothing is left for this one to write, and no kernel is made.
    if (ordered.empty()) return;
    std::vector<const Value*> values;
    for (const auto& [v, p] : ordered) values.push_back(v);
    Candidate own = make_kernel(nodes_for(values), values, ordered);
    VF_INTERNAL_CHECK(own.problem.empty(), "the kernel of prims.", op_name(g.reductions[0]->op), " ",
                      g.reductions[0]->output()->name, " cannot be generated: ", own.problem);
    Segment& seg = own.segment;
    seg.note = "split: " + g.why + (seg.note.empty() ? "" : "; " + seg.note);
    commit_kernel(std::move(seg), ordered);
  }

  // What became of each view op of the fused part (bookend's ops are decided as they run).
  void decide_fused_views(const std::vector<const Node*>& kernel_nodes, const AliasAnalysis& aliases,
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

  // Whether every node feeding n inside the kernel is a view op (the kernel only moves data).
  static bool only_views_above(const Node* n, const std::vector<const Node*>& kernel_nodes) {
    for (const Value* in : n->inputs) {
      const Node* p = in->producer;
      if (!p || std::find(kernel_nodes.begin(), kernel_nodes.end(), p) == kernel_nodes.end()) continue;
      if (!is_view_op(p->op) || !only_views_above(p, kernel_nodes)) return false;
    }
    return true;
  }

  void add_kernel(const std::vector<const Node*>& nodes, const std::vector<const Value*>& roots,
                  const std::vector<std::pair<const Value*, Placement>>& root_placements) {
    Candidate c = make_kernel(nodes, roots, root_placements);
    VF_INTERNAL_CHECK(c.problem.empty(), "the kernel of ", roots.at(0)->name, " cannot be generated: ", c.problem);
    commit_kernel(std::move(c.segment), root_placements);
  }

  // A kernel segment lowered (or a host segment), or why one kernel cannot compute it.
  struct Candidate {
    Segment segment;
    std::string problem;
  };

  // A kernel (or host) segment computing `roots` from `nodes`, whose inputs are placed. A kernel
  // segment is lowered here, once: its Segment keeps the kernel IR for the backends.
  Candidate make_kernel(const std::vector<const Node*>& nodes, const std::vector<const Value*>& roots,
                        const std::vector<std::pair<const Value*, Placement>>& root_placements) const {
    Segment seg;
    const bool has_reduction = std::any_of(nodes.begin(), nodes.end(), [](const Node* n) {
      return op_category(n->op) == OpCategory::Reduction;
    });
    const bool library = nodes.size() == 1 && op_category(nodes[0]->op) == OpCategory::Contraction;
    seg.kind = library         ? SegmentKind::Library
               : has_reduction && !options_.reductions_in_kernels ? SegmentKind::Host
                                                                   : SegmentKind::Kernel;
    seg.nodes = nodes;
    ExtractedSegment ex = extract_segment(nodes, roots);
    seg.fusion = ex.fusion;
    seg.inputs = ex.inputs;
    seg.outputs = roots;
    seg.spec.fusion = seg.fusion.get();
    for (const Value* in : seg.inputs) {
      const Placement* p = in->is_tensor ? placement(in) : nullptr;
      VF_INTERNAL_CHECK(!in->is_tensor || p, "kernel input ", in->name, " has no placement");
      seg.spec.input_layouts.push_back(p ? p->layout : Layout{});
      if (p) seg.bytes_read += distinct_bytes(in, p->layout);
    }
    for (const auto& [v, p] : root_placements) {
      seg.spec.output_layouts.push_back(p.layout);
      seg.bytes_written += v->nbytes();
    }
    if (seg.kind != SegmentKind::Kernel) return {std::move(seg), ""};
    LoweredKernel lowered = lower_kernel(seg.spec);
    if (!lowered.ok()) return {std::move(seg), std::move(lowered.problem)};
    for (LoopNest& nest : lowered.ir.nests) nest.in_order = nest.scatter && options_.deterministic_scatters;
    const PartlyRead partly = partly_read_inputs(seg.spec, lowered.ir);
    auto names = [](const std::vector<std::string>& v) {
      std::string s;
      for (const std::string& name : v) s += (s.empty() ? "" : ", ") + name;
      return s;
    };
    std::string note;
    if (!partly.masked.empty())
      note = "skips the elements of " + names(partly.masked) + " that a where's loop-index condition discards";
    if (!partly.gathered.empty())
      note += (note.empty() ? "reads " : "; reads ") + names(partly.gathered) + " only where the indices say";
    if (!note.empty()) seg.note = note + " (reads above: an upper bound)";
    seg.kernel = std::make_shared<const KernelIR>(std::move(lowered.ir));
    return {std::move(seg), ""};
  }

  // Appends the segment, places what it writes and plans its buffers.
  void commit_kernel(Segment seg, const std::vector<std::pair<const Value*, Placement>>& root_placements) {
    const int index = static_cast<int>(plan_.segments.size());
    for (const auto& [v, p] : root_placements) {
      place(v, p);
      plan_.buffers.push_back({v, p.layout.storage_extent() * dtype_size(v->dtype), index, index});
    }
    for (const Node* n : seg.nodes) kernel_of_[n] = index;
    seg.spec.fusion = seg.fusion.get();
    plan_.segments.push_back(std::move(seg));
  }

  void plan_outputs() {
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

  const Fusion& fusion_;
  const PlanOptions& options_;
  Plan plan_;
  Segment pending_alias_;
  std::unordered_map<const Node*, int> kernel_of_;  // the kernel segment computing each node
  std::vector<bool> in_group_;  // by node id: the fused part's nodes (those no bookend step took)
  std::vector<bool> live_;  // by node id: the fused part's nodes that an output it makes needs
  std::vector<bool> needed_;  // by value id: the values the fused part makes available (plan_fused)
  // Matmul operands written first by a kernel (not passed as layout), and why.
  std::unordered_map<const Value*, std::string> gemm_copy_reason_;
};

}  // namespace

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
