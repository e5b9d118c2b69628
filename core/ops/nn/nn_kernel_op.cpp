// See ops/nn/nn_kernel_op.hpp.
#include "ops/nn/nn_kernel_op.hpp"

namespace tsr::core::nn {

tsr_status_t kernel_op(CallCtx& ctx, KernelShapeFn shape) {
  tsr_value_t args[kMaxArgs];
  Tensor* owned[kMaxArgs] = {};
  Tensor* ins[kMaxArgs];
  int nin = 0;
  tsr_status_t st = nullptr;
  for (size_t i = 0; i < ctx.nargs; ++i) {
    args[i] = ctx.args[i];
    if (ctx.args[i].tag != TSR_VALUE_TENSOR) continue;
    if (!st) st = make_contiguous(ctx.rt, ctx.args[i].u.tensor, ctx.name(), &owned[i]);
    if (owned[i]) {
      args[i].u.tensor = owned[i];
      ins[nin++] = owned[i];
    }
  }
  tsr_device_t device{};
  if (!st) st = common_device(ctx, ins, nin, &device);
  std::vector<OutDesc> descs;
  tsr_dtype_t kdtype = TSR_F32;
  if (!st) kdtype = shape(ctx, descs);
  Tensor* outs[kMaxOutputs] = {};
  Tensor* dense[kMaxOutputs] = {};
  const size_t nout = descs.size();
  bool any = false;
  for (size_t i = 0; i < nout && !st; ++i) {
    const OutDesc& d = descs[i];
    st = make_output(ctx, i, static_cast<int>(d.sizes.size()), d.sizes.data(), d.dtype, device, &outs[i]);
    if (st) break;
    any |= outs[i]->numel > 0;
    if (outs[i]->contiguous) {
      outs[i]->retain();
      dense[i] = outs[i];
    } else {
      st = new_tensor(ctx.rt, outs[i]->ndim, outs[i]->sizes, outs[i]->dtype, device, ctx.name(), &dense[i]);
    }
  }
  if (!st && any)
    st = launch_op(ctx.rt, ctx.op, device, kdtype, args, ctx.nargs, ins, nin, dense, static_cast<int>(nout), nullptr);
  for (size_t i = 0; i < nout && !st; ++i)
    if (dense[i] != outs[i]) st = copy_into(outs[i], dense[i], ctx.name());
  for (size_t i = 0; i < ctx.nargs; ++i)
    if (owned[i]) owned[i]->release();
  for (size_t i = 0; i < nout; ++i)
    if (dense[i]) dense[i]->release();
  if (st) {
    release_all(outs, nout);
    return st;
  }
  publish_outputs(ctx, outs, nout);
  return nullptr;
}

bool has_device_kernel(const tsr::Op& op, const tsr::Tensor& t, tsr_dtype_t dtype) {
  const core::Tensor* ct = t.get();
  const tsr_op_t* h = op.get(ct->runtime);
  const KernelTable* table = h->kernels.load();
  const int32_t type = ct->device.type;
  if (!table || type < 0 || type >= kMaxDeviceTypes) return false;
  for (const KernelRec& k : table->by_type[type])
    if (k.def.dtype_mask & TSR_DTYPE_BIT(dtype)) return true;
  return false;
}

}  // namespace tsr::core::nn
