// The planner's kernels (plan_fusion.cpp, steps 2b and 5): the nodes a kernel needs, one kernel
// where the lowering can make one, else the reductions in as few kernels as it can make, and what
// a kernel also writes so that later kernels read rather than compute again.
#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "base/error.h"
#include "codegen/lower_kernel.h"
#include "segment/extract_segment.h"
#include "segment/planner.h"

namespace vf {

std::vector<const Node*> Planner::nodes_for(const std::vector<const Value*>& roots) const {
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

void Planner::add_kernels(const std::vector<const Node*>& nodes, const std::vector<const Value*>& roots,
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

bool Planner::add_kernel_sharing_reductions(const std::vector<const Node*>& nodes,
                                            const std::vector<const Value*>& roots,
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
  const bool more_kernels = kernels_after(in_nodes);  // else this one writes all the fused part returns
  for (const Node* r : nodes) {
    if (op_category(r->op) != OpCategory::Reduction) continue;
    for (const Value* v : r->outputs) {
      if (!((more_kernels && needed_[v->id]) || read_after(v, in_nodes, roots)) || added(v)) continue;
      add(v);
      shared += (shared.empty() ? "" : ", ") + v->name;
    }
  }
  // The later reductions that read a tensor `nodes` read, before any kernel is lowered: with
  // none and nothing shared, add_kernels lowers the kernel itself.
  const std::vector<const Value*> read = segment_inputs(nodes);
  const std::unordered_set<const Value*> reads(read.begin(), read.end());
  std::vector<const Node*> joinable;
  std::vector<const Value*> unplaced_needed;  // what the rest of the fused part must still compute
  for (const auto& value : fusion_.values())
    if (needed_[value->id] && !placement(value.get())) unplaced_needed.push_back(value.get());
  const std::vector<const Node*> rest = nodes_for(unplaced_needed);
  const std::unordered_set<const Node*> remaining(rest.begin(), rest.end());
  for (const auto& node : fusion_.nodes()) {
    const Node* r = node.get();
    if (op_category(r->op) != OpCategory::Reduction || !remaining.count(r) || in_nodes.count(r) ||
        added(r->output()))
      continue;
    const std::vector<const Value*> own_reads = segment_inputs(nodes_for({r->output()}));
    if (std::any_of(own_reads.begin(), own_reads.end(), [&](const Value* v) { return v->is_tensor && reads.count(v); }))
      joinable.push_back(r);
  }
  const std::vector<const Value*> carried = carried_values(nodes, in_nodes, reads, all);
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

bool Planner::kernels_after(const std::unordered_set<const Node*>& in_nodes) const {
  return std::any_of(fusion_.nodes().begin(), fusion_.nodes().end(), [&](const auto& n) {
    return group_has(n.get()) && live_[n->id] && !in_nodes.count(n.get()) && !placement(n->output());
  });
}

std::vector<const Value*> Planner::carried_values(const std::vector<const Node*>& nodes,
                                                  const std::unordered_set<const Node*>& in_nodes,
                                                  const std::unordered_set<const Value*>& reads,
                                                  const std::vector<const Value*>& written) const {
  if (!kernels_after(in_nodes)) return {};
  auto added = [&](const Value* v) {
    return placement(v) || std::find(written.begin(), written.end(), v) != written.end();
  };
  std::vector<const Value*> carried;
  // A value widened from a narrower one `nodes` compute is carried as that one.
  auto carry = [&](const Value* v) {
    while (v->producer->op == OpKind::ConvertElementType && in_nodes.count(v->producer) &&
           dtype_size(v->producer->inputs[0]->dtype) < dtype_size(v->dtype) && !added(v->producer->inputs[0]) &&
           v->producer->inputs[0]->producer && in_nodes.count(v->producer->inputs[0]->producer))
      v = v->producer->inputs[0];
    if (std::find(carried.begin(), carried.end(), v) == carried.end()) carried.push_back(v);
  };
  for (const Node* n : nodes) {
    if (op_category(n->op) == OpCategory::Reduction || is_view_op(n->op)) continue;
    for (const Value* v : n->outputs)
      if (v->is_tensor && !is_empty_value(v) && !added(v) && read_outside(v, in_nodes) &&
          recompute_bytes(v) > 2 * v->numel() * dtype_size(v->dtype))
        carry(v);
  }
  // Returned values (a returned view: its source, which the view then reads), computed by `nodes`
  // or by a few elementwise ops beyond them that read nothing new (then with those ops).
  for (const auto& value : fusion_.values()) {
    const Value* v = value.get();
    if (!needed_[v->id] || !v->is_tensor || added(v)) continue;
    const Value* base = v;
    while (group_has(base->producer) && !placement(base) && is_view_op(base->producer->op)) base = base->producer->inputs[0];
    if (added(base) || !group_has(base->producer) || is_empty_value(base)) continue;
    if (in_nodes.count(base->producer)) {
      if (op_category(base->producer->op) != OpCategory::Reduction) carry(base);
      continue;
    }
    if (!is_elementwise(base->producer->op)) continue;
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
  return carried;
}

bool Planner::read_after(const Value* v, const std::unordered_set<const Node*>& nodes,
                         const std::vector<const Value*>& roots) const {
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

bool Planner::read_outside(const Value* v, const std::unordered_set<const Node*>& nodes) const {
  return std::any_of(v->uses.begin(), v->uses.end(), [&](const Node* u) {
    return group_has(u) && live_[u->id] && !nodes.count(u) &&
           std::none_of(u->outputs.begin(), u->outputs.end(), [&](const Value* o) { return placement(o) != nullptr; });
  });
}

int64_t Planner::recompute_bytes(const Value* v) const {
  int64_t bytes = 0;
  for (const Value* in : segment_inputs(nodes_for({v})))
    if (const Placement* p = placement(in); p && in->is_tensor) bytes += distinct_bytes(in, p->layout);
  return bytes;
}

std::vector<const Node*> Planner::unplaced_reductions(const ReductionGroup& g) const {
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

std::string Planner::try_kernel(const std::vector<std::pair<const Value*, Placement>>& results) const {
  std::vector<const Value*> values;
  for (const auto& [v, p] : results) values.push_back(v);
  return make_kernel(nodes_for(values), values, results).problem;
}

void Planner::commit_group(const ReductionGroup& g, const std::vector<const Node*>& later,
                           const std::vector<const Value*>& roots,
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

void Planner::add_kernel(const std::vector<const Node*>& nodes, const std::vector<const Value*>& roots,
                         const std::vector<std::pair<const Value*, Placement>>& root_placements) {
  Candidate c = make_kernel(nodes, roots, root_placements);
  VF_INTERNAL_CHECK(c.problem.empty(), "the kernel of ", roots.at(0)->name, " cannot be generated: ", c.problem);
  commit_kernel(std::move(c.segment), root_placements);
}

Planner::Candidate Planner::make_kernel(const std::vector<const Node*>& nodes, const std::vector<const Value*>& roots,
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

void Planner::commit_kernel(Segment seg, const std::vector<std::pair<const Value*, Placement>>& root_placements) {
  const int index = static_cast<int>(plan_.segments.size());
  for (const auto& [v, p] : root_placements) {
    place(v, p);
    plan_.buffers.push_back({v, p.layout.storage_extent() * dtype_size(v->dtype), index, index});
  }
  for (const Node* n : seg.nodes) kernel_of_[n] = index;
  seg.spec.fusion = seg.fusion.get();
  plan_.segments.push_back(std::move(seg));
}

}  // namespace vf
