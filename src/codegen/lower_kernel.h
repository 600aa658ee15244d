// Lowering: a KernelSpec (a segment with its layouts) to the kernel IR.
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel_ir.h"
#include "codegen/kernel_spec.h"

namespace vf {

// A segment lowered to the kernel IR of one kernel, or why no one kernel of ours computes it:
// reductions whose reduced extents differ, a reduction read at a position that depends on the
// reduced dims, or an output that has neither the shape of the reductions' input nor of their
// result. The planner splits such segments (segment/plan_fusion.cpp), and keeps the IR of the
// others on their Segment for the backends.
// The most rows a serial nest's team walks in order: a reduction over a split of the last row dim
// into chunks of at most this many rows is lowered as a column reduction (kernel_ir.h, serial
// nests).
inline constexpr int64_t kMaxSerialRows = 64;

struct LoweredKernel {
  KernelIR ir;          // when `problem` is empty
  std::string problem;  // why one kernel cannot compute the segment; empty when one can
  bool ok() const { return problem.empty(); }
};

// A segment without reductions: one loop nest per distinct output shape. Each output's expression
// is walked backward from the output through the fusion, mapping the loop index through view and
// movement ops to each producer's index (layout/index_map.h); chains of view ops that are pure
// views of an input buffer (view_algebra.h) become loads through the composed layout.
// A segment with reductions: one reduction nest (kernel_ir.h) whose rows are the kept dims of its
// first reduction and whose reduced dims are that reduction's reduced dims; var and var_mean
// become two sums (the mean, then the squared deviations from it) in one kernel.
// A segment whose output is a scatter_add or scatter_max: one scatter nest over the index's
// positions, adding (maxing) the source into the output, which the launch fills with the base
// (a full of 0, or of an integer for scatter_max, and a dtype that scatter_accumulates:
// passes/zero_based_scatters.h makes both so).
// InternalError for layouts that do not match the shapes.
LoweredKernel lower_kernel(const KernelSpec& spec);

// Whether scatter kernels of `op` accumulate in dtype (CUDA has atomic adds or maxes of it):
// scatter_add f32, f64, i32, i64; scatter_max i32, i64.
bool scatter_accumulates(OpKind op, DType dtype);

// The names of the inputs that kernel `ir` of `spec` reads only in part: `masked`, operands of a
// where that its loop-index condition discards (a causal mask's scores), read only where the
// condition keeps them; `gathered`, sources of take, take_along_axis and gather, read only where
// the indices say.
struct PartlyRead {
  std::vector<std::string> masked, gathered;
};
PartlyRead partly_read_inputs(const KernelSpec& spec, const KernelIR& ir);

}  // namespace vf
