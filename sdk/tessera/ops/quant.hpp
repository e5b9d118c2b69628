// Tessera SDK: host wrappers of the quantization op family (low-precision GEMM and the MXFP8 /
// NVFP4 recipes). Include it explicitly: #include "tessera/ops/quant.hpp". docs/low-precision.md
// describes the formats, the scale layouts and each op's semantics. Inference only: none of
// these ops has a backward formula.
#pragma once

#include <optional>
#include <tuple>

#include "tessera/tessera.hpp"

namespace tsr {

// torch._scaled_mm: out = cast_out(scale_result * (scale_a (x) scale_b .* (self @ mat2)) + bias).
// The mode follows the dtypes and shapes: float8 operands with float32 scales of one element
// (tensorwise) or [M, 1] and [1, N] (rowwise); float8 operands with float8_e8m0fnu block scales,
// one per 32 values along K, swizzled (MXFP8); float4_e2m1fn_x2 operands [M, K/2] and [K/2, N]
// with float8_e4m3fn block scales, one per 16 values, swizzled, and the global scale as
// scale_result (NVFP4). out_dtype defaults to self's dtype (tensorwise, rowwise) or bfloat16
// (block-scaled). use_fast_accum is a hint the CPU ignores.
inline Tensor scaled_mm(const Tensor& self, const Tensor& mat2, const Tensor& scale_a, const Tensor& scale_b,
                        const std::optional<Tensor>& bias = std::nullopt,
                        const std::optional<Tensor>& scale_result = std::nullopt,
                        std::optional<tsr_dtype_t> out_dtype = std::nullopt, bool use_fast_accum = false) {
  static const Op op("scaled_mm");
  return call(op, {self, mat2, scale_a, scale_b, detail::opt_tensor_arg(bias), detail::opt_tensor_arg(scale_result),
                   out_dtype ? Arg(*out_dtype) : Arg(none), use_fast_accum});
}

// MXFP8 quantization of self [M, K] (K % 32 == 0): (data float8_e4m3fn [M, K], scale
// float8_e8m0fnu [round_up(M, 128), round_up(K / 32, 4)], swizzled).
inline std::tuple<Tensor, Tensor> quantize_mxfp8(const Tensor& self) {
  static const Op op("quantize_mxfp8");
  auto r = call_multi(op, {self});
  return {r[0], r[1]};
}
inline Tensor dequantize_mxfp8(const Tensor& data, const Tensor& scale,
                               std::optional<tsr_dtype_t> dtype = std::nullopt) {
  static const Op op("dequantize_mxfp8");
  return call(op, {data, scale, dtype ? Arg(*dtype) : Arg(none)});
}

// NVFP4 quantization of self [M, K] (K % 16 == 0): (data float4_e2m1fn_x2 [M, K/2], scale
// float8_e4m3fn [round_up(M, 128), round_up(K / 16, 4)], swizzled, global_scale float32 []):
// the global scale given, or 448 * 6 / amax(self).
inline std::tuple<Tensor, Tensor, Tensor> quantize_nvfp4(const Tensor& self,
                                                         const std::optional<Tensor>& global_scale = std::nullopt) {
  static const Op op("quantize_nvfp4");
  auto r = call_multi(op, {self, detail::opt_tensor_arg(global_scale)});
  return {r[0], r[1], r[2]};
}
inline Tensor dequantize_nvfp4(const Tensor& data, const Tensor& scale, const Tensor& global_scale,
                               std::optional<tsr_dtype_t> dtype = std::nullopt) {
  static const Op op("dequantize_nvfp4");
  return call(op, {data, scale, global_scale, dtype ? Arg(*dtype) : Arg(none)});
}

// A plain [R, C] block-scale matrix to the padded swizzled layout [round_up(R, 128),
// round_up(C, 4)] scaled_mm reads, and back (rows, cols: the plain matrix's R and C).
inline Tensor swizzle_block_scales(const Tensor& scale) {
  static const Op op("swizzle_block_scales");
  return call(op, {scale});
}
inline Tensor unswizzle_block_scales(const Tensor& scale, int64_t rows, int64_t cols) {
  static const Op op("unswizzle_block_scales");
  return call(op, {scale, rows, cols});
}

}  // namespace tsr
