// The reference executor: runs a Fusion op by op on host tensors. It defines the semantics.
//
// Plain and obviously correct, never fast: every op reads its inputs through their strides and
// writes a new contiguous tensor, half types are computed in float32 and rounded after each op.
// Every backend and every optimisation is tested against it.
#pragma once

#include <variant>
#include <vector>

#include "base/scalar.h"
#include "ir/ir.h"
#include "layout/host_tensor.h"

namespace vf {

// A fusion argument: a tensor for a tensor input, a number for a scalar input.
using HostArg = std::variant<HostTensor, Scalar>;

// Checks the arguments against the fusion's inputs (count, dtype, shape, scalar kind; UserError
// naming the input otherwise) and returns one new contiguous tensor per fusion output.
std::vector<HostTensor> run_reference(const Fusion& fusion, const std::vector<HostArg>& args);

// Runs a single node on already-computed inputs (used by run_reference and by the runtime's
// fallback path). Returns the node's results, contiguous.
std::vector<HostTensor> run_reference_node(const Node& node, const std::vector<HostArg>& inputs);

}  // namespace vf
