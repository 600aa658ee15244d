// The reference's op implementations, one function per op category (used by reference_executor.cpp).
//
// Each takes the node and its evaluated inputs (tensors read through their strides, scalars as
// vf::Scalar) and returns new contiguous tensors shaped and typed as the node's outputs.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "ir/ir.h"
#include "reference/reference_executor.h"

namespace vf::reference {

// convert_element_type, unary, binary and ternary ops.
HostTensor run_elementwise(const Node& node, const std::vector<HostArg>& inputs);
// View ops (copied here: aliasing is decided elsewhere) and pad, cat, flip, take, take_along_axis,
// gather (an index out of range is a UserError).
HostTensor run_movement(const Node& node, const std::vector<HostArg>& inputs);
// sum, prod, amax, amin, var, var_mean.
std::vector<HostTensor> run_reduction(const Node& node, const HostTensor& input);
// full, iota, uniform_philox (its inputs: the seed and offset scalars).
HostTensor run_creation(const Node& node, const std::vector<HostArg>& inputs);
// scatter_add and scatter_max (an index out of range is a UserError).
HostTensor run_scatter(const Node& node, const std::vector<HostArg>& inputs);
// cumsum.
HostTensor run_scan(const Node& node, const HostTensor& a);
// matmul and matmul_add (the result), matmul_gelu (the gelu, then the matmul's result).
std::vector<HostTensor> run_matmul(const Node& node, const std::vector<HostArg>& inputs);
// The Philox4x32-10 block of counter c under key (low word first), as Salmon et al.'s Random123.
std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> c, uint64_t key);

// The inverse error function in double precision: NaN outside [-1, 1], +-inf at +-1.
double erfinv(double y);
// The inverse complementary error function: NaN outside [0, 2], +inf at 0, -inf at 2.
double erfcinv(double c);
// The inverse of the standard normal CDF: NaN outside [0, 1], -inf at 0, +inf at 1.
double ndtri(double p);
// log |gamma(x)| (glibc's lgamma_r: no global sign, so callers may run in parallel).
double lgamma(double x);
// The derivative of log gamma: -inf at 0 (as PyTorch), NaN at the negative integers.
double digamma(double x);
// The Hurwitz zeta function sum over k >= 0 of (k + q)^-x, as torch.special.zeta: inf at x = 1,
// NaN for x < 1, inf at q a non-positive integer, NaN at other negative q unless x is an integer.
double zeta(double x, double q);

}  // namespace vf::reference
