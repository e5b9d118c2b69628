// Internal fused forward kernels of the nn family (see backends/cpu/nn_fused.cpp). Other
// backends may register kernels for these names; layer_norm / cross_entropy use them when the
// current backend has one and fall back to SDK compositions otherwise.
#include "ops/nn/nn_kernel_op.hpp"
#include "ops/op_table.hpp"

namespace tsr::core {
namespace {

tsr_dtype_t layer_norm_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  Tensor* x = ctx.tensor(0);
  outs.push_back({std::vector<int64_t>(x->sizes, x->sizes + x->ndim), x->dtype});
  return x->dtype;
}

tsr_dtype_t ce_rows_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  Tensor* x = ctx.tensor(0);
  outs.push_back({{x->sizes[0]}, x->dtype});
  outs.push_back({{x->sizes[0]}, x->dtype});
  return x->dtype;
}

tsr_dtype_t ce_rows_backward_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  Tensor* x = ctx.tensor(0);
  outs.push_back({std::vector<int64_t>(x->sizes, x->sizes + x->ndim), x->dtype});
  return x->dtype;
}

tsr_dtype_t layer_norm_backward_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  Tensor* x = ctx.tensor(0);
  int64_t m = ctx.int_arg(3);
  outs.push_back({std::vector<int64_t>(x->sizes, x->sizes + x->ndim), x->dtype});
  outs.push_back({{m}, x->dtype});
  outs.push_back({{m}, x->dtype});
  return x->dtype;
}

}  // namespace

TSR_CORE_OPS(nn_fused) {
  v.push_back(
      {"_nn_layer_norm_backward(Tensor input, Tensor? weight, Tensor grad, int normalized_numel, float eps, "
       "bool rms) -> (Tensor, Tensor, Tensor)",
       nn::kernel_op_impl<layer_norm_backward_shape>});
  v.push_back(
      {"_nn_cross_entropy_rows_backward(Tensor input, Tensor target, Tensor? weight, Tensor grad, "
       "int ignore_index, float label_smoothing) -> Tensor",
       nn::kernel_op_impl<ce_rows_backward_shape>});
  v.push_back(
      {"_nn_layer_norm(Tensor input, Tensor? weight, Tensor? bias, int normalized_numel, float eps, "
       "bool rms) -> Tensor",
       nn::kernel_op_impl<layer_norm_shape>});
  v.push_back(
      {"_nn_cross_entropy_rows(Tensor input, Tensor target, Tensor? weight, int ignore_index, "
       "float label_smoothing) -> (Tensor, Tensor)",
       nn::kernel_op_impl<ce_rows_shape>});
}

}  // namespace tsr::core
