// A rewrite of the lowered kernel IR: the tanh gelu's 1 + tanh(u) as one function without tanh.
#pragma once

#include "codegen/kernel_ir.h"

namespace vf {

// In float and double (the half types round the tanh first, so nothing is rewritten there):
//   1 + tanh(u), tanh(u) + 1      ->  OnePlusTanh(u)       = 2 / (1 + exp(-2u))
//   1 - tanh(u)                   ->  OnePlusTanh(-u)      (fn Sub)
//   (0.5 * x) * (1 + tanh(u))     ->  HalfXOnePlusTanh(x, u) = x / (1 + exp(-2u))
// (either operand order, the half on either side of x). The same values without the cancellation
// of adding 1 to a tanh near -1: tanhf's two branches become the special-function unit's exp2 and
// reciprocal on CUDA, and the half and the two cancel exactly (powers of two), leaving one product
// of the three. The tanh and the products the rewritten nodes no longer read are then dead, and
// not emitted. Returns the number of nodes rewritten.
int fold_tanh_gelu(KernelIR& ir);

}  // namespace vf
