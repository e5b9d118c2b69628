// scaled_mm: the GEMM of float8 (and packed float4) operands with scales, torch._scaled_mm's
// semantics: out = cast_out(scale_result * (scale_a (x) scale_b .* (self @ mat2)) + bias), with
// tensorwise, rowwise, MXFP8 and NVFP4 block-scaled modes chosen from the operands' and
// scales' dtypes and shapes (tessera/kernels/quant_checks.hpp; docs/low-precision.md).
// Inference only: no backward formula, so a result computed from inputs that require grad
// carries a node whose backward fails with "the derivative for 'scaled_mm' is not implemented",
// as PyTorch's _scaled_mm does.
#include "ops/op_table.hpp"
#include "ops/quant/quant_op.hpp"

namespace tsr::core {
namespace {

// Arguments: self, mat2, scale_a, scale_b, bias?, scale_result?, out_dtype?, use_fast_accum.
tsr_dtype_t scaled_mm_shape(CallCtx& ctx, std::vector<quant::OutDesc>& outs) {
  kernels::ScaledMmPlan p;
  quant::require(ctx, kernels::check_scaled_mm(quant::qtensor(ctx, 0), quant::qtensor(ctx, 1), quant::qtensor(ctx, 2),
                                               quant::qtensor(ctx, 3), quant::qtensor(ctx, 4), quant::qtensor(ctx, 5),
                                               quant::opt_dtype(ctx, 6), &p));
  outs.push_back({{p.M, p.N}, static_cast<tsr_dtype_t>(p.out_dtype)});
  return ctx.tensor(0)->dtype;
}

}  // namespace

TSR_CORE_OPS(quant_scaled_mm) {
  v.push_back(
      {"scaled_mm(Tensor self, Tensor mat2, Tensor scale_a, Tensor scale_b, Tensor? bias=None, "
       "Tensor? scale_result=None, ScalarType? out_dtype=None, bool use_fast_accum=False) -> Tensor",
       quant::op_impl<scaled_mm_shape>});
}

}  // namespace tsr::core
