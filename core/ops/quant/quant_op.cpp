// See ops/quant/quant_op.hpp.
#include "ops/quant/quant_op.hpp"

namespace tsr::core::quant {

void fail(const CallCtx& ctx, const std::string& what) {
  throw tsr::Error(TSR_INVALID_ARGUMENT, std::string(ctx.name()) + ": " + what);
}

kernels::QTensor qtensor(const CallCtx& ctx, size_t i) {
  const Tensor* t = ctx.tensor(i);
  if (!t) return {};
  return kernels::QTensor(t->dtype, t->ndim, t->sizes);
}

int32_t opt_dtype(const CallCtx& ctx, size_t i) {
  return ctx.is_none(i) ? int32_t(TSR_DTYPE_UNDEFINED) : ctx.args[i].u.dtype;
}

namespace {

// Every tensor argument on one device, named with the arguments when not.
tsr_status_t one_device(const CallCtx& ctx, Tensor* const* ins, const size_t* arg_of, int n, tsr_device_t* device) {
  *device = n > 0 ? ins[0]->device : tsr_device_t{};
  for (int i = 1; i < n; ++i) {
    if (ins[i]->device.type == device->type && ins[i]->device.index == device->index) continue;
    const auto& args = ctx.op->schema.args;
    return ctx.error(TSR_INVALID_ARGUMENT, "expected all tensors on one device, got " + args[arg_of[0]].name + " " +
                                               describe(ctx.rt, ins[0]) + " and " + args[arg_of[i]].name + " " +
                                               describe(ctx.rt, ins[i]));
  }
  return nullptr;
}

}  // namespace

tsr_status_t run(CallCtx& ctx, ShapeFn shape) {
  Tensor* ins[kMaxArgs];
  size_t arg_of[kMaxArgs];
  int nin = 0;
  for (size_t i = 0; i < ctx.nargs; ++i)
    if (ctx.args[i].tag == TSR_VALUE_TENSOR) {
      arg_of[nin] = i;
      ins[nin++] = ctx.args[i].u.tensor;
    }
  tsr_device_t device{};
  TSR_RETURN_IF_ERROR(one_device(ctx, ins, arg_of, nin, &device));
  std::vector<OutDesc> descs;
  tsr_dtype_t kdtype = TSR_F32;
  try {
    kdtype = shape(ctx, descs);
  } catch (const tsr::Error& e) {
    return make_status(e.code(), e.what());
  } catch (const std::exception& e) {  // std::bad_alloc building a message: no exception leaves the core
    return ctx.error(TSR_INTERNAL, e.what());
  }
  Tensor* outs[kMaxOutputs] = {};
  const size_t nout = descs.size();
  tsr_status_t st = nullptr;
  bool any = false;
  for (size_t i = 0; i < nout && !st; ++i) {
    const OutDesc& d = descs[i];
    st = make_output(ctx, i, static_cast<int>(d.sizes.size()), d.sizes.data(), d.dtype, device, &outs[i]);
    if (!st) any |= outs[i]->numel > 0;
  }
  if (!st && any)
    st =
        launch_op(ctx.rt, ctx.op, device, kdtype, ctx.args, ctx.nargs, ins, nin, outs, static_cast<int>(nout), nullptr);
  if (st) {
    release_all(outs, nout);
    return st;
  }
  publish_outputs(ctx, outs, nout);
  return nullptr;
}

}  // namespace tsr::core::quant
