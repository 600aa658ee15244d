// Prints a Fusion as a Thunder prims trace that the trace reader reads back (round trip).
#pragma once

#include <string>
#include <string_view>

#include "ir/ir.h"

namespace vf {

// Writes `def NAME(inputs):`, one `# x: "cpu f32[...]"` line per tensor input, one
// `t = prims.op(...)  # t: "cpu f32[...]"` line per node, and `return (...)`.
std::string print_trace(const Fusion& fusion, std::string_view function_name = "computation");

}  // namespace vf
