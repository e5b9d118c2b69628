// Per-element math of the unary family that libm lacks (erfinv) or whose libm calls GCC cannot
// vectorize (sin, cos, erf in float). The f32 versions are branch-free polynomials so that the
// contiguous loops vectorize; f64 uses libm.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "tessera/dtype.hpp"

namespace tsr::cpu {

// erfinv in double: Giles' single-precision approximation refined by two Newton steps (on erfc
// near +-1, where erf(x) - y would cancel). erfinv(+-1) = +-inf, |y| > 1 gives NaN.
inline double erfinv_f64(double y) {
  if (std::isnan(y) || y < -1.0 || y > 1.0) return std::numeric_limits<double>::quiet_NaN();
  if (y == 1.0) return std::numeric_limits<double>::infinity();
  if (y == -1.0) return -std::numeric_limits<double>::infinity();
  if (y == 0.0) return y;
  const double a = std::fabs(y);
  double w = -std::log((1.0 - a) * (1.0 + a));
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
  double x = p * a;
  const double k = 1.12837916709551257390;  // 2/sqrt(pi)
  for (int i = 0; i < 2; ++i) {
    const double d = k * std::exp(-x * x);
    if (!(d > 0)) break;
    const double r = a < 0.5 ? std::erf(x) - a : (1.0 - a) - std::erfc(x);
    x -= r / d;
  }
  return y < 0 ? -x : x;
}

template <class X>
TSR_ALWAYS_INLINE X sin_c(X x) {
  return std::sin(x);
}
template <class X>
TSR_ALWAYS_INLINE X cos_c(X x) {
  return std::cos(x);
}

template <class X>
TSR_ALWAYS_INLINE X erf_c(X x) {
  return std::erf(x);
}

}  // namespace tsr::cpu
