// Elementwise ops: promotion, broadcasting, output allocation, then one kernel over the
// canonical iteration. See docs/kernel-contracts.md for what kernels receive.
#include <cstring>

#include "ops/elementwise.hpp"
#include "ops/op_impl.hpp"
#include "ops/op_table.hpp"

namespace tsr::core {

namespace {

using Rule = ElementwiseRule;

}  // namespace

tsr_status_t run_elementwise(CallCtx& ctx, Tensor* const* in, int n, tsr_dtype_t compute, tsr_dtype_t out_dtype,
                             const bool* keep_dtype) {
  tsr_device_t device;
  TSR_RETURN_IF_ERROR(common_device(ctx, in, n, &device));
  int ndim = 0;
  int64_t sizes[TSR_MAX_DIMS];
  TSR_RETURN_IF_ERROR(broadcast_shapes(ctx, in, n, &ndim, sizes));
  // Inputs already on the device in the compute dtype are borrowed (no refcount traffic: this
  // is the hot path of small ops); others are converted into owned temporaries.
  Tensor* prepared[TSR_ITER_MAX_OPERANDS] = {};
  Tensor* owned[TSR_ITER_MAX_OPERANDS] = {};
  Tensor* out = nullptr;
  tsr_status_t st = nullptr;
  for (int i = 0; i < n && !st; ++i) {
    Tensor* t = in[i];
    bool on_device = t->device.type == device.type && t->device.index == device.index;
    bool keep = (keep_dtype && keep_dtype[i]) || t->dtype == compute;
    if (on_device && keep) {
      prepared[i] = t;
      continue;
    }
    Tensor* moved = nullptr;
    st = to_device(ctx.rt, t, device, ctx.name(), &moved);
    if (st) break;
    if (keep) {
      owned[i] = moved;
    } else {
      st = cast_to(ctx.rt, moved, compute, ctx.name(), &owned[i]);
      moved->release();
    }
    prepared[i] = owned[i];
  }
  if (!st) st = make_output(ctx, 0, ndim, sizes, out_dtype, device, &out);
  if (!st && out->numel > 0) {
    // An out= tensor that overlaps an input only partially would be corrupted mid-way.
    tsr_iter_t it;
    Tensor* ops[TSR_ITER_MAX_OPERANDS];
    ops[0] = out;
    for (int i = 0; i < n; ++i) ops[i + 1] = prepared[i];
    build_iter(ops, n + 1, 1, ndim, sizes, 0, &it);
    st = launch(ctx, device, compute, prepared, n, &out, 1, &it);
  }
  release_all(owned, static_cast<size_t>(n));
  if (st) {
    if (out) out->release();
    return st;
  }
  publish_outputs(ctx, &out, 1);
  return nullptr;
}

tsr_dtype_t result_type(Tensor* const* in, int n) {
  ResultTypeState s;
  for (int i = 0; i < n; ++i) s.add(in[i]->dtype, in[i]->ndim, in[i]->wrapped_number);
  return s.result();
}

tsr_status_t elementwise_op(CallCtx& ctx, ElementwiseRule R, int N) {
  Tensor* in[TSR_ITER_MAX_OPERANDS];
  for (int i = 0; i < N; ++i) in[i] = ctx.tensor(i);
  tsr_dtype_t common = result_type(in, N);
  tsr_dtype_t compute = common, out = common;
  switch (R) {
    case Rule::Promote:
      break;
    case Rule::IntToFloat:
      if (!is_floating(common)) compute = out = TSR_F32;
      break;
    case Rule::Compare:
      out = TSR_BOOL;
      break;
    case Rule::NoBool:
      if (common == TSR_BOOL)
        return ctx.error(TSR_INVALID_ARGUMENT, "not supported for bool tensors (got " + describe(ctx.rt, in[0]) + ")");
      break;
  }
  return run_elementwise(ctx, in, N, compute, out, nullptr);
}

namespace {

tsr_status_t check_alpha(CallCtx& ctx) {
  Tensor* in[2] = {ctx.tensor(0), ctx.tensor(1)};
  if (ctx.args[2].tag == TSR_VALUE_DOUBLE && !is_floating(result_type(in, 2)))
    return ctx.error(TSR_INVALID_ARGUMENT,
                     "for integral input tensors, argument alpha must not be a floating point number");
  return nullptr;
}

tsr_status_t add_impl(CallCtx& ctx) {
  TSR_RETURN_IF_ERROR(check_alpha(ctx));
  return elementwise_impl<Rule::Promote, 2>(ctx);
}

tsr_status_t sub_impl(CallCtx& ctx) {
  Tensor* in[2] = {ctx.tensor(0), ctx.tensor(1)};
  if (in[0]->dtype == TSR_BOOL || in[1]->dtype == TSR_BOOL)
    return ctx.error(TSR_INVALID_ARGUMENT,
                     "subtraction with a bool tensor is not supported; use logical_xor or ~ instead");
  TSR_RETURN_IF_ERROR(check_alpha(ctx));
  return elementwise_impl<Rule::Promote, 2>(ctx);
}

// A wrapped integer exponent is a Python scalar: pow(Tensor, Scalar) in PyTorch refuses a
// negative one for integer (and bool) bases, whose exact result would not be an integer.
tsr_status_t pow_impl(CallCtx& ctx) {
  Tensor* base = ctx.tensor(0);
  Tensor* e = ctx.tensor(1);
  if (e->wrapped_number && e->dtype == TSR_I64 && e->device.type == TSR_DEVICE_TYPE_CPU && !is_floating(base->dtype) &&
      *static_cast<const int64_t*>(e->data()) < 0)
    return ctx.error(TSR_INVALID_ARGUMENT,
                     "Integers to negative integer powers are not allowed (base " + describe(ctx.rt, base) + ")");
  return elementwise_impl<Rule::NoBool, 2>(ctx);
}

tsr_status_t where_impl(CallCtx& ctx) {
  Tensor* cond = ctx.tensor(0);
  if (cond->dtype != TSR_BOOL && cond->dtype != TSR_U8)
    return ctx.error(TSR_INVALID_ARGUMENT, "condition must be a bool tensor, got " + describe(ctx.rt, cond));
  Tensor* ab[2] = {ctx.tensor(1), ctx.tensor(2)};
  tsr_dtype_t common = result_type(ab, 2);
  Tensor* cond_bool = nullptr;
  TSR_RETURN_IF_ERROR(cast_to(ctx.rt, cond, TSR_BOOL, ctx.name(), &cond_bool));
  Tensor* in[3] = {cond_bool, ab[0], ab[1]};
  const bool keep[3] = {true, false, false};
  tsr_status_t st = run_elementwise(ctx, in, 3, common, common, keep);
  cond_bool->release();
  return st;
}

tsr_status_t clamp_impl(CallCtx& ctx) {
  Tensor* in[1] = {ctx.tensor(0)};
  if (ctx.is_none(1) && ctx.is_none(2))
    return ctx.error(TSR_INVALID_ARGUMENT, "at least one of 'min' or 'max' must not be None");
  tsr_dtype_t dt = in[0]->dtype;
  if (dt == TSR_BOOL) return ctx.error(TSR_INVALID_ARGUMENT, "not supported for bool tensors");
  // A float bound on an integer tensor promotes the result, as in PyTorch.
  ResultTypeState s;
  s.add(dt, in[0]->ndim, false);
  for (int i = 1; i <= 2; ++i)
    if (!ctx.is_none(i)) s.add(ctx.args[i].tag == TSR_VALUE_DOUBLE ? TSR_F64 : TSR_I64, 0, true);
  tsr_dtype_t common = s.result();
  return run_elementwise(ctx, in, 1, common, common, nullptr);
}

tsr_status_t gelu_impl(CallCtx& ctx) {
  std::string approx = ctx.args[1].u.str;
  if (approx != "none" && approx != "tanh")
    return ctx.error(TSR_INVALID_ARGUMENT, "approximate must be 'none' or 'tanh', got '" + approx + "'");
  return elementwise_impl<Rule::IntToFloat, 1>(ctx);
}

// grad * gelu'(self): the fused form of gelu's backward (ops/unary/unary_grad.cpp) for backends
// that register a kernel.
tsr_status_t gelu_backward_impl(CallCtx& ctx) {
  std::string approx = ctx.args[2].u.str;
  if (approx != "none" && approx != "tanh")
    return ctx.error(TSR_INVALID_ARGUMENT, "approximate must be 'none' or 'tanh', got '" + approx + "'");
  return elementwise_impl<Rule::IntToFloat, 2>(ctx);
}

tsr_status_t abs_impl(CallCtx& ctx) { return elementwise_impl<Rule::Promote, 1>(ctx); }

tsr_status_t copy_op_impl(CallCtx& ctx) {  // _copy(Tensor src) -> Tensor: out= decides dtype
  Tensor* src = ctx.tensor(0);
  Tensor* out = ctx.out_slot(0);
  Tensor* result = nullptr;
  if (out) {
    TSR_RETURN_IF_ERROR(copy_into(out, src, ctx.name()));
    return nullptr;
  }
  TSR_RETURN_IF_ERROR(new_tensor(ctx.rt, src->ndim, src->sizes, src->dtype, src->device, ctx.name(), &result));
  if (tsr_status_t st = copy_into(result, src, ctx.name())) {
    result->release();
    return st;
  }
  publish_outputs(ctx, &result, 1);
  return nullptr;
}

tsr_status_t fill_op_impl(CallCtx& ctx) {  // _fill(Tensor(a!) self, Scalar value) -> Tensor(a!)
  Tensor* self = ctx.tensor(0);
  TSR_RETURN_IF_ERROR(fill_tensor(ctx.rt, self, ctx.args[1], nullptr));
  if (!ctx.out_slot(0)) {
    self->retain();
    ctx.outs[0] = self;
  }
  return nullptr;
}

}  // namespace

TSR_CORE_OPS(elementwise) {
  v.push_back({"add(Tensor self, Tensor other, Scalar alpha=1) -> Tensor", add_impl});
  v.push_back({"sub(Tensor self, Tensor other, Scalar alpha=1) -> Tensor", sub_impl});
  v.push_back({"mul(Tensor self, Tensor other) -> Tensor", elementwise_impl<Rule::Promote, 2>});
  v.push_back({"div(Tensor self, Tensor other) -> Tensor", elementwise_impl<Rule::IntToFloat, 2>});
  v.push_back({"maximum(Tensor self, Tensor other) -> Tensor", elementwise_impl<Rule::Promote, 2>});
  v.push_back({"minimum(Tensor self, Tensor other) -> Tensor", elementwise_impl<Rule::Promote, 2>});
  v.push_back({"pow(Tensor self, Tensor exponent) -> Tensor", pow_impl});
  for (const char* cmp : {"eq", "ne", "lt", "le", "gt", "ge"})
    v.push_back({std::string(cmp) + "(Tensor self, Tensor other) -> Tensor", elementwise_impl<Rule::Compare, 2>});
  v.push_back({"neg(Tensor self) -> Tensor", elementwise_impl<Rule::NoBool, 1>});
  v.push_back({"abs(Tensor self) -> Tensor", abs_impl});
  v.push_back({"relu(Tensor self) -> Tensor", elementwise_impl<Rule::NoBool, 1>});
  for (const char* f : {"exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "silu"})
    v.push_back({std::string(f) + "(Tensor self) -> Tensor", elementwise_impl<Rule::IntToFloat, 1>});
  v.push_back({"gelu(Tensor self, str approximate='none') -> Tensor", gelu_impl});
  v.push_back({"_gelu_backward(Tensor grad, Tensor self, str approximate='none') -> Tensor", gelu_backward_impl});
  v.push_back({"clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", clamp_impl});
  v.push_back({"where(Tensor condition, Tensor self, Tensor other) -> Tensor", where_impl});
  v.push_back({"_copy(Tensor src) -> Tensor", copy_op_impl});
  v.push_back({"_fill(Tensor(a!) self, Scalar value) -> Tensor", fill_op_impl});
}

}  // namespace tsr::core
