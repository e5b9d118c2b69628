// quantize_nvfp4 and dequantize_nvfp4: NVFP4 (float4_e2m1fn_x2 data, two values per byte along
// K, one float8_e4m3fn scale per 16 elements in the swizzled layout, one float32 global scale).
// The recipe is tessera/kernels/quant_ops.hpp's; docs/low-precision.md states it and its error
// bound. Inference only: no backward formulas.
#include "ops/op_table.hpp"
#include "ops/quant/quant_op.hpp"

namespace tsr::core {
namespace {

// quantize_nvfp4(self [M, K], global_scale?) -> (data [M, K/2] float4_e2m1fn_x2, scale
// float8_e4m3fn [round_up(M, 128), round_up(K / 16, 4)], global_scale float32 []): the global
// scale given (float32, one element) or 448 * 6 / amax(self), computed by the kernel.
tsr_dtype_t quantize_nvfp4_shape(CallCtx& ctx, std::vector<quant::OutDesc>& outs) {
  const kernels::QTensor x = quant::qtensor(ctx, 0);
  quant::require(ctx, kernels::check_quantize(x, kernels::kNvfp4Block));
  const kernels::QTensor g = quant::qtensor(ctx, 1);
  if (g.present && (g.dtype != TSR_F32 || g.numel() != 1))
    quant::fail(ctx, "global_scale must be a float32 tensor of one element, got " + g.str());
  outs.push_back({{x.size(0), x.size(1) / 2}, TSR_F4_E2M1FN_X2});
  outs.push_back({{kernels::scale_padded_rows(x.size(0)), kernels::scale_padded_cols(x.size(1) / kernels::kNvfp4Block)},
                  TSR_F8_E4M3FN});
  outs.push_back({{}, TSR_F32});
  return static_cast<tsr_dtype_t>(x.dtype);
}

// dequantize_nvfp4(data [M, K/2], scale, global_scale, dtype=float32) -> [M, K] dtype.
tsr_dtype_t dequantize_nvfp4_shape(CallCtx& ctx, std::vector<quant::OutDesc>& outs) {
  const kernels::QTensor d = quant::qtensor(ctx, 0);
  const int32_t dt = ctx.is_none(3) ? int32_t(TSR_F32) : quant::opt_dtype(ctx, 3);
  quant::require(ctx, kernels::check_dequantize(d, quant::qtensor(ctx, 1), quant::qtensor(ctx, 2), true, dt));
  outs.push_back({{d.size(0), 2 * d.size(1)}, static_cast<tsr_dtype_t>(dt)});
  return static_cast<tsr_dtype_t>(dt);
}

}  // namespace

TSR_CORE_OPS(quant_nvfp4) {
  v.push_back({"quantize_nvfp4(Tensor self, Tensor? global_scale=None) -> (Tensor, Tensor, Tensor)",
               quant::op_impl<quantize_nvfp4_shape>});
  v.push_back({"dequantize_nvfp4(Tensor data, Tensor scale, Tensor global_scale, ScalarType? dtype=None) -> Tensor",
               quant::op_impl<dequantize_nvfp4_shape>});
}

}  // namespace tsr::core
