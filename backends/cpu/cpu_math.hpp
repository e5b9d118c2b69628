// Per-element math of the CPU backend, written so that GCC vectorizes it at plain -O3 (no libm
// calls in the hot f32 paths) and usable from CUDA (TSR_HOST_DEVICE).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "tessera/dtype.hpp"

namespace tsr::cpu {

// e^x in float, <= 2 ulp (Cephes expf polynomial), branch-free: inf above 88.72, 0 below
// -103.97 (denormal results in between), NaN stays NaN.
TSR_HOST_DEVICE inline float exp_f32(float x) {
  const float log2e = 1.44269504088896341f;
  const float ln2_hi = 0.693359375f;
  const float ln2_lo = -2.12194440e-4f;
  const float magic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  float xc = x != x ? 0.0f : x;
  xc = xc < -104.0f ? -104.0f : xc;
  xc = xc > 89.0f ? 89.0f : xc;
  const float t = xc * log2e + magic;
  const float n = t - magic;
  float r = xc - n * ln2_hi;
  r = r - n * ln2_lo;
  const float r2 = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r2 + r + 1.0f;
  const int32_t ni = static_cast<int32_t>(n);
  const int32_t n1 = ni >> 1;
  const int32_t n2 = ni - n1;
  const float s1 = detail::bits_to_f32(static_cast<uint32_t>(n1 + 127) << 23);
  const float s2 = detail::bits_to_f32(static_cast<uint32_t>(n2 + 127) << 23);
  float y = (p * s1) * s2;
  y = x > 88.72283935546875f ? std::numeric_limits<float>::infinity() : y;
  y = x < -103.972084f ? 0.0f : y;
  y = x != x ? x : y;
  return y;
}

TSR_HOST_DEVICE inline float sigmoid_f32(float x) { return 1.0f / (1.0f + exp_f32(-x)); }

// Generic math in the compute type C (float or double).
template <class C>
TSR_HOST_DEVICE inline C exp_c(C x) {
  if constexpr (std::is_same<C, float>::value) return exp_f32(x);
  else return std::exp(x);
}
template <class C>
TSR_HOST_DEVICE inline C sigmoid_c(C x) {
  return C(1) / (C(1) + exp_c<C>(-x));
}
template <class C>
TSR_HOST_DEVICE inline C gelu_erf_c(C x) {
  const C inv_sqrt2 = C(0.70710678118654752440);
  return C(0.5) * x * (C(1) + std::erf(x * inv_sqrt2));
}
template <class C>
TSR_HOST_DEVICE inline C gelu_tanh_c(C x) {
  const C k = C(0.79788456080286535588);  // sqrt(2/pi)
  return C(0.5) * x * (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x)));
}

// NaN-propagating max/min (a NaN in either gives NaN).
template <class C>
TSR_HOST_DEVICE inline C max_nan(C a, C b) {
  return (b > a || b != b) ? b : a;
}
template <class C>
TSR_HOST_DEVICE inline C min_nan(C a, C b) {
  return (b < a || b != b) ? b : a;
}

}  // namespace tsr::cpu
