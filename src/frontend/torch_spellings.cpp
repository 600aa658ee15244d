#include "frontend/torch_spellings.h"

#include "base/error.h"

namespace vf {

BroadcastAttrs expand_as_broadcast(const Shape& input, const Shape& sizes) {
  const int64_t rank = static_cast<int64_t>(input.size());
  const int64_t out_rank = static_cast<int64_t>(sizes.size());
  VF_USER_CHECK(out_rank >= rank, "Tensor.expand: the number of sizes ", shape_to_string(sizes),
                " must be at least the tensor's rank ", rank, " (shape ", shape_to_string(input), ")");
  BroadcastAttrs a;
  a.shape = sizes;
  const int64_t lead = out_rank - rank;
  for (int64_t i = 0; i < out_rank; ++i) {
    if (i < lead) {
      VF_USER_CHECK(sizes[i] >= 0, "Tensor.expand: new leading dim ", i, " cannot be ", sizes[i]);
      continue;
    }
    int64_t in = input[i - lead];
    if (sizes[i] == -1) a.shape[i] = in;
    VF_USER_CHECK(in == 1 || in == a.shape[i], "Tensor.expand: dim ", i - lead, " of size ", in,
                  " cannot expand to ", sizes[i], " (shape ", shape_to_string(input), " to ",
                  shape_to_string(sizes), ")");
    a.broadcast_dims.push_back(i);
  }
  return a;
}

BroadcastAttrs unsqueeze_as_broadcast(const Shape& input, int64_t dim) {
  const int64_t rank = static_cast<int64_t>(input.size());
  VF_USER_CHECK(dim >= -rank - 1 && dim <= rank, "torch.unsqueeze: dim ", dim,
                " is out of range for a tensor of rank ", rank);
  if (dim < 0) dim += rank + 1;
  BroadcastAttrs a;
  for (int64_t i = 0, j = 0; i <= rank; ++i) {
    if (i == dim) {
      a.shape.push_back(1);
      continue;
    }
    a.shape.push_back(input[j++]);
    a.broadcast_dims.push_back(i);
  }
  return a;
}

}  // namespace vf
