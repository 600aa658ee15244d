// log gamma, digamma and the Hurwitz zeta function for the reference.
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

// Euler-Maclaurin summation: the terms (q + k)^-x up to a = q + n past 9 (or until they stop
// mattering), then the integral of the rest a^(1-x) / (x - 1), half the last term back, and the
// Bernoulli corrections B_2j / (2j)! x (x + 1) ... (x + 2j - 2) a^(-x - 2j + 1).
double zeta(double x, double q) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kEps = 1.1102230246251565e-16;
  if (x == 1) return kInf;
  if (!(x >= 1)) return std::numeric_limits<double>::quiet_NaN();
  if (q <= 0) {
    if (q == std::floor(q)) return kInf;
    if (x != std::floor(x)) return std::numeric_limits<double>::quiet_NaN();
  }
  double s = std::pow(q, -x), a = q, b = 0;
  for (int i = 0; i < 9 || a <= 9; ++i) {
    a += 1;
    b = std::pow(a, -x);
    s += b;
    if (std::fabs(b / s) < kEps) return s;
  }
  const double w = a;
  s += b * w / (x - 1) - 0.5 * b;
  // B_2j for j = 1..12, as numerator / denominator.
  constexpr double kBernoulli[12][2] = {{1, 6},       {-1, 30},    {1, 42},           {-1, 30},
                                        {5, 66},      {-691, 2730}, {7, 6},           {-3617, 510},
                                        {43867, 798}, {-174611, 330}, {854513, 138}, {-236364091, 2730}};
  double rising = 1, factorial = 1, k = 0;  // x (x + 1) ... (x + 2j - 2), (2j)!
  for (int j = 1; j <= 12; ++j) {
    rising *= x + k;
    b /= w;
    factorial *= (2 * j - 1) * (2 * j);
    const double t = rising * b * kBernoulli[j - 1][0] / (kBernoulli[j - 1][1] * factorial);
    s += t;
    if (std::fabs(t / s) < kEps) break;
    rising *= x + k + 1;
    b /= w;
    k += 2;
  }
  return s;
}

}  // namespace vf::reference
