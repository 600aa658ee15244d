// The CPU schedule of a lowered kernel: each nest a loop over its work items, 64-bit index math.
#pragma once

#include "codegen/kernel_ir.h"
#include "codegen/schedule.h"

namespace vf {

// The work items [0, LaunchBlock::cpu_extent) are the points of every nest, nest after nest (a
// reduction nest's rows); the backend splits them across its threads. A flat nest walks element
// positions, another unravels its first point and carries into outer dims; a reduction nest
// reduces one row per work item (a team of one).
KernelSchedule schedule_cpu(const KernelIR& ir);

}  // namespace vf
