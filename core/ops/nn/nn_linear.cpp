// The fused form of linear with a bias: _linear_bias(x [M, K], weight [N, K], bias [N]) =
// x @ weight^T + bias as one GEMM whose epilogue adds the bias (cuBLASLt's EPILOGUE_BIAS on cuda;
// on the cpu oneDNN's matmul primitive adds it in its epilogue for f32 and bf16, and the generic
// kernel writes the bias rows first and lets the GEMM accumulate onto them with beta = 1).
// It saves the separate add's pass over the output, which is as large as the GEMM's output.
//
// linear (ops/linalg/linalg_products.cpp) calls _linear_bias when the input's device type has a kernel
// for _nn_linear in its dtype, and is otherwise the composite matmul + add. _linear_bias is a
// primitive with closed-form gradients written with differentiable ops (so create_graph works);
// _nn_linear is the kernel op it runs.
#include "ops/nn/nn_kernel_op.hpp"
#include "ops/nn/nn_util.hpp"

namespace tsr::core {
namespace {

using tsr::Tensor;

// _nn_linear(self [M, K], weight [N, K], bias [N]): [M, N].
tsr_dtype_t linear_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  core::Tensor* x = nn::kfloat(ctx, 0, 2);
  core::Tensor* w = nn::kfloat(ctx, 1, 2, x);
  core::Tensor* b = nn::kfloat(ctx, 2, 1, x);
  nn::krequire(ctx, x->sizes[1] == w->sizes[1] && b->sizes[0] == w->sizes[0],
               "shapes " + shape_str(x->sizes, 2) + ", " + shape_str(w->sizes, 2) + " and " + shape_str(b->sizes, 1) +
                   " are not [M, K], [N, K] and [N]");
  outs.push_back({{x->sizes[0], w->sizes[0]}, x->dtype});
  return x->dtype;
}

Tensor linear_bias_fwd(CArgs& a) {
  static const tsr::Op kernel("_nn_linear");
  return tsr::call(kernel, {a.tensor(0), a.tensor(1), a.tensor(2)});
}

// y = x W^T + b: dx = g W, dW = g^T x, db = the column sums of g.
void linear_bias_bwd(GradCtx& ctx) {
  const Tensor& g = ctx.grad(0);
  if (!g.defined()) return;
  if (ctx.needs(0)) ctx.set(0, nn::matmul(g, ctx.input(1)));
  if (ctx.needs(1)) ctx.set(1, nn::matmul(g.t(), ctx.input(0)));
  if (ctx.needs(2)) ctx.set(2, tsr::sum(g, {0}));
}

}  // namespace

TSR_CORE_OPS(nn_linear) {
  v.push_back({"_nn_linear(Tensor self, Tensor weight, Tensor bias) -> Tensor", nn::kernel_op_impl<linear_shape>});
  v.push_back(nn::prim("_linear_bias(Tensor self, Tensor weight, Tensor bias) -> Tensor", composite<linear_bias_fwd>,
                       TSR_GRAD(linear_bias_bwd)));
}

}  // namespace tsr::core
