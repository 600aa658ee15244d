// The entry name of a kernel: what it does, so that a profile says which fusion a kernel is.
#pragma once

#include <string>

#include "codegen/kernel_ir.h"
#include "ir/ir.h"

namespace vf {

// "vf_<kind>_<ops>": kind is `reduction` (a nest reducing the innermost dim), `outer_reduction`
// (a nest reducing outer dims only), `column_reduction` (a serial nest: chunks of rows, column
// partials beside any row reductions) or `pointwise`, from the lowered IR; ops are the first
// kMaxNamedOps distinct ops of the segment's fusion in program order, leaving out view and
// conversion ops (`copy` when nothing else is left). The same segment gets the same name on
// every target, so explain prints the name the profiler shows.
inline constexpr int kMaxNamedOps = 6;
std::string kernel_name(const Fusion& segment, const KernelIR& ir);

}  // namespace vf
