// Reference view and movement ops: each output element is copied from the input element that the
// op's index map (layout/index_map.h, over plain integers) gives, or is the padding value. View ops
// copy too; aliasing is decided elsewhere.
#include <algorithm>
#include <cstring>
#include <optional>

#include "base/error.h"
#include "layout/index_map.h"
#include "reference/element_access.h"
#include "reference/reference_ops.h"

namespace vf::reference {
namespace {

const HostTensor& tensor_arg(const std::vector<HostArg>& inputs, size_t i) {
  VF_INTERNAL_CHECK(i < inputs.size() && std::holds_alternative<HostTensor>(inputs[i]),
                    "reference: argument ", i, " must be a tensor");
  return std::get<HostTensor>(inputs[i]);
}

// Copies each output element from the input element that `map(out_index)` gives: an index into
// `in`, or (pad) nullopt for the padding element `fill`.
template <typename Map>
void gather_copy(const HostTensor& in, const HostTensor& out, const std::byte* fill, Map&& map) {
  const int64_t size = dtype_size(out.dtype());
  std::vector<int64_t> out_index(static_cast<size_t>(out.rank()));
  int64_t linear = 0;
  for_each_index(out.shape(), [&](const int64_t* o) {
    std::copy(o, o + out.rank(), out_index.begin());
    std::byte* dst = contiguous_element(out, linear++);
    const std::optional<std::vector<int64_t>> in_index = map(out_index);
    if (in_index) {
      std::memcpy(dst, in.element(in_index->data()), size);
    } else {
      VF_INTERNAL_CHECK(fill != nullptr, "reference: an output element has no source");
      std::memcpy(dst, fill, size);
    }
  });
}

// The view ops and flip: one input element per output element (layout/index_map.h).
HostTensor one_to_one(const Node& node, const HostTensor& in, const HostTensor& out) {
  IntIndices ints;
  gather_copy(in, out, nullptr, [&](const std::vector<int64_t>& o) -> std::optional<std::vector<int64_t>> {
    return one_to_one_index(ints, node, o);
  });
  return out;
}

HostTensor pad(const Node& node, const HostTensor& in, const Scalar& value, const HostTensor& out) {
  std::byte fill[8] = {};
  dispatch_compute(in.dtype(), [&](auto tag) {
    using C = decltype(tag);
    store_as<C>(fill, in.dtype(), scalar_as<C>(value, in.dtype()));
  });
  IntIndices ints;
  gather_copy(in, out, fill, [&](const std::vector<int64_t>& o) -> std::optional<std::vector<int64_t>> {
    PadIndex<IntIndices> p = pad_index(ints, node, o);
    if (!p.valid) return std::nullopt;
    return std::move(p.index);
  });
  return out;
}

HostTensor cat(const Node& node, const std::vector<HostArg>& inputs, const HostTensor& out) {
  const int64_t size = dtype_size(out.dtype());
  IntIndices ints;
  std::vector<int64_t> out_index(static_cast<size_t>(out.rank()));
  int64_t linear = 0;
  for_each_index(out.shape(), [&](const int64_t* o) {
    std::copy(o, o + out.rank(), out_index.begin());
    std::byte* dst = contiguous_element(out, linear++);
    int sources = 0;
    cat_index(ints, node, out_index, [&](size_t k, bool in_range, const std::vector<int64_t>& in_index) {
      if (!in_range) return;
      std::memcpy(dst, tensor_arg(inputs, k).element(in_index.data()), size);
      ++sources;
    });
    VF_INTERNAL_CHECK(sources == 1, "reference: cat element from ", sources, " inputs");
  });
  return out;
}

// take, take_along_axis, gather: each output element copies the source element its index names.
HostTensor gather(const Node& node, const HostTensor& in, const HostTensor& index, const HostTensor& out) {
  const int64_t dim = node.attr<AxisAttrs>().dim, size = in.shape().at(static_cast<size_t>(dim));
  gather_copy(in, out, nullptr, [&](const std::vector<int64_t>& o) -> std::optional<std::vector<int64_t>> {
    const int64_t at = index.get_int64(index_operand_index(node, o).data());
    VF_USER_CHECK(at >= 0 && at < size, "prims.", op_name(node.op), " ", node.output()->name, ": index ", at,
                  " is out of range for dim ", dim, " of size ", size, " of ", node.inputs[0]->name, " ",
                  node.inputs[0]->type_string(), " (at output element ", shape_to_string(o), ")");
    return gathered_index(node, o, at);
  });
  return out;
}

}  // namespace

HostTensor run_movement(const Node& node, const std::vector<HostArg>& inputs) {
  const Value& result = *node.output();
  HostTensor out = HostTensor::empty(result.dtype, result.shape);
  switch (node.op) {
    case OpKind::Transpose: case OpKind::Reshape: case OpKind::BroadcastInDim: case OpKind::SlicePrim:
    case OpKind::Squeeze: case OpKind::Flip:
      return one_to_one(node, tensor_arg(inputs, 0), out);
    case OpKind::Pad:
      VF_INTERNAL_CHECK(inputs.size() == 2 && std::holds_alternative<Scalar>(inputs[1]),
                        "reference: pad needs a scalar padding value");
      return pad(node, tensor_arg(inputs, 0), std::get<Scalar>(inputs[1]), out);
    case OpKind::Cat: return cat(node, inputs, out);
    case OpKind::Take: case OpKind::TakeAlongAxis: case OpKind::Gather:
      return gather(node, tensor_arg(inputs, 0), tensor_arg(inputs, 1), out);
    default: VF_INTERNAL_ERROR("prims.", op_name(node.op), " is not a view or movement op");
  }
}

}  // namespace vf::reference
