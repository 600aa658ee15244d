// A matmul's library segment beyond its operands: its result's layout and the ops left after it.
#pragma once

#include <string>

#include "ir/ir.h"
#include "layout/layout.h"

namespace vf {

// Dense, and row-major unless n is a plain matmul (not matmul_gelu, whose two results share one
// layout) whose result is not returned itself and whose one use is a transpose that keeps the
// last dim last and whose result is returned, through views, as a fusion output or read by another
// matmul: then in that transpose's order, so that the transpose (and a reshape that merges its
// dims) is a view, where the GEMMs can write it with operands `a` and `b` laid out as given
// (layout/strided_gemm.h). `why` gets a note for explain when it is not row-major.
Layout matmul_result_layout(const Fusion& fusion, const Node* n, const Layout& a, const Layout& b, std::string* why);

// For explain: the elementwise ops that read n's results, which kernels after the call compute
// (only a tanh gelu folds into the call: passes/fuse_matmul_epilogues.h); "" when there are none.
std::string matmul_elementwise_after(const Node* n);

}  // namespace vf
