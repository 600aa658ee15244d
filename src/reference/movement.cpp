// Reference view and movement ops: each output element is copied from the input element its index
// maps to (or is the padding value). View ops copy too; aliasing is decided elsewhere.
#include <cstring>

#include "base/error.h"
#include "reference/element_access.h"
#include "reference/reference_ops.h"

namespace vf::reference {
namespace {

const HostTensor& tensor_arg(const std::vector<HostArg>& inputs, size_t i) {
  VF_INTERNAL_CHECK(i < inputs.size() && std::holds_alternative<HostTensor>(inputs[i]),
                    "reference: argument ", i, " must be a tensor");
  return std::get<HostTensor>(inputs[i]);
}

// For every output index, source(out_index, in_index) fills in_index and returns whether the
// element comes from the input; when it does not, the element is `fill` (which must be given).
template <typename Source>
void gather_copy(const HostTensor& in, const HostTensor& out, const std::byte* fill, Source&& source) {
  const int64_t size = dtype_size(out.dtype());
  std::vector<int64_t> in_index(static_cast<size_t>(in.rank()) + 1, 0);  // +1: never empty
  int64_t linear = 0;
  for_each_index(out.shape(), [&](const int64_t* out_index) {
    std::byte* dst = contiguous_element(out, linear++);
    if (source(out_index, in_index.data())) {
      std::memcpy(dst, in.element(in_index.data()), size);
    } else {
      VF_INTERNAL_CHECK(fill != nullptr, "reference: an output element has no source");
      std::memcpy(dst, fill, size);
    }
  });
}

HostTensor transpose(const Node& node, const HostTensor& in, const HostTensor& out) {
  const auto& perm = node.attr<PermuteAttrs>().permutation;
  gather_copy(in, out, nullptr, [&](const int64_t* o, int64_t* i) {
    for (size_t k = 0; k < perm.size(); ++k) i[perm[k]] = o[k];
    return true;
  });
  return out;
}

// Reads the input in row-major order and writes the output in row-major order.
HostTensor reshape(const HostTensor& in, const HostTensor& out) {
  const int64_t size = dtype_size(in.dtype());
  int64_t linear = 0;
  for_each_index(in.shape(), [&](const int64_t* index) {
    std::memcpy(contiguous_element(out, linear++), in.element(index), size);
  });
  return out;
}

HostTensor broadcast_in_dim(const Node& node, const HostTensor& in, const HostTensor& out) {
  const auto& dims = node.attr<BroadcastAttrs>().broadcast_dims;
  const Shape& in_shape = in.shape();
  gather_copy(in, out, nullptr, [&](const int64_t* o, int64_t* i) {
    for (size_t k = 0; k < dims.size(); ++k) i[k] = in_shape[k] == 1 ? 0 : o[dims[k]];
    return true;
  });
  return out;
}

HostTensor slice(const Node& node, const HostTensor& in, const HostTensor& out) {
  const auto& a = node.attr<SliceAttrs>();
  gather_copy(in, out, nullptr, [&](const int64_t* o, int64_t* i) {
    for (size_t k = 0; k < a.start.size(); ++k) i[k] = a.start[k] + o[k] * a.step[k];
    return true;
  });
  return out;
}

HostTensor squeeze(const Node& node, const HostTensor& in, const HostTensor& out) {
  const auto& dims = node.attr<DimsAttrs>().dims;  // sorted, canonical
  gather_copy(in, out, nullptr, [&](const int64_t* o, int64_t* i) {
    size_t next_squeezed = 0;
    int64_t k_out = 0;
    for (int64_t k = 0; k < in.rank(); ++k) {
      if (next_squeezed < dims.size() && dims[next_squeezed] == k) {
        i[k] = 0;
        ++next_squeezed;
      } else {
        i[k] = o[k_out++];
      }
    }
    return true;
  });
  return out;
}

HostTensor flip(const Node& node, const HostTensor& in, const HostTensor& out) {
  std::vector<bool> flipped(static_cast<size_t>(in.rank()), false);
  for (int64_t d : node.attr<DimsAttrs>().dims) flipped[d] = true;
  const Shape& shape = in.shape();
  gather_copy(in, out, nullptr, [&](const int64_t* o, int64_t* i) {
    for (int64_t k = 0; k < in.rank(); ++k) i[k] = flipped[k] ? shape[k] - 1 - o[k] : o[k];
    return true;
  });
  return out;
}

// Output position p along a dim maps to input (p - lo) / (interior + 1) when that divides evenly
// and lands inside the input; negative lo and hi crop.
HostTensor pad(const Node& node, const HostTensor& in, const Scalar& value, const HostTensor& out) {
  const auto& config = node.attr<PadAttrs>().config;
  std::byte fill[8] = {};
  dispatch_compute(in.dtype(), [&](auto tag) {
    using C = decltype(tag);
    store_as<C>(fill, in.dtype(), scalar_as<C>(value, in.dtype()));
  });
  const Shape& shape = in.shape();
  gather_copy(in, out, fill, [&](const int64_t* o, int64_t* i) {
    for (size_t k = 0; k < config.size(); ++k) {
      const int64_t p = o[k] - config[k].lo;
      const int64_t step = config[k].interior + 1;
      if (p < 0 || p % step != 0 || p / step >= shape[k]) return false;
      i[k] = p / step;
    }
    return true;
  });
  return out;
}

HostTensor cat(const Node& node, const std::vector<HostArg>& inputs, const HostTensor& out) {
  const int64_t dim = node.attr<CatAttrs>().dim;
  const int64_t size = dtype_size(out.dtype());
  std::vector<int64_t> starts;  // offset of each input along dim
  int64_t offset = 0;
  for (size_t t = 0; t < inputs.size(); ++t) {
    starts.push_back(offset);
    offset += tensor_arg(inputs, t).shape()[dim];
  }
  std::vector<int64_t> in_index(static_cast<size_t>(out.rank()), 0);
  int64_t linear = 0;
  for_each_index(out.shape(), [&](const int64_t* o) {
    // The last input whose range starts at or before o[dim] and is not empty holds it.
    size_t t = inputs.size() - 1;
    while (starts[t] > o[dim] || tensor_arg(inputs, t).shape()[dim] == 0) --t;
    for (int64_t k = 0; k < out.rank(); ++k) in_index[k] = o[k];
    in_index[dim] = o[dim] - starts[t];
    std::memcpy(contiguous_element(out, linear++), tensor_arg(inputs, t).element(in_index.data()), size);
  });
  return out;
}

}  // namespace

HostTensor run_movement(const Node& node, const std::vector<HostArg>& inputs) {
  const Value& result = *node.output();
  HostTensor out = HostTensor::empty(result.dtype, result.shape);
  switch (node.op) {
    case OpKind::Transpose: return transpose(node, tensor_arg(inputs, 0), out);
    case OpKind::Reshape: return reshape(tensor_arg(inputs, 0), out);
    case OpKind::BroadcastInDim: return broadcast_in_dim(node, tensor_arg(inputs, 0), out);
    case OpKind::SlicePrim: return slice(node, tensor_arg(inputs, 0), out);
    case OpKind::Squeeze: return squeeze(node, tensor_arg(inputs, 0), out);
    case OpKind::Flip: return flip(node, tensor_arg(inputs, 0), out);
    case OpKind::Pad:
      VF_INTERNAL_CHECK(inputs.size() == 2 && std::holds_alternative<Scalar>(inputs[1]),
                        "reference: pad needs a scalar padding value");
      return pad(node, tensor_arg(inputs, 0), std::get<Scalar>(inputs[1]), out);
    case OpKind::Cat: return cat(node, inputs, out);
    default: VF_INTERNAL_ERROR("prims.", op_name(node.op), " is not a view or movement op");
  }
}

}  // namespace vf::reference
