// Seeded random inputs for a fusion, made from its input types.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/ir.h"
#include "reference/reference_executor.h"

namespace vf {

// Normal floats (mean 0, stddev 1), integers in [-8, 8] ([0, 16] for uint8), both booleans,
// scalars from the same distributions; an integer input that a take or gather reads as its index
// (directly or through view ops and casts) in [0, n), n the smallest size of the dims it indexes.
// The same seed gives the same values.
std::vector<HostArg> random_inputs(const Fusion& fusion, uint64_t seed);
HostTensor random_tensor(DType dtype, const Shape& shape, uint64_t seed);

}  // namespace vf
