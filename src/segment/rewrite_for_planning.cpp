#include "segment/rewrite_for_planning.h"

#include "codegen/schedule_cuda.h"
#include "passes/compact_row_scatters.h"
#include "passes/elide_round_trip_casts.h"
#include "passes/fold_one_hot_sums.h"
#include "passes/fold_trivial_reductions.h"
#include "passes/fuse_matmul_epilogues.h"
#include "passes/merge_duplicate_ops.h"
#include "passes/split_column_reductions.h"
#include "passes/split_reductions.h"
#include "passes/zero_based_scatters.h"

namespace vf {

RewrittenFusion rewrite_for_planning(const Fusion& fusion, const PlanOptions& options) {
  RewrittenFusion result;
  auto apply = [&](auto pass) {
    RewrittenFusion r = pass(result.fusion ? *result.fusion : fusion);
    if (!r.fusion) return;
    result.fusion = std::move(r.fusion);
    result.notes.insert(result.notes.end(), r.notes.begin(), r.notes.end());
  };
  apply(zero_based_scatters);
  if (options.compact_scatters && schedule_enabled("compact")) apply(compact_row_scatters);
  apply([&](const Fusion& f) { return elide_round_trip_casts(f, options.elide_round_trips); });
  if (options.matmul_epilogues) apply(fuse_matmul_epilogues);
  apply(fold_trivial_reductions);
  apply(fold_one_hot_sums);
  apply(merge_duplicate_ops);
  if (options.split_reductions && options.reductions_in_kernels) {
    apply([&](const Fusion& f) { return split_column_reductions(f, options.column_chunks); });
    apply(split_long_reductions);
  }
  return result;
}

}  // namespace vf
