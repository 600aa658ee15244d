// Reference matmul: torch.matmul's shapes, each element's K products summed in order from 0 in
// float32 (float64 for f64), plus the bias when there is one, and rounded to the dtype once (ir/ir.h).
// matmul_gelu also rounds the tanh gelu of that sum; matmul_add adds c's element before the bias.
#include <algorithm>
#include <cmath>
#include <vector>

#include "base/error.h"
#include "layout/host_tensor.h"
#include "reference/element_access.h"
#include "reference/reference_ops.h"

namespace vf::reference {

namespace {

// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), in the order Thunder's decomposition computes it.
template <class C>
C gelu_tanh(C x) {
  const C inner = x + C(0.044715) * (x * x * x);
  return C(0.5) * x * (C(1) + std::tanh(C(0.7978845608028654) * inner));
}

}  // namespace

std::vector<HostTensor> run_matmul(const Node& node, const std::vector<HostArg>& inputs) {
  VF_INTERNAL_CHECK(op_category(node.op) == OpCategory::Contraction, "reference: prims.", op_name(node.op),
                    " is not a matmul");
  const bool gelu = node.op == OpKind::MatmulGelu;
  auto operand = [&](int i) { return i >= 0 ? &std::get<HostTensor>(inputs.at(static_cast<size_t>(i))) : nullptr; };
  const ContractionSlots slots = contraction_slots(node);
  const HostTensor& a = *operand(0);
  const HostTensor& b = *operand(1);
  const HostTensor* addend = operand(slots.addend);
  const HostTensor* bias = operand(slots.bias);
  const Value& result = *node.output();
  HostTensor out = HostTensor::empty(result.dtype, result.shape);
  HostTensor sum = gelu ? HostTensor::empty(result.dtype, result.shape) : HostTensor{};
  const int64_t ra = a.rank(), rb = b.rank();
  const int64_t m_size = ra == 1 ? 1 : a.shape()[ra - 2], k_size = a.shape()[ra - 1];
  const int64_t n_size = rb == 1 ? 1 : b.shape()[rb - 1];
  // The batch dims: the result's dims before its matrix dims.
  const int64_t matrix_dims = (ra > 1 ? 1 : 0) + (rb > 1 ? 1 : 0);
  const Shape batch(result.shape.begin(), result.shape.end() - matrix_dims);
  const int64_t nb = static_cast<int64_t>(batch.size());
  std::vector<int64_t> ia(static_cast<size_t>(ra)), ib(static_cast<size_t>(rb)), ic(result.shape.size());
  // An operand's batch index from the result's (its dims aligned from the right, size 1 broadcast).
  auto set_batch = [&](const HostTensor& t, int64_t matrix, const int64_t* p, std::vector<int64_t>& idx) {
    const int64_t own = t.rank() - matrix;
    for (int64_t d = 0; d < own; ++d) idx[d] = t.shape()[d] == 1 ? 0 : p[d + nb - own];
  };
  int64_t linear = 0;
  dispatch_compute(result.dtype, [&](auto zero) {
    using C = decltype(zero);
    if constexpr (!kIsFloatCompute<C>) {
      VF_INTERNAL_ERROR("reference: prims.matmul of ", dtype_short_name(result.dtype), " (infer_types rejects it)");
    } else {
      // Each batch's operands in the compute type, row-major (a: m x k, b: k x n), then each row of
      // the result accumulated over k in order: element (m, n) adds a[m][k] * b[k][n] for k = 0, 1,
      // ..., as a loop over k per element would, with the inner loop along the contiguous n.
      std::vector<C> pa(static_cast<size_t>(m_size * k_size)), pb(static_cast<size_t>(k_size * n_size)),
          row(static_cast<size_t>(n_size));
      for_each_index(batch, [&](const int64_t* p) {
        set_batch(a, ra == 1 ? 1 : 2, p, ia);
        set_batch(b, rb == 1 ? 1 : 2, p, ib);
        std::copy(p, p + nb, ic.begin());
        for (int64_t m = 0; m < m_size; ++m)
          for (int64_t k = 0; k < k_size; ++k) {
            if (ra > 1) ia[ra - 2] = m;
            ia[ra - 1] = k;
            pa[static_cast<size_t>(m * k_size + k)] = load<C>(a, ia.data());
          }
        for (int64_t k = 0; k < k_size; ++k)
          for (int64_t n = 0; n < n_size; ++n) {
            ib[rb == 1 ? 0 : rb - 2] = k;
            if (rb > 1) ib[rb - 1] = n;
            pb[static_cast<size_t>(k * n_size + n)] = load<C>(b, ib.data());
          }
        for (int64_t m = 0; m < m_size; ++m) {
          if (ra > 1) ic[nb] = m;
          std::fill(row.begin(), row.end(), C(0));
          for (int64_t k = 0; k < k_size; ++k) {
            const C x = pa[static_cast<size_t>(m * k_size + k)];
            const C* bk = pb.data() + k * n_size;
            for (int64_t n = 0; n < n_size; ++n) row[static_cast<size_t>(n)] += x * bk[n];
          }
          for (int64_t n = 0; n < n_size; ++n) {
            if (rb > 1) ic[ic.size() - 1] = n;
            C acc = row[static_cast<size_t>(n)];
            if (addend) acc += load<C>(*addend, ic.data());
            if (bias) acc += load<C>(*bias, &n);
            if (gelu) store_as<C>(contiguous_element(sum, linear), sum.dtype(), acc);
            store_as<C>(contiguous_element(out, linear++), out.dtype(), gelu ? gelu_tanh(acc) : acc);
          }
        }
      });
    }
  });
  if (gelu) return {std::move(out), std::move(sum)};
  return {std::move(out)};
}

}  // namespace vf::reference
