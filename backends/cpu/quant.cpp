// The CPU kernels of quantize_mxfp8 / dequantize_mxfp8 and quantize_nvfp4 / dequantize_nvfp4:
// the recipes of tessera/kernels/quant_ops.hpp (shared with the CUDA kernels) over views of any
// strides. Inputs are read as float32 (float64 rounds to float32 first, as the GPU kernels
// do); outputs are dense and the scale buffers' padding is zero bytes.
#include <cstring>
#include <vector>

#include "quant_util.hpp"
#include "tessera/kernels/block_scale_layout.hpp"
#include "tessera/kernels/quant_ops.hpp"

namespace tsr::cpu {
namespace {

using quant::flat_offset;
using quant::load_float;

// |a| for the block maximum, NaN-sticky: a block holding NaN has amax NaN.
inline float amax_step(float amax, float x) {
  const float a = x < 0 ? -x : x;
  return (a > amax || a != a) && amax == amax ? a : amax;
}

float elem(const tsr_tensor_view_t& x, int64_t m, int64_t k) {
  return static_cast<float>(load_float(x, m * x.strides[0] + k * x.strides[1]));
}

void store_float(const tsr_tensor_view_t& out, int64_t off, double v) {
  switch (out.dtype) {
    case TSR_F16:
      static_cast<Half*>(out.data)[off] = Half(static_cast<float>(v));
      break;
    case TSR_BF16:
      static_cast<BFloat16*>(out.data)[off] = BFloat16(static_cast<float>(v));
      break;
    case TSR_F32:
      static_cast<float*>(out.data)[off] = static_cast<float>(v);
      break;
    default:
      static_cast<double*>(out.data)[off] = v;
  }
}

int64_t grain_rows(int64_t K) { return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, K)); }

// quantize_mxfp8(self [M, K]) -> (data e4m3fn [M, K], scale e8m0 swizzled).
void quantize_mxfp8_kernel(KernelCall& c) {
  const auto& x = c.input(0);
  const auto& data = c.output(0);
  const auto& scale = c.output(1);
  const int64_t M = x.sizes[0], K = x.sizes[1], nb = K / kernels::kMxBlock;
  uint8_t* q = static_cast<uint8_t*>(data.data);
  uint8_t* s = static_cast<uint8_t*>(scale.data);
  if (view_numel(scale) > 0) std::memset(s, 0, static_cast<size_t>(view_numel(scale)));  // M = 0: no buffer
  parallel_for(0, M, grain_rows(K), [&](int64_t m0, int64_t m1) {
    float v[kernels::kMxBlock];
    for (int64_t m = m0; m < m1; ++m)
      for (int64_t blk = 0; blk < nb; ++blk) {
        float amax = 0;
        for (int64_t i = 0; i < kernels::kMxBlock; ++i) amax = amax_step(amax, v[i] = elem(x, m, blk * 32 + i));
        const uint8_t sb = kernels::mx_scale_bits(amax);
        s[kernels::swizzled_scale_offset(m, blk, nb)] = sb;
        const float sf = detail::e8m0fnu_bits_to_f32(sb);
        for (int64_t i = 0; i < kernels::kMxBlock; ++i) q[m * K + blk * 32 + i] = kernels::mx_encode(v[i], sf);
      }
  });
}

// dequantize_mxfp8(data float8 [M, K], scale e8m0 swizzled, dtype) -> data * scale.
void dequantize_mxfp8_kernel(KernelCall& c) {
  const auto& d = c.input(0);
  const auto& sc = c.input(1);
  const auto& out = c.output(0);
  const int64_t M = d.sizes[0], K = d.sizes[1], nb = K / kernels::kMxBlock;
  const uint8_t* sp = static_cast<const uint8_t*>(sc.data);
  parallel_for(0, M, grain_rows(K), [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m)
      for (int64_t k = 0; k < K; ++k) {
        const double s =
            detail::e8m0fnu_bits_to_f32(sp[flat_offset(sc, kernels::swizzled_scale_offset(m, k / 32, nb))]);
        const uint8_t b = quant::byte_at(d, m, k);
        const double v = d.dtype == TSR_F8_E4M3FN ? detail::e4m3fn_bits_to_f32(b) : detail::e5m2_bits_to_f32(b);
        store_float(out, m * K + k, v * s);
      }
  });
}

// quantize_nvfp4(self [M, K], global_scale?) -> (data [M, K/2], scale e4m3fn swizzled, global).
void quantize_nvfp4_kernel(KernelCall& c) {
  const auto& x = c.input(0);
  const auto& data = c.output(0);
  const auto& scale = c.output(1);
  const int64_t M = x.sizes[0], K = x.sizes[1], nb = K / kernels::kNvfp4Block;
  float g;
  if (!c.arg_is_none(1)) {
    g = *static_cast<const float*>(c.input(1).data);
  } else {
    float amax = 0;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t k = 0; k < K; ++k) amax = amax_step(amax, elem(x, m, k));
    g = kernels::nvfp4_global_scale(amax);
  }
  *static_cast<float*>(c.output(2).data) = g;
  uint8_t* q = static_cast<uint8_t*>(data.data);
  uint8_t* s = static_cast<uint8_t*>(scale.data);
  if (view_numel(scale) > 0) std::memset(s, 0, static_cast<size_t>(view_numel(scale)));  // M = 0: no buffer
  parallel_for(0, M, grain_rows(K), [&](int64_t m0, int64_t m1) {
    float v[kernels::kNvfp4Block];
    for (int64_t m = m0; m < m1; ++m)
      for (int64_t blk = 0; blk < nb; ++blk) {
        float amax = 0;
        for (int64_t i = 0; i < kernels::kNvfp4Block; ++i) amax = amax_step(amax, v[i] = elem(x, m, blk * 16 + i));
        const uint8_t sb = kernels::nvfp4_block_scale_bits(amax, g);
        s[kernels::swizzled_scale_offset(m, blk, nb)] = sb;
        const float sf = detail::e4m3fn_bits_to_f32(sb);
        for (int64_t i = 0; i < kernels::kNvfp4Block; i += 2)
          q[m * (K / 2) + (blk * 16 + i) / 2] =
              static_cast<uint8_t>(kernels::nvfp4_encode(v[i], g, sf) | (kernels::nvfp4_encode(v[i + 1], g, sf) << 4));
      }
  });
}

// dequantize_nvfp4(data [M, K/2], scale e4m3fn swizzled, global_scale, dtype) -> [M, K].
void dequantize_nvfp4_kernel(KernelCall& c) {
  const auto& d = c.input(0);
  const auto& sc = c.input(1);
  const float g = *static_cast<const float*>(c.input(2).data);
  const auto& out = c.output(0);
  const int64_t M = d.sizes[0], K = 2 * d.sizes[1], nb = K / kernels::kNvfp4Block;
  const uint8_t* sp = static_cast<const uint8_t*>(sc.data);
  parallel_for(0, M, grain_rows(K), [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m)
      for (int64_t k = 0; k < K; ++k) {
        const float s = detail::e4m3fn_bits_to_f32(sp[flat_offset(sc, kernels::swizzled_scale_offset(m, k / 16, nb))]);
        const uint8_t b = quant::byte_at(d, m, k / 2);
        const uint8_t nib = static_cast<uint8_t>(k % 2 ? b >> 4 : b & 0xfu);
        // The product is exact in float32 and float64; one rounding at the division.
        const double v = double(detail::e2m1_bits_to_f32(nib)) * double(s) / double(g);
        store_float(out, m * K + k, out.dtype == TSR_F64 ? v : double(kernels::nvfp4_decode(nib, g, s)));
      }
  });
}

}  // namespace

TSR_CPU_KERNELS(quant) {
  r.kernel("quantize_mxfp8", "cpu::quantize_mxfp8", device_type, kFloatingMask, TSR_KERNEL(quantize_mxfp8_kernel));
  r.kernel("dequantize_mxfp8", "cpu::dequantize_mxfp8", device_type, kFloatingMask,
           TSR_KERNEL(dequantize_mxfp8_kernel));
  r.kernel("quantize_nvfp4", "cpu::quantize_nvfp4", device_type, kFloatingMask, TSR_KERNEL(quantize_nvfp4_kernel));
  r.kernel("dequantize_nvfp4", "cpu::dequantize_nvfp4", device_type, kFloatingMask,
           TSR_KERNEL(dequantize_nvfp4_kernel));
}

}  // namespace tsr::cpu
