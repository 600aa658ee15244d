// Lowering: a KernelSpec (a segment with its layouts) to the kernel IR.
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "codegen/kernel_ir.h"
#include "codegen/kernel_spec.h"

namespace vf {

// A segment whose structure no kernel of ours computes: reductions whose reduced extents differ,
// a reduction read at a position that depends on the reduced dims, or an output that has neither
// the shape of the reductions' input nor of their result. The planner splits such segments
// (kernel_form_problem), so this escaping to a user is an internal error.
class UnsupportedKernel : public InternalError {
 public:
  using InternalError::InternalError;
};

// A segment without reductions: one loop nest per distinct output shape. Each output's expression
// is walked backward from the output through the fusion, mapping the loop index through view and
// movement ops to each producer's index; chains of view ops that are pure views of an input buffer
// (view_algebra.h) become loads through the composed layout.
// A segment with reductions: one reduction nest (kernel_ir.h) whose rows are the kept dims of its
// first reduction and whose reduced dims are that reduction's reduced dims; var and var_mean
// become two sums (the mean, then the squared deviations from it) in one kernel.
// Throws UnsupportedKernel as above, InternalError for layouts that do not match the shapes.
KernelIR lower_kernel(const KernelSpec& spec);

// Why lower_kernel cannot compute the segment (the UnsupportedKernel message), or "" when it can.
std::string kernel_form_problem(const KernelSpec& spec);

// The names of the inputs that the kernel reads only in part: the operand of a where that its
// loop-index condition discards (a causal mask's scores) is read only where the condition keeps
// it. Empty when there are none or lower_kernel cannot compute the segment.
std::vector<std::string> partly_read_inputs(const KernelSpec& spec);

}  // namespace vf
