// Folds the elementwise ops after a matmul that cuBLASLt can compute in the call: a gelu, an add.
//
// The tanh gelu of a matmul's result, as Thunder decomposes it once its round trips through bf16
// are gone (passes/elide_round_trip_casts.h):
//
//   x = convert(r, float32)            (r itself when r is float32)
//   g = (0.5 * x) * (1 + tanh(0.7978845608028654 * (x + 0.044715 * (x * x * x))))
//   y = convert(g, dtype of r)         (g itself when r is float32)
//
// becomes (y, r) = matmul_gelu(a, b[, bias]) (ir/ir.h): one library call whose epilogue writes y,
// and r too (cuBLASLt's aux output) where anything else reads r. Products and sums match either way
// round; x * x * x may be pow(x, 3). The ops between r and y must have no other reader (they are
// removed); r of f16, bf16 or f32 only; where r is also read, its last dim is a multiple of 8 (the
// aux output's leading dimension, cuBLASLt's rule).
//
// A residual add, where it is r's one reader:
//
//   y = convert(convert(r, float32) + convert(c, float32), dtype of r)     (r + c for f32 and f64)
//
// with c of r's shape and dtype, becomes y = matmul_add(a, b, c[, bias]): cuBLASLt's D = A B + C.
//
// y is then the gelu (or the sum) of the float32 sum, rounded once, where the program rounds r
// first: the difference is that rounding, as for the round trips the pass before this one drops.
// PlanOptions::matmul_epilogues turns it off.
#pragma once

#include "ir/ir.h"
#include "passes/fusion_rewriter.h"

namespace vf {

RewrittenFusion fuse_matmul_epilogues(const Fusion& fusion);

}  // namespace vf
