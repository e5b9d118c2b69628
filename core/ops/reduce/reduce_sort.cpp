// Sorting and order statistics: sort (primitive over the _sort_rows kernel, gradient scattered
// back through the indices), and composites over it: argsort, topk, kthvalue, median,
// median_dim; mode over its own row kernel. NaN orders as the largest value everywhere (PyTorch); median returns NaN
// (and the index of the first NaN) when a slice has one.
#include "ops/composite.hpp"
#include "ops/reduce/reduce_common.hpp"

namespace tsr::core {
namespace {

using tsr::Tensor;

std::vector<Tensor> sort_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  int64_t d = red::wrap(a.op(), a.int_arg(1), x.dim());
  auto r = red::sort_rows(red::dim_last(x, d), a.bool_arg(2), a.bool_arg(3));
  return {red::last_to_dim(r[0], d).contiguous(), red::last_to_dim(r[1], d).contiguous()};
}

void sort_backward(GradCtx& ctx) {
  if (!ctx.needs(0) || !ctx.grad().defined()) return;
  auto sizes = ctx.input_sizes(0);
  int64_t d = red::wrap(ctx.op_name(), ctx.int_arg(1), static_cast<int64_t>(sizes.size()));
  ctx.set(0, red::scatter_grad(ctx.grad(0), ctx.output(1), d, sizes));
}

Tensor argsort_fn(CArgs& a) { return tsr::sort(a.tensor(0), a.int_arg(1), a.bool_arg(2), a.bool_arg(3)).second; }

std::vector<Tensor> topk_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  int64_t k = a.int_arg(1);
  int64_t d = red::wrap(a.op(), a.int_arg(2), x.dim());
  const int64_t n = x.dim() == 0 ? 1 : x.size(d);
  if (k < 0 || k > n)
    a.fail(TSR_OUT_OF_RANGE, "k " + std::to_string(k) + " out of range for dim " + std::to_string(d) + " of size " +
                                 std::to_string(n) + " (input " + red::shape_of(x) + ")");
  // Sorted output in both cases: PyTorch leaves the order unspecified when sorted=False.
  auto s = tsr::sort(x, d, a.bool_arg(3), true);
  if (x.dim() == 0) return {s.first, s.second};
  return {s.first.narrow(d, 0, k).contiguous(), s.second.narrow(d, 0, k).contiguous()};
}

std::vector<Tensor> kthvalue_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  int64_t k = a.int_arg(1);
  int64_t d = red::wrap(a.op(), a.int_arg(2), x.dim());
  bool keepdim = a.bool_arg(3);
  const int64_t n = x.dim() == 0 ? 1 : x.size(d);
  if (k < 1 || k > n)
    a.fail(TSR_OUT_OF_RANGE, "k " + std::to_string(k) + " out of range for dim " + std::to_string(d) + " of size " +
                                 std::to_string(n) + " (input " + red::shape_of(x) + "; k counts from 1)");
  auto s = tsr::sort(x, d, false, true);
  if (x.dim() == 0) return {s.first, s.second};
  Tensor v = s.first.select(d, k - 1), i = s.second.select(d, k - 1);
  if (keepdim) return {v.unsqueeze(d).contiguous(), i.unsqueeze(d).contiguous()};
  return {v.contiguous(), i.contiguous()};
}

std::vector<Tensor> median_along(CArgs& a, const Tensor& x, int64_t d, bool keepdim) {
  if (x.dim() == 0) return {x.clone(), tsr::zeros({}, TSR_I64, x.device())};
  const int64_t n = x.size(d);
  if (n == 0)
    a.fail(TSR_INVALID_ARGUMENT,
           "cannot compute the median over dim " + std::to_string(d) + " of size 0 (input " + red::shape_of(x) + ")");
  Tensor last = red::dim_last(x, d);
  auto sorted = tsr::sort(last, -1, false, true);  // the op with a gradient, not the raw rows kernel
  Tensor s[2] = {sorted.first, sorted.second};
  // Lower median, unless the slice has a NaN: then the first NaN (stable sort keeps NaNs in
  // input order right after the numbers).
  Tensor nan_count = tsr::sum(tsr::ne(last, last), {-1}, true);
  Tensor pos = tsr::where(tsr::gt(nan_count, tsr::wrap_scalar(int64_t{0}, x.runtime())),
                          tsr::wrap_scalar(n, x.runtime()) - nan_count, tsr::wrap_scalar((n - 1) / 2, x.runtime()));
  Tensor v = red::gather_rows(s[0], pos).squeeze(-1), i = red::gather_rows(s[1], pos).squeeze(-1);
  if (keepdim) return {v.unsqueeze(d), i.unsqueeze(d)};
  return {v, i};
}

std::vector<Tensor> median_dim_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  return median_along(a, x, red::wrap(a.op(), a.int_arg(1), x.dim()), a.bool_arg(2));
}

Tensor median_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  if (x.numel() == 0) {
    if (!is_floating(x.dtype()))
      a.fail(TSR_INVALID_ARGUMENT, "the median of the empty tensor " + red::shape_of(x) + " of dtype " +
                                       dtype_name(x.dtype()) + " is undefined");
    return tsr::full({}, std::numeric_limits<double>::quiet_NaN(), x.dtype(), x.device());
  }
  return median_along(a, x.reshape({x.numel()}), 0, false)[0];
}

std::vector<Tensor> mode_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  int64_t d = red::wrap(a.op(), a.int_arg(1), x.dim());
  bool keepdim = a.bool_arg(2);
  if (x.dim() > 0 && x.size(d) == 0)
    a.fail(TSR_INVALID_ARGUMENT,
           "cannot compute the mode over dim " + std::to_string(d) + " of size 0 (input " + red::shape_of(x) + ")");
  static const Op op("_mode_rows");
  auto r = call_multi(op, {red::dim_last(x, d)});
  if (keepdim && x.dim() > 0) return {r[0].unsqueeze(d), r[1].unsqueeze(d)};
  return r;
}

void reduced_index_backward(GradCtx& ctx) {
  if (!ctx.needs(0) || !ctx.grad().defined()) return;
  auto sizes = ctx.input_sizes(0);
  int64_t d = red::wrap(ctx.op_name(), ctx.int_arg(1), static_cast<int64_t>(sizes.size()));
  Tensor g = ctx.grad(0), idx = ctx.output(1);
  if (!ctx.bool_arg(2) && !sizes.empty()) {
    g = g.unsqueeze(d);
    idx = idx.unsqueeze(d);
  }
  ctx.set(0, red::scatter_grad(g, idx, d, sizes));
}

}  // namespace

// max(), min() and median() without dim: ties share the gradient evenly (PyTorch), where the
// sort-based median would send it all to one of them and amax gives a NaN maximum none.
void evenly_distribute_backward(GradCtx& ctx) {
  if (!ctx.needs(0) || !ctx.grad().defined()) return;
  ctx.set(0, red::evenly_distribute(ctx.grad(0), ctx.input(0), ctx.output(0)));
}

TSR_CORE_OPS(reduce_sort) {
  v.push_back({"mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)",
               composite_multi<mode_fn>, TSR_GRAD(reduced_index_backward), kSaveOutputs});
  v.push_back(
      {"sort(Tensor self, int dim=-1, bool descending=False, bool stable=False) -> (Tensor values, Tensor "
       "indices)",
       composite_multi<sort_fn>, TSR_GRAD(sort_backward), kSaveOutputs});
  v.push_back(composite_op("argsort(Tensor self, int dim=-1, bool descending=False, bool stable=False) -> Tensor",
                           composite<argsort_fn>));
  v.push_back(
      composite_op("topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor "
                   "values, Tensor indices)",
                   composite_multi<topk_fn>));
  v.push_back(
      composite_op("kthvalue(Tensor self, int k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor "
                   "indices)",
                   composite_multi<kthvalue_fn>));
  v.push_back({"median(Tensor self) -> Tensor", composite<median_fn>, TSR_GRAD(evenly_distribute_backward), kSaveAll});
  v.push_back(composite_op("median_dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
                           composite_multi<median_dim_fn>));
}

}  // namespace tsr::core
