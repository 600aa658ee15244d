// How a matmul's operands and result, as laid out in memory, map onto strided-batched GEMMs: the
// one answer the planner (which operands pass as layout) and the CUDA library call share.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "layout/layout.h"

namespace vf {

// One operand of D = A @ B over the batch: element (r, c) of matrix `batch index i` sits at
// offset + sum_j i_j * batch[j] + r * rs + c * cs (elements). One of rs and cs is 1 and the other
// at least the matrix's extent along it (a leading dimension), so a column-major library can read
// the matrix or its transpose in place.
struct GemmOperand {
  int64_t rs = 0, cs = 0;
  std::vector<int64_t> batch;  // per batch dim of StridedGemm::batch (0: broadcast)
  int64_t offset = 0;
};

// D [batch..., m, n] = A [batch..., m, k] @ B [batch..., k, n]. The batch dims are merged where
// every operand allows; the last one is a library call's strided batch, any before it a loop of
// calls.
struct StridedGemm {
  int64_t m = 0, n = 0, k = 0;
  Shape batch;
  GemmOperand a, b, d;
};

// The GEMMs of matmul(a, b) (torch.matmul's shapes, ir.h) with operands laid out as `a` and `b` and
// the result as `d`, or nullopt with `why` set when an operand (or the result) has a matrix whose
// strides are neither row- nor column-major.
std::optional<StridedGemm> strided_gemm(const Layout& a, const Layout& b, const Layout& d, std::string* why);

// Whether layout `l` of a matmul operand (its last two dims the matrix; a 1-D operand a vector)
// can be read in place: "" when it can, else why not.
std::string gemm_operand_problem(const Layout& l);
// The same for a matmul's bias (1-D): a library reads it in place when its elements are adjacent.
std::string gemm_bias_problem(const Layout& l);
// The same for matmul_add's c, which the call reads laid out as it writes the result: row-major
// and dense (any offset).
std::string gemm_addend_problem(const Layout& l);

}  // namespace vf
