#include "layout/strided_gemm.h"

#include <algorithm>

#include "base/error.h"

namespace vf {
namespace {

// A matrix of r rows and c columns with strides (rs, cs), the strides of a dim of size 1 (which
// never advance) chosen so that it is row- or column-major where possible; whether it is.
bool normalize(int64_t r, int64_t c, int64_t& rs, int64_t& cs) {
  if (c == 1) cs = 1;
  if (r == 1) rs = cs == 1 ? std::max<int64_t>(c, 1) : 1;
  return (cs == 1 && rs >= std::max<int64_t>(c, 1)) || (rs == 1 && cs >= std::max<int64_t>(r, 1));
}

// The matrix view of an operand: a vector is one row (as a) or one column (as b).
struct Matrix {
  int64_t rows, cols, rs, cs;
  Shape batch_sizes;
  std::vector<int64_t> batch_strides;
};

Matrix matrix_of(const Layout& l, bool column_vector) {
  const int64_t rank = l.rank();
  Matrix m;
  if (rank == 1) {
    m.rows = column_vector ? l.sizes[0] : 1;
    m.cols = column_vector ? 1 : l.sizes[0];
    m.rs = column_vector ? l.strides[0] : 0;
    m.cs = column_vector ? 0 : l.strides[0];
    return m;
  }
  m.rows = l.sizes[rank - 2];
  m.cols = l.sizes[rank - 1];
  m.rs = l.strides[rank - 2];
  m.cs = l.strides[rank - 1];
  m.batch_sizes.assign(l.sizes.begin(), l.sizes.end() - 2);
  m.batch_strides.assign(l.strides.begin(), l.strides.end() - 2);
  return m;
}

std::string problem_of(Matrix& m) {
  if (normalize(m.rows, m.cols, m.rs, m.cs)) return "";
  return detail::concat("its ", m.rows, " x ", m.cols, " matrices have strides [", m.rs, ", ", m.cs,
                        "], neither row- nor column-major");
}

}  // namespace

std::string gemm_operand_problem(const Layout& l) {
  Matrix m = matrix_of(l, false);
  return problem_of(m);
}

std::string gemm_bias_problem(const Layout& l) {
  if (l.numel() <= 1 || l.strides.back() == 1) return "";
  return detail::concat("its elements are ", l.strides.back(), " apart, not adjacent");
}

std::string gemm_addend_problem(const Layout& l) {
  if (l.is_contiguous()) return "";
  return detail::concat("its strides ", shape_to_string(l.strides), " are not the result's ",
                        shape_to_string(Layout::contiguous(l.sizes).strides), " (dense, row-major)");
}

std::optional<StridedGemm> strided_gemm(const Layout& a, const Layout& b, const Layout& d, std::string* why) {
  Matrix ma = matrix_of(a, false), mb = matrix_of(b, true);
  for (auto [name, m] : {std::pair<const char*, Matrix*>{"a", &ma}, {"b", &mb}}) {
    const std::string problem = problem_of(*m);
    if (!problem.empty()) {
      if (why) *why = detail::concat(name, ": ", problem);
      return std::nullopt;
    }
  }
  StridedGemm g;
  g.m = ma.rows;
  g.k = ma.cols;
  g.n = mb.cols;
  VF_INTERNAL_CHECK(mb.rows == g.k, "strided_gemm: ", a.to_string(), " @ ", b.to_string(), " contracts ", g.k,
                    " with ", mb.rows);
  // The result's batch dims: those of d before its matrix dims (a vector operand drops one).
  const int64_t matrix_dims = (a.rank() > 1 ? 1 : 0) + (b.rank() > 1 ? 1 : 0);
  const int64_t nb = d.rank() - matrix_dims;
  const Shape batch(d.sizes.begin(), d.sizes.begin() + nb);
  g.d.rs = a.rank() > 1 ? d.strides[nb] : 0;
  g.d.cs = b.rank() > 1 ? d.strides[d.rank() - 1] : 0;
  g.d.offset = d.offset;
  Matrix md{g.m, g.n, g.d.rs, g.d.cs, {}, {}};
  if (!normalize(md.rows, md.cols, md.rs, md.cs) || md.cs != 1) {
    if (why) *why = "the result is not row-major";
    return std::nullopt;
  }
  g.d.rs = md.rs;
  g.d.cs = md.cs;
  g.a = {ma.rs, ma.cs, {}, a.offset};
  g.b = {mb.rs, mb.cs, {}, b.offset};
  // Each operand's stride per result batch dim (aligned from the right; 0 where it broadcasts).
  auto strides_for = [&](const Matrix& m) {
    std::vector<int64_t> s(static_cast<size_t>(nb), 0);
    const int64_t own = static_cast<int64_t>(m.batch_sizes.size());
    for (int64_t j = 0; j < own; ++j)
      if (m.batch_sizes[j] != 1) s[nb - own + j] = m.batch_strides[j];
    return s;
  };
  const std::vector<int64_t> sa = strides_for(ma), sb = strides_for(mb);
  const std::vector<int64_t> sd(d.strides.begin(), d.strides.begin() + nb);
  // Merge batch dim j into j + 1 where every operand steps over j as over j + 1 whole.
  for (int64_t j = 0; j < nb; ++j) {
    if (batch[j] == 1) continue;
    const bool merge = !g.batch.empty() && [&] {
      const size_t last = g.batch.size() - 1;
      return g.a.batch[last] == sa[j] * batch[j] && g.b.batch[last] == sb[j] * batch[j] &&
             g.d.batch[last] == sd[j] * batch[j];
    }();
    if (merge) {
      const size_t last = g.batch.size() - 1;
      g.batch[last] *= batch[j];
      g.a.batch[last] = sa[j];
      g.b.batch[last] = sb[j];
      g.d.batch[last] = sd[j];
    } else {
      g.batch.push_back(batch[j]);
      g.a.batch.push_back(sa[j]);
      g.b.batch.push_back(sb[j]);
      g.d.batch.push_back(sd[j]);
    }
  }
  return g;
}

}  // namespace vf
