// The CUDA schedule of a lowered kernel: each nest's kind, packs, tiles or team, and the launch shape.
#pragma once

#include <string_view>

#include "codegen/kernel_ir.h"
#include "codegen/schedule.h"

namespace vf {

// Chooses, in order: the index width (32-bit when every extent, stride and storage span of the
// spec allows it); each reduction nest's team and row schedule; each pointwise nest's kind
// (tiled when a load walks another dim than the output's innermost with unit stride, else a
// vector kind when its buffers allow packs, else the plain loop) with its packs or tiles; the
// launch shape (threads per block, blocks kept resident per multiprocessor, each nest's grain);
// and last the Divider fields of the nests' unravellings, added to the argument block in nest order.
KernelSchedule schedule_cuda(const KernelSpec& spec, const KernelIR& ir);

// Whether the reduction schedule `name` is on: "sliced" (ReductionSchedule::slices), "preload"
// (preloaded and preload_row_values), "prefetch" (prefetch), "async" (async_prefetch), "deep"
// (about four groups of a row a thread in a team, against one in a team four times as wide),
// "warp-rows" (warps: a warp per row of a serial nest), "exact-groups" (a row's groups a thread
// not rounded up to a power of two), and one that planning reads, "compact"
// (PlanOptions::compact_scatters). Each is on unless the environment variable
// VF_DISABLE_SCHEDULES (a comma-separated list, read at each scheduling) names it, the A/B switch
// for measuring them; but "async" is off unless VF_ENABLE_SCHEDULES names it: the model steps'
// kernels took the same time with it (docs/design.md).
bool schedule_enabled(std::string_view name);

}  // namespace vf
