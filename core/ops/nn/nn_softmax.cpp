// softmax and log_softmax: the input cast to the compute dtype and made contiguous, then one row
// kernel over the dim (each backend's "softmax"/"log_softmax" kernel); backward formulas from the
// saved outputs so the forward's input need not be kept, as one fused kernel where the backend
// has it (_softmax_backward_data, _log_softmax_backward_data).
#include <algorithm>

#include "ops/nn/nn_kernel_op.hpp"
#include "ops/nn/nn_util.hpp"
#include "ops/op_impl.hpp"

namespace tsr::core {
namespace {

tsr_status_t softmax_impl(CallCtx& ctx) {
  Tensor* in = ctx.tensor(0);
  int d = 0;
  TSR_RETURN_IF_ERROR(wrap_dim(ctx.name(), ctx.int_arg(1), in->ndim, &d));
  tsr_dtype_t dt = ctx.is_none(2) ? in->dtype : static_cast<tsr_dtype_t>(ctx.args[2].u.dtype);
  if (!is_floating(dt))
    return ctx.error(TSR_INVALID_ARGUMENT, std::string("expected a floating point tensor, got ") + dtype_name(dt) +
                                               " (pass dtype= to compute in floating point)");
  Tensor *cast = nullptr, *src = nullptr, *out = nullptr;
  TSR_RETURN_IF_ERROR(cast_to(ctx.rt, in, dt, ctx.name(), &cast));
  tsr_status_t st = make_contiguous(ctx.rt, cast, ctx.name(), &src);
  cast->release();
  if (st) return st;
  if (!(st = make_output(ctx, 0, in->ndim, in->sizes, dt, in->device, &out))) {
    st = into_dense(ctx, out, [&](Tensor* target) {
      tsr_value_t args[3] = {ctx.args[0], ctx.args[1], ctx.args[2]};
      args[0].u.tensor = src;
      args[1].tag = TSR_VALUE_INT;
      args[1].u.i = in->ndim == 0 ? 0 : d;
      return launch_op(ctx.rt, ctx.op, in->device, dt, args, 3, &src, 1, &target, 1, nullptr);
    });
  }
  src->release();
  if (st) {
    if (out) out->release();
    return st;
  }
  publish_outputs(ctx, &out, 1);
  return nullptr;
}

// _softmax_backward_data(grad_output, output, dim) -> y * (g - sum(g * y, dim)) and
// _log_softmax_backward_data(grad_output, output, dim) -> g - exp(y) * sum(g, dim): the backward
// formulas below as one row kernel each (two visits of a row, the second from cache, instead of
// four ops and three temporaries), for backends that register them; `dim` is normalized
// (0 <= dim < ndim, 0 for a 0-d tensor).
tsr_dtype_t softmax_bw_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  core::Tensor* g = nn::kfloat(ctx, 0);
  core::Tensor* y = nn::kfloat(ctx, 1, -1, g);
  const int64_t dim = ctx.int_arg(2);
  nn::krequire(ctx, g->ndim == y->ndim && std::equal(g->sizes, g->sizes + g->ndim, y->sizes),
               "grad_output " + shape_str(g->sizes, g->ndim) + " and output " + shape_str(y->sizes, y->ndim) +
                   " must have one shape");
  nn::krequire(ctx, y->ndim == 0 ? dim == 0 : dim >= 0 && dim < y->ndim,
               "dim " + std::to_string(dim) + " must be normalized for a " + std::to_string(y->ndim) + "-d output");
  outs.push_back({std::vector<int64_t>(y->sizes, y->sizes + y->ndim), y->dtype});
  return y->dtype;
}

int64_t grad_dim(GradCtx& c, const tsr::Tensor& y) {
  if (y.dim() == 0) return 0;
  const int64_t d = c.int_arg(1);
  return d < 0 ? d + y.dim() : d;
}

void softmax_backward(GradCtx& c) {
  if (!c.needs(0) || !c.grad(0).defined()) return;
  const tsr::Tensor& y = c.output(0);
  const tsr::Tensor& g = c.grad(0);
  c.set(0, nn::softmax_backward_data(g, y, grad_dim(c, y)));
}

void log_softmax_backward(GradCtx& c) {
  if (!c.needs(0) || !c.grad(0).defined()) return;
  const tsr::Tensor& y = c.output(0);
  const tsr::Tensor& g = c.grad(0);
  const int64_t d = grad_dim(c, y);
  static const tsr::Op fused("_log_softmax_backward_data");
  auto r = nn::fused_backward(fused, g, {g, y, d});
  c.set(0, r ? *r : g - tsr::exp(y) * tsr::sum(g, std::vector<int64_t>{d}, true));
}

}  // namespace

tsr::Tensor nn::softmax_backward_data(const tsr::Tensor& g, const tsr::Tensor& y, int64_t dim) {
  static const tsr::Op fused("_softmax_backward_data");
  if (auto r = nn::fused_backward(fused, g, {g, y, dim})) return *r;
  return y * (g - tsr::sum(g * y, std::vector<int64_t>{dim}, true));
}

TSR_CORE_OPS(nn_softmax) {
  v.push_back({"softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", softmax_impl,
               TSR_GRAD(softmax_backward), kSaveOutputs});
  v.push_back({"log_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", softmax_impl,
               TSR_GRAD(log_softmax_backward), kSaveOutputs});
  v.push_back({"_softmax_backward_data(Tensor grad_output, Tensor output, int dim) -> Tensor",
               nn::kernel_op_impl<softmax_bw_shape>});
  v.push_back({"_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim) -> Tensor",
               nn::kernel_op_impl<softmax_bw_shape>});
}

}  // namespace tsr::core
