// Step 0 of planning: the fusion rewrites that change which ops there are, in order, before the planner sees them.
//
// In order, with the reason for each place:
//  - each scatter_add onto zeros, in a dtype with atomic adds (passes/zero_based_scatters.h):
//    first, because the casts it adds are the next pass's to elide;
//  - with PlanOptions::compact_scatters, a scatter of few rows into many (an embedding's gradient)
//    adds into a row per token and is read back at the rows the ids name
//    (passes/compact_row_scatters.h): right after, because it matches the scatters onto zeros
//    that the first pass makes;
//  - casts to a float dtype and back read the value before them (passes/elide_round_trip_casts.h;
//    those that round only with PlanOptions::elide_round_trips): early, because they only remove
//    nodes and let the kernels see the float32 math the program meant;
//  - the tanh gelu of a matmul's result, or a residual add of it, folds into the call
//    (passes/fuse_matmul_epilogues.h, with PlanOptions::matmul_epilogues): after the round trips
//    are gone, because it matches the float32 ops;
//  - reductions that reduce nothing fold into views or the identity
//    (passes/fold_trivial_reductions.h), and sums of one-hot rows into their one value
//    (passes/fold_one_hot_sums.h; Thunder's cross-entropy backward): so that the splits and the
//    kernels see only real reductions;
//  - ops that compute a value already computed read it instead (passes/merge_duplicate_ops.h):
//    after the passes that make such twins (two casts of one value, once the round trips are
//    gone) and before the splits, which would split each twin;
//  - with PlanOptions::split_reductions (and reductions_in_kernels), a reduction over the leading
//    dims becomes chunks' partials that the rows' kernel computes, and their reduction
//    (passes/split_column_reductions.h), before a reduction of few long rows becomes two
//    (passes/split_reductions.h), which then sees the partials' reduction as one more.
#pragma once

#include "ir/ir.h"
#include "passes/fusion_rewriter.h"
#include "segment/plan.h"

namespace vf {

// The fusion after every rewrite that applies (null when none did) and their notes, in order.
RewrittenFusion rewrite_for_planning(const Fusion& fusion, const PlanOptions& options);

}  // namespace vf
