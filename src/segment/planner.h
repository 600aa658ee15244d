// The planner of plan_fusion.h: its state, and its steps as member functions, defined by step in
// plan_fusion.cpp (the pipeline, whose comment gives the order), plan_ordered_ops.cpp (step 2b:
// scatters, scans and library calls) and plan_kernels.cpp (the kernels of steps 2b and 5).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "analysis/alias_analysis.h"
#include "ir/ir.h"
#include "passes/bookend.h"
#include "segment/plan.h"

namespace vf {

class Planner {
 public:
  Planner(const Fusion& fusion, const std::vector<Layout>& input_layouts, const PlanOptions& options);
  Plan run();

 private:
  static bool is_empty_value(const Value* v) { return v->is_tensor && v->numel() == 0; }
  // Each element of the buffer read once: the product of the sizes of the dims that advance.
  static int64_t distinct_bytes(const Value* v, const Layout& l) {
    int64_t n = 1;
    for (int64_t i = 0; i < l.rank(); ++i)
      if (l.strides[i] != 0) n *= l.sizes[i];
    return l.numel() == 0 ? 0 : n * dtype_size(v->dtype);
  }
  void place(const Value* v, Placement p) { plan_.placement[v->id] = std::move(p); }
  const Placement* placement(const Value* v) const {
    const Placement& p = plan_.placement[v->id];
    return p.storage ? &p : nullptr;
  }
  bool group_has(const Node* n) const { return n && in_group_[n->id]; }
  void decide(const Node* n, ViewDecision d, std::string reason) {
    plan_.view_ops.push_back({n, d, std::move(reason)});
  }

  // ---- The pipeline's steps (plan_fusion.cpp) ----

  // Bookend's eager step: a view where the view algebra allows, else a copy kernel.
  void eager_view(const Node& n);

  // The alias analysis of the fusion seeded with every value placed so far.
  AliasAnalysis aliases_of_placed() const;

  // Places v, an alias of placed storage, and the chain of view ops leading to it as layout
  // arithmetic in the pending alias segment; adds the chain's nodes to `nodes`.
  void place_view_chain(const Value* v, const AliasAnalysis& aliases, std::unordered_set<const Node*>& nodes);

  // The pending alias segment, holding `nodes` in program order.
  void flush_alias_segment(const std::unordered_set<const Node*>& nodes);
  void flush_alias_segment();  // the pending alias segment as it is, if it places anything

  // Steps 3 to 5 on the nodes no bookend step took.
  void plan_fused(const BookendSplit& split);

  // What became of each view op of the fused part (bookend's ops are decided as they run).
  void decide_fused_views(const std::vector<const Node*>& kernel_nodes, const AliasAnalysis& aliases,
                          const std::unordered_set<const Node*>& alias_nodes, const std::vector<bool>& in_group);

  // Whether every node feeding n inside the kernel is a view op (the kernel only moves data).
  static bool only_views_above(const Node* n, const std::vector<const Node*>& kernel_nodes);

  // Each fusion output's placement: its own buffer, or an alias of an input or another output.
  void plan_outputs();

  // ---- Step 2b: scatters, scans and library calls (plan_ordered_ops.cpp) ----

  // Step 2b: a kernel per scatter or scan that `needed` depends on, in program order, whose result
  // is a buffer of its own: it is complete only when its kernel ends. The values its operands need
  // are computed in that kernel (they fuse), or, when one kernel cannot (a reduction among them),
  // the operands that need the reduction are written first by kernels of their own, each as the
  // narrowest value down its chain of views and casts (the bf16 gradient rows an embedding's
  // backward adds, not their float32 copy; never an index spread over them), together with the
  // results of their reductions that later kernels read (add_kernel_sharing_reductions).
  void plan_ordered_ops(const std::vector<const Value*>& needed);

  // Step 2b for a matmul: a library segment of its own, its result a dense buffer in the order
  // matmul_result_layout gives. An operand that is a view of placed storage whose matrices are
  // row- or column-major (layout/strided_gemm.h) is passed with its layout (an alias segment places
  // it first); any other is written first, contiguous, by the kernels of step 5's rules. A fusion
  // input is read as it comes.
  void plan_library_call(const Node* n);

  // Adds to the operands `call` writes first those of later matmuls that the same kernel computes,
  // by elementwise ops and views, from tensors of which it reads at least one anyway (a SiLU-gated
  // MLP's backward: the gate's activation times the up projection for one weight's gradient, times
  // the incoming gradient for another's): the shared tensors read once rather than once a call.
  void add_later_operands(const Node* call, const AliasAnalysis& aliases, std::vector<const Value*>& written,
                          std::vector<std::pair<const Value*, Placement>>& placements);

  // ---- Kernels (plan_kernels.cpp) ----

  // Reductions that share a kernel, the results they write, and why they are not in an earlier one.
  struct ReductionGroup {
    std::vector<const Node*> reductions;
    std::vector<std::pair<const Value*, Placement>> results;
    std::string why;
    std::vector<const Node*> waited_for;  // the reductions whose kernels it waited for
  };

  // A kernel segment lowered (or a host segment), or why one kernel cannot compute it.
  struct Candidate {
    Segment segment;
    std::string problem;
  };

  // The nodes of the fused part that `roots` need and that are not placed yet, in program order.
  std::vector<const Node*> nodes_for(const std::vector<const Value*>& roots) const;

  // Step 5's kernels for `nodes` writing `roots`: one when the lowering can make one. Otherwise
  // the reductions go into as few kernels as it can make (grouped below), each kernel also
  // writing the roots it can compute, and a last kernel computes the roots left.
  void add_kernels(const std::vector<const Node*>& nodes, const std::vector<const Value*>& roots,
                   const std::vector<std::pair<const Value*, Placement>>& root_placements);

  // One kernel for `nodes` that also writes the results of its reductions that nodes of the fused
  // part outside `nodes` read (a scatter's or a matmul's operands are written first, and the
  // kernels after them need the same row statistics): then those kernels read them rather than
  // computing them again. It also computes, in the same pass, the other reductions that later
  // kernels need and that read a tensor `nodes` read (the partials of a norm weight's gradient
  // beside an embedding gradient's source rows), where one kernel can: then no later kernel reads
  // those tensors again; and it writes the carried_values. False, committing nothing, when there
  // is nothing to add or one kernel cannot write `roots` and what its reductions share.
  bool add_kernel_sharing_reductions(const std::vector<const Node*>& nodes, const std::vector<const Value*>& roots,
                                     const std::vector<std::pair<const Value*, Placement>>& root_placements);

  // Whether kernels come after one of `in_nodes`: some live node of the fused part outside it is
  // not placed yet.
  bool kernels_after(const std::unordered_set<const Node*>& in_nodes) const;

  // The values a kernel of `nodes` (which reads `reads` and writes `written`) also writes for the
  // kernels after it, where some come: those it computes that the fused part returns (a forward's
  // saved statistics and residual sums, else computed again at the end), possibly with a few more
  // elementwise ops that read nothing new (the bf16 copy of a residual sum whose float value an
  // operand needs); and those later kernels read where computing one again would read more than
  // twice its bytes (writing it once and reading it back: a residual stream's gradient between two
  // matmuls, which each later kernel would otherwise compute from every layer's tensors before it;
  // views and casts of placed storage read what they are). A value widened from a narrower one
  // `nodes` compute is carried as that one (a bf16 residual rather than its float32 copy), which
  // the later kernel widens as it reads. A returned view is carried as its source.
  std::vector<const Value*> carried_values(const std::vector<const Node*>& nodes,
                                           const std::unordered_set<const Node*>& in_nodes,
                                           const std::unordered_set<const Value*>& reads,
                                           const std::vector<const Value*>& written) const;

  // Whether a node of the fused part outside `nodes` that an output needs reads v: through the ops
  // of `nodes`, short of the `roots` they write.
  bool read_after(const Value* v, const std::unordered_set<const Node*>& nodes,
                  const std::vector<const Value*>& roots) const;

  // Whether a live node of the fused part outside `nodes`, not placed yet, reads v.
  bool read_outside(const Value* v, const std::unordered_set<const Node*>& nodes) const;

  // The bytes a kernel computing v anew reads: each placed tensor its unplaced ops read, once.
  int64_t recompute_bytes(const Value* v) const;

  // The reductions of the fused part whose results g's operands need and that are not placed yet,
  // g's own excepted.
  std::vector<const Node*> unplaced_reductions(const ReductionGroup& g) const;

  // Why one kernel cannot write `results` ("" when it can).
  std::string try_kernel(const std::vector<std::pair<const Value*, Placement>>& results) const;

  // Commits g's kernel, with the roots not placed yet that it can also write; of its reductions'
  // other results, those that the roots left or the `later` reductions need.
  void commit_group(const ReductionGroup& g, const std::vector<const Node*>& later,
                    const std::vector<const Value*>& roots,
                    const std::vector<std::pair<const Value*, Placement>>& root_placements);

  // The one kernel of `nodes` writing `roots` (an internal error where the lowering cannot make it).
  void add_kernel(const std::vector<const Node*>& nodes, const std::vector<const Value*>& roots,
                  const std::vector<std::pair<const Value*, Placement>>& root_placements);

  // A kernel (or host) segment computing `roots` from `nodes`, whose inputs are placed. A kernel
  // segment is lowered here, once: its Segment keeps the kernel IR for the backends.
  Candidate make_kernel(const std::vector<const Node*>& nodes, const std::vector<const Value*>& roots,
                        const std::vector<std::pair<const Value*, Placement>>& root_placements) const;

  // Appends the segment, places what it writes and plans its buffers.
  void commit_kernel(Segment seg, const std::vector<std::pair<const Value*, Placement>>& root_placements);

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

}  // namespace vf
