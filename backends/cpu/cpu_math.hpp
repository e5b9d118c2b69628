// Per-element math of the CPU backend, written so that GCC vectorizes it at plain -O3 (no libm
// calls in the hot f32 paths) and usable from CUDA (TSR_HOST_DEVICE).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "tessera/dtype.hpp"

namespace tsr::cpu {

// e^x in float, <= 2 ulp (Cephes expf polynomial), branch-free: inf above 88.72, 0 below
// -103.97 (denormal results in between), NaN stays NaN.
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float exp_f32(float x) {
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

TSR_HOST_DEVICE TSR_ALWAYS_INLINE float sigmoid_f32(float x) { return 1.0f / (1.0f + exp_f32(-x)); }

// Generic math in the compute type C (float or double).
template <class C>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE C exp_c(C x) {
  if constexpr (std::is_same<C, float>::value) return exp_f32(x);
  else return std::exp(x);
}
template <class C>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE C sigmoid_c(C x) {
  return C(1) / (C(1) + exp_c<C>(-x));
}
template <class C>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE C gelu_erf_c(C x) {
  const C inv_sqrt2 = C(0.70710678118654752440);
  return C(0.5) * x * (C(1) + std::erf(x * inv_sqrt2));
}
template <class C>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE C gelu_tanh_c(C x) {
  const C k = C(0.79788456080286535588);  // sqrt(2/pi)
  return C(0.5) * x * (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x)));
}

// NaN-propagating max/min (a NaN in either gives NaN).
template <class C>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE C max_nan(C a, C b) {
  return (b > a || b != b) ? b : a;
}
template <class C>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE C min_nan(C a, C b) {
  return (b < a || b != b) ? b : a;
}


// max (MAX) or min of p[0..n) and `init`, NaN-propagating for floating C. Written with GCC
// vector extensions (16-byte vectors, lowered to SSE2 on x86-64 and to whatever the target
// has elsewhere): GCC does not vectorize a NaN-aware select reduction on its own.
template <bool MAX, class C>
inline C maxmin_contig(const C* p, int64_t n, C init) {
  C r = init;
  bool nan = false;
  int64_t i = 0;
#if defined(__GNUC__) && !defined(__CUDACC__)
  constexpr int W = 16 / int(sizeof(C));
  typedef C V __attribute__((vector_size(16)));
  V m0, m1, m2, m3;
  for (int k = 0; k < W; ++k) m0[k] = init;
  m1 = m2 = m3 = m0;
  using M = decltype(m0 != m0);
  M nan0 = m0 != m0, nan1 = nan0;
  for (; i + 4 * W <= n; i += 4 * W) {
    V x0, x1, x2, x3;
    std::memcpy(&x0, p + i, sizeof(V));
    std::memcpy(&x1, p + i + W, sizeof(V));
    std::memcpy(&x2, p + i + 2 * W, sizeof(V));
    std::memcpy(&x3, p + i + 3 * W, sizeof(V));
    if constexpr (MAX) {
      m0 = x0 > m0 ? x0 : m0;
      m1 = x1 > m1 ? x1 : m1;
      m2 = x2 > m2 ? x2 : m2;
      m3 = x3 > m3 ? x3 : m3;
    } else {
      m0 = x0 < m0 ? x0 : m0;
      m1 = x1 < m1 ? x1 : m1;
      m2 = x2 < m2 ? x2 : m2;
      m3 = x3 < m3 ? x3 : m3;
    }
    if constexpr (std::is_floating_point<C>::value) {
      nan0 |= (x0 != x0) | (x1 != x1);
      nan1 |= (x2 != x2) | (x3 != x3);
    }
  }
  for (int k = 0; k < W; ++k) {
    const C v[4] = {m0[k], m1[k], m2[k], m3[k]};
    for (C x : v) r = MAX ? (x > r ? x : r) : (x < r ? x : r);
    nan |= (nan0[k] | nan1[k]) != 0;
  }
#endif
  for (; i < n; ++i) {
    const C x = p[i];
    nan |= x != x;
    r = MAX ? (x > r ? x : r) : (x < r ? x : r);
  }
  if constexpr (std::is_floating_point<C>::value) {
    if (nan || r != r) return std::numeric_limits<C>::quiet_NaN();
  }
  return r;
}

}  // namespace tsr::cpu
