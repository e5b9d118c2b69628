// quantize_mxfp8 and dequantize_mxfp8: MXFP8 (float8_e4m3fn data, one float8_e8m0fnu scale per
// 32 elements along K, scales in the swizzled layout scaled_mm reads). The recipe (the RCEIL
// scale rule) is tessera/kernels/quant_ops.hpp's; docs/low-precision.md states it and its
// error bound. Inference only: no backward formulas (the data and scales are not
// differentiable dtypes; dequantize's result fails in backward like scaled_mm's).
#include "ops/op_table.hpp"
#include "ops/quant/quant_op.hpp"

namespace tsr::core {
namespace {

// quantize_mxfp8(self [M, K]) -> (data float8_e4m3fn [M, K], scale float8_e8m0fnu
// [round_up(M, 128), round_up(K / 32, 4)]); dispatched on self's dtype.
tsr_dtype_t quantize_mxfp8_shape(CallCtx& ctx, std::vector<quant::OutDesc>& outs) {
  const kernels::QTensor x = quant::qtensor(ctx, 0);
  quant::require(ctx, kernels::check_quantize(x, kernels::kMxBlock));
  outs.push_back({{x.size(0), x.size(1)}, TSR_F8_E4M3FN});
  outs.push_back({{kernels::scale_padded_rows(x.size(0)), kernels::scale_padded_cols(x.size(1) / kernels::kMxBlock)},
                  TSR_F8_E8M0FNU});
  return static_cast<tsr_dtype_t>(x.dtype);
}

// dequantize_mxfp8(data [M, K] float8, scale, dtype=float32) -> [M, K] dtype; dispatched on
// the output dtype.
tsr_dtype_t dequantize_mxfp8_shape(CallCtx& ctx, std::vector<quant::OutDesc>& outs) {
  const kernels::QTensor d = quant::qtensor(ctx, 0);
  const int32_t dt = ctx.is_none(2) ? int32_t(TSR_F32) : quant::opt_dtype(ctx, 2);
  quant::require(ctx, kernels::check_dequantize(d, quant::qtensor(ctx, 1), {}, false, dt));
  outs.push_back({{d.size(0), d.size(1)}, static_cast<tsr_dtype_t>(dt)});
  return static_cast<tsr_dtype_t>(dt);
}

}  // namespace

TSR_CORE_OPS(quant_mxfp8) {
  v.push_back({"quantize_mxfp8(Tensor self) -> (Tensor, Tensor)", quant::op_impl<quantize_mxfp8_shape>});
  v.push_back({"dequantize_mxfp8(Tensor data, Tensor scale, ScalarType? dtype=None) -> Tensor",
               quant::op_impl<dequantize_mxfp8_shape>});
}

}  // namespace tsr::core
