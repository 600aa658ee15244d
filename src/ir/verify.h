// The IR verifier: checks a Fusion's structural invariants; a failure is an internal error.
#pragma once

#include "ir/ir.h"

namespace vf {

// Checks SSA and topological order, use lists, unique names, outputs being defined, and that
// every node's result types are what infer_types gives. Throws InternalError naming the node.
void verify_fusion(const Fusion& fusion);

}  // namespace vf
