// Fused optimizer steps (torch.optim's SGD and Adam/AdamW single-tensor formulas) as ops, so a
// backend updates a parameter and its state in one pass. They are not recorded (declared
// composite: the dispatcher records nothing, like torch.optim's @no_grad steps) and write
// param and state in place (mutable args: versions bumped).
#include <cmath>

#include "ops/op_impl.hpp"
#include "ops/op_table.hpp"

namespace tsr::core {

namespace {

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Every tensor in `ts` (nullptrs skipped) like param: same shape, dtype and device.
tsr_status_t check_like(CallCtx& ctx, Tensor* param, Tensor* const* ts, const char* const* names, int n) {
  if (!is_floating(param->dtype))
    return ctx.error(TSR_INVALID_ARGUMENT,
                     std::string("param must be floating point, got ") + dtype_name(param->dtype));
  for (int i = 0; i < n; ++i) {
    Tensor* t = ts[i];
    if (!t) continue;
    bool same = t->ndim == param->ndim && std::equal(t->sizes, t->sizes + t->ndim, param->sizes);
    if (!same)
      return ctx.error(TSR_INVALID_ARGUMENT, std::string(names[i]) + " has shape " + shape_str(t->sizes, t->ndim) +
                                                 " but param has shape " + shape_str(param->sizes, param->ndim));
    if (t->dtype != param->dtype)
      return ctx.error(TSR_INVALID_ARGUMENT, std::string(names[i]) + " is " + dtype_name(t->dtype) + " but param is " +
                                                 dtype_name(param->dtype));
  }
  tsr_device_t device;
  Tensor* all[8] = {param};
  for (int i = 0; i < n; ++i) all[i + 1] = ts[i];
  return common_device(ctx, all, n + 1, &device);
}

// outputs (updated in place) first, then grad: one iteration over all of them.
tsr_status_t run_step(CallCtx& ctx, Tensor** outs, int nout, Tensor* grad) {
  Tensor* param = outs[0];
  if (param->numel > 0) {
    Tensor* ops[TSR_ITER_MAX_OPERANDS];
    for (int i = 0; i < nout; ++i) ops[i] = outs[i];
    ops[nout] = grad;
    tsr_iter_t it;
    build_iter(ops, nout + 1, nout, param->ndim, param->sizes, 0, &it);
    TSR_RETURN_IF_ERROR(launch(ctx, param->device, param->dtype, &grad, 1, outs, nout, &it));
  }
  if (!ctx.out_slot(0)) {
    param->retain();
    ctx.outs[0] = param;
  }
  return nullptr;
}

tsr_status_t sgd_step_impl(CallCtx& ctx) {
  Tensor *param = ctx.tensor(0), *grad = ctx.tensor(1), *buf = ctx.tensor(2);
  const double lr = ctx.double_arg(3), momentum = ctx.double_arg(4), dampening = ctx.double_arg(5),
               wd = ctx.double_arg(6);
  const bool nesterov = ctx.bool_arg(7);
  Tensor* ts[2] = {grad, buf};
  const char* names[2] = {"grad", "momentum_buffer"};
  TSR_RETURN_IF_ERROR(check_like(ctx, param, ts, names, 2));
  if (!(lr >= 0)) return ctx.error(TSR_INVALID_ARGUMENT, "invalid learning rate: " + num(lr));
  if (!(momentum >= 0)) return ctx.error(TSR_INVALID_ARGUMENT, "invalid momentum value: " + num(momentum));
  if (!(wd >= 0)) return ctx.error(TSR_INVALID_ARGUMENT, "invalid weight_decay value: " + num(wd));
  if (nesterov && (momentum <= 0 || dampening != 0))
    return ctx.error(TSR_INVALID_ARGUMENT, "nesterov momentum requires a momentum and zero dampening (momentum=" +
                                               num(momentum) + ", dampening=" + num(dampening) + ")");
  if (momentum != 0 && !buf)
    return ctx.error(TSR_INVALID_ARGUMENT, "momentum=" + num(momentum) + " needs a momentum_buffer tensor");
  Tensor* outs[2] = {param, buf};
  return run_step(ctx, outs, momentum != 0 ? 2 : 1, grad);
}

tsr_status_t adam_step_impl(CallCtx& ctx) {
  Tensor *param = ctx.tensor(0), *grad = ctx.tensor(1), *m = ctx.tensor(2), *v = ctx.tensor(3), *vmax = ctx.tensor(4);
  const int64_t step = ctx.int_arg(5);
  const double lr = ctx.double_arg(6), b1 = ctx.double_arg(7), b2 = ctx.double_arg(8), eps = ctx.double_arg(9),
               wd = ctx.double_arg(10);
  const bool amsgrad = ctx.bool_arg(11);
  Tensor* ts[4] = {grad, m, v, vmax};
  const char* names[4] = {"grad", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
  TSR_RETURN_IF_ERROR(check_like(ctx, param, ts, names, 4));
  if (step < 1)
    return ctx.error(TSR_INVALID_ARGUMENT,
                     "step must be >= 1 (the count after this update), got " + std::to_string(step));
  if (!(lr >= 0)) return ctx.error(TSR_INVALID_ARGUMENT, "invalid learning rate: " + num(lr));
  if (!(eps >= 0)) return ctx.error(TSR_INVALID_ARGUMENT, "invalid epsilon value: " + num(eps));
  if (!(b1 >= 0 && b1 < 1)) return ctx.error(TSR_INVALID_ARGUMENT, "invalid beta parameter at index 0: " + num(b1));
  if (!(b2 >= 0 && b2 < 1)) return ctx.error(TSR_INVALID_ARGUMENT, "invalid beta parameter at index 1: " + num(b2));
  if (!(wd >= 0)) return ctx.error(TSR_INVALID_ARGUMENT, "invalid weight_decay value: " + num(wd));
  if (amsgrad && !vmax) return ctx.error(TSR_INVALID_ARGUMENT, "amsgrad=True needs a max_exp_avg_sq tensor");
  Tensor* outs[4] = {param, m, v, vmax};
  return run_step(ctx, outs, amsgrad ? 4 : 3, grad);
}

OpSpec unrecorded(std::string schema, OpImplFn impl, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return composite_op(std::move(schema), impl, file, line);
}

}  // namespace

TSR_CORE_OPS(optim) {
  v.push_back(
      unrecorded("sgd_step_(Tensor(a!) param, Tensor grad, Tensor(a!)? momentum_buffer, float lr, float momentum=0, "
                 "float dampening=0, float weight_decay=0, bool nesterov=False, bool maximize=False, "
                 "bool is_first_step=False) -> Tensor(a!)",
                 sgd_step_impl));
  v.push_back(
      unrecorded("adam_step_(Tensor(a!) param, Tensor grad, Tensor(a!) exp_avg, Tensor(a!) exp_avg_sq, "
                 "Tensor(a!)? max_exp_avg_sq, int step, float lr=0.001, float beta1=0.9, float beta2=0.999, "
                 "float eps=1e-08, float weight_decay=0, bool amsgrad=False, bool decoupled_weight_decay=False, "
                 "bool maximize=False) -> Tensor(a!)",
                 adam_step_impl));
}

}  // namespace tsr::core
