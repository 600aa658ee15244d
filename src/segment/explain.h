// `explain`: a plan as a table for people and as JSON for tools.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "segment/plan.h"

namespace vf {

// The readable report: reductions split in two stages, segments, what each view op became and
// why, outputs, bytes and memory. `fusion` is the one planned (Plan::planned says which fusion the
// plan's values belong to when planning rewrote it).
std::string explain_text(const Fusion& fusion, const Plan& plan);

// {"bookend", "kernels", "allocated_bytes", "peak_bytes", "outputs": [{name, shape, strides,
// dtype, alias_of}], "segments": [{kind, ops, bytes_read, bytes_written, note}], "view_ops": [{name,
// op, decision, reason}]}, and "split_reductions": [line, ...] when planning split any. Shapes and
// strides in elements.
nlohmann::json explain_json(const Fusion& fusion, const Plan& plan);

}  // namespace vf
