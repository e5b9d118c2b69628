// softmax and log_softmax: the input cast to the compute dtype and made contiguous, then one row
// kernel over the dim (each backend's "softmax"/"log_softmax" kernel); backward formulas from the
// saved outputs so the forward's input need not be kept.
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

// dx = y * (g - sum(g * y))
void softmax_backward(GradCtx& c) {
  if (!c.needs(0) || !c.grad(0).defined()) return;
  const tsr::Tensor& y = c.output(0);
  const tsr::Tensor& g = c.grad(0);
  std::vector<int64_t> dim{y.dim() == 0 ? 0 : c.int_arg(1)};
  c.set(0, y * (g - tsr::sum(g * y, dim, true)));
}

// dx = g - exp(y) * sum(g)
void log_softmax_backward(GradCtx& c) {
  if (!c.needs(0) || !c.grad(0).defined()) return;
  const tsr::Tensor& y = c.output(0);
  const tsr::Tensor& g = c.grad(0);
  std::vector<int64_t> dim{y.dim() == 0 ? 0 : c.int_arg(1)};
  c.set(0, g - tsr::exp(y) * tsr::sum(g, dim, true));
}

}  // namespace

TSR_CORE_OPS(nn_softmax) {
  v.push_back({"softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", softmax_impl,
               TSR_GRAD(softmax_backward), kSaveOutputs});
  v.push_back({"log_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", softmax_impl,
               TSR_GRAD(log_softmax_backward), kSaveOutputs});
}

}  // namespace tsr::core
