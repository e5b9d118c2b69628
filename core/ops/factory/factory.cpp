// Factories: arange, full, and the counter-based random ops (Philox; same numbers on every
// backend for a given seed and offset).
#include <cmath>

#include "ops/op_impl.hpp"
#include "ops/op_table.hpp"

namespace tsr::core {

namespace {

tsr_device_t device_arg(const CallCtx& ctx, size_t i) {
  return ctx.is_none(i) ? tsr_device_t{TSR_DEVICE_TYPE_CPU, 0} : ctx.args[i].u.device;
}

tsr_status_t list_shape(CallCtx& ctx, size_t i, int* ndim, int64_t* sizes) {
  const tsr_value_t& v = ctx.args[i];
  if (v.u.ints.len > TSR_MAX_DIMS)
    return ctx.error(TSR_INVALID_ARGUMENT, "too many dimensions (" + std::to_string(v.u.ints.len) + ")");
  *ndim = static_cast<int>(v.u.ints.len);
  for (int d = 0; d < *ndim; ++d) sizes[d] = v.u.ints.data[d];
  return check_shape(ctx.name(), *ndim, sizes, nullptr);
}

// Runs a kernel that only writes output 0 (factories): allocation, launch, publish.
tsr_status_t run_factory(CallCtx& ctx, int ndim, const int64_t* sizes, tsr_dtype_t dtype, tsr_device_t device,
                         tsr_value_t* args) {
  TSR_RETURN_IF_ERROR(check_device(ctx.rt, device, ctx.name()));
  Tensor* out = nullptr;
  TSR_RETURN_IF_ERROR(make_output(ctx, 0, ndim, sizes, dtype, device, &out));
  tsr_status_t st = into_dense(ctx, out, [&](Tensor* target) {
    return launch_op(ctx.rt, ctx.op, device, dtype, args, ctx.nargs, nullptr, 0, &target, 1, nullptr);
  });
  if (st) {
    out->release();
    return st;
  }
  publish_outputs(ctx, &out, 1);
  return nullptr;
}

tsr_status_t arange_impl(CallCtx& ctx) {
  bool any_float = false;
  for (int i = 0; i < 3; ++i) any_float = any_float || ctx.args[i].tag == TSR_VALUE_DOUBLE;
  tsr_dtype_t dt = ctx.is_none(3) ? (any_float ? TSR_F32 : TSR_I64) : static_cast<tsr_dtype_t>(ctx.args[3].u.dtype);
  if (!dtype_valid(dt) || dt == TSR_BOOL)
    return ctx.error(TSR_INVALID_ARGUMENT, std::string("unsupported dtype ") + dtype_name(dt));
  double start = ctx.double_arg(0), end = ctx.double_arg(1), step = ctx.double_arg(2);
  if (step == 0 || !std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step))
    return ctx.error(TSR_INVALID_ARGUMENT, "step must be nonzero and bounds finite (start=" + std::to_string(start) +
                                               ", end=" + std::to_string(end) + ", step=" + std::to_string(step) + ")");
  if ((step > 0 && end < start) || (step < 0 && end > start))
    return ctx.error(TSR_INVALID_ARGUMENT,
                     "upper bound and larger bound inconsistent with step sign (start=" + std::to_string(start) +
                         ", end=" + std::to_string(end) + ", step=" + std::to_string(step) + ")");
  int64_t n;
  if (any_float && !is_floating(dt)) {
    // An integer dtype from float bounds: PyTorch converts start, end and step to int64 first
    // (truncating), refuses a step that truncates to 0, steps by the truncated step, and sizes
    // an int64 range from the truncated values but a narrower one from the float bounds.
    double bound[3] = {start, end, step};
    int64_t t[3];
    for (int i = 0; i < 3; ++i) {
      if (!(std::fabs(bound[i]) < 9.2e18))
        return ctx.error(TSR_INVALID_ARGUMENT, std::string("the bound ") + std::to_string(bound[i]) +
                                                   " does not fit the integer dtype " + dtype_name(dt));
      t[i] = static_cast<int64_t>(bound[i]);
    }
    if (t[2] == 0)
      return ctx.error(TSR_INVALID_ARGUMENT, "step must be nonzero: the step " + std::to_string(step) +
                                                 " truncates to 0 in the integer dtype " + dtype_name(dt));
    if ((t[2] > 0 && t[1] < t[0]) || (t[2] < 0 && t[1] > t[0]))
      return ctx.error(TSR_INVALID_ARGUMENT, "upper bound and larger bound inconsistent with step sign (start=" +
                                                 std::to_string(t[0]) + ", end=" + std::to_string(t[1]) +
                                                 ", step=" + std::to_string(t[2]) + " after truncation to integers)");
    double count =
        dt == TSR_I64 ? std::ceil((double(t[1]) - double(t[0])) / double(t[2])) : std::ceil((end - start) / step);
    n = count >= 9.2e18 ? INT64_MAX : static_cast<int64_t>(count);
  } else if (!any_float) {
    // ceil(|e - s| / |st|) without forming e - s + st - 1, which wraps near the int64 range;
    // the sign check above makes e - s and st agree in sign.
    int64_t s = ctx.int_arg(0), e = ctx.int_arg(1), st = ctx.int_arg(2), span = 0;
    if (!checked_sub(e, s, &span) || st == INT64_MIN)
      return ctx.error(TSR_INVALID_ARGUMENT, "the range from " + std::to_string(s) + " to " + std::to_string(e) +
                                                 " with step " + std::to_string(st) + " overflows int64");
    if (span < 0) span = -span;
    int64_t step = st < 0 ? -st : st;
    n = span == 0 ? 0 : 1 + (span - 1) / step;
  } else {
    double count = std::ceil((end - start) / step);
    // A count past int64 would be undefined to convert; make_output reports the shape as too large.
    n = count >= 9.2e18 ? INT64_MAX : static_cast<int64_t>(count);
  }
  if (n < 0) n = 0;
  return run_factory(ctx, 1, &n, dt, device_arg(ctx, 4), ctx.args);
}

tsr_status_t full_impl(CallCtx& ctx) {
  int ndim;
  int64_t sizes[TSR_MAX_DIMS];
  TSR_RETURN_IF_ERROR(list_shape(ctx, 0, &ndim, sizes));
  tsr_dtype_t dt;
  if (!ctx.is_none(2))
    dt = static_cast<tsr_dtype_t>(ctx.args[2].u.dtype);
  else
    dt = ctx.args[1].tag == TSR_VALUE_DOUBLE ? TSR_F32 : ctx.args[1].tag == TSR_VALUE_BOOL ? TSR_BOOL : TSR_I64;
  if (!dtype_valid(dt)) return ctx.error(TSR_INVALID_ARGUMENT, "invalid dtype");
  tsr_device_t device = device_arg(ctx, 3);
  TSR_RETURN_IF_ERROR(check_device(ctx.rt, device, ctx.name()));
  Tensor* out = nullptr;
  TSR_RETURN_IF_ERROR(make_output(ctx, 0, ndim, sizes, dt, device, &out));
  if (tsr_status_t st = fill_tensor(ctx.rt, out, ctx.args[1], ctx.name())) {
    out->release();
    return st;
  }
  publish_outputs(ctx, &out, 1);
  return nullptr;
}

template <bool Normal>
tsr_status_t random_impl(CallCtx& ctx) {
  int ndim;
  int64_t sizes[TSR_MAX_DIMS], numel = 0;
  TSR_RETURN_IF_ERROR(list_shape(ctx, 0, &ndim, sizes));
  TSR_RETURN_IF_ERROR(check_shape(ctx.name(), ndim, sizes, &numel));
  tsr_dtype_t dt = ctx.is_none(1) ? TSR_F32 : static_cast<tsr_dtype_t>(ctx.args[1].u.dtype);
  if (!is_floating(dt))
    return ctx.error(TSR_INVALID_ARGUMENT, std::string("expected a floating point dtype, got ") + dtype_name(dt));
  tsr_value_t args[kMaxArgs];
  for (size_t i = 0; i < ctx.nargs; ++i) args[i] = ctx.args[i];
  // Philox blocks consumed: 4 values per block, except f64 uniforms (2 per block).
  int64_t per_block = (!Normal && dt == TSR_F64) ? 2 : 4;
  int64_t blocks = (numel + per_block - 1) / per_block;
  if (args[3].u.i < 0) args[3].u.i = static_cast<int64_t>(ctx.rt->seed.load(std::memory_order_relaxed));
  if (args[4].u.i < 0) args[4].u.i = static_cast<int64_t>(ctx.rt->rng_offset.fetch_add(static_cast<uint64_t>(blocks)));
  return run_factory(ctx, ndim, sizes, dt, device_arg(ctx, 2), args);
}

// _copy and _fill: the internal copy and fill every backend provides (cat, pads, factories use them).
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

TSR_CORE_OPS(factory) {
  v.push_back({"_copy(Tensor src) -> Tensor", copy_op_impl});
  // As PyTorch's fill_: an expanded (self-overlapping) self is fine, every write is the same value.
  OpSpec fill{"_fill(Tensor(a!) self, Scalar value) -> Tensor", fill_op_impl};
  fill.overlapping_writes_ok = true;
  v.push_back(fill);
  v.push_back({"arange(Scalar start, Scalar end, Scalar step=1, ScalarType? dtype=None, Device? device=None) -> Tensor",
               arange_impl});
  v.push_back(
      {"full(int[] size, Scalar fill_value, ScalarType? dtype=None, Device? device=None) -> Tensor", full_impl});
  v.push_back({"rand(int[] size, ScalarType? dtype=None, Device? device=None, int seed=-1, int offset=-1) -> Tensor",
               random_impl<false>});
  v.push_back({"randn(int[] size, ScalarType? dtype=None, Device? device=None, int seed=-1, int offset=-1) -> Tensor",
               random_impl<true>});
}

}  // namespace tsr::core
