// Lowering: a KernelSpec (a pointwise segment with its layouts) to the kernel IR.
#pragma once

#include "codegen/kernel_ir.h"
#include "codegen/kernel_spec.h"

namespace vf {

// One loop nest per distinct output shape. Each output's expression is walked backward from the
// output through the fusion, mapping the loop index through view and movement ops to each
// producer's index; chains of view ops that are pure views of an input buffer (view_algebra.h)
// become loads through the composed layout. Throws InternalError for ops a pointwise kernel
// cannot compute (reductions) and for layouts that do not match the fusion's shapes.
KernelIR lower_kernel(const KernelSpec& spec);

}  // namespace vf
