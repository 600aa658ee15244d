// The planning pipeline: from a fusion and the layouts of its inputs to an execution Plan.
#pragma once

#include <vector>

#include "ir/ir.h"
#include "layout/layout.h"
#include "segment/plan.h"

namespace vf {

// `input_layouts` has one entry per fusion input (an empty Layout for scalar inputs).
Plan plan_fusion(const Fusion& fusion, const std::vector<Layout>& input_layouts, const PlanOptions& options);

// Row-major layouts for every tensor input (empty for scalars): what the command line plans for.
std::vector<Layout> contiguous_input_layouts(const Fusion& fusion);

}  // namespace vf
