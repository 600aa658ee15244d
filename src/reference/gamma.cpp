// log gamma and digamma for the reference.
//
// digamma: the reflection psi(x) = psi(1 - x) - pi / tan(pi x) below 0, the recurrence
// psi(x) = psi(x + 1) - 1 / x up to x >= 10, then the asymptotic series
// psi(x) = log x - 1 / (2x) - sum B_2k / (2k x^2k), whose terms after B_14 add below 1e-16 there.
#include <math.h>

#include <cmath>
#include <limits>

#include "reference/reference_ops.h"

namespace vf::reference {

double lgamma(double x) {
  int sign = 0;
  return ::lgamma_r(x, &sign);
}

double digamma(double x) {
  const double inf = std::numeric_limits<double>::infinity();
  if (std::isnan(x) || x == inf) return x;
  if (x == 0) return std::copysign(inf, -x);  // as PyTorch: -inf at +0
  if (x < 0) {
    if (x == std::floor(x)) return std::numeric_limits<double>::quiet_NaN();
    const double pi = 3.141592653589793;
    return digamma(1 - x) - pi / std::tan(pi * x);
  }
  double result = 0;
  for (; x < 10; x += 1) result -= 1 / x;
  const double f = 1 / (x * x);
  // B_2k / 2k for k = 1..7: 1/12, -1/120, 1/252, -1/240, 1/132, -691/32760, 1/12.
  const double series =
      f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f * (1.0 / 132 - f * (691.0 / 32760 - f / 12))))));
  return result + std::log(x) - 0.5 / x - series;
}

}  // namespace vf::reference
