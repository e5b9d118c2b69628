// Internal row ops of the reduce family: kernels that work along the LAST dim of a tensor
// (made contiguous here), so that every backend's kernel is a loop over independent rows. The
// public ops (sort, cumsum, max_dim, median, ...) move their dim last, call these, and move it
// back (ops/reduce/reduce_sort.cpp, ops/reduce/reduce_scan.cpp, ops/reduce/reduce_stats.cpp).
//
//   _sort_rows(self, descending, stable) -> (values, indices)   NaN sorts as the largest value
//   _extreme_rows(self, max) -> (values, indices)               last dim reduced; first NaN wins
//   _mode_rows(self) -> (values, indices)                       last dim reduced; smallest most frequent
//   _prod_rows(self) -> Tensor                                  last dim reduced
//   _cumulative_rows(self, kind) -> Tensor                      kind 0 cumsum, 1 cumprod, 2 logcumsumexp
//   _cumextreme_rows(self, max) -> (values, indices)            cummax / cummin
//   _gather_rows(self, index) -> Tensor                         out[r, j] = self[r, index[r, j]]
//   _scatter_add_rows(src, index, n) -> Tensor                  zeros [.., n]; out[r, index[r, j]] += src[r, j]
#include <string>

#include "ops/op_impl.hpp"
#include "ops/op_table.hpp"
#include "ops/reduce/reduce_common.hpp"

namespace tsr::core {
namespace {

enum class Shape { Same, DropLast, LikeIndex, LastFromArg };

int64_t last_size(const Tensor* t) { return t->ndim == 0 ? 1 : t->sizes[t->ndim - 1]; }

tsr_status_t check_index(CallCtx& ctx, Tensor* self, Tensor* index) {
  if (index->dtype != TSR_I64)
    return ctx.error(TSR_INVALID_ARGUMENT, std::string("index must be int64, got ") + dtype_name(index->dtype));
  bool lead_ok = self->ndim == index->ndim || (self->ndim <= 1 && index->ndim <= 1);
  for (int d = 0; lead_ok && d + 1 < index->ndim; ++d) lead_ok = self->sizes[d] == index->sizes[d];
  if (!lead_ok)
    return ctx.error(TSR_INVALID_ARGUMENT, "index " + describe(ctx.rt, index) + " does not match the leading dims of " +
                                               describe(ctx.rt, self));
  return nullptr;
}

tsr_status_t rows_op(CallCtx& ctx, Shape shape, int nout, bool second_i64) {
  Tensor* self = ctx.tensor(0);
  Tensor* index = shape == Shape::LikeIndex || shape == Shape::LastFromArg ? ctx.tensor(1) : nullptr;
  if (index) TSR_RETURN_IF_ERROR(check_index(ctx, self, index));
  int ndim = self->ndim;
  int64_t sizes[TSR_MAX_DIMS];
  for (int d = 0; d < ndim; ++d) sizes[d] = self->sizes[d];
  if (shape == Shape::DropLast && ndim > 0) --ndim;
  if (shape == Shape::LikeIndex) {
    ndim = index->ndim;
    for (int d = 0; d < ndim; ++d) sizes[d] = index->sizes[d];
  }
  if (shape == Shape::LastFromArg) {
    bool same = index->ndim == self->ndim;
    for (int d = 0; same && d < ndim; ++d) same = index->sizes[d] == self->sizes[d];
    if (!same)
      return ctx.error(TSR_INVALID_ARGUMENT, "index " + describe(ctx.rt, index) +
                                                 " must have the shape of the source " + describe(ctx.rt, self));
    int64_t n = ctx.int_arg(2);
    if (n < 0) return ctx.error(TSR_INVALID_ARGUMENT, "negative row length " + std::to_string(n));
    if (ndim == 0) {
      if (n != 1) return ctx.error(TSR_INVALID_ARGUMENT, "a 0-d source needs row length 1, got " + std::to_string(n));
    } else {
      sizes[ndim - 1] = n;
    }
  }
  if (shape == Shape::LikeIndex || shape == Shape::LastFromArg) {
    // Bounds are checked here, before any write, so a bad index never leaves partial output.
    Tensor* ci = nullptr;
    TSR_RETURN_IF_ERROR(make_contiguous(ctx.rt, index, ctx.name(), &ci));
    const int64_t limit = shape == Shape::LikeIndex ? last_size(self) : (ndim == 0 ? 1 : sizes[ndim - 1]);
    tsr_status_t st = nullptr;
    if (ci->device.type == TSR_DEVICE_TYPE_CPU) {
      const int64_t* p = static_cast<const int64_t*>(ci->data());
      for (int64_t i = 0; i < ci->numel; ++i)
        if (p[i] < 0 || p[i] >= limit) {
          st = ctx.error(TSR_OUT_OF_RANGE, "index " + std::to_string(p[i]) + " out of range for a row of size " +
                                               std::to_string(limit) + " (index " + describe(ctx.rt, index) + ")");
          break;
        }
    }
    ci->release();
    TSR_RETURN_IF_ERROR(st);
  }
  Tensor* ins[2] = {nullptr, nullptr};
  int nin = index ? 2 : 1;
  TSR_RETURN_IF_ERROR(make_contiguous(ctx.rt, self, ctx.name(), &ins[0]));
  tsr_status_t st = index ? make_contiguous(ctx.rt, index, ctx.name(), &ins[1]) : nullptr;
  Tensor* outs[2] = {nullptr, nullptr};
  for (int i = 0; !st && i < nout; ++i)
    st = make_output(ctx, static_cast<size_t>(i), ndim, sizes, i == 1 && second_i64 ? TSR_I64 : self->dtype,
                     self->device, &outs[i]);
  if (!st && outs[0]->numel > 0) {
    bool dense = true;
    for (int i = 0; i < nout; ++i) dense = dense && outs[i]->contiguous;
    if (!dense) st = ctx.error(TSR_INVALID_ARGUMENT, "internal op: out= tensors must be contiguous");
    if (!st) st = launch(ctx, self->device, self->dtype, ins, nin, outs, nout, nullptr);
  }
  release_all(ins, 2);
  if (st) {
    release_all(outs, 2);
    return st;
  }
  publish_outputs(ctx, outs, static_cast<size_t>(nout));
  return nullptr;
}

tsr_status_t sort_rows_impl(CallCtx& ctx) { return rows_op(ctx, Shape::Same, 2, true); }
tsr_status_t extreme_rows_impl(CallCtx& ctx) {
  Tensor* self = ctx.tensor(0);
  if (last_size(self) == 0 && self->numel == 0 && self->ndim > 0)
    return ctx.error(TSR_INVALID_ARGUMENT, "cannot reduce over a zero-size dimension of " + describe(ctx.rt, self));
  return rows_op(ctx, Shape::DropLast, 2, true);
}
tsr_status_t mode_rows_impl(CallCtx& ctx) { return extreme_rows_impl(ctx); }
tsr_status_t prod_rows_impl(CallCtx& ctx) { return rows_op(ctx, Shape::DropLast, 1, false); }
tsr_status_t cumulative_rows_impl(CallCtx& ctx) { return rows_op(ctx, Shape::Same, 1, false); }
tsr_status_t cumextreme_rows_impl(CallCtx& ctx) { return rows_op(ctx, Shape::Same, 2, true); }
tsr_status_t gather_rows_impl(CallCtx& ctx) { return rows_op(ctx, Shape::LikeIndex, 1, false); }
tsr_status_t scatter_add_rows_impl(CallCtx& ctx) { return rows_op(ctx, Shape::LastFromArg, 1, false); }

// gather and scatter-add along rows are each other's adjoints.
void gather_rows_backward(GradCtx& ctx) {
  if (!ctx.needs(0) || !ctx.grad().defined()) return;
  auto sizes = ctx.input_sizes(0);
  ctx.set(0, red::scatter_add_rows(ctx.grad(), ctx.input(1), sizes.empty() ? 1 : sizes.back()));
}
void scatter_add_rows_backward(GradCtx& ctx) {
  if (!ctx.needs(0) || !ctx.grad().defined()) return;
  ctx.set(0, red::gather_rows(ctx.grad(), ctx.input(1)));
}

}  // namespace

TSR_CORE_OPS(reduce_rows) {
  v.push_back({"_sort_rows(Tensor self, bool descending=False, bool stable=False) -> (Tensor values, Tensor indices)",
               sort_rows_impl, nullptr, kSaveNothing});
  v.push_back({"_extreme_rows(Tensor self, bool max) -> (Tensor values, Tensor indices)", extreme_rows_impl, nullptr,
               kSaveNothing});
  v.push_back({"_mode_rows(Tensor self) -> (Tensor values, Tensor indices)", mode_rows_impl, nullptr, kSaveNothing});
  v.push_back({"_prod_rows(Tensor self) -> Tensor", prod_rows_impl, nullptr, kSaveNothing});
  v.push_back({"_cumulative_rows(Tensor self, int kind) -> Tensor", cumulative_rows_impl, nullptr, kSaveNothing});
  v.push_back({"_cumextreme_rows(Tensor self, bool max) -> (Tensor values, Tensor indices)", cumextreme_rows_impl,
               nullptr, kSaveNothing});
  v.push_back({"_gather_rows(Tensor self, Tensor index) -> Tensor", gather_rows_impl, TSR_GRAD(gather_rows_backward),
               kSaveInputs});
  v.push_back({"_scatter_add_rows(Tensor src, Tensor index, int n) -> Tensor", scatter_add_rows_impl,
               TSR_GRAD(scatter_add_rows_backward), kSaveInputs});
}

}  // namespace tsr::core
