// See ops/nn/nn_kernel_op.hpp.
#include "ops/nn/nn_kernel_op.hpp"

#include "autograd/engine.hpp"

namespace tsr::core::nn {

namespace {
bool unit_inner_stride(const Tensor* t) { return t->ndim == 0 || t->sizes[t->ndim - 1] <= 1 || t->strides[t->ndim - 1] == 1; }

// A new tensor of `sizes` laid out in memory in `order` (outermost first): a view of a row-major
// tensor of the permuted sizes.
tsr_status_t new_in_order(CallCtx& ctx, const OutDesc& d, tsr_device_t device, Tensor** out) {
  const int nd = static_cast<int>(d.sizes.size());
  std::vector<int64_t> mem(d.sizes.size()), mem_strides(d.sizes.size()), strides(d.sizes.size());
  for (int i = 0; i < nd; ++i) mem[size_t(i)] = d.sizes[size_t(d.order[size_t(i)])];
  Tensor* base = nullptr;
  TSR_RETURN_IF_ERROR(new_tensor(ctx.rt, nd, mem.data(), d.dtype, device, ctx.name(), &base));
  contiguous_strides(nd, mem.data(), mem_strides.data());
  for (int i = 0; i < nd; ++i) strides[size_t(d.order[size_t(i)])] = mem_strides[size_t(i)];
  *out = make_view(base, nd, d.sizes.data(), strides.data(), 0);
  base->release();
  return nullptr;
}
}  // namespace

tsr_status_t kernel_op(CallCtx& ctx, KernelShapeFn shape, KernelViews views) {
  const bool strided = views == KernelViews::kRowStrided;
  tsr_value_t args[kMaxArgs];
  Tensor* owned[kMaxArgs] = {};
  Tensor* ins[kMaxArgs];
  int nin = 0;
  tsr_status_t st = nullptr;
  for (size_t i = 0; i < ctx.nargs; ++i) {
    args[i] = ctx.args[i];
    if (ctx.args[i].tag != TSR_VALUE_TENSOR) continue;
    if (!st && ctx.args[i].u.tensor && strided && unit_inner_stride(ctx.args[i].u.tensor)) {
      owned[i] = ctx.args[i].u.tensor;
      owned[i]->retain();
    } else if (!st) {
      st = make_contiguous(ctx.rt, ctx.args[i].u.tensor, ctx.name(), &owned[i]);
    }
    if (owned[i]) {
      args[i].u.tensor = owned[i];
      ins[nin++] = owned[i];
    }
  }
  tsr_device_t device{};
  if (!st) st = common_device(ctx, ins, nin, &device);
  std::vector<OutDesc> descs;
  tsr_dtype_t kdtype = TSR_F32;
  if (!st) {
    try {
      kdtype = shape(ctx, descs);
    } catch (const tsr::Error& e) {
      st = make_status(e.code(), e.what());
    }
  }
  Tensor* outs[kMaxOutputs] = {};
  Tensor* dense[kMaxOutputs] = {};
  const size_t nout = descs.size();
  bool any = false;
  for (size_t i = 0; i < nout && !st; ++i) {
    const OutDesc& d = descs[i];
    if (strided && !d.order.empty() && !ctx.out_slot(i))
      st = new_in_order(ctx, d, device, &outs[i]);
    else
      st = make_output(ctx, i, static_cast<int>(d.sizes.size()), d.sizes.data(), d.dtype, device, &outs[i]);
    if (st) break;
    any |= outs[i]->numel > 0;
    // An out= tensor is written through a dense copy unless contiguous (its strides could make
    // elements overlap); the op's own allocations are laid out as asked.
    if (outs[i]->contiguous || (strided && !ctx.out_slot(i) && unit_inner_stride(outs[i]))) {
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

void kfail(const CallCtx& ctx, const std::string& what) {
  throw tsr::Error(TSR_INVALID_ARGUMENT, std::string(ctx.name()) + ": " + what);
}

static std::string arg_name(const CallCtx& ctx, size_t i) { return "'" + ctx.op->schema.args[i].name + "'"; }

core::Tensor* ktensor(CallCtx& ctx, size_t i, int ndim) {
  core::Tensor* t = ctx.tensor(i);
  if (!t) {
    krequire(ctx, ctx.op->schema.args[i].optional, "argument " + arg_name(ctx, i) + " is required");
    return nullptr;
  }
  if (ndim >= 0 && t->ndim != ndim)
    kfail(ctx, "argument " + arg_name(ctx, i) + " must be " + std::to_string(ndim) + "-D, got " +
                   shape_str(t->sizes, t->ndim));
  return t;
}

core::Tensor* kfloat(CallCtx& ctx, size_t i, int ndim, const core::Tensor* like) {
  core::Tensor* t = ktensor(ctx, i, ndim);
  if (t && like && t->dtype != like->dtype)
    kfail(ctx, "argument " + arg_name(ctx, i) + " must be " + dtype_name(like->dtype) + " like the input, got " +
                   dtype_name(t->dtype));
  if (t && !like && !is_floating(t->dtype))
    kfail(ctx, "argument " + arg_name(ctx, i) + " must be a floating point tensor, got " + dtype_name(t->dtype));
  return t;
}

core::Tensor* kindex(CallCtx& ctx, size_t i, int ndim) {
  core::Tensor* t = ktensor(ctx, i, ndim);
  if (t && t->dtype != TSR_I64)
    kfail(ctx, "argument " + arg_name(ctx, i) + " must be an int64 index tensor, got " + dtype_name(t->dtype));
  return t;
}

const int64_t* kints(CallCtx& ctx, size_t i, int64_t len, int64_t min) {
  const tsr_value_t& v = ctx.args[i];
  krequire(ctx, v.tag == TSR_VALUE_INT_LIST && v.u.ints.len == len,
           "argument " + arg_name(ctx, i) + " must hold " + std::to_string(len) + " values");
  for (int64_t k = 0; k < len; ++k)
    if (v.u.ints.data[k] < min || v.u.ints.data[k] > kMaxGeometry)
      kfail(ctx, "argument " + arg_name(ctx, i) + " has " + std::to_string(v.u.ints.data[k]) + ", outside [" +
                     std::to_string(min) + ", " + std::to_string(kMaxGeometry) + "]");
  return v.u.ints.data;
}

int64_t kmul(const CallCtx& ctx, int64_t a, int64_t b) {
  int64_t r = 0;
  if (!checked_mul(a, b, &r))
    kfail(ctx, "sizes " + std::to_string(a) + " * " + std::to_string(b) + " overflow");
  return r;
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

std::optional<tsr::Tensor> fused_backward(const tsr::Op& op, const tsr::Tensor& g, std::initializer_list<tsr::Arg> args) {
  if (grad_mode() || !has_device_kernel(op, g, g.dtype())) return std::nullopt;
  return declinable([&] { return tsr::call(op, args); });
}

}  // namespace tsr::core::nn
