// Reductions over dims with keepdim: the core builds an iteration whose first `nreduce` dims
// are reduced, so every backend's kernel is one loop nest.
#include <cmath>
#include <limits>

#include "ops/composite.hpp"
#include "ops/op_impl.hpp"
#include "ops/op_table.hpp"
#include "ops/reduce/reduce_common.hpp"

namespace tsr::core {

namespace {

// Resolves a dim list to a bitmask; empty list = every dim (as torch.sum(x, dim=[])).
tsr_status_t reduce_mask(CallCtx& ctx, Tensor* t, size_t arg, uint32_t* mask) {
  *mask = 0;
  const tsr_value_t& v = ctx.args[arg];
  if (v.tag == TSR_VALUE_NONE || v.u.ints.len == 0) {
    *mask = t->ndim == 0 ? 0 : (t->ndim >= 32 ? ~0u : ((1u << t->ndim) - 1));
    return nullptr;
  }
  for (int64_t i = 0; i < v.u.ints.len; ++i) {
    int d = 0;
    TSR_RETURN_IF_ERROR(wrap_dim(ctx.name(), v.u.ints.data[i], t->ndim, &d));
    if (t->ndim == 0) continue;
    if (*mask & (1u << d))
      return ctx.error(TSR_INVALID_ARGUMENT,
                       "dim " + std::to_string(d) + " appears multiple times in the list of dims");
    *mask |= 1u << d;
  }
  return nullptr;
}

enum class Kind { Sum, Mean, MinMax, ArgMax };

// Output shape with keepdim; reduced count.
void reduced_shape(Tensor* t, uint32_t mask, bool keepdim, int* ndim, int64_t* sizes, int64_t* count,
                   int64_t* keep_sizes) {
  int n = 0;
  *count = 1;
  for (int d = 0; d < t->ndim; ++d) {
    bool r = mask & (1u << d);
    keep_sizes[d] = r ? 1 : t->sizes[d];
    if (r) *count *= t->sizes[d];
    if (!r || keepdim) sizes[n++] = r ? 1 : t->sizes[d];
  }
  *ndim = n;
}

tsr_status_t run_reduction(CallCtx& ctx, Kind kind, Tensor* in, uint32_t mask, bool keepdim, tsr_dtype_t out_dtype) {
  int ndim = 0;
  int64_t sizes[TSR_MAX_DIMS], keep_sizes[TSR_MAX_DIMS], count = 1;
  reduced_shape(in, mask, keepdim, &ndim, sizes, &count, keep_sizes);
  if (count == 0 && (kind == Kind::MinMax || kind == Kind::ArgMax) && in->numel == 0)
    return ctx.error(TSR_INVALID_ARGUMENT, "cannot reduce over a zero-size dimension of " + describe(ctx.rt, in) +
                                               " (the operation has no identity)");
  Tensor* out = nullptr;
  TSR_RETURN_IF_ERROR(make_output(ctx, 0, ndim, sizes, out_dtype, in->device, &out));
  tsr_status_t st = nullptr;
  Tensor* src = nullptr;
  if (out->numel == 0) {
    // nothing to compute
  } else if (count == 0) {  // sum of nothing is 0, mean of nothing is NaN
    tsr_value_t v;
    v.tag = TSR_VALUE_DOUBLE;
    v.u.d = kind == Kind::Mean ? std::numeric_limits<double>::quiet_NaN() : 0.0;
    st = fill_tensor(ctx.rt, out, v, ctx.name());
  } else {
    st = (kind == Kind::Sum || kind == Kind::Mean) ? cast_to(ctx.rt, in, out_dtype, ctx.name(), &src)
                                                   : (in->retain(), src = in, nullptr);
    if (!st) {
      // View the output with the input's rank (size 1 at reduced dims) for the iteration.
      int64_t kst[TSR_MAX_DIMS];
      contiguous_strides(in->ndim, keep_sizes, kst);
      Tensor* out_view = make_view(out, in->ndim, keep_sizes, kst, out->offset);
      if (!out->contiguous) {  // out= with odd strides: compute into a temp, then copy
        out_view->release();
        out_view = nullptr;
        Tensor* tmp = nullptr;
        st = new_tensor(ctx.rt, in->ndim, keep_sizes, out_dtype, in->device, ctx.name(), &tmp);
        if (!st) {
          tsr_iter_t it;
          Tensor* ops[2] = {tmp, src};
          build_iter(ops, 2, 1, in->ndim, in->sizes, mask, &it);
          st = launch(ctx, in->device, src->dtype, &src, 1, &tmp, 1, &it);
          if (!st) {
            int64_t cst[TSR_MAX_DIMS];
            contiguous_strides(ndim, sizes, cst);
            Tensor* tv = make_view(tmp, ndim, sizes, cst, 0);  // drop the kept size-1 dims
            st = copy_into(out, tv, ctx.name());
            tv->release();
          }
          tmp->release();
        }
      } else {
        tsr_iter_t it;
        Tensor* ops[2] = {out_view, src};
        build_iter(ops, 2, 1, in->ndim, in->sizes, mask, &it);
        st = launch(ctx, in->device, src->dtype, &src, 1, &out_view, 1, &it);
        out_view->release();
      }
      src->release();
    }
  }
  if (st) {
    out->release();
    return st;
  }
  publish_outputs(ctx, &out, 1);
  return nullptr;
}

// sum(..., dtype=bool): the input cast to bool, summed in bool, where 1 + 1 stays true: any().
tsr::Tensor sum_as_bool(CArgs& a) {
  return tsr::any(a.tensor(0), a.is_none(1) ? std::vector<int64_t>{} : a.ints(1), a.bool_arg(2));
}

tsr_status_t sum_impl(CallCtx& ctx) {
  Tensor* in = ctx.tensor(0);
  uint32_t mask;
  TSR_RETURN_IF_ERROR(reduce_mask(ctx, in, 1, &mask));
  tsr_dtype_t out = in->dtype == TSR_BOOL || is_integral(in->dtype) ? TSR_I64 : in->dtype;
  if (!ctx.is_none(3)) out = static_cast<tsr_dtype_t>(ctx.args[3].u.dtype);
  if (!dtype_valid(out)) return ctx.error(TSR_INVALID_ARGUMENT, "invalid dtype argument");
  if (out == TSR_BOOL) return run_composite1(ctx, sum_as_bool);
  return run_reduction(ctx, Kind::Sum, in, mask, ctx.bool_arg(2), out);
}

tsr_status_t mean_impl(CallCtx& ctx) {
  Tensor* in = ctx.tensor(0);
  uint32_t mask;
  TSR_RETURN_IF_ERROR(reduce_mask(ctx, in, 1, &mask));
  tsr_dtype_t out = ctx.is_none(3) ? in->dtype : static_cast<tsr_dtype_t>(ctx.args[3].u.dtype);
  if (!is_floating(out))
    return ctx.error(TSR_INVALID_ARGUMENT, std::string("could not infer output dtype: input dtype must be floating "
                                                       "point, got ") +
                                               dtype_name(out));
  return run_reduction(ctx, Kind::Mean, in, mask, ctx.bool_arg(2), out);
}

tsr_status_t minmax_impl(CallCtx& ctx) {
  Tensor* in = ctx.tensor(0);
  uint32_t mask;
  TSR_RETURN_IF_ERROR(reduce_mask(ctx, in, 1, &mask));
  return run_reduction(ctx, Kind::MinMax, in, mask, ctx.bool_arg(2), in->dtype);
}

tsr_status_t argmax_impl(CallCtx& ctx) {
  Tensor* in = ctx.tensor(0);
  bool keepdim = ctx.bool_arg(2);
  if (ctx.is_none(1)) {  // over the flattened tensor
    if (in->numel == 0)
      return ctx.error(TSR_INVALID_ARGUMENT, "expected a non-empty tensor (got " + describe(ctx.rt, in) + ")");
    Tensor* flat_src = nullptr;
    TSR_RETURN_IF_ERROR(make_contiguous(ctx.rt, in, ctx.name(), &flat_src));
    int64_t n = in->numel, one = 1;
    Tensor* flat = make_view(flat_src, 1, &n, &one, flat_src->offset);
    flat_src->release();
    tsr_status_t st = nullptr;
    if (keepdim && in->ndim > 0) {
      // keepdim without a dim: a tensor of ones with the input's rank
      int64_t ones[TSR_MAX_DIMS];
      for (int d = 0; d < in->ndim; ++d) ones[d] = 1;
      Tensor* out = nullptr;
      st = make_output(ctx, 0, in->ndim, ones, TSR_I64, in->device, &out);
      if (!st) {
        Tensor* out_view = make_view(out, 1, &one, &one, out->offset);
        tsr_iter_t it;
        Tensor* ops[2] = {out_view, flat};
        build_iter(ops, 2, 1, 1, &n, 1u, &it);
        st = launch(ctx, in->device, in->dtype, &flat, 1, &out_view, 1, &it);
        out_view->release();
        if (st)
          out->release();
        else
          publish_outputs(ctx, &out, 1);
      }
    } else {
      st = run_reduction(ctx, Kind::ArgMax, flat, 1u, false, TSR_I64);
    }
    flat->release();
    return st;
  }
  int d = 0;
  TSR_RETURN_IF_ERROR(wrap_dim(ctx.name(), ctx.int_arg(1), in->ndim, &d));
  if (in->ndim > 0 && in->sizes[d] == 0)
    return ctx.error(TSR_INVALID_ARGUMENT, "cannot reduce over dimension " + std::to_string(d) + " of size 0 (input " +
                                               describe(ctx.rt, in) + ")");
  return run_reduction(ctx, Kind::ArgMax, in, in->ndim == 0 ? 0u : (1u << d), keepdim, TSR_I64);
}

// ---- backward formulas ----

using red::Dims;

Dims grad_dims(GradCtx& ctx) {
  return red::dims_of(ctx.op_name(), ctx.ints(1), static_cast<int64_t>(ctx.input_sizes(0).size()));
}

void sum_backward(GradCtx& ctx) {
  if (!ctx.needs(0) || !ctx.grad().defined()) return;
  Dims dims = grad_dims(ctx);
  ctx.set(0, red::keep(ctx.grad(), dims, ctx.bool_arg(2)).expand(ctx.input_sizes(0)));
}

void mean_backward(GradCtx& ctx) {
  if (!ctx.needs(0) || !ctx.grad().defined()) return;
  Dims dims = grad_dims(ctx);
  auto sizes = ctx.input_sizes(0);
  const double n = static_cast<double>(red::count_of(sizes, dims));
  ctx.set(0, (red::keep(ctx.grad(), dims, ctx.bool_arg(2)) / n).expand(sizes));
}

// The gradient is split evenly among the elements equal to the extreme (PyTorch's rule).
void amax_amin_backward(GradCtx& ctx) {
  if (!ctx.needs(0) || !ctx.grad().defined()) return;
  Dims dims = grad_dims(ctx);
  bool keepdim = ctx.bool_arg(2);
  const tsr::Tensor& x = ctx.input(0);
  tsr::Tensor mask = tsr::eq(x, red::keep(ctx.output(0), dims, keepdim));
  tsr::Tensor count = tsr::sum(mask, dims, true);
  // where, not a product: a NaN extreme matches nothing (count 0) and must give 0, not NaN.
  ctx.set(0, tsr::where(mask, red::keep(ctx.grad(), dims, keepdim) / count, tsr::wrap_scalar(0.0, x.runtime())));
}

}  // namespace

TSR_CORE_OPS(reduction) {
  v.push_back({"sum(Tensor self, int[]? dim=None, bool keepdim=False, ScalarType? dtype=None) -> Tensor", sum_impl,
               TSR_GRAD(sum_backward), kSaveNothing});
  v.push_back({"mean(Tensor self, int[]? dim=None, bool keepdim=False, ScalarType? dtype=None) -> Tensor", mean_impl,
               TSR_GRAD(mean_backward), kSaveNothing});
  v.push_back({"amax(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor", minmax_impl,
               TSR_GRAD(amax_amin_backward), kSaveAll});
  v.push_back({"amin(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor", minmax_impl,
               TSR_GRAD(amax_amin_backward), kSaveAll});
  v.push_back({"argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", argmax_impl});
}

}  // namespace tsr::core
