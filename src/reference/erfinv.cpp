// The inverse error functions for the reference: erfinv from Giles' single-precision approximation
// refined by Newton steps on erf (on log erfc near +-1, where 1 - |y| is exact and erf has no
// digits left); erfcinv by Newton steps on log erfc from there, or from sqrt(-log c) where 1 - c
// has lost c's digits; ndtri through erfcinv.
#include <cmath>
#include <limits>

#include "reference/reference_ops.h"

namespace vf::reference {
namespace {

// M. Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011): about 1e-7 relative
// error for |y| < 1 - 2^-24, a good enough start for Newton's method elsewhere.
double erfinv_initial(double y) {
  double w = -std::log((1.0 - y) * (1.0 + y));
  double p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  return p * y;
}

}  // namespace

double erfinv(double y) {
  if (std::isnan(y) || y < -1.0 || y > 1.0) return std::numeric_limits<double>::quiet_NaN();
  if (y == 1.0) return std::numeric_limits<double>::infinity();
  if (y == -1.0) return -std::numeric_limits<double>::infinity();
  if (y == 0.0) return y;  // keeps the sign of zero
  // Solve for |y| and restore the sign: erfinv is odd.
  const double a = std::fabs(y);
  const double two_over_sqrt_pi = 1.1283791670955126;
  double x = erfinv_initial(a);
  for (int step = 0; step < 100; ++step) {
    double delta;
    if (a < 0.5) {
      // Newton on erf(x) - a.
      delta = (std::erf(x) - a) / (two_over_sqrt_pi * std::exp(-x * x));
    } else {
      // Newton on log(erfc(x)) - log(1 - a): 1 - a is exact here, and log(erfc) is close to a
      // parabola, so this converges from the rough start the tail gets.
      const double c = std::erfc(x);
      if (c == 0) break;
      delta = (std::log(c) - std::log(1.0 - a)) / (-two_over_sqrt_pi * std::exp(-x * x) / c);
    }
    if (!std::isfinite(delta)) break;
    x -= delta;
    if (std::fabs(delta) <= 1e-17 * std::fabs(x)) break;
  }
  return y < 0 ? -x : x;
}

double erfcinv(double c) {
  if (std::isnan(c) || c < 0.0 || c > 2.0) return std::numeric_limits<double>::quiet_NaN();
  if (c == 0.0) return std::numeric_limits<double>::infinity();
  if (c == 2.0) return -std::numeric_limits<double>::infinity();
  if (c > 1.0) return -erfcinv(2.0 - c);  // 2 - c is exact for c in [1, 2]
  // c in (0, 1]: the root x >= 0 of log erfc(x) = log c, a function close to a parabola.
  double x = c > 0.0625 ? erfinv(1.0 - c) : std::sqrt(-std::log(c));
  const double two_over_sqrt_pi = 1.1283791670955126;
  for (int step = 0; step < 100; ++step) {
    const double e = std::erfc(x);
    if (e == 0) break;
    const double delta = (std::log(e) - std::log(c)) / (-two_over_sqrt_pi * std::exp(-x * x) / e);
    if (!std::isfinite(delta)) break;
    x -= delta;
    if (std::fabs(delta) <= 1e-17 * std::fabs(x)) break;
  }
  return x;
}

double ndtri(double p) {
  if (std::isnan(p) || p < 0.0 || p > 1.0) return std::numeric_limits<double>::quiet_NaN();
  return -1.4142135623730951 * erfcinv(2.0 * p);  // Phi(x) = erfc(-x / sqrt 2) / 2
}

}  // namespace vf::reference
