// Internal fused forward kernels of the nn family (see backends/cpu/nn_fused.cpp). Other
// backends may register kernels for these names; layer_norm / cross_entropy use them when the
// current backend has one and fall back to SDK compositions otherwise.
#include <algorithm>

#include "ops/nn/nn_kernel_op.hpp"
#include "ops/op_table.hpp"

namespace tsr::core {
namespace {

// Rows of `normalized_numel` (argument 3) elements: at least one per row, dividing the input.
int64_t norm_row(CallCtx& ctx, const Tensor* x) {
  int64_t m = ctx.int_arg(3);
  nn::krequire(ctx, m >= 1 && x->numel % m == 0,
               "normalized_numel " + std::to_string(m) + " does not divide the input " + shape_str(x->sizes, x->ndim));
  return m;
}
// An optional per-column tensor (weight, bias) of m elements in the input's dtype.
void check_columns(CallCtx& ctx, size_t i, const Tensor* x, int64_t m) {
  if (Tensor* t = nn::kfloat(ctx, i, -1, x))
    nn::krequire(ctx, t->numel == m,
                 "argument '" + ctx.op->schema.args[i].name + "' " + shape_str(t->sizes, t->ndim) + " must have " +
                     std::to_string(m) + " elements");
}

// _nn_layer_norm(input, weight?, bias?, normalized_numel, eps, rms): input's shape.
tsr_dtype_t layer_norm_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  Tensor* x = nn::kfloat(ctx, 0);
  int64_t m = norm_row(ctx, x);
  check_columns(ctx, 1, x, m);
  check_columns(ctx, 2, x, m);
  outs.push_back({std::vector<int64_t>(x->sizes, x->sizes + x->ndim), x->dtype});
  return x->dtype;
}

// input [N, C], target [N] int64, weight? [C] (targets out of range are the kernel's to refuse).
Tensor* ce_rows_args(CallCtx& ctx) {
  Tensor* x = nn::kfloat(ctx, 0, 2);
  Tensor* t = nn::kindex(ctx, 1, 1);
  nn::krequire(ctx, t->sizes[0] == x->sizes[0],
               "target " + shape_str(t->sizes, 1) + " does not match input " + shape_str(x->sizes, 2));
  if (Tensor* w = nn::kfloat(ctx, 2, 1, x))
    nn::krequire(ctx, w->sizes[0] == x->sizes[1],
                 "weight " + shape_str(w->sizes, 1) + " does not match input " + shape_str(x->sizes, 2));
  return x;
}

// _nn_cross_entropy_rows(input [N, C], target [N], weight?, ...): (loss [N], weight sum [N]).
tsr_dtype_t ce_rows_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  Tensor* x = ce_rows_args(ctx);
  outs.push_back({{x->sizes[0]}, x->dtype});
  outs.push_back({{x->sizes[0]}, x->dtype});
  return x->dtype;
}

// _nn_cross_entropy_rows_backward(input, target, weight?, grad [N], ...): input's shape.
tsr_dtype_t ce_rows_backward_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  Tensor* x = ce_rows_args(ctx);
  Tensor* g = nn::kfloat(ctx, 3, 1, x);
  nn::krequire(ctx, g->sizes[0] == x->sizes[0],
               "grad " + shape_str(g->sizes, 1) + " does not match input " + shape_str(x->sizes, 2));
  outs.push_back({std::vector<int64_t>(x->sizes, x->sizes + x->ndim), x->dtype});
  return x->dtype;
}

// _nn_layer_norm_backward(input, weight?, grad like input, normalized_numel, ...):
// (dx like input, dweight [m], dbias [m]).
tsr_dtype_t layer_norm_backward_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  Tensor* x = nn::kfloat(ctx, 0);
  int64_t m = norm_row(ctx, x);
  check_columns(ctx, 1, x, m);
  Tensor* g = nn::kfloat(ctx, 2, x->ndim, x);
  nn::krequire(ctx, std::equal(x->sizes, x->sizes + x->ndim, g->sizes),
               "grad " + shape_str(g->sizes, g->ndim) + " does not match input " + shape_str(x->sizes, x->ndim));
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
