// Backward formulas of the foundation reductions declared in ops/reduce/reduce.cpp (sum, mean, amax,
// amin). argmax has an integer result and needs none.
#include "ops/op_table.hpp"
#include "ops/reduce/reduce_common.hpp"

namespace tsr::core {
namespace {

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

TSR_CORE_BACKWARDS(reduce_foundation) {
  b.push_back({"sum", sum_backward, kSaveNothing});
  b.push_back({"mean", mean_backward, kSaveNothing});
  b.push_back({"amax", amax_amin_backward, kSaveAll});
  b.push_back({"amin", amax_amin_backward, kSaveAll});
}

}  // namespace tsr::core
