// Reference creation ops: full, iota, and uniform_philox with its counter-based generator.
#include <array>
#include <cstdint>

#include "base/error.h"
#include "reference/element_access.h"
#include "reference/reference_ops.h"

namespace vf::reference {
namespace {

// The Philox counter of a block: the block number in the low 64 bits, the offset in the high.
std::array<uint32_t, 4> counter(uint64_t block, uint64_t offset) {
  return {static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), static_cast<uint32_t>(offset),
          static_cast<uint32_t>(offset >> 32)};
}

}  // namespace

std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> c, uint64_t key) {
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const uint64_t p0 = uint64_t{0xD2511F53u} * c[0], p1 = uint64_t{0xCD9E8D57u} * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0, static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1, static_cast<uint32_t>(p0)};
  }
  return c;
}

HostTensor run_creation(const Node& node, const std::vector<HostArg>& inputs) {
  const Value& result = *node.output();
  HostTensor out = HostTensor::empty(result.dtype, result.shape);
  if (node.op == OpKind::Full) {
    const Scalar& value = node.attr<FullAttrs>().value;
    for (int64_t o = 0; o < out.numel(); ++o) {
      std::byte* p = contiguous_element(out, o);
      if (value.kind == ScalarKind::Float)
        store_as<double>(p, out.dtype(), value.f);
      else
        store_as<int64_t>(p, out.dtype(), value.i);
    }
    return out;
  }
  if (node.op == OpKind::UniformPhilox) {
    const auto& a = node.attr<UniformAttrs>();
    const uint64_t seed = static_cast<uint64_t>(std::get<Scalar>(inputs.at(0)).i);
    const uint64_t offset = static_cast<uint64_t>(std::get<Scalar>(inputs.at(1)).i);
    for (int64_t o = 0; o < out.numel(); ++o) {
      const uint64_t i = static_cast<uint64_t>(o);
      double v;
      if (out.dtype() == DType::Float64) {
        const std::array<uint32_t, 4> w = philox4x32_10(counter(i / 2, offset), seed);
        const uint64_t bits = (uint64_t{w[2 * (i % 2)]} << 32 | w[2 * (i % 2) + 1]) >> 11;
        v = a.minval + (a.maxval - a.minval) * (static_cast<double>(bits) * 0x1p-53);
      } else {  // float32 arithmetic, rounded to the dtype by store_as
        const std::array<uint32_t, 4> w = philox4x32_10(counter(i / 4, offset), seed);
        const float u = static_cast<float>(w[i % 4] >> 8) * 0x1p-24f;
        v = static_cast<float>(a.minval) + (static_cast<float>(a.maxval) - static_cast<float>(a.minval)) * u;
      }
      store_as<double>(contiguous_element(out, o), out.dtype(), v);
    }
    return out;
  }
  VF_INTERNAL_CHECK(node.op == OpKind::Iota, "prims.", op_name(node.op), " is not a creation op");
  const auto& a = node.attr<IotaAttrs>();
  for (int64_t o = 0; o < a.length; ++o) {
    // start + o * step in wrapping int64 arithmetic, then converted to the dtype.
    const auto v = static_cast<int64_t>(static_cast<uint64_t>(a.start) +
                                        static_cast<uint64_t>(o) * static_cast<uint64_t>(a.step));
    store_as<int64_t>(contiguous_element(out, o), out.dtype(), v);
  }
  return out;
}

}  // namespace vf::reference
