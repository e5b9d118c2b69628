// Helpers for the quantization tests (test_quant*.cpp): low-precision tensors from raw codes and
// back, random codes of each format (finite, never all zeros), an independent statement of the
// swizzled scale layout, and ulp sizes of the formats. The layout here is written from torchao's
// to_blocked (reshape/permute steps replayed on indices), not from block_scale_layout.hpp, so the
// two check each other.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "op_test.hpp"
#include "tessera/tessera.hpp"

namespace tsr::qtest {

using optest::Shape;

inline int64_t rup(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// A tensor of dtype `dt` (a one-byte dtype) holding the codes `bytes`.
inline Tensor from_codes(const std::vector<uint8_t>& bytes, const Shape& shape, tsr_dtype_t dt) {
  switch (dt) {
    case TSR_F8_E4M3FN: {
      std::vector<Float8_e4m3fn> v;
      for (uint8_t b : bytes) v.push_back(Float8_e4m3fn::from_raw(b));
      return from_vector(v, shape);
    }
    case TSR_F8_E5M2: {
      std::vector<Float8_e5m2> v;
      for (uint8_t b : bytes) v.push_back(Float8_e5m2::from_raw(b));
      return from_vector(v, shape);
    }
    case TSR_F8_E8M0FNU: {
      std::vector<Float8_e8m0fnu> v;
      for (uint8_t b : bytes) v.push_back(Float8_e8m0fnu::from_raw(b));
      return from_vector(v, shape);
    }
    case TSR_F4_E2M1FN_X2: {
      std::vector<Float4_e2m1fn_x2> v;
      for (uint8_t b : bytes) v.push_back(Float4_e2m1fn_x2::from_raw(b));
      return from_vector(v, shape);
    }
    default:
      return from_vector(bytes, shape);
  }
}

// The codes of a one-byte tensor, in row-major order.
inline std::vector<uint8_t> codes(const Tensor& t) {
  std::vector<uint8_t> out;
  switch (t.dtype()) {
    case TSR_F8_E4M3FN:
      for (auto x : t.contiguous().to_vector<Float8_e4m3fn>()) out.push_back(x.bits());
      break;
    case TSR_F8_E5M2:
      for (auto x : t.contiguous().to_vector<Float8_e5m2>()) out.push_back(x.bits());
      break;
    case TSR_F8_E8M0FNU:
      for (auto x : t.contiguous().to_vector<Float8_e8m0fnu>()) out.push_back(x.bits());
      break;
    case TSR_F4_E2M1FN_X2:
      for (auto x : t.contiguous().to_vector<Float4_e2m1fn_x2>()) out.push_back(x.bits());
      break;
    default:
      out = t.contiguous().to_vector<uint8_t>();
  }
  return out;
}

// The value of one code of a format (an e2m1 nibble for float4_e2m1fn_x2).
inline double decode(uint8_t b, tsr_dtype_t dt) {
  switch (dt) {
    case TSR_F8_E4M3FN:
      return detail::e4m3fn_bits_to_f32(b);
    case TSR_F8_E5M2:
      return detail::e5m2_bits_to_f32(b);
    case TSR_F8_E8M0FNU:
      return detail::e8m0fnu_bits_to_f32(b);
    default:
      return detail::e2m1_bits_to_f32(static_cast<uint8_t>(b & 0xf));
  }
}

// Random finite codes (no NaN, no inf) of moderate magnitude, never all zeros.
inline std::vector<uint8_t> random_codes(int64_t n, tsr_dtype_t dt, uint64_t seed) {
  std::mt19937_64 g(seed * 0x9E3779B97F4A7C15ull + 11);
  std::vector<uint8_t> v(static_cast<size_t>(n));
  // Exponent fields kept moderate (|x| < 8) so that sums of K products stay inside float16.
  for (auto& b : v) {
    const uint8_t sign = static_cast<uint8_t>(g() & 0x80);
    if (dt == TSR_F8_E4M3FN)
      b = static_cast<uint8_t>(sign | (g() % 10) << 3 | g() % 8);
    else if (dt == TSR_F8_E5M2)
      b = static_cast<uint8_t>(sign | (g() % 18) << 2 | g() % 4);
    else
      b = static_cast<uint8_t>(g());
  }
  if (n > 0) v[0] = dt == TSR_F4_E2M1FN_X2 ? 0x23 : 0x38;  // never all zeros
  return v;
}

// Random positive scale codes of moderate size: e8m0 2^-3..2^3, e4m3fn normal values in
// [2^-3, 2^3).
inline std::vector<uint8_t> random_scale_codes(int64_t n, tsr_dtype_t dt, uint64_t seed) {
  std::mt19937_64 g(seed * 0x9E3779B97F4A7C15ull + 13);
  std::vector<uint8_t> v(static_cast<size_t>(n));
  for (auto& b : v)
    b = dt == TSR_F8_E8M0FNU ? static_cast<uint8_t>(124 + g() % 7) : static_cast<uint8_t>(0x20 + g() % 0x30);
  return v;
}

// The swizzled position of (r, c) in a [R, C] scale matrix, replaying torchao's to_blocked:
// padded.view(R/128, 128, C/4, 4).permute(0, 2, 1, 3).reshape(-1, 4, 32, 4).transpose(1, 2)
// .reshape(-1) on the index (r, c).
inline int64_t blocked_index(int64_t r, int64_t c, int64_t C) {
  const int64_t Cp = rup(C, 4);
  // view(R/128, 128, C/4, 4): (r / 128, r % 128, c / 4, c % 4); permute -> (i0, i2, i1, i3)
  const int64_t i0 = r / 128, i1 = r % 128, i2 = c / 4, i3 = c % 4;
  // flat index of [i0, i2, i1, i3] in [R/128, C/4, 128, 4]
  const int64_t flat = ((i0 * (Cp / 4) + i2) * 128 + i1) * 4 + i3;
  // reshape(-1, 4, 32, 4): (t, a, b, j) with flat = ((t * 4 + a) * 32 + b) * 4 + j
  const int64_t t = flat / 512, a = flat / 128 % 4, b = flat / 4 % 32, j = flat % 4;
  // transpose(1, 2) -> (t, b, a, j) in [T, 32, 4, 4]
  return ((t * 32 + b) * 4 + a) * 4 + j;
}

// Swizzled scale codes [rup(R, 128) * rup(C, 4)] from plain row-major codes [R, C] (padding 0).
inline std::vector<uint8_t> swizzle_codes(const std::vector<uint8_t>& plain, int64_t R, int64_t C) {
  std::vector<uint8_t> out(static_cast<size_t>(rup(R, 128) * rup(C, 4)), 0);
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c)
      out[static_cast<size_t>(blocked_index(r, c, C))] = plain[static_cast<size_t>(r * C + c)];
  return out;
}

// The spacing of a format's values at magnitude |x| (|x| within range), for error bounds:
// e4m3fn 3 mantissa bits, normal from 2^-6; e5m2 2 bits, normal from 2^-14; bf16 8, f16 11
// (normal from 2^-14), f32 24 significant bits.
inline double ulp(double x, tsr_dtype_t dt) {
  x = std::fabs(x);
  int mant = 23, emin = -126;
  switch (dt) {
    case TSR_F8_E4M3FN:
      mant = 3, emin = -6;
      break;
    case TSR_F8_E5M2:
      mant = 2, emin = -14;
      break;
    case TSR_BF16:
      mant = 7, emin = -126;
      break;
    case TSR_F16:
      mant = 10, emin = -14;
      break;
    case TSR_F64:
      mant = 52, emin = -1022;
      break;
    default:
      break;
  }
  int e = x > 0 ? std::ilogb(x) : emin;
  if (e < emin) e = emin;
  return std::ldexp(1.0, e - mant);
}

// The spacing of e2m1 values at |y| <= 6: 0.5 below 2, 1 below 4, 2 up to 6.
inline double e2m1_spacing(double y) {
  y = std::fabs(y);
  return y < 2 ? 0.5 : y < 4 ? 1.0 : 2.0;
}

}  // namespace tsr::qtest
