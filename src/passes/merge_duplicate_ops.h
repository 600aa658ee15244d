// Merges the ops that compute the same value twice: one node per op, operands and attributes.
//
// Two nodes with the same op, the same operands (the same values, or literal scalars of the same
// kind and bits: -0.0 is not 0.0) and equal attributes compute the same tensor, by the IR's
// definition of every op (uniform_philox included: the same seed and offset give the same values).
// The later one's results become the earlier one's, so a kernel computes the value once and a
// fusion that returns it twice returns one buffer twice. Nodes are looked at in program order on
// the rewritten operands, so a chain of duplicates merges whole.
//
// Thunder's backward traces compute some values more than once: casting one bf16 input to float32
// in two places, and the residual gradient of a layer norm returned once for each of the two paths
// that read it (nanoGPT's norm backward then writes its 12 MiB twice).
#pragma once

#include "ir/ir.h"
#include "passes/fusion_rewriter.h"

namespace vf {

RewrittenFusion merge_duplicate_ops(const Fusion& fusion);

}  // namespace vf
