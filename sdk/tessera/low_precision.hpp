// Tessera SDK: the 8- and 4-bit float element types (included by tessera/dtype.hpp; include
// that instead).
//
//  - tsr::Float8_e4m3fn, tsr::Float8_e5m2, tsr::Float8_e8m0fnu: storage types whose arithmetic
//    goes through float, with PyTorch's conversions bit for bit (c10/util/Float8_*.h):
//      e4m3fn: round to nearest even; |x| >= 480 (the first value past 448 that does not round
//              down to it), +-inf and NaN give NaN (0x7f/0xff): a cast does NOT saturate.
//      e5m2:   round to nearest even; overflow gives +-inf, NaN gives NaN (0x7f/0xff).
//      e8m0fnu: the exponent of |x| rounded to nearest even on the mantissa (so 1.5 * 2^e
//              rounds up to 2^(e+1)); 0 and float subnormals give 2^-127 or 2^-126; inf and NaN
//              give NaN (0xff); the sign is ignored.
//    Saturating conversions (what quantization wants) are the *_sat functions below.
//  - tsr::Float4_e2m1fn_x2: one byte with two e2m1 values (element 2i in the low nibble,
//    2i+1 in the high one), as PyTorch's float4_e2m1fn_x2 and cuBLASLt's CUDA_R_4F_E2M1. It
//    has no float conversion of its own (it is two values): lo()/hi()/pack() and the scalar
//    e2m1 functions convert, rounding to nearest even and saturating to +-6 as PTX's
//    cvt.rn.satfinite.e2m1x2 does (NaN gives +6: e2m1 has no NaN).
// Every function is TSR_HOST_DEVICE: the CUDA kernels use the same code as the CPU ones.
#pragma once

#include <cstdint>

namespace tsr {

namespace detail {

// ---- float8 e4m3fn ----
TSR_HOST_DEVICE TSR_ALWAYS_INLINE uint8_t f32_to_e4m3fn_bits(float value) {
  const uint32_t w = f32_to_bits(value);
  const uint32_t sign = (w >> 24) & 0x80u;
  const uint32_t a = w & 0x7fffffffu;
  // Normal e4m3 (|x| >= 2^-6): rebias the exponent (127 -> 7), round the 20 dropped bits to even.
  const uint32_t norm = (a + (static_cast<uint32_t>(7 - 127) << 23) + 0x7ffffu + ((a >> 20) & 1u)) >> 20;
  // Subnormal: adding 2^14 leaves round_even(|x| / 2^-9) in the low mantissa bits.
  const uint32_t sub = f32_to_bits(bits_to_f32(a) + 16384.0f) - (141u << 23);
  uint32_t r = a < (121u << 23) ? sub : norm;
  r = a >= (1087u << 20) ? 0x7fu : r;  // >= 480, inf and NaN -> NaN
  return static_cast<uint8_t>(sign | r);
}
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float e4m3fn_bits_to_f32(uint8_t b) {
  const uint32_t sign = static_cast<uint32_t>(b & 0x80u) << 24;
  const uint32_t em = b & 0x7fu;
  const uint32_t norm = (em << 20) + (120u << 23);                                         // rebias 7 -> 127
  const uint32_t sub = f32_to_bits(static_cast<float>(static_cast<int32_t>(em)) * 0.001953125f);  // em * 2^-9
  uint32_t r = em < 8u ? sub : norm;
  r = em == 0x7fu ? 0x7fc00000u : r;
  return bits_to_f32(sign | r);
}

// ---- float8 e5m2 (the high byte of a binary16) ----
TSR_HOST_DEVICE TSR_ALWAYS_INLINE uint8_t f32_to_e5m2_bits(float value) {
  const uint32_t w = f32_to_bits(value);
  const uint32_t sign = (w >> 24) & 0x80u;
  const uint32_t a = w & 0x7fffffffu;
  const uint32_t norm = (a + (static_cast<uint32_t>(15 - 127) << 23) + 0xfffffu + ((a >> 21) & 1u)) >> 21;
  const uint32_t sub = f32_to_bits(bits_to_f32(a) + 128.0f) - (134u << 23);  // round_even(|x| / 2^-16)
  uint32_t r = a < (113u << 23) ? sub : norm;
  r = a >= (143u << 23) ? (a > 0x7f800000u ? 0x7fu : 0x7cu) : r;  // >= 2^16 -> inf; NaN -> NaN
  return static_cast<uint8_t>(sign | r);
}
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float e5m2_bits_to_f32(uint8_t b) {
  return f16_bits_to_f32(static_cast<uint16_t>(static_cast<uint16_t>(b) << 8));
}

// ---- float8 e8m0fnu ----
TSR_HOST_DEVICE TSR_ALWAYS_INLINE uint8_t f32_to_e8m0fnu_bits(float value) {
  const uint32_t w = f32_to_bits(value);
  const uint32_t exponent = (w >> 23) & 0xffu;
  const uint32_t guard = (w >> 22) & 1u;
  const uint32_t rest = (w & 0x3fffffu) != 0u;  // round and sticky bits
  const uint32_t lsb = exponent > 0u;           // the implied mantissa bit
  const uint32_t up = guard & (rest | lsb);
  return static_cast<uint8_t>(exponent == 0xffu ? 0xffu : exponent + up);  // 254 + 1 is NaN
}
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float e8m0fnu_bits_to_f32(uint8_t b) {
  uint32_t r = static_cast<uint32_t>(b) << 23;
  r = b == 0u ? 0x00400000u : r;      // 2^-127 is a float subnormal
  r = b == 0xffu ? 0x7fc00000u : r;  // NaN
  return bits_to_f32(r);
}

// ---- float4 e2m1 (one value, in the low nibble) ----
// Rounds to nearest even by counting the midpoints |x| passes (a tie stops at the even code);
// saturates to 6; NaN gives +6.
TSR_HOST_DEVICE TSR_ALWAYS_INLINE uint8_t f32_to_e2m1_bits(float value) {
  const uint32_t w = f32_to_bits(value);
  const float a = bits_to_f32(w & 0x7fffffffu);
  uint32_t code = static_cast<uint32_t>(a > 0.25f) + static_cast<uint32_t>(a >= 0.75f) +
                  static_cast<uint32_t>(a > 1.25f) + static_cast<uint32_t>(a >= 1.75f) +
                  static_cast<uint32_t>(a > 2.5f) + static_cast<uint32_t>(a >= 3.5f) + static_cast<uint32_t>(a > 5.0f);
  const bool nan = (w & 0x7fffffffu) > 0x7f800000u;
  code = nan ? 7u : (code | ((w >> 28) & 0x8u));
  return static_cast<uint8_t>(code);
}
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float e2m1_bits_to_f32(uint8_t nibble) {
  // 0, 0.5, 1, 1.5, 2, 3, 4, 6: exponent e = code >> 1, mantissa m = code & 1.
  const uint32_t code = nibble & 7u;
  const uint32_t e = code >> 1, m = code & 1u;
  const float mag = e == 0u ? 0.5f * static_cast<float>(m)
                            : static_cast<float>(1u << (e - 1u)) * (1.0f + 0.5f * static_cast<float>(m));
  return (nibble & 8u) ? -mag : mag;
}

}  // namespace detail

// Saturating conversions for quantization: finite values beyond the format's range clamp to
// its largest finite value (448 for e4m3fn, 57344 for e5m2), NaN stays NaN, +-inf clamp too
// (as PTX's cvt .satfinite and Transformer Engine's casts).
TSR_HOST_DEVICE TSR_ALWAYS_INLINE uint8_t f32_to_e4m3fn_sat_bits(float v) {
  const float c = v > 448.0f ? 448.0f : (v < -448.0f ? -448.0f : v);  // NaN passes through
  return detail::f32_to_e4m3fn_bits(c);
}
TSR_HOST_DEVICE TSR_ALWAYS_INLINE uint8_t f32_to_e5m2_sat_bits(float v) {
  const float c = v > 57344.0f ? 57344.0f : (v < -57344.0f ? -57344.0f : v);
  return detail::f32_to_e5m2_bits(c);
}

struct alignas(1) Float8_e4m3fn {
  uint8_t x;
  Float8_e4m3fn() = default;
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE Float8_e4m3fn(float f) : x(detail::f32_to_e4m3fn_bits(f)) {}  // NOLINT
  TSR_HOST_DEVICE constexpr Float8_e4m3fn(uint8_t bits, from_bits_t) : x(bits) {}
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE operator float() const { return detail::e4m3fn_bits_to_f32(x); }  // NOLINT
  TSR_HOST_DEVICE static constexpr Float8_e4m3fn from_raw(uint8_t bits) { return Float8_e4m3fn(bits, from_bits); }
  TSR_HOST_DEVICE constexpr uint8_t bits() const { return x; }
};

struct alignas(1) Float8_e5m2 {
  uint8_t x;
  Float8_e5m2() = default;
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE Float8_e5m2(float f) : x(detail::f32_to_e5m2_bits(f)) {}  // NOLINT
  TSR_HOST_DEVICE constexpr Float8_e5m2(uint8_t bits, from_bits_t) : x(bits) {}
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE operator float() const { return detail::e5m2_bits_to_f32(x); }  // NOLINT
  TSR_HOST_DEVICE static constexpr Float8_e5m2 from_raw(uint8_t bits) { return Float8_e5m2(bits, from_bits); }
  TSR_HOST_DEVICE constexpr uint8_t bits() const { return x; }
};

struct alignas(1) Float8_e8m0fnu {
  uint8_t x;
  Float8_e8m0fnu() = default;
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE Float8_e8m0fnu(float f) : x(detail::f32_to_e8m0fnu_bits(f)) {}  // NOLINT
  TSR_HOST_DEVICE constexpr Float8_e8m0fnu(uint8_t bits, from_bits_t) : x(bits) {}
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE operator float() const { return detail::e8m0fnu_bits_to_f32(x); }  // NOLINT
  TSR_HOST_DEVICE static constexpr Float8_e8m0fnu from_raw(uint8_t bits) { return Float8_e8m0fnu(bits, from_bits); }
  TSR_HOST_DEVICE constexpr uint8_t bits() const { return x; }
};

struct alignas(1) Float4_e2m1fn_x2 {
  uint8_t x;
  Float4_e2m1fn_x2() = default;
  TSR_HOST_DEVICE constexpr Float4_e2m1fn_x2(uint8_t bits, from_bits_t) : x(bits) {}
  TSR_HOST_DEVICE static constexpr Float4_e2m1fn_x2 from_raw(uint8_t bits) { return Float4_e2m1fn_x2(bits, from_bits); }
  TSR_HOST_DEVICE static TSR_ALWAYS_INLINE Float4_e2m1fn_x2 pack(float lo, float hi) {
    return from_raw(static_cast<uint8_t>(detail::f32_to_e2m1_bits(lo) | (detail::f32_to_e2m1_bits(hi) << 4)));
  }
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE float lo() const { return detail::e2m1_bits_to_f32(static_cast<uint8_t>(x & 0xfu)); }
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE float hi() const { return detail::e2m1_bits_to_f32(static_cast<uint8_t>(x >> 4)); }
  TSR_HOST_DEVICE constexpr uint8_t bits() const { return x; }
};

static_assert(sizeof(Float8_e4m3fn) == 1 && sizeof(Float8_e5m2) == 1 && sizeof(Float8_e8m0fnu) == 1 &&
                  sizeof(Float4_e2m1fn_x2) == 1,
              "low-precision float types are one byte");

}  // namespace tsr
