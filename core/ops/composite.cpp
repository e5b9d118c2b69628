// Running composite ops: SDK values in, statuses out; and the generic in-place variant.
#include "ops/composite.hpp"

#include "autograd/engine.hpp"
#include "tensor/dtype.hpp"

namespace tsr::core {

std::vector<tsr::Tensor> CArgs::tensors(size_t i) const {
  std::vector<tsr::Tensor> r;
  const tsr_value_t& v = c_.args[i];
  if (v.tag != TSR_VALUE_TENSOR_LIST) return r;
  for (int64_t k = 0; k < v.u.tensors.len; ++k) r.push_back(tsr::Tensor::borrow(v.u.tensors.data[k]));
  return r;
}

std::vector<int64_t> CArgs::ints(size_t i) const {
  const tsr_value_t& v = c_.args[i];
  if (v.tag != TSR_VALUE_INT_LIST) return {};
  return std::vector<int64_t>(v.u.ints.data, v.u.ints.data + v.u.ints.len);
}

tsr::Arg CArgs::scalar(size_t i) const {
  const tsr_value_t& v = c_.args[i];
  if (v.tag == TSR_VALUE_INT) return tsr::Arg(v.u.i);
  if (v.tag == TSR_VALUE_BOOL) return tsr::Arg(v.u.b != 0);
  return tsr::Arg(v.u.d);
}

tsr::Tensor CArgs::scalar_tensor(size_t i) const {
  tsr::RuntimeScope scope(c_.rt);
  const tsr_value_t& v = c_.args[i];
  if (v.tag == TSR_VALUE_INT) return tsr::scalar_tensor_int(v.u.i);
  if (v.tag == TSR_VALUE_BOOL) return tsr::wrap_scalar(v.u.b != 0);
  return tsr::scalar_tensor(v.u.d);
}

void CArgs::fail(tsr_code_t code, const std::string& msg) const {
  throw tsr::Error(code, std::string(c_.name()) + ": " + msg);
}

namespace {

// Inner errors already name their op; prefix ours unless the message starts with it.
tsr_status_t to_status(const CallCtx& ctx, tsr_code_t code, const std::string& msg) {
  std::string prefix = std::string(ctx.name()) + ":";
  if (msg.compare(0, prefix.size(), prefix) == 0) return make_status(code, msg);
  return make_status(code, std::string(ctx.name()) + ": " + msg);
}

tsr_status_t publish(CallCtx& ctx, std::vector<tsr::Tensor>& results) {
  if (results.size() != ctx.nouts)
    return ctx.error(TSR_INTERNAL, "composite produced " + std::to_string(results.size()) + " results, schema has " +
                                       std::to_string(ctx.nouts));
  for (size_t i = 0; i < results.size(); ++i)
    if (!results[i].defined())
      return ctx.error(TSR_INTERNAL, "composite left result " + std::to_string(i) + " undefined");
  // out= tensors: check them all before writing any (no partial write on error).
  for (size_t i = 0; i < results.size(); ++i) {
    Tensor* o = ctx.out_slot(i);
    if (!o) continue;
    Tensor* r = results[i].get();
    Tensor* checked = nullptr;
    TSR_RETURN_IF_ERROR(make_output(ctx, i, r->ndim, r->sizes, r->dtype, r->device, &checked));
    checked->release();
  }
  for (size_t i = 0; i < results.size(); ++i) {
    Tensor* o = ctx.out_slot(i);
    if (o) {
      if (o != results[i].get()) TSR_RETURN_IF_ERROR(copy_into(o, results[i].get(), ctx.name()));
    } else {
      ctx.outs[i] = results[i].release();
    }
  }
  return nullptr;
}

}  // namespace

tsr_status_t run_composite(CallCtx& ctx, CompositeMultiFn fn) {
  TSR_RETURN_IF_ERROR(check_out_autograd(ctx));
  tsr::RuntimeScope scope(ctx.rt);
  std::vector<tsr::Tensor> results;
  try {
    CArgs a(ctx);
    results = fn(a);
  } catch (const tsr::Error& e) {
    return to_status(ctx, e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return ctx.error(TSR_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return ctx.error(TSR_INTERNAL, e.what());
  }
  return publish(ctx, results);
}

tsr_status_t run_composite1(CallCtx& ctx, CompositeFn fn) {
  TSR_RETURN_IF_ERROR(check_out_autograd(ctx));
  tsr::RuntimeScope scope(ctx.rt);
  std::vector<tsr::Tensor> results(1);
  try {
    CArgs a(ctx);
    results[0] = fn(a);
  } catch (const tsr::Error& e) {
    return to_status(ctx, e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return ctx.error(TSR_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return ctx.error(TSR_INTERNAL, e.what());
  }
  return publish(ctx, results);
}

tsr_status_t inplace_impl(CallCtx& ctx) {
  std::string fname(ctx.name());
  if (fname.empty() || fname.back() != '_') return ctx.error(TSR_INTERNAL, "in-place op name must end in '_'");
  fname.pop_back();
  auto it = ctx.rt->op_by_name.find(fname);
  if (it == ctx.rt->op_by_name.end()) return ctx.error(TSR_INTERNAL, "no functional op '" + fname + "'");
  Tensor* self = ctx.tensor(0);
  if (!self) return ctx.error(TSR_INVALID_ARGUMENT, "self must be a tensor");
  TSR_RETURN_IF_ERROR(check_inplace_allowed(ctx, self));
  // A formula that saves its inputs would find self overwritten at backward time: give the
  // functional op a copy of self when this call is being recorded.
  tsr_value_t args[kMaxArgs];
  std::copy(ctx.args, ctx.args + ctx.nargs, args);
  tsr::Tensor self_copy;
  if ((it->second->save & kSaveInputs) && !it->second->composite && should_record(ctx)) {
    tsr_tensor_t* c = nullptr;
    TSR_RETURN_IF_ERROR(api_table()->tensor_to(self, TSR_DTYPE_UNDEFINED, self->device, 1, &c));
    self_copy = tsr::Tensor::adopt(c);
    args[0].u.tensor = c;
  }
  Tensor* result = nullptr;
  TSR_RETURN_IF_ERROR(call_op(it->second, args, ctx.nargs, &result, 1));
  tsr_status_t st = nullptr;
  bool same_shape = result->ndim == self->ndim && std::equal(self->sizes, self->sizes + self->ndim, result->sizes);
  if (!same_shape) {
    st = ctx.error(TSR_INVALID_ARGUMENT, "output with shape " + shape_str(self->sizes, self->ndim) +
                                             " doesn't match the broadcast shape " +
                                             shape_str(result->sizes, result->ndim));
  } else if (!can_cast(result->dtype, self->dtype)) {
    st = ctx.error(TSR_INVALID_ARGUMENT, std::string("result type ") + dtype_name(result->dtype) +
                                             " can't be cast to the desired output type " + dtype_name(self->dtype));
  }
  if (!st) st = copy_into(self, result, ctx.name());
  if (!st) st = rebase_history(self, result);
  result->release();
  if (st) return st;
  if (!ctx.out_slot(0)) {
    self->retain();
    ctx.outs[0] = self;
  }
  return nullptr;
}

}  // namespace tsr::core
