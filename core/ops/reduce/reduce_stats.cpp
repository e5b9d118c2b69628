// Reductions beyond the foundation set: prod, var/std (+ _mean), norm, logsumexp, all/any,
// count_nonzero, nansum/nanmean, full max/min, max_dim/min_dim, argmin, aminmax.
// Those with a gradient are primitives whose forward is written with SDK ops and whose backward
// formula is given here (exact at zeros, ties and infinities, where chaining the pieces would give
// NaN); the rest (all, any, count_nonzero, argmin, aminmax, max, min) are composites.
#include <cmath>
#include <limits>

#include "ops/composite.hpp"
#include "ops/nn/nn_kernel_op.hpp"
#include "ops/reduce/reduce_common.hpp"

namespace tsr::core {
namespace {

using red::Dims;
using tsr::Tensor;

Tensor zero_like_scalar(const Tensor& t) { return tsr::wrap_scalar(0.0, t.runtime()); }
Tensor isnan_t(const Tensor& x) { return tsr::ne(x, x); }

Dims arg_dims(CArgs& a, const Tensor& x, size_t i) {
  return red::dims_of(a.op(), a.is_none(i) ? Dims{} : a.ints(i), x.dim());
}
Dims grad_dims(GradCtx& ctx, size_t i) {
  return red::dims_of(ctx.op_name(), ctx.is_none(i) ? Dims{} : ctx.ints(i),
                      static_cast<int64_t>(ctx.input_sizes(0).size()));
}

// A result of the reduced shape filled with `value` (reductions over empty dims).
Tensor filled_reduced(const Tensor& x, const Dims& dims, bool keepdim, double value, tsr_dtype_t dt) {
  std::vector<int64_t> s;
  auto sz = x.sizes();
  for (int64_t d = 0; d < x.dim(); ++d) {
    bool r = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (!r)
      s.push_back(sz[static_cast<size_t>(d)]);
    else if (keepdim)
      s.push_back(1);
  }
  return tsr::full(s, value, dt, x.device());
}

void require_floating(CArgs& a, const Tensor& x, const char* what) {
  if (!red::floating(x))
    a.fail(TSR_INVALID_ARGUMENT, std::string(what) + " only supports floating point dtypes, got " +
                                     dtype_name(x.dtype()) + " " + red::shape_of(x));
}

// ---- prod --------------------------------------------------------------------------------------

tsr_dtype_t sum_like_dtype(CArgs& a, const Tensor& x, size_t dtype_arg) {
  if (auto dt = a.dtype(dtype_arg)) return *dt;
  return is_floating(x.dtype()) ? x.dtype() : TSR_I64;
}

Tensor prod_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  Dims dims = arg_dims(a, x, 1);
  bool keepdim = a.bool_arg(2);
  tsr_dtype_t dt = sum_like_dtype(a, x, 3);
  Tensor xc = x.to(dt);
  if (x.dim() == 0) return xc.clone();
  Tensor flat = red::dims_last_flat(xc, dims);
  static const Op prod_rows("_prod_rows");
  Tensor r = call(prod_rows, {flat});
  return keepdim ? red::unsqueeze_dims(r, dims) : r;
}

// d prod / d x_i = product of the other elements, computed without dividing by zero: with one
// zero in a slice only that element gets a gradient, with two or more none does.
void prod_backward(GradCtx& ctx) {
  if (!ctx.needs(0) || !ctx.grad().defined()) return;
  const Tensor& x = ctx.input(0);
  Dims dims = grad_dims(ctx, 1);
  bool keepdim = ctx.bool_arg(2);
  Tensor g = red::keep(ctx.grad(), dims, keepdim);
  if (x.dim() == 0) {
    ctx.set(0, g);
    return;
  }
  Tensor xv = x.to(g.dtype());
  Tensor one = tsr::wrap_scalar(1.0, x.runtime()), zero = zero_like_scalar(x);
  Tensor is_zero = tsr::eq(xv, zero);
  Tensor nzeros = tsr::sum(is_zero, dims, true);
  Tensor safe = tsr::where(is_zero, one, xv);
  Tensor others_nonzero = tsr::prod(safe, dims, true);  // product of the non-zero elements
  Tensor at_zero = tsr::where(tsr::eq(nzeros, tsr::wrap_scalar(int64_t{1}, x.runtime())), others_nonzero, zero);
  Tensor at_other = tsr::where(tsr::eq(nzeros, tsr::wrap_scalar(int64_t{0}, x.runtime())), others_nonzero / safe, zero);
  ctx.set(0, g * tsr::where(is_zero, at_zero, at_other));
}

// ---- var / std ---------------------------------------------------------------------------------

struct VarParts {
  Tensor var, mean;
};
VarParts var_parts(CArgs& a) {
  Tensor x = a.tensor(0);
  require_floating(a, x, "var/std");
  Dims dims = arg_dims(a, x, 1);
  double correction = a.is_none(2) ? 1.0 : a.double_arg(2);
  bool keepdim = a.bool_arg(3);
  const int64_t n = red::count_of(x.sizes(), dims);
  Tensor m = tsr::mean(x, dims, true);
  Tensor d = x - m;
  Tensor v = tsr::sum(d * d, dims, keepdim) / std::max(0.0, double(n) - correction);
  return {v, keepdim ? m : red::squeeze_dims(m, dims)};
}
Tensor var_fn(CArgs& a) { return var_parts(a).var; }
Tensor std_fn(CArgs& a) { return tsr::sqrt(var_parts(a).var); }
std::vector<Tensor> var_mean_fn(CArgs& a) {
  VarParts p = var_parts(a);
  return {p.var, p.mean};
}
std::vector<Tensor> std_mean_fn(CArgs& a) {
  VarParts p = var_parts(a);
  return {tsr::sqrt(p.var), p.mean};
}

// Primitives with their own formulas, so they differentiate whatever the elementwise ops
// they are computed with support: d var / dx = 2 (x - mean) / (N - correction),
// d std / dx = (x - mean) / (std (N - correction)), d mean / dx = 1 / N.
void var_std_backward(GradCtx& ctx) {
  if (!ctx.needs(0)) return;
  const std::string op = ctx.op_name();
  const bool is_std = op == "std" || op == "std_mean";
  const bool has_mean = op == "var_mean" || op == "std_mean";
  const Tensor& x = ctx.input(0);
  Dims dims = grad_dims(ctx, 1);
  double correction = ctx.is_none(2) ? 1.0 : ctx.double_arg(2);
  bool keepdim = ctx.bool_arg(3);
  const double n = double(red::count_of(x.sizes(), dims));
  Tensor result;
  if (ctx.grad(0).defined()) {
    Tensor centered = x - tsr::mean(x, dims, true);
    Tensor g = red::keep(ctx.grad(0), dims, keepdim) / std::max(0.0, n - correction);
    if (is_std) {
      // d std = d var / (2 std); where the spread is zero the gradient is 0, not 0/0 (PyTorch's
      // masked_fill(std == 0, 0)).
      Tensor s = red::keep(ctx.output(0), dims, keepdim);
      result = centered * tsr::where(tsr::eq(s, 0.0), 0.0, g / s);
    } else {
      result = centered * (g * 2.0);
    }
  }
  if (has_mean && ctx.grad(1).defined()) {
    Tensor gm = (red::keep(ctx.grad(1), dims, keepdim) / n).expand(x.sizes());
    result = result.defined() ? result + gm : gm;
  }
  if (result.defined()) ctx.set(0, result);
}

// ---- norm --------------------------------------------------------------------------------------

Tensor norm_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  require_floating(a, x, "norm");
  double p = a.double_arg(1);
  Dims dims = arg_dims(a, x, 2);
  bool keepdim = a.bool_arg(3);
  Tensor ax = tsr::abs(x);
  if (std::isinf(p)) {
    if (red::count_of(x.sizes(), dims) == 0)
      a.fail(TSR_INVALID_ARGUMENT, "the inf norm of the empty tensor " + red::shape_of(x) + " has no identity");
    return p > 0 ? tsr::amax(ax, dims, keepdim) : tsr::amin(ax, dims, keepdim);
  }
  if (p == 0) return tsr::sum(tsr::ne(x, zero_like_scalar(x)), dims, keepdim).to(x.dtype());
  if (p == 1) return tsr::sum(ax, dims, keepdim);
  if (p == 2) return tsr::sqrt(tsr::sum(x * x, dims, keepdim));
  return tsr::pow(tsr::sum(tsr::pow(ax, p), dims, keepdim), 1.0 / p);
}

Tensor sign_of(const Tensor& x) {
  Tensor zero = zero_like_scalar(x);
  return tsr::gt(x, zero).to(x.dtype()) - tsr::lt(x, zero).to(x.dtype());
}

// PyTorch's norm_backward: zero gradient where the norm is 0 (a subgradient), ties of the
// inf-norms share the gradient evenly.
void norm_backward(GradCtx& ctx) {
  if (!ctx.needs(0) || !ctx.grad().defined()) return;
  const Tensor& x = ctx.input(0);
  double p = ctx.double_arg(1);
  Dims dims = grad_dims(ctx, 2);
  bool keepdim = ctx.bool_arg(3);
  Tensor g = red::keep(ctx.grad(), dims, keepdim);
  Tensor nrm = red::keep(ctx.output(0), dims, keepdim);
  Tensor zero = zero_like_scalar(x);
  if (p == 0) {
    ctx.set(0, tsr::zeros(x.sizes(), x.dtype(), x.device()));
  } else if (p == 1) {
    ctx.set(0, g * sign_of(x));
  } else if (std::isinf(p)) {
    Tensor mask = tsr::eq(tsr::abs(x), nrm);
    Tensor count = tsr::sum(mask, dims, true);
    ctx.set(0, tsr::where(mask, sign_of(x) * (g / count), zero));
  } else if (p == 2) {
    ctx.set(0, tsr::where(tsr::eq(nrm, zero), zero, x * (g / nrm)));
  } else {
    Tensor scaled = tsr::where(tsr::eq(x, zero), zero, x * tsr::pow(tsr::abs(x), p - 2));
    ctx.set(0, tsr::where(tsr::eq(nrm, zero), zero, scaled * (g / tsr::pow(nrm, p - 1))));
  }
}

// ---- logsumexp ---------------------------------------------------------------------------------

// _logsumexp_rows(input [..., D]) -> [...]: the log-sum-exp of each row along the last dim, for
// backends with a fused kernel (one visit of each row: max, then the sum of exps from cache).
// logsumexp takes it for a reduction over the last dim alone and runs the composite below where
// no kernel takes the call.
tsr_dtype_t lse_rows_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  core::Tensor* x = nn::kfloat(ctx, 0);
  nn::krequire(ctx, x->ndim >= 1 && x->sizes[x->ndim - 1] >= 1,
               "input " + shape_str(x->sizes, x->ndim) + " must have a non-empty last dim");
  outs.push_back({std::vector<int64_t>(x->sizes, x->sizes + x->ndim - 1), x->dtype});
  return x->dtype;
}

Tensor logsumexp_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  if (!red::floating(x)) x = x.to(TSR_F32);
  Dims dims = arg_dims(a, x, 1);
  bool keepdim = a.bool_arg(2);
  if (x.dim() == 0) return x.clone();
  if (red::count_of(x.sizes(), dims) == 0)
    return filled_reduced(x, dims, keepdim, -std::numeric_limits<double>::infinity(), x.dtype());
  static const tsr::Op rows_op("_logsumexp_rows");
  if (dims.size() == 1 && dims[0] == x.dim() - 1 && nn::has_device_kernel(rows_op, x, x.dtype()))
    if (auto r = nn::declinable([&] { return tsr::call(rows_op, {x}); })) return keepdim ? r->unsqueeze(-1) : *r;
  Tensor m = tsr::amax(x, dims, true);
  // An infinite max would give inf - inf = NaN: shift by 0 instead.
  m = tsr::where(tsr::eq(tsr::abs(m), tsr::wrap_scalar(std::numeric_limits<double>::infinity(), x.runtime())),
                 zero_like_scalar(x), m);
  Tensor r = tsr::log(tsr::sum(tsr::exp(x - m), dims, true)) + m;
  return keepdim ? r : red::squeeze_dims(r, dims);
}

void logsumexp_backward(GradCtx& ctx) {
  if (!ctx.needs(0) || !ctx.grad().defined()) return;
  Dims dims = grad_dims(ctx, 1);
  bool keepdim = ctx.bool_arg(2);
  const Tensor& x = ctx.input(0);
  Tensor out = red::keep(ctx.output(0), dims, keepdim);
  ctx.set(0, red::keep(ctx.grad(), dims, keepdim) * tsr::exp(x - out));
}

// ---- boolean and counting reductions -----------------------------------------------------------

Tensor truth(const Tensor& x) { return x.dtype() == TSR_BOOL ? x : tsr::ne(x, zero_like_scalar(x)); }

Tensor all_any(CArgs& a, bool is_all) {
  Tensor x = a.tensor(0);
  Dims dims = arg_dims(a, x, 1);
  bool keepdim = a.bool_arg(2);
  if (red::count_of(x.sizes(), dims) == 0 && x.dim() > 0)
    return filled_reduced(x, dims, keepdim, is_all ? 1.0 : 0.0, TSR_BOOL);
  Tensor t = truth(x);
  if (x.dim() == 0) return t.clone();
  return is_all ? tsr::amin(t, dims, keepdim) : tsr::amax(t, dims, keepdim);
}
Tensor all_fn(CArgs& a) { return all_any(a, true); }
Tensor any_fn(CArgs& a) { return all_any(a, false); }

Tensor count_nonzero_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  return tsr::sum(truth(x), arg_dims(a, x, 1), false);
}

Tensor nansum_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  Dims dims = arg_dims(a, x, 1);
  Tensor clean = red::floating(x) ? tsr::where(isnan_t(x), zero_like_scalar(x), x) : x;
  return tsr::sum(clean, dims, a.bool_arg(2), a.dtype(3));
}

void nansum_backward(GradCtx& ctx) {
  if (!ctx.needs(0) || !ctx.grad().defined()) return;
  const Tensor& x = ctx.input(0);
  Dims dims = grad_dims(ctx, 1);
  Tensor g = red::keep(ctx.grad(), dims, ctx.bool_arg(2));
  if (std::string(ctx.op_name()) == "nanmean") g = g / tsr::sum(tsr::eq(x, x), dims, true);
  ctx.set(0, tsr::where(isnan_t(x), zero_like_scalar(x), g));
}

Tensor nanmean_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  auto dt = a.dtype(3);
  if (!red::floating(x) && !(dt && is_floating(*dt)))
    a.fail(TSR_INVALID_ARGUMENT, std::string("could not infer output dtype: input dtype must be floating point, got ") +
                                     dtype_name(x.dtype()));
  if (dt) x = x.to(*dt);
  Dims dims = arg_dims(a, x, 1);
  bool keepdim = a.bool_arg(2);
  Tensor clean = tsr::where(isnan_t(x), zero_like_scalar(x), x);
  Tensor count = tsr::sum(tsr::eq(x, x), dims, keepdim);
  return tsr::sum(clean, dims, keepdim) / count;
}

// ---- max / min ---------------------------------------------------------------------------------

Tensor full_extreme(CArgs& a, bool is_max) {
  Tensor x = a.tensor(0);
  if (x.numel() == 0)
    a.fail(TSR_INVALID_ARGUMENT,
           "expected a non-empty tensor (got " + red::shape_of(x) + "); pass a dim to reduce over a non-empty one");
  return is_max ? tsr::amax(x) : tsr::amin(x);
}
Tensor max_fn(CArgs& a) { return full_extreme(a, true); }
Tensor min_fn(CArgs& a) { return full_extreme(a, false); }

std::vector<Tensor> extreme_dim(CArgs& a, bool is_max) {
  Tensor x = a.tensor(0);
  int64_t d = red::wrap(a.op(), a.int_arg(1), x.dim());
  bool keepdim = a.bool_arg(2);
  if (x.dim() > 0 && x.size(d) == 0)
    a.fail(TSR_INVALID_ARGUMENT,
           "cannot reduce over dim " + std::to_string(d) + " of size 0 (input " + red::shape_of(x) + ")");
  auto r = red::extreme_rows(red::dim_last(x, d), is_max);
  if (keepdim && x.dim() > 0) return {r[0].unsqueeze(d), r[1].unsqueeze(d)};
  return r;
}
std::vector<Tensor> max_dim_fn(CArgs& a) { return extreme_dim(a, true); }
std::vector<Tensor> min_dim_fn(CArgs& a) { return extreme_dim(a, false); }

void extreme_dim_backward(GradCtx& ctx) {
  if (!ctx.needs(0) || !ctx.grad().defined()) return;
  auto sizes = ctx.input_sizes(0);
  int64_t d = red::wrap(ctx.op_name(), ctx.int_arg(1), static_cast<int64_t>(sizes.size()));
  bool keepdim = ctx.bool_arg(2);
  Tensor g = ctx.grad(0), idx = ctx.output(1);
  if (!keepdim && !sizes.empty()) {
    g = g.unsqueeze(d);
    idx = idx.unsqueeze(d);
  }
  ctx.set(0, red::scatter_grad(g, idx, d, sizes));
}

Tensor argmin_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  bool keepdim = a.bool_arg(2);
  if (a.is_none(1)) {
    if (x.numel() == 0) a.fail(TSR_INVALID_ARGUMENT, "expected a non-empty tensor (got " + red::shape_of(x) + ")");
    Tensor idx = red::extreme_rows(x.reshape({x.numel()}), false)[1];
    if (keepdim) return idx.reshape(std::vector<int64_t>(static_cast<size_t>(x.dim()), 1));
    return idx;
  }
  static const Op op("min_dim");
  return call_multi(op, {x, a.int_arg(1), keepdim})[1];
}

std::vector<Tensor> aminmax_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  bool keepdim = a.bool_arg(2);
  Dims dims;
  if (!a.is_none(1)) dims.push_back(red::wrap(a.op(), a.int_arg(1), x.dim()));
  if (x.numel() == 0 || (x.dim() > 0 && red::count_of(x.sizes(), red::dims_of(a.op(), dims, x.dim())) == 0))
    a.fail(TSR_INVALID_ARGUMENT, "cannot compute aminmax over an empty dimension of " + red::shape_of(x) +
                                     " (the operation has no identity)");
  return {tsr::amin(x, dims, keepdim), tsr::amax(x, dims, keepdim)};
}

}  // namespace

TSR_CORE_OPS(reduce_stats) {
  v.push_back({"prod(Tensor self, int[]? dim=None, bool keepdim=False, ScalarType? dtype=None) -> Tensor",
               composite<prod_fn>, TSR_GRAD(prod_backward), kSaveInputs});
  const char* var_args = "(Tensor self, int[]? dim=None, Scalar? correction=None, bool keepdim=False)";
  v.push_back({std::string("var") + var_args + " -> Tensor", composite<var_fn>, TSR_GRAD(var_std_backward), kSaveAll});
  v.push_back({std::string("std") + var_args + " -> Tensor", composite<std_fn>, TSR_GRAD(var_std_backward), kSaveAll});
  v.push_back({std::string("var_mean") + var_args + " -> (Tensor, Tensor)", composite_multi<var_mean_fn>,
               TSR_GRAD(var_std_backward), kSaveAll});
  v.push_back({std::string("std_mean") + var_args + " -> (Tensor, Tensor)", composite_multi<std_mean_fn>,
               TSR_GRAD(var_std_backward), kSaveAll});
  v.push_back({"norm(Tensor self, Scalar p=2, int[]? dim=None, bool keepdim=False) -> Tensor", composite<norm_fn>,
               TSR_GRAD(norm_backward), kSaveAll});
  v.push_back({"logsumexp(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor", composite<logsumexp_fn>,
               TSR_GRAD(logsumexp_backward), kSaveAll});
  v.push_back({"_logsumexp_rows(Tensor input) -> Tensor", nn::kernel_op_impl<lse_rows_shape>});
  v.push_back(composite_op("all(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor", composite<all_fn>));
  v.push_back(composite_op("any(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor", composite<any_fn>));
  v.push_back(composite_op("count_nonzero(Tensor self, int[]? dim=None) -> Tensor", composite<count_nonzero_fn>));
  v.push_back({"nansum(Tensor self, int[]? dim=None, bool keepdim=False, ScalarType? dtype=None) -> Tensor",
               composite<nansum_fn>, TSR_GRAD(nansum_backward), kSaveInputs});
  v.push_back({"nanmean(Tensor self, int[]? dim=None, bool keepdim=False, ScalarType? dtype=None) -> Tensor",
               composite<nanmean_fn>, TSR_GRAD(nansum_backward), kSaveInputs});
  v.push_back({"max(Tensor self) -> Tensor", composite<max_fn>, TSR_GRAD(evenly_distribute_backward), kSaveAll});
  v.push_back({"min(Tensor self) -> Tensor", composite<min_fn>, TSR_GRAD(evenly_distribute_backward), kSaveAll});
  v.push_back({"max_dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
               composite_multi<max_dim_fn>, TSR_GRAD(extreme_dim_backward), kSaveOutputs});
  v.push_back({"min_dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
               composite_multi<min_dim_fn>, TSR_GRAD(extreme_dim_backward), kSaveOutputs});
  v.push_back(composite_op("argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", composite<argmin_fn>));
  v.push_back(composite_op("aminmax(Tensor self, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)",
                           composite_multi<aminmax_fn>));
}

}  // namespace tsr::core
