// Reference scatter_add and scatter_max: the sums of what lands on each element, accumulated from 0
// in the compute type in row-major order of the index, then added to a's element; or the largest
// of a's element and what lands on it (ir/ir.h).
#include <type_traits>
#include <vector>

#include "base/error.h"
#include "layout/host_tensor.h"
#include "reference/element_access.h"
#include "reference/reference_ops.h"

namespace vf::reference {

HostTensor run_scatter(const Node& node, const std::vector<HostArg>& inputs) {
  VF_INTERNAL_CHECK(op_category(node.op) == OpCategory::Scatter, "reference: prims.", op_name(node.op),
                    " is not a scatter");
  const bool max = node.op == OpKind::ScatterMax;
  const HostTensor& a = std::get<HostTensor>(inputs.at(0));
  const HostTensor& index = std::get<HostTensor>(inputs.at(1));
  const HostTensor& src = std::get<HostTensor>(inputs.at(2));
  const int64_t dim = node.attr<AxisAttrs>().dim, size = a.shape().at(static_cast<size_t>(dim));
  HostTensor out = HostTensor::empty(a.dtype(), a.shape());
  dispatch_compute(a.dtype(), [&](auto zero) {
    using C = decltype(zero);
    if constexpr (std::is_same_v<C, bool>) {
      VF_INTERNAL_ERROR("reference: prims.", op_name(node.op), " of bool (infer_types rejects it)");
    } else {
    // Per element: the sum of what lands on it, or (scatter_max) the largest, where `hit` says
    // something did.
    std::vector<C> sums(static_cast<size_t>(a.numel()), C{});
    std::vector<bool> hit(max ? sums.size() : 0, false);
    std::vector<int64_t> target(static_cast<size_t>(a.rank()));
    for_each_index(index.shape(), [&](const int64_t* p) {
      const int64_t at = index.get_int64(p);
      VF_USER_CHECK(at >= 0 && at < size, "prims.", op_name(node.op), " ", node.output()->name, ": index ", at,
                    " is out of range for dim ", dim, " of size ", size, " of ", node.inputs[0]->name, " ",
                    node.inputs[0]->type_string(), " (at index element ",
                    shape_to_string(Shape(p, p + index.rank())), ")");
      int64_t linear = 0;
      for (int64_t d = 0; d < a.rank(); ++d) linear = linear * a.shape()[d] + (d == dim ? at : p[d]);
      const auto k = static_cast<size_t>(linear);
      const C v = load<C>(src, p);
      if (!max) {
        sums[k] += v;
      } else if (!hit[k] || v > sums[k]) {
        sums[k] = v;
        hit[k] = true;
      }
    });
    int64_t linear = 0;
    for_each_index(a.shape(), [&](const int64_t* e) {
      const auto k = static_cast<size_t>(linear);
      const C base = load<C>(a, e);
      const C result = !max ? static_cast<C>(base + sums[k]) : hit[k] && sums[k] > base ? sums[k] : base;
      store_as<C>(contiguous_element(out, linear++), out.dtype(), result);
    });
    }
  });
  return out;
}

}  // namespace vf::reference
