// Comparing a computed tensor with the reference's, with tolerances suited to the dtype.
#pragma once

#include <string>

#include "ir/ir.h"
#include "layout/host_tensor.h"

namespace vf {

struct Tolerance {
  double rtol = 0;
  double atol = 0;
};
Tolerance default_tolerance(DType dtype);  // exact for integers and bool
// For results of reductions combining `terms` values: the dtype's tolerance widened by the square
// root of (terms / 16) (sums in another order than the reference's, which accumulates floats in
// double, differ by about that much more).
Tolerance reduction_tolerance(DType dtype, int64_t terms);
// The tolerance for a fusion output: reduction_tolerance for the most terms that any reduction it
// depends on combines (its dtype's default when there is none).
Tolerance output_tolerance(const Value* output);

struct Comparison {
  bool ok = true;
  double max_abs_error = 0;  // over elements that are finite in both
  int64_t mismatches = 0;
  std::string first_mismatch;  // "at [1, 2]: got 3.5, expected 3.25"; empty when ok
};

// NaN matches NaN, inf matches the same inf; shapes and dtypes must agree (a mismatch otherwise).
Comparison compare_tensors(const HostTensor& actual, const HostTensor& expected, Tolerance tol);

// A checksum of the values in logical (row-major) order, independent of layout: the sum, in
// double, of the finite values, with each NaN counted as kChecksumNaN and each +-inf as
// +-kChecksumInf, so that tensors holding non-finite values still have reproducible checksums.
inline constexpr double kChecksumNaN = 1e6;
inline constexpr double kChecksumInf = 1e5;
double tensor_checksum(const HostTensor& t);

}  // namespace vf
