// Torch-level spellings of view ops (permute, reshape with -1, expand, unsqueeze, flatten) as prims.
#pragma once

#include <vector>

#include "ir/ir.h"

namespace vf {

// Tensor.expand(sizes): -1 keeps a dim; new leading dims are allowed. Throws UserError.
BroadcastAttrs expand_as_broadcast(const Shape& input, const Shape& sizes);
// torch.unsqueeze(t, dim), dim in [-rank-1, rank].
BroadcastAttrs unsqueeze_as_broadcast(const Shape& input, int64_t dim);

}  // namespace vf
