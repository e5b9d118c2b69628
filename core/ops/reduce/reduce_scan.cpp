// Scans along one dim: cumsum, cumprod, logcumsumexp, cummax, cummin. Primitives whose forward
// moves the dim last and runs a row kernel (_cumulative_rows, _cumextreme_rows); backward
// formulas written with SDK ops (cumprod's is exact with zeros in the input).
#include <cmath>
#include <limits>

#include "ops/composite.hpp"
#include "ops/reduce/reduce_common.hpp"

namespace tsr::core {
namespace {

using tsr::Tensor;

Tensor cumulative(const Tensor& x, int64_t d, int64_t kind) {
  static const Op op("_cumulative_rows");
  return red::last_to_dim(call(op, {red::dim_last(x, d), kind}), d).contiguous();
}

tsr_dtype_t scan_dtype(CArgs& a, const Tensor& x) {
  if (auto dt = a.dtype(2)) return *dt;
  return is_floating(x.dtype()) ? x.dtype() : TSR_I64;
}

Tensor cumsum_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  int64_t d = red::wrap(a.op(), a.int_arg(1), x.dim());
  return cumulative(x.to(scan_dtype(a, x)), d, 0);
}
Tensor cumprod_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  int64_t d = red::wrap(a.op(), a.int_arg(1), x.dim());
  return cumulative(x.to(scan_dtype(a, x)), d, 1);
}
Tensor logcumsumexp_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  if (!is_floating(x.dtype()))
    a.fail(TSR_INVALID_ARGUMENT, std::string("expected a floating point tensor, got ") + dtype_name(x.dtype()));
  int64_t d = red::wrap(a.op(), a.int_arg(1), x.dim());
  return cumulative(x, d, 2);
}

// sum_{j >= i} t_j along d.
Tensor reverse_cumsum(const Tensor& t, int64_t d) {
  if (t.dim() == 0) return t;
  return tsr::sum(t, {d}, true) - tsr::cumsum(t, d) + t;
}

// Reverses dim d (a gather with a descending index).
Tensor flip_dim(const Tensor& t, int64_t d) {
  if (t.dim() == 0) return t;
  const int64_t n = t.size(d);
  Tensor last = red::dim_last(t, d);
  Tensor idx = tsr::arange(double(n - 1), -1.0, -1.0, TSR_I64, t.device()).expand(last.sizes()).contiguous();
  return red::last_to_dim(red::gather_rows(last, idx), d);
}

int64_t grad_dim(GradCtx& ctx) {
  return red::wrap(ctx.op_name(), ctx.int_arg(1), static_cast<int64_t>(ctx.input_sizes(0).size()));
}

void cumsum_backward(GradCtx& ctx) {
  if (!ctx.needs(0) || !ctx.grad().defined()) return;
  ctx.set(0, reverse_cumsum(ctx.grad(), grad_dim(ctx)));
}

// Before the first zero of a slice: sum_{j>=i} g_j y_j / x_i. At the first zero z:
// sum_{j>=z} g_j prod_{k<=j, k!=z} x_k (a cumprod with x_z replaced by 1). After it: 0.
void cumprod_backward(GradCtx& ctx) {
  if (!ctx.needs(0) || !ctx.grad().defined()) return;
  int64_t d = grad_dim(ctx);
  const Tensor& g = ctx.grad();
  Tensor x = ctx.input(0).to(g.dtype());
  if (x.dim() == 0) {
    ctx.set(0, g);
    return;
  }
  Tensor y = ctx.output(0);
  Tensor zero = tsr::wrap_scalar(0.0, x.runtime()), one = tsr::wrap_scalar(1.0, x.runtime());
  Tensor is_zero = tsr::eq(x, zero);
  Tensor zeros_so_far = tsr::cumsum(is_zero, d);
  Tensor before = tsr::eq(zeros_so_far, tsr::wrap_scalar(int64_t{0}, x.runtime()));
  Tensor first = tsr::eq(zeros_so_far * is_zero.to(TSR_I64), tsr::wrap_scalar(int64_t{1}, x.runtime()));
  Tensor from_first = tsr::ne(zeros_so_far, tsr::wrap_scalar(int64_t{0}, x.runtime()));
  Tensor a = reverse_cumsum(g * y, d) / tsr::where(before, x, one);
  Tensor y_skip = tsr::cumprod(tsr::where(first, one, x), d);
  Tensor b = reverse_cumsum(tsr::where(from_first, g * y_skip, zero), d);
  ctx.set(0, tsr::where(before, a, tsr::where(first, b, zero)));
}

void logcumsumexp_backward(GradCtx& ctx) {
  if (!ctx.needs(0) || !ctx.grad().defined()) return;
  int64_t d = grad_dim(ctx);
  const Tensor& g = ctx.grad();
  const Tensor& x = ctx.input(0);
  Tensor y = ctx.output(0);
  if (x.dim() == 0) {
    ctx.set(0, g);
    return;
  }
  // grad_i = sum_{j>=i} g_j exp(x_i - y_j), in log space with the positive and negative parts of
  // g apart so that nothing overflows.
  Tensor zero = tsr::wrap_scalar(0.0, x.runtime());
  Tensor ninf = tsr::wrap_scalar(-std::numeric_limits<double>::infinity(), x.runtime());
  auto part = [&](const Tensor& mask, const Tensor& mag) {
    Tensor lg = tsr::where(mask, tsr::log(tsr::where(mask, mag, tsr::wrap_scalar(1.0, x.runtime()))), ninf) - y;
    Tensor acc = flip_dim(tsr::logcumsumexp(flip_dim(lg, d), d), d);
    return tsr::exp(acc + x);
  };
  ctx.set(0, part(tsr::gt(g, zero), g) - part(tsr::lt(g, zero), -g));
}

std::vector<Tensor> cumextreme(CArgs& a, bool is_max) {
  Tensor x = a.tensor(0);
  int64_t d = red::wrap(a.op(), a.int_arg(1), x.dim());
  static const Op op("_cumextreme_rows");
  auto r = call_multi(op, {red::dim_last(x, d), is_max});
  return {red::last_to_dim(r[0], d).contiguous(), red::last_to_dim(r[1], d).contiguous()};
}
std::vector<Tensor> cummax_fn(CArgs& a) { return cumextreme(a, true); }
std::vector<Tensor> cummin_fn(CArgs& a) { return cumextreme(a, false); }

void cumextreme_backward(GradCtx& ctx) {
  if (!ctx.needs(0) || !ctx.grad().defined()) return;
  ctx.set(0, red::scatter_grad(ctx.grad(0), ctx.output(1), grad_dim(ctx), ctx.input_sizes(0)));
}

}  // namespace

TSR_CORE_OPS(reduce_scan) {
  v.push_back({"cumsum(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", composite<cumsum_fn>,
               TSR_GRAD(cumsum_backward), kSaveNothing});
  v.push_back({"cumprod(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", composite<cumprod_fn>,
               TSR_GRAD(cumprod_backward), kSaveAll});
  v.push_back({"logcumsumexp(Tensor self, int dim) -> Tensor", composite<logcumsumexp_fn>,
               TSR_GRAD(logcumsumexp_backward), kSaveAll});
  v.push_back({"cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)", composite_multi<cummax_fn>,
               TSR_GRAD(cumextreme_backward), kSaveOutputs});
  v.push_back({"cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)", composite_multi<cummin_fn>,
               TSR_GRAD(cumextreme_backward), kSaveOutputs});
}

}  // namespace tsr::core
