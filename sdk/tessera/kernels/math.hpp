// Tessera SDK: per-element math shared by the backends (header-only; host and CUDA device).
//
// Everything here is a pure function of its arguments, marked TSR_HOST_DEVICE, so that the CPU
// backend and the CUDA backend compute the same values with the same code:
//  - tsr::kernels::libm::NAME(x): float and double overloads of the libm functions the kernels
//    use. Host code calls std::NAME (so GCC still sees its builtins and vectorizes), device code
//    the CUDA math library (::NAMEf / ::NAME).
//  - branch-free float32 polynomials (exp, log, tanh, erf, erfc, sin/cos, log1p, expm1, GELU
//    and its derivative) written so that GCC vectorizes them at -O3: no libm calls, selects
//    only. Accuracy, measured against double libm over dense random grids: exp 2 ulp, log
//    1 ulp, log1p and expm1 2 ulp, tanh 2 ulp, sin/cos 2 ulp, erf 5e-7 absolute.
//  - NAME_c<C>(x): dispatch on the compute type C (float -> the polynomial, double -> libm).
//  - integer helpers that never invoke undefined behaviour: wrap_add/sub/mul, int_pow,
//    int_quot/int_rem (INT_MIN / -1 wraps), floor_div_float (Python floor division).
// Thread-safety: stateless. Errors: none (IEEE results: NaN/inf as documented per function).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "tessera/dtype.hpp"

#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define TSR_KERNELS_DEVICE_PASS 1
#endif

namespace tsr::kernels {

// ---- libm, host and device -------------------------------------------------------------------

namespace libm {
#ifdef TSR_KERNELS_DEVICE_PASS
#define TSR_K_LIBM1(name)                                                        \
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE float name(float x) { return ::name##f(x); } \
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE double name(double x) { return ::name(x); }
#define TSR_K_LIBM2(name)                                                                    \
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE float name(float x, float y) { return ::name##f(x, y); } \
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE double name(double x, double y) { return ::name(x, y); }
#else
#define TSR_K_LIBM1(name)                                                        \
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE float name(float x) { return std::name(x); } \
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE double name(double x) { return std::name(x); }
#define TSR_K_LIBM2(name)                                                                    \
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE float name(float x, float y) { return std::name(x, y); } \
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE double name(double x, double y) { return std::name(x, y); }
#endif
TSR_K_LIBM1(exp)
TSR_K_LIBM1(exp2)
TSR_K_LIBM1(expm1)
TSR_K_LIBM1(log)
TSR_K_LIBM1(log2)
TSR_K_LIBM1(log10)
TSR_K_LIBM1(log1p)
TSR_K_LIBM1(sqrt)
TSR_K_LIBM1(sin)
TSR_K_LIBM1(cos)
TSR_K_LIBM1(tan)
TSR_K_LIBM1(asin)
TSR_K_LIBM1(acos)
TSR_K_LIBM1(atan)
TSR_K_LIBM1(sinh)
TSR_K_LIBM1(cosh)
TSR_K_LIBM1(tanh)
TSR_K_LIBM1(asinh)
TSR_K_LIBM1(acosh)
TSR_K_LIBM1(atanh)
TSR_K_LIBM1(erf)
TSR_K_LIBM1(erfc)
TSR_K_LIBM1(fabs)
TSR_K_LIBM1(floor)
TSR_K_LIBM1(ceil)
TSR_K_LIBM1(trunc)
TSR_K_LIBM1(nearbyint)
TSR_K_LIBM2(fmod)
TSR_K_LIBM2(atan2)
TSR_K_LIBM2(hypot)
TSR_K_LIBM2(copysign)
TSR_K_LIBM2(pow)
#undef TSR_K_LIBM1
#undef TSR_K_LIBM2
}  // namespace libm

// ---- integers --------------------------------------------------------------------------------

// Unsigned type wide enough that arithmetic on it wraps (no promotion to int, no UB).
template <class T>
using wrap_t = std::conditional_t<(sizeof(T) <= 4), uint32_t, uint64_t>;

template <class T>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE T wrap_add(T a, T b) {
  return static_cast<T>(static_cast<wrap_t<T>>(a) + static_cast<wrap_t<T>>(b));
}
template <class T>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE T wrap_sub(T a, T b) {
  return static_cast<T>(static_cast<wrap_t<T>>(a) - static_cast<wrap_t<T>>(b));
}
template <class T>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE T wrap_mul(T a, T b) {
  return static_cast<T>(static_cast<wrap_t<T>>(a) * static_cast<wrap_t<T>>(b));
}

// Exact integer power by squaring, wrapping on overflow; negative exponents give 0 except for
// bases 1 and -1.
template <class T>
TSR_HOST_DEVICE inline T int_pow(T base, T exp) {
  if constexpr (std::is_signed<T>::value) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exp & 1) ? T(-1) : T(1);
      return 0;
    }
  }
  wrap_t<T> result = 1, b = static_cast<wrap_t<T>>(base);
  uint64_t e = static_cast<uint64_t>(exp);
  while (e) {
    if (e & 1u) result *= b;
    b *= b;
    e >>= 1;
  }
  return static_cast<T>(result);
}

// Signed integer quotient and remainder that never trap (INT_MIN / -1 wraps like two's
// complement hardware would if it did not fault). Precondition: b != 0 (the kernels check the
// divisor before launching).
template <class T>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE T int_quot(T a, T b) {
  if constexpr (std::is_signed<T>::value) {
    if (b == T(-1)) return static_cast<T>(wrap_sub<T>(T(0), a));
  }
  return static_cast<T>(a / b);
}
template <class T>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE T int_rem(T a, T b) {
  if constexpr (std::is_signed<T>::value) {
    if (b == T(-1)) return T(0);
  }
  return static_cast<T>(a % b);
}

// ---- floats ----------------------------------------------------------------------------------

// Python floor division of floats, as PyTorch computes it (exact for representable quotients).
template <class CT>
TSR_HOST_DEVICE inline CT floor_div_float(CT a, CT b) {
  if (b == CT(0)) return a / b;
  CT mod = libm::fmod(a, b);
  CT div = (a - mod) / b;
  if (mod != CT(0) && ((b < CT(0)) != (mod < CT(0)))) div -= CT(1);
  if (div != CT(0)) {
    CT fl = libm::floor(div);
    if (div - fl > CT(0.5)) fl += CT(1);
    return fl;
  }
  return libm::copysign(CT(0), a / b);
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

TSR_HOST_DEVICE TSR_ALWAYS_INLINE int64_t d64_bits(double d) {
  int64_t u;
  std::memcpy(&u, &d, sizeof(u));
  return u;
}

namespace detail {
// The reduction x = n ln2 + r (|r| <= ln2/2) and the Cephes expf polynomial: e^r - 1 in *q, n in
// the low mantissa bits of the returned t = x*log2(e) + 1.5*2^23 (read from its bits, not by a
// float->int conversion: that is undefined for NaN and needed a NaN clamp before it, and the two
// selects cost a third of the function's vector time). NaN flows through q as NaN.
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float exp_f32_reduce(float x, float* q) {
  const float log2e = 1.44269504088896341f;
  const float ln2_hi = 0.693359375f;
  const float ln2_lo = -2.12194440e-4f;
  const float magic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const float t = x * log2e + magic;
  const float n = t - magic;
  float r = x - n * ln2_hi;
  r = r - n * ln2_lo;
  const float r2 = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  *q = p * r2 + r;
  return t;
}

// 2^n (q + 1) for xc in [-104, 89].
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float exp_f32_core(float xc) {
  float q;
  const float t = exp_f32_reduce(xc, &q);
  const float p = q + 1.0f;
  const int32_t ni = static_cast<int32_t>(::tsr::detail::f32_to_bits(t) - 0x4B400000u);
  // 2^n as two factors, so that results down to the smallest denormal (n = -150) are exact.
  const int32_t n1 = ni >> 1;
  const int32_t n2 = ni - n1;
  const float s1 = ::tsr::detail::bits_to_f32(static_cast<uint32_t>(n1 + 127) << 23);
  const float s2 = ::tsr::detail::bits_to_f32(static_cast<uint32_t>(n2 + 127) << 23);
  return (p * s1) * s2;
}
}  // namespace detail

// e^x in float, <= 2 ulp (Cephes expf polynomial), branch-free: inf above 88.72, 0 below
// -103.97 (denormal results in between), NaN stays NaN.
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float exp_f32(float x) {
  float xc = x < -104.0f ? -104.0f : x;  // comparisons are false for NaN: it stays NaN
  xc = xc > 89.0f ? 89.0f : xc;
  float y = detail::exp_f32_core(xc);
  y = x > 88.72283935546875f ? std::numeric_limits<float>::infinity() : y;
  return x < -103.972084f ? 0.0f : y;
}

// e^x for the arguments of softmax, log-sum-exp and cross entropy: x - max(row) <= 0, or NaN
// (valid up to x = 88.3, garbage above). Within 2 ulp of e^x (1.01 measured over every float in
// [-87.33, 0]), NaN stays NaN, and results below FLT_MIN (x < -87.3365) are flushed to 0: an
// absolute error under 1.2e-38, invisible in a sum that holds e^0 = 1. The flush lets 2^n be one
// factor, made from t's bits and applied by one multiply-add: 18 vector operations against
// exp_f32's 27, 1.45x faster in softmax's row loop.
namespace detail {
// e^x for x in [-87.33, 88.3], where the result is a normal float: no flush, no overflow
// handling (outside that range the exponent bits wrap into garbage). NaN stays NaN. For callers
// whose argument is bounded by construction (GELU's -x^2/2 with |x| <= 12.5).
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float exp_f32_normal(float x) {
  float q;
  const float t = exp_f32_reduce(x, &q);
  // (n + 127) << 23 from t's bits: n sits in the low bits, and 1.5*2^23's bits shift out.
  const float s = ::tsr::detail::bits_to_f32((::tsr::detail::f32_to_bits(t) << 23) + (127u << 23));
  return q * s + s;
}
}  // namespace detail
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float exp_f32_no_overflow(float x) {
  // Arguments below the flush point are computed as 0 (any value whose steps stay normal; the
  // flush point itself would give a result just below FLT_MIN) and then replaced by 0: left as
  // they are, n < -126 wraps the exponent bits of 2^n into a denormal or garbage scale, and
  // denormal operands cost a microcode assist per vector on x86 (GELU over values of magnitude
  // 8-16, whose erfc arguments go far below: 2-2.3x slower). NaN stays NaN.
  const float y = detail::exp_f32_normal(x < -87.3365478515625f ? 0.0f : x);
  return x < -87.3365478515625f ? 0.0f : y;  // false for NaN: it stays NaN
}

TSR_HOST_DEVICE TSR_ALWAYS_INLINE float sigmoid_f32(float x) { return 1.0f / (1.0f + exp_f32(-x)); }

// log in float (Cephes logf): exponent/mantissa split by bits (denormals scaled first), then a
// degree-8 polynomial on [sqrt(1/2)-1, sqrt(2)-1]; <= 2 ulp. Branch-free.
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float log_f32(float x) {
  const bool den = x < 1.17549435e-38f;
  const float xs = den ? x * 8388608.0f : x;
  const uint32_t bits = ::tsr::detail::f32_to_bits(xs);
  int32_t e = static_cast<int32_t>((bits >> 23) & 0xffu) - 126;
  e = den ? e - 23 : e;
  const float m = ::tsr::detail::bits_to_f32((bits & 0x007fffffu) | 0x3f000000u);  // [0.5, 1)
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
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float tanh_f32(float x) {
  const float ax = libm::fabs(x);
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * x + x;
  float big = 1.0f - 2.0f / (exp_f32(ax + ax) + 1.0f);
  big = x < 0.0f ? -big : big;
  // x itself at +-0: the polynomial's x + x^3 p rounds -0 to +0, and tanh(-0) is -0 (IEEE).
  return x == 0.0f ? x : (ax < 0.625f ? small : big);
}

// erf in float: rational minimax x * P(x^2) / Q(x^2) on [-4, 4] (erf is +-1 in float beyond).
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float erf_f32(float a) {
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
// two parts is exact there), then Cephes' sinf/cosf polynomials on [-pi/4, pi/4]. shift = 1
// gives cos. Arguments beyond kSinCosFastMax need libm (sincos_full_f32).
constexpr float kSinCosFastMax = 1.0e5f;
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float sincos_f32(float x, int shift) {
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
  v = (quadrant & 2) ? -v : v;
  // sin(+-0) is x itself (IEEE: sin(-0) = -0), which the polynomial's r + r^3 s rounds to +0.
  return (shift == 0 && x == 0.0f) ? x : v;
}
// The f32 sin (COS = false) or cos of the CPU backend's float32 kernels: the polynomial within
// kSinCosFastMax, libm beyond (and for inf/NaN).
template <bool COS>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float sincos_full_f32(float x) {
  if (libm::fabs(x) <= kSinCosFastMax) return sincos_f32(x, COS ? 1 : 0);
  return COS ? libm::cos(x) : libm::sin(x);
}

namespace detail {
// erfcx(z) / t = erfc(z) e^{z^2} / t for z >= 0 with t = 1 / (1 + z/2), as a polynomial in t:
// a degree-8 Chebyshev-node fit on t in [0.15, 1] (z <= 11.3), relative error 5.5e-8 in exact
// arithmetic. erfc(z) is then t * erfcx_over_t(t) * e^{-z^2}, and e^{-z^2} is the same factor
// GELU's gradient needs for its density term, so that gradient takes one exp (Numerical
// Recipes' erfcc, t e^{P(t) - z^2}, which this replaces, would need two). Below t = 0.15
// (z > 11.3, where e^{-z^2} is 0 in float) the polynomial stays between 0.28 and 0.34 (erfcx(z)/t
// tends to 1/(2 sqrt(pi)) = 0.282 there), so erfc's tail stays 0.
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float erfcx_over_t(float t) {
  float p = -0.06037032f;
  p = p * t + 0.29081213f;
  p = p * t - 0.4998137f;
  p = p * t + 0.29206085f;
  p = p * t - 0.03589141f;
  p = p * t + 0.20641503f;
  p = p * t + 0.24221882f;
  p = p * t + 0.28248808f;  // 2 ulp above the fit: erfc(0) = t p(t) at t = 1 is then exactly 1
  p = p * t + 0.28208053f;
  return p;
}
// Phi(-a) = erfc(a / sqrt2) / 2 for a in [0, 12.5], and e^{-a^2/2} in *e (>= e^{-78.125}, a
// normal float, so exp_f32_normal needs no flush). Relative error about 3.5e-7 from the fit and
// the float steps, plus |a|^2/2 * 6e-8 from rounding the exponent (4.7e-6 at a = 12.5).
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float gelu_lower_tail(float a, float* e) {
  const float t = 1.0f / (1.0f + 0.35355339059327376f * a);  // z/2 = a / (2 sqrt2)
  *e = exp_f32_normal(-0.5f * a * a);
  return 0.5f * t * erfcx_over_t(t) * *e;
}
}  // namespace detail

// erfc for z >= 0 in float: t * erfcx_over_t(t) * e^{-z^2}. Relative error 3.5e-7 on [0, 9]
// (about Numerical Recipes' erfcc in float) plus ~|z|^2 * 6e-8 from rounding the exponent;
// results below FLT_MIN come out denormal (exp_f32), 0 past z = 10.2.
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float erfc_pos_f32(float z) {
  const float t = 1.0f / (1.0f + 0.5f * z);
  return t * detail::erfcx_over_t(t) * exp_f32(-z * z);
}
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float erfc_f32(float x) {
  const float e = erfc_pos_f32(libm::fabs(x));
  const float r = x < 0.0f ? 2.0f - e : e;
  return x != x ? x : r;
}
// GELU (erf form) without cancellation in the negative tail: Phi(x) = 1 - Phi(-x) for x >= 0.
// Beyond |x| = 12.5 the tail Phi(-|x|) is under 4e-36 and taken as 0: those lanes compute at
// |x| = 12.5 (all steps normal) and are replaced, because the exact tail's products go
// denormal near |x| = 13, and a denormal costs x86 a microcode assist for its whole vector
// (GELU over values of magnitude 8-16 ran 1.4-2x slower). NaN stays NaN (the clamp keeps it).
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float gelu_erf_f32(float x) {
  const float ax = libm::fabs(x);
  float e;
  float h = detail::gelu_lower_tail(ax > 12.5f ? 12.5f : ax, &e);
  h = ax > 12.5f ? 0.0f : h;
  return x * (x < 0.0f ? h : 1.0f - h);
}
// GELU (tanh form): 0.5 * (1 + tanh(u)) = sigmoid(2u), no cancellation.
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float gelu_tanh_f32(float x) {
  const float u = 0.79788456080286535588f * (x + 0.044715f * x * x * x);
  return x / (1.0f + exp_f32(-2.0f * u));
}

// log1p in float: log(u) * x / (u - 1) with u = 1 + x (Goldberg's trick cancels the rounding of
// u), x itself when u rounds to 1.
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float log1p_f32(float x) {
  const float u = 1.0f + x;
  const float d = u - 1.0f;
  float r = log_f32(u) * (x / (d == 0.0f ? 1.0f : d));
  r = d == 0.0f ? x : r;
  r = x == std::numeric_limits<float>::infinity() ? x : r;
  return r;
}
// expm1 in float: Taylor polynomial below |x| = 0.5 (error < 1e-8 relative), e^x - 1 above.
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float expm1_f32(float x) {
  float p = 1.0f / 40320.0f;
  p = p * x + 1.0f / 5040.0f;
  p = p * x + 1.0f / 720.0f;
  p = p * x + 1.0f / 120.0f;
  p = p * x + 1.0f / 24.0f;
  p = p * x + 1.0f / 6.0f;
  p = p * x + 0.5f;
  const float small = (p * x) * x + x;
  const float big = exp_f32(x) - 1.0f;
  // x itself at +-0 (IEEE: expm1(-0) = -0), which x + x^2 p rounds to +0.
  return x == 0.0f ? x : (libm::fabs(x) < 0.5f ? small : big);
}

// d/dx GELU (erf form) = Phi(x) + x * phi(x), Phi as in gelu_erf_f32 (no cancellation), and
// phi(x) = e^{-x^2/2} / sqrt(2 pi) from the same exp that Phi's erfc took. Past |x| = 12.5 the
// gradient is taken as 0 (x < 0) or 1, as gelu_erf_f32's tail; those lanes compute at 12.5.
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float gelu_erf_grad_f32(float x) {
  const float ax = libm::fabs(x);
  float e;
  const float h = detail::gelu_lower_tail(ax > 12.5f ? 12.5f : ax, &e);
  const float g = (x < 0.0f ? h : 1.0f - h) + x * (0.39894228040143267794f * e);
  return ax > 12.5f ? (x < 0.0f ? 0.0f : 1.0f) : g;
}
// d/dx GELU (tanh form) with s = sigmoid(2u) = (1 + tanh(u)) / 2, so 1 - tanh(u)^2 = 4 s (1 - s):
// s + 2 x s (1 - s) k (1 + 3 a x^2), u = k (x + a x^3).
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float gelu_tanh_grad_f32(float x) {
  const float k = 0.79788456080286535588f, a = 0.044715f;
  const float x2 = x * x;
  const float s = 1.0f / (1.0f + exp_f32(-2.0f * k * (x + a * x2 * x)));
  return s + 2.0f * x * s * (1.0f - s) * k * (1.0f + 3.0f * a * x2);
}

// erfinv in double: Giles' single-precision approximation refined by two Newton steps (on erfc
// near +-1, where erf(x) - y would cancel). erfinv(+-1) = +-inf, |y| > 1 gives NaN.
TSR_HOST_DEVICE inline double erfinv_f64(double y) {
  if (y != y || y < -1.0 || y > 1.0) return std::numeric_limits<double>::quiet_NaN();
  if (y == 1.0) return std::numeric_limits<double>::infinity();
  if (y == -1.0) return -std::numeric_limits<double>::infinity();
  if (y == 0.0) return y;
  const double a = libm::fabs(y);
  double w = -libm::log((1.0 - a) * (1.0 + a));
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
    w = libm::sqrt(w) - 3.0;
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
    const double d = k * libm::exp(-x * x);
    if (!(d > 0)) break;
    const double r = a < 0.5 ? libm::erf(x) - a : (1.0 - a) - libm::erfc(x);
    x -= r / d;
  }
  return y < 0 ? -x : x;
}

// ---- dispatch on the compute type (float: the polynomials above; double: libm) ----------------

template <class X>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE X exp_c(X x) {
  if constexpr (std::is_same<X, float>::value)
    return exp_f32(x);
  else
    return libm::exp(x);
}
// exp_c for x - max(row) <= 0: see exp_f32_no_overflow (float results below FLT_MIN flush to 0).
template <class X>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE X exp_no_overflow_c(X x) {
  if constexpr (std::is_same<X, float>::value)
    return exp_f32_no_overflow(x);
  else
    return libm::exp(x);
}
template <class X>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE X sigmoid_c(X x) {
  return X(1) / (X(1) + exp_c<X>(-x));
}
// Plain erf/tanh GELU formulas (libm); the kernels use the *_fast_c forms below.
template <class X>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE X gelu_erf_c(X x) {
  const X inv_sqrt2 = X(0.70710678118654752440);
  return X(0.5) * x * (X(1) + libm::erf(x * inv_sqrt2));
}
template <class X>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE X gelu_tanh_c(X x) {
  const X k = X(0.79788456080286535588);  // sqrt(2/pi)
  return X(0.5) * x * (X(1) + libm::tanh(k * (x + X(0.044715) * x * x * x)));
}
template <class X>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE X log_c(X x) {
  if constexpr (std::is_same<X, float>::value)
    return log_f32(x);
  else
    return libm::log(x);
}
template <class X>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE X tanh_c(X x) {
  if constexpr (std::is_same<X, float>::value)
    return tanh_f32(x);
  else
    return libm::tanh(x);
}
template <class X>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE X erf_c(X x) {
  if constexpr (std::is_same<X, float>::value)
    return erf_f32(x);
  else
    return libm::erf(x);
}
template <class X>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE X erfc_c(X x) {
  if constexpr (std::is_same<X, float>::value)
    return erfc_f32(x);
  else
    return libm::erfc(x);
}
template <class X>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE X gelu_erf_fast_c(X x) {
  if constexpr (std::is_same<X, float>::value)
    return gelu_erf_f32(x);
  else
    return X(0.5) * x * libm::erfc(-x * X(0.70710678118654752440));
}
template <class X>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE X gelu_tanh_fast_c(X x) {
  if constexpr (std::is_same<X, float>::value) {
    return gelu_tanh_f32(x);
  } else {
    const X u = X(0.79788456080286535588) * (x + X(0.044715) * x * x * x);
    return x / (X(1) + libm::exp(X(-2) * u));
  }
}
template <class X>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE X gelu_erf_grad_c(X x) {
  if constexpr (std::is_same<X, float>::value) {
    return gelu_erf_grad_f32(x);
  } else {
    const X cdf = X(0.5) * libm::erfc(-x * X(0.70710678118654752440));
    return cdf + x * X(0.39894228040143267794) * libm::exp(X(-0.5) * x * x);
  }
}
template <class X>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE X gelu_tanh_grad_c(X x) {
  if constexpr (std::is_same<X, float>::value) {
    return gelu_tanh_grad_f32(x);
  } else {
    const X k = X(0.79788456080286535588), a = X(0.044715), x2 = x * x;
    const X s = X(1) / (X(1) + libm::exp(X(-2) * k * (x + a * x2 * x)));
    return s + X(2) * x * s * (X(1) - s) * k * (X(1) + X(3) * a * x2);
  }
}
template <class X>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE X log1p_c(X x) {
  if constexpr (std::is_same<X, float>::value)
    return log1p_f32(x);
  else
    return libm::log1p(x);
}
template <class X>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE X expm1_c(X x) {
  if constexpr (std::is_same<X, float>::value)
    return expm1_f32(x);
  else
    return libm::expm1(x);
}
// mish = x * tanh(softplus(x)) = x * n / (n + 2) with n = e^x (e^x + 2); tanh(softplus(x)) is 1
// in both float and double beyond x = 20.
template <class X>
TSR_HOST_DEVICE TSR_ALWAYS_INLINE X mish_c(X x) {
  const X e = exp_c<X>(x < X(20) ? x : X(20));
  const X n = e * (e + X(2));
  const X r = x * n / (n + X(2));
  return x < X(20) ? r : x;
}

}  // namespace tsr::kernels
