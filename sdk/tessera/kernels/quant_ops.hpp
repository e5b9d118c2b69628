// Tessera SDK: the per-block and per-element math of the MXFP8 and NVFP4 quantization recipes
// (quantize_mxfp8, quantize_nvfp4 and their inverses), written once for the CPU reference
// kernels and the CUDA kernels (TSR_HOST_DEVICE). Everything is computed in float32, as the GPU
// kernels do; the conversions are those of tessera/low_precision.hpp. docs/low-precision.md
// states the recipes and the error bounds they give.
#pragma once

#include <cstdint>

#include "tessera/dtype.hpp"

namespace tsr::kernels {

// |x| as bits: the unsigned order of these is the order of |x| with inf above every finite value
// and NaN above inf, so an unsigned max over them (a GPU's atomicMax, a vector max) is the
// NaN-sticky amax the recipes use: a block holding NaN has amax NaN, one holding inf has inf.
TSR_HOST_DEVICE TSR_ALWAYS_INLINE uint32_t abs_bits(float x) { return ::tsr::detail::f32_to_bits(x) & 0x7fffffffu; }
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float from_abs_bits(uint32_t b) { return ::tsr::detail::bits_to_f32(b); }

// ---- MXFP8: e4m3fn data, one e8m0 (power of two) scale per 32 elements ----

// The e8m0 scale of a block whose largest magnitude is `amax`: the smallest power of two s with
// amax / s <= 448 (e4m3fn's largest finite value), so no element saturates. This is NVIDIA's
// "RCEIL" rule (cuBLAS, Transformer Engine); OCP MX v1.0's rule, 2^(floor(log2 amax) - 8),
// can be one power smaller and then saturates the block's largest elements. The exponent is
// clamped to e8m0's range [-127, 127]; amax 0 gives 2^-127 (byte 0); inf or NaN give the NaN
// scale 0xff, which makes the block's data NaN. Exact: read from amax's bits, no log2.
TSR_HOST_DEVICE TSR_ALWAYS_INLINE uint8_t mx_scale_bits(float amax) {
  uint32_t w = ::tsr::detail::f32_to_bits(amax) & 0x7fffffffu;
  if (w >= 0x7f800000u) return 0xffu;  // inf, NaN
  if (w == 0u) return 0u;
  int32_t e_adj = 0;
  if (w < 0x00800000u) {  // subnormal: normalize exactly
    w = ::tsr::detail::f32_to_bits(::tsr::detail::bits_to_f32(w) * 16777216.0f);
    e_adj = -24;
  }
  const int32_t E = static_cast<int32_t>(w >> 23) - 127 + e_adj;  // amax = m * 2^E, m in [1, 2)
  // 448 = 1.75 * 2^8: amax <= 448 * 2^e  <=>  e >= E - 8 when m <= 1.75, else e >= E - 7.
  int32_t e = E - 8 + static_cast<int32_t>((w & 0x7fffffu) > 0x600000u);
  e = e < -127 ? -127 : (e > 127 ? 127 : e);
  return static_cast<uint8_t>(e + 127);
}

// One element of an MXFP8 block: saturating e4m3fn of x / scale.
TSR_HOST_DEVICE TSR_ALWAYS_INLINE uint8_t mx_encode(float x, float scale) { return f32_to_e4m3fn_sat_bits(x / scale); }

// ---- NVFP4: packed e2m1 data, one e4m3fn scale per 16 elements, one float32 global scale ----

// The global scale when none is given: 448 * 6 / amax(tensor), so that the largest block scale
// is e4m3fn's largest value; 1 when amax is 0.
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float nvfp4_global_scale(float amax) { return amax == 0.0f ? 1.0f : 2688.0f / amax; }

// The e4m3fn block scale of a block whose largest magnitude is `amax`: saturating
// e4m3fn(amax / 6 * global_scale).
TSR_HOST_DEVICE TSR_ALWAYS_INLINE uint8_t nvfp4_block_scale_bits(float amax, float global_scale) {
  return f32_to_e4m3fn_sat_bits(amax / 6.0f * global_scale);
}

// One element of an NVFP4 block: e2m1(x * global_scale / block_scale) (saturating to +-6,
// rounding to nearest even), 0 where the block scale is 0.
TSR_HOST_DEVICE TSR_ALWAYS_INLINE uint8_t nvfp4_encode(float x, float global_scale, float block_scale) {
  return block_scale == 0.0f ? uint8_t(0) : ::tsr::detail::f32_to_e2m1_bits(x * global_scale / block_scale);
}

// The inverse: e2m1 value * block_scale / global_scale (the product is exact in float32).
TSR_HOST_DEVICE TSR_ALWAYS_INLINE float nvfp4_decode(uint8_t nibble, float global_scale, float block_scale) {
  return ::tsr::detail::e2m1_bits_to_f32(nibble) * block_scale / global_scale;
}

}  // namespace tsr::kernels
