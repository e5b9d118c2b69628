// The scale arithmetic of the block-scaled formats, as the sm100 kernels compute it
// (quantize.cu), in __host__ __device__ functions so that the CPU tests check it exhaustively
// (tests/cuda/test_sm100_block_scale.cpp) without a GPU.
#pragma once

#include <cstdint>
#include <cstring>

#include "tessera/dtype.hpp"  // the low-precision types and TSR_HOST_DEVICE

namespace tsr::sm100 {

// Where element (r, c) of a [rows, cols] scale matrix lies in cuBLASLt's swizzled layout: the
// matrix padded to multiples of 128 rows and 4 columns, stored as 512-byte 128x4 tiles (row tile
// major, then column tile; col_tiles = ceil(cols / 4)), and inside a tile (r, c) at
// (r % 32) * 16 + ((r % 128) / 32) * 4 + (c % 4).
TSR_HOST_DEVICE inline int64_t swizzled_offset(int64_t r, int64_t c, int64_t col_tiles) {
  return ((r / 128) * col_tiles + c / 4) * 512 + (r % 32) * 16 + ((r % 128) / 32) * 4 + (c % 4);
}
// Elements of the padded swizzled scale tensor of a [rows, cols] scale matrix.
TSR_HOST_DEVICE inline int64_t swizzled_numel(int64_t rows, int64_t cols) {
  return (rows + 127) / 128 * 128 * ((cols + 3) / 4 * 4);
}

// MXFP8: e = log2 of the smallest power of two s with amax / s <= 448 = 1.75 * 2^8, exactly:
// with amax = m * 2^E (m in [1, 2)), amax <= 1.75 * 2^(8 + e) iff e >= E - 8 when m <= 1.75,
// else e >= E - 7. Clamped to e8m0's range [-127, 127] (-127 for amax 0). amax must be finite
// and >= 0.
TSR_HOST_DEVICE inline int mx_scale_exponent(float amax) {
  if (!(amax > 0.f)) return -127;
  uint32_t bits;
  std::memcpy(&bits, &amax, sizeof bits);
  int E = int((bits >> 23) & 0xffu) - 127;
  uint32_t mant = bits & 0x7fffffu;
  if (E == -127) {  // subnormal: normalise (mant != 0 here)
    int shift = 0;
    while (!(mant & 0x800000u)) mant <<= 1, ++shift;
    mant &= 0x7fffffu;
    E = -126 - shift;
  }
  const int e = mant <= 0x600000u ? E - 8 : E - 7;  // 0x600000: the mantissa bits of 1.75
  return e < -127 ? -127 : (e > 127 ? 127 : e);
}
// The e8m0 code of that scale: e + 127, or NaN (0xff) when amax is inf or NaN (a block holding
// one), which makes the whole block's data NaN.
TSR_HOST_DEVICE inline uint8_t mx_scale_bits(float amax) {
  return amax <= 3.402823466e38f ? uint8_t(mx_scale_exponent(amax) + 127) : uint8_t(0xff);
}

// |x| as bits: the unsigned order of these is the order of |x| with inf above every finite
// value and NaN above inf, so an unsigned max over them is a NaN-sticky amax (a block holding
// NaN has amax NaN, one holding inf has amax inf), as the CPU reference computes it.
TSR_HOST_DEVICE inline uint32_t abs_bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b & 0x7fffffffu;
}
TSR_HOST_DEVICE inline float from_abs_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// NVFP4: the block scale's e4m3 code, e4m3_sat(amax_block / 6 * g).
TSR_HOST_DEVICE inline uint8_t nvfp4_scale_bits(float amax, float g) { return f32_to_e4m3fn_sat_bits(amax / 6.f * g); }
// The default global scale when none is given: 448 * 6 / amax (1 for amax 0).
TSR_HOST_DEVICE inline float nvfp4_default_global_scale(float amax) { return amax > 0.f ? (448.f * 6.f) / amax : 1.f; }

}  // namespace tsr::sm100
