// Per-element math of the unary family that libm lacks (erfinv) or whose libm calls GCC cannot
// vectorize (log, tanh, erf, sin, cos in float). The f32 versions are branch-free polynomials
// (accuracy measured against double libm over dense random grids: log 1 ulp, log1p and
// expm1 2 ulp, tanh 2 ulp, sin/cos 2 ulp, erf 5e-7 absolute), so the contiguous loops
// vectorize; f64 uses libm.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "cpu_math.hpp"
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

TSR_ALWAYS_INLINE int64_t d64_bits(double d) {
  int64_t u;
  std::memcpy(&u, &d, sizeof(u));
  return u;
}

// log in float (Cephes logf): exponent/mantissa split by bits (denormals scaled first), then a
// degree-8 polynomial on [sqrt(1/2)-1, sqrt(2)-1]; <= 2 ulp. Branch-free.
TSR_ALWAYS_INLINE float log_f32(float x) {
  const bool den = x < 1.17549435e-38f;
  const float xs = den ? x * 8388608.0f : x;
  const uint32_t bits = detail::f32_to_bits(xs);
  int32_t e = static_cast<int32_t>((bits >> 23) & 0xffu) - 126;
  e = den ? e - 23 : e;
  const float m = detail::bits_to_f32((bits & 0x007fffffu) | 0x3f000000u);  // [0.5, 1)
  const bool lo = m < 0.707106781186547524f;
  const float f = lo ? (m + m) - 1.0f : m - 1.0f;
  const float ef = static_cast<float>(lo ? e - 1 : e);
  const float z = f * f;
  float y = 7.0376836292e-2f;
  y = y * f - 1.1514610310e-1f;
  y = y * f + 1.1676998740e-1f;
  y = y * f - 1.2420140846e-1f;
  y = y * f + 1.4249322787e-1f;
  y = y * f - 1.6668057665e-1f;
  y = y * f + 2.0000714765e-1f;
  y = y * f - 2.4999993993e-1f;
  y = y * f + 3.3333331174e-1f;
  y = y * f * z;
  y = y + ef * -2.12194440e-4f;
  y = y - 0.5f * z;
  float r = f + y;
  r = r + ef * 0.693359375f;
  const float inf = std::numeric_limits<float>::infinity();
  r = x < 0.0f ? std::numeric_limits<float>::quiet_NaN() : r;
  r = x == 0.0f ? -inf : r;
  r = x == inf ? inf : r;
  r = x != x ? x : r;
  return r;
}

// tanh in float: odd polynomial below |x| = 0.625 (Cephes tanhf), 1 - 2/(e^{2|x|} + 1) above.
TSR_ALWAYS_INLINE float tanh_f32(float x) {
  const float ax = std::fabs(x);
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * x + x;
  float big = 1.0f - 2.0f / (exp_f32(ax + ax) + 1.0f);
  big = x < 0.0f ? -big : big;
  return ax < 0.625f ? small : big;
}

// erf in float: rational minimax x * P(x^2) / Q(x^2) on [-4, 4] (erf is +-1 in float beyond).
TSR_ALWAYS_INLINE float erf_f32(float a) {
  const float x = a < -4.0f ? -4.0f : (a > 4.0f ? 4.0f : a);
  const float x2 = x * x;
  float p = -2.72614225801306e-10f;
  p = p * x2 + 2.77068142495902e-08f;
  p = p * x2 - 2.10102402082508e-06f;
  p = p * x2 - 5.69250639462346e-05f;
  p = p * x2 - 7.34990630326855e-04f;
  p = p * x2 - 2.95459980854025e-03f;
  p = p * x2 - 1.60960333262415e-02f;
  p = p * x;
  float q = -1.45660718464996e-05f;
  q = q * x2 - 2.13374055278905e-04f;
  q = q * x2 - 1.68282697438203e-03f;
  q = q * x2 - 7.37332916720468e-03f;
  q = q * x2 - 1.42647390514189e-02f;
  const float r = p / q;
  return a != a ? a : r;
}

// sin/cos in float for |x| <= kSinCosFastMax: reduction by pi/2 in double (q * pi/2 split in
// two parts is exact there), then Cephes' sinf/cosf polynomials on [-pi/4, pi/4].
constexpr float kSinCosFastMax = 1.0e5f;
TSR_ALWAYS_INLINE float sincos_f32(float x, int shift) {
  const double xd = x;
  const double magic = 6755399441055744.0;  // 1.5 * 2^52
  const double qm = xd * 0.63661977236758134308 + magic;
  const int32_t quadrant = static_cast<int32_t>(d64_bits(qm) & 3) + shift;
  const double q = qm - magic;
  const float r = static_cast<float>((xd - q * 1.57079632673412561417e+00) - q * 6.07710050650619224932e-11);
  const float r2 = r * r;
  float s = -1.9515295891e-4f;
  s = s * r2 + 8.3321608736e-3f;
  s = s * r2 - 1.6666654611e-1f;
  s = s * r2 * r + r;
  float c = 2.443315711809948e-5f;
  c = c * r2 - 1.388731625493765e-3f;
  c = c * r2 + 4.166664568298827e-2f;
  c = c * r2 * r2 - 0.5f * r2 + 1.0f;
  float v = (quadrant & 1) ? c : s;
  return (quadrant & 2) ? -v : v;
}

// erfc for z >= 0 in float (Numerical Recipes' erfcc Chebyshev fit, fractional error 1.2e-7 in
// exact arithmetic; float rounding of the exponent adds ~|z|^2 * 6e-8 relative: 1.2e-6 on [0, 3], 8e-6 at 9).
TSR_ALWAYS_INLINE float erfc_pos_f32(float z) {
  const float t = 1.0f / (1.0f + 0.5f * z);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  return t * exp_f32(p - z * z);
}
TSR_ALWAYS_INLINE float erfc_f32(float x) {
  const float e = erfc_pos_f32(std::fabs(x));
  const float r = x < 0.0f ? 2.0f - e : e;
  return x != x ? x : r;
}
// GELU (erf form) without cancellation in the negative tail: Phi(x) = erfc(-x/sqrt2)/2.
TSR_ALWAYS_INLINE float gelu_erf_f32(float x) {
  const float h = 0.5f * erfc_pos_f32(std::fabs(x) * 0.70710678118654752f);
  return x * (x < 0.0f ? h : 1.0f - h);
}
// GELU (tanh form): 0.5 * (1 + tanh(u)) = sigmoid(2u), no cancellation.
TSR_ALWAYS_INLINE float gelu_tanh_f32(float x) {
  const float u = 0.79788456080286535588f * (x + 0.044715f * x * x * x);
  return x / (1.0f + exp_f32(-2.0f * u));
}

// log1p in float: log(u) * x / (u - 1) with u = 1 + x (Goldberg's trick cancels the rounding of
// u), x itself when u rounds to 1.
TSR_ALWAYS_INLINE float log1p_f32(float x) {
  const float u = 1.0f + x;
  const float d = u - 1.0f;
  float r = log_f32(u) * (x / (d == 0.0f ? 1.0f : d));
  r = d == 0.0f ? x : r;
  r = x == std::numeric_limits<float>::infinity() ? x : r;
  return r;
}
// expm1 in float: Taylor polynomial below |x| = 0.5 (error < 1e-8 relative), e^x - 1 above.
TSR_ALWAYS_INLINE float expm1_f32(float x) {
  float p = 1.0f / 40320.0f;
  p = p * x + 1.0f / 5040.0f;
  p = p * x + 1.0f / 720.0f;
  p = p * x + 1.0f / 120.0f;
  p = p * x + 1.0f / 24.0f;
  p = p * x + 1.0f / 6.0f;
  p = p * x + 0.5f;
  const float small = (p * x) * x + x;
  const float big = exp_f32(x) - 1.0f;
  return std::fabs(x) < 0.5f ? small : big;
}

// d/dx GELU (erf form) = Phi(x) + x * phi(x), Phi as in gelu_erf_f32 (no cancellation).
TSR_ALWAYS_INLINE float gelu_erf_grad_f32(float x) {
  const float h = 0.5f * erfc_pos_f32(std::fabs(x) * 0.70710678118654752f);
  const float cdf = x < 0.0f ? h : 1.0f - h;
  return cdf + x * (0.39894228040143267794f * exp_f32(-0.5f * x * x));
}
// d/dx GELU (tanh form) with s = sigmoid(2u) = (1 + tanh(u)) / 2, so 1 - tanh(u)^2 = 4 s (1 - s):
// s + 2 x s (1 - s) k (1 + 3 a x^2), u = k (x + a x^3).
TSR_ALWAYS_INLINE float gelu_tanh_grad_f32(float x) {
  const float k = 0.79788456080286535588f, a = 0.044715f;
  const float x2 = x * x;
  const float s = 1.0f / (1.0f + exp_f32(-2.0f * k * (x + a * x2 * x)));
  return s + 2.0f * x * s * (1.0f - s) * k * (1.0f + 3.0f * a * x2);
}

// Dispatch on the compute type: the f32 polynomials above, libm for f64.
template <class X>
TSR_ALWAYS_INLINE X log_c(X x) {
  if constexpr (std::is_same<X, float>::value) return log_f32(x);
  else return std::log(x);
}
template <class X>
TSR_ALWAYS_INLINE X tanh_c(X x) {
  if constexpr (std::is_same<X, float>::value) return tanh_f32(x);
  else return std::tanh(x);
}
template <class X>
TSR_ALWAYS_INLINE X erf_c(X x) {
  if constexpr (std::is_same<X, float>::value) return erf_f32(x);
  else return std::erf(x);
}
template <class X>
TSR_ALWAYS_INLINE X erfc_c(X x) {
  if constexpr (std::is_same<X, float>::value) return erfc_f32(x);
  else return std::erfc(x);
}
template <class X>
TSR_ALWAYS_INLINE X gelu_erf_fast_c(X x) {
  if constexpr (std::is_same<X, float>::value) return gelu_erf_f32(x);
  else return X(0.5) * x * std::erfc(-x * X(0.70710678118654752440));
}
template <class X>
TSR_ALWAYS_INLINE X gelu_tanh_fast_c(X x) {
  if constexpr (std::is_same<X, float>::value) {
    return gelu_tanh_f32(x);
  } else {
    const X u = X(0.79788456080286535588) * (x + X(0.044715) * x * x * x);
    return x / (X(1) + std::exp(X(-2) * u));
  }
}
template <class X>
TSR_ALWAYS_INLINE X gelu_erf_grad_c(X x) {
  if constexpr (std::is_same<X, float>::value) {
    return gelu_erf_grad_f32(x);
  } else {
    const X cdf = X(0.5) * std::erfc(-x * X(0.70710678118654752440));
    return cdf + x * X(0.39894228040143267794) * std::exp(X(-0.5) * x * x);
  }
}
template <class X>
TSR_ALWAYS_INLINE X gelu_tanh_grad_c(X x) {
  if constexpr (std::is_same<X, float>::value) {
    return gelu_tanh_grad_f32(x);
  } else {
    const X k = X(0.79788456080286535588), a = X(0.044715), x2 = x * x;
    const X s = X(1) / (X(1) + std::exp(X(-2) * k * (x + a * x2 * x)));
    return s + X(2) * x * s * (X(1) - s) * k * (X(1) + X(3) * a * x2);
  }
}
template <class X>
TSR_ALWAYS_INLINE X log1p_c(X x) {
  if constexpr (std::is_same<X, float>::value) return log1p_f32(x);
  else return std::log1p(x);
}
template <class X>
TSR_ALWAYS_INLINE X expm1_c(X x) {
  if constexpr (std::is_same<X, float>::value) return expm1_f32(x);
  else return std::expm1(x);
}
// mish = x * tanh(softplus(x)) = x * n / (n + 2) with n = e^x (e^x + 2); tanh(softplus(x)) is 1
// in both float and double beyond x = 20.
template <class X>
TSR_ALWAYS_INLINE X mish_c(X x) {
  const X e = exp_c<X>(x < X(20) ? x : X(20));
  const X n = e * (e + X(2));
  const X r = x * n / (n + X(2));
  return x < X(20) ? r : x;
}

}  // namespace tsr::cpu
