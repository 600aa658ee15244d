// Reference cumsum: each line along the dim summed in order from 0 in the compute type, every
// element rounded to the dtype once (ir/ir.h).
#include <type_traits>
#include <vector>

#include "base/error.h"
#include "layout/host_tensor.h"
#include "reference/element_access.h"
#include "reference/reference_ops.h"

namespace vf::reference {

HostTensor run_scan(const Node& node, const HostTensor& a) {
  VF_INTERNAL_CHECK(node.op == OpKind::Cumsum, "reference: prims.", op_name(node.op), " is not a scan");
  HostTensor out = HostTensor::empty(a.dtype(), a.shape());
  if (a.numel() == 0) return out;
  // The running sums of every line, kept for the positions before the dim (outer) and after it
  // (inner): element (o, i, n) adds sums[o * inner + n].
  const int64_t dim = a.rank() == 0 ? 0 : node.attr<AxisAttrs>().dim;
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < a.rank(); ++d) inner *= a.shape()[d];
  const int64_t along = a.rank() == 0 ? 1 : a.shape()[dim];
  dispatch_compute(a.dtype(), [&](auto zero) {
    using C = decltype(zero);
    if constexpr (std::is_same_v<C, bool>) {
      VF_INTERNAL_ERROR("reference: prims.cumsum of bool (infer_types rejects it)");
    } else {
      std::vector<C> sums(static_cast<size_t>(a.numel() / along), C{});
      int64_t linear = 0;
      for_each_index(a.shape(), [&](const int64_t* p) {
        const int64_t line = linear / (along * inner) * inner + linear % inner;
        C& sum = sums[static_cast<size_t>(line)];
        sum = static_cast<C>(sum + load<C>(a, p));
        store_as<C>(contiguous_element(out, linear++), out.dtype(), sum);
      });
    }
  });
  return out;
}

}  // namespace vf::reference
