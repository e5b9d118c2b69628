// index_select, gather and the scatter family (scatter, scatter_value, scatter_add,
// scatter_reduce and their in-place forms): the primitives of the index family. Their
// implementations are written with SDK tensors (a primitive's impl runs with recording off) and
// launch the kernels of docs/kernels/index.md; backward formulas use the same ops, so they run on
// every backend and support create_graph.
//
// PyTorch overloads get distinct names: scatter.src -> scatter, scatter.value -> scatter_value,
// scatter_reduce.two -> scatter_reduce.
#include <algorithm>

#include "ops/index/index_util.hpp"

namespace tsr::core {
namespace {

using namespace index_ops;

// A 0-dim tensor behaves as 1-D of size 1 inside these ops.
tsr::Tensor at_least_1d(const tsr::Tensor& t) { return t.dim() == 0 ? t.reshape({1}) : t; }

// ---- index_select -------------------------------------------------------------------------

tsr::Tensor index_select_fn(CArgs& a) {
  tsr::Tensor self = a.tensor(0);
  tsr::Tensor index = a.tensor(2);
  const int64_t dim = norm_dim(a, a.int_arg(1), self.dim());
  if (index.dim() > 1)
    a.fail(TSR_INVALID_ARGUMENT, "index must be a vector (0-dim or 1-dim), got shape " + shape_of(index));
  tsr::Tensor idx = as_index(a, index, self).reshape({index.numel()});
  tsr::Tensor x = at_least_1d(self);
  std::vector<int64_t> sizes = x.sizes();
  const int64_t K = idx.numel();
  if (sizes[dim] == 0 && K > 0)
    a.fail(TSR_OUT_OF_RANGE, "index " + std::to_string(idx.to_vector<int64_t>()[0]) +
                                 " is out of bounds for dimension " + std::to_string(dim) + " with size 0");
  sizes[dim] = K;
  tsr::Tensor out = tsr::empty(sizes, self.dtype(), self.device());
  if (out.numel() > 0) {
    tsr::Tensor xc = x.is_contiguous() ? x : x.contiguous();
    tsr_value_t args[3] = {tensor_value(xc), int_value(dim), tensor_value(idx)};
    launch_kernel(a, "index_select", self.dtype(), args, 3, {xc, idx}, out);
  }
  // A 0-dim self with a 0-dim index gives a 0-dim result.
  if (self.dim() == 0 && index.dim() == 0) return out.reshape({});
  return out;
}

void index_select_backward(GradCtx& g) {
  if (!g.needs(0) || !g.grad().defined()) return;
  tsr::RuntimeScope scope(g.runtime());
  const tsr::Tensor& grad = g.grad();
  tsr::Tensor z = tsr::zeros(g.input_sizes(0), grad.dtype(), grad.device());
  tsr::Tensor index = g.input(2);
  if (z.dim() == 0) {
    g.set(0,
          tsr::index_add(z.reshape({1}), 0, index.reshape({index.numel()}), grad.reshape({index.numel()})).reshape({}));
    return;
  }
  g.set(0, tsr::index_add(z, g.int_arg(1), index.reshape({index.numel()}), grad));
}

// ---- gather -------------------------------------------------------------------------------

// index and self have one rank; index fits in self outside dim (and src, for scatter).
void check_gather_shapes(const CArgs& a, const tsr::Tensor& self, const tsr::Tensor& index, int64_t dim,
                         const tsr::Tensor* src) {
  const int64_t r = std::max<int64_t>(self.dim(), 1);
  if (std::max<int64_t>(index.dim(), 1) != r)
    a.fail(TSR_INVALID_ARGUMENT,
           "index " + shape_of(index) + " must have the same number of dimensions as self " + shape_of(self));
  if (src && std::max<int64_t>(src->dim(), 1) != r)
    a.fail(TSR_INVALID_ARGUMENT,
           "src " + shape_of(*src) + " must have the same number of dimensions as self " + shape_of(self));
  std::vector<int64_t> si = at_least_1d(index).sizes(), ss = at_least_1d(self).sizes();
  std::vector<int64_t> sr = src ? at_least_1d(*src).sizes() : si;
  if (index.numel() == 0) return;
  for (int64_t d = 0; d < r; ++d) {
    if (d != dim && si[d] > ss[d])
      a.fail(TSR_INVALID_ARGUMENT, "size of index " + shape_of(index) + " exceeds self " + shape_of(self) +
                                       " at dimension " + std::to_string(d));
    if (si[d] > sr[d])
      a.fail(TSR_INVALID_ARGUMENT, "size of index " + shape_of(index) + " exceeds src " + shape_of(*src) +
                                       " at dimension " + std::to_string(d));
  }
}

tsr::Tensor gather_fn(CArgs& a) {
  tsr::Tensor self = a.tensor(0);
  tsr::Tensor index = a.tensor(2);
  const int64_t dim = norm_dim(a, a.int_arg(1), self.dim());
  check_gather_shapes(a, self, index, dim, nullptr);
  tsr::Tensor idx = at_least_1d(as_index(a, index, self, "index", false));
  tsr::Tensor x = at_least_1d(self);
  tsr::Tensor out = tsr::empty(idx.sizes(), self.dtype(), self.device());
  if (out.numel() > 0) {
    if (x.size(dim) == 0)
      a.fail(TSR_OUT_OF_RANGE, "index " + std::to_string(idx.contiguous().to_vector<int64_t>()[0]) +
                                   " is out of bounds for dimension " + std::to_string(dim) + " with size 0");
    tsr_value_t args[4] = {tensor_value(x), int_value(dim), tensor_value(idx), a.ctx().args[3]};
    launch_kernel(a, "gather", self.dtype(), args, 4, {x, idx}, out);
  }
  return index.dim() == 0 ? out.reshape({}) : out;
}

void gather_backward(GradCtx& g) {
  if (!g.needs(0) || !g.grad().defined()) return;
  tsr::RuntimeScope scope(g.runtime());
  const tsr::Tensor& grad = g.grad();
  tsr::Tensor z = tsr::zeros(g.input_sizes(0), grad.dtype(), grad.device());
  g.set(0, tsr::scatter_add(z, g.int_arg(1), g.input(2), grad));
}

// ---- scatter family -----------------------------------------------------------------------

// out = self with src's index-shaped block reduced into it along dim (reduce: assign, sum,
// prod, mean, amax, amin).
tsr::Tensor scatter_common(CArgs& a, const tsr::Tensor& src, const char* reduce, bool include_self) {
  tsr::Tensor self = a.tensor(0);
  tsr::Tensor index = a.tensor(2);
  const int64_t dim = norm_dim(a, a.int_arg(1), self.dim());
  check_gather_shapes(a, self, index, dim, &src);
  require_same_dtype(a, self, src, "src");
  if (src.device() != self.device())
    a.fail(TSR_INVALID_ARGUMENT,
           "src is on " + src.device().str(src.runtime()) + " but self is on " + self.device().str(self.runtime()));
  tsr::Tensor idx = at_least_1d(as_index(a, index, self, "index", false));
  tsr::Tensor out = tsr::empty(self.sizes(), self.dtype(), self.device());
  if (out.numel() > 0) out.copy_(self);
  if (idx.numel() == 0) return out;
  tsr::Tensor x = at_least_1d(out);
  if (x.size(dim) == 0)
    a.fail(TSR_OUT_OF_RANGE, "index " + std::to_string(idx.contiguous().to_vector<int64_t>()[0]) +
                                 " is out of bounds for dimension " + std::to_string(dim) + " with size 0");
  // src restricted to the index's block (any strides: kernels take strided operands).
  tsr::Tensor s = at_least_1d(src);
  std::vector<int64_t> is = idx.sizes();
  for (int64_t d = 0; d < s.dim(); ++d)
    if (s.size(d) != is[d]) s = s.narrow(d, 0, is[d]);
  tsr_value_t args[6];
  args[0] = tensor_value(x);
  args[1] = int_value(dim);
  args[2] = tensor_value(idx);
  args[3] = tensor_value(s);
  args[4].tag = TSR_VALUE_STRING;
  args[4].u.str = reduce;
  args[5].tag = TSR_VALUE_BOOL;
  args[5].u.b = include_self;
  launch_kernel(a, "scatter_reduce", self.dtype(), args, 6, {idx, s}, x);
  return out;
}

tsr::Tensor scatter_fn(CArgs& a) { return scatter_common(a, a.tensor(3), "assign", true); }
tsr::Tensor scatter_add_fn(CArgs& a) { return scatter_common(a, a.tensor(3), "sum", true); }

tsr::Tensor scatter_reduce_fn(CArgs& a) {
  std::string reduce = a.str(4);
  if (reduce != "sum" && reduce != "prod" && reduce != "mean" && reduce != "amax" && reduce != "amin")
    a.fail(TSR_INVALID_ARGUMENT, "reduce argument must be one of sum, prod, mean, amax, amin, got '" + reduce + "'");
  tsr::Tensor self = a.tensor(0);
  if (self.dtype() == TSR_BOOL && reduce == "mean")
    a.fail(TSR_INVALID_ARGUMENT, "reduce='mean' is not supported for bool tensors");
  static const char* const names[] = {"sum", "prod", "mean", "amax", "amin"};
  const char* r = *std::find_if(std::begin(names), std::end(names), [&](const char* n) { return reduce == n; });
  return scatter_common(a, a.tensor(3), r, a.bool_arg(5));
}

// scatter.value: a composite over scatter (the value is a constant src).
tsr::Tensor scatter_value_fn(CArgs& a) {
  tsr::Tensor self = a.tensor(0);
  tsr::Tensor index = a.tensor(2);
  tsr::Tensor v = a.scalar_tensor(3).to(self.device(), self.dtype());
  std::vector<int64_t> sizes = index.sizes();
  return tsr::scatter(self, a.int_arg(1), index,
                      index.dim() == 0 ? v : v.reshape(std::vector<int64_t>(sizes.size(), 1)).expand(sizes));
}

// The gradient of src: grad gathered at the index (src may be larger than the index: zeros
// outside the index's block).
tsr::Tensor src_grad(const tsr::Tensor& gathered, const std::vector<int64_t>& src_sizes) {
  if (gathered.sizes() == src_sizes) return gathered;
  if (src_sizes.empty()) return gathered.reshape({});
  tsr::Tensor z = tsr::zeros(src_sizes, gathered.dtype(), gathered.device());
  tsr::Tensor view = z;
  std::vector<int64_t> gs = gathered.dim() == 0 ? std::vector<int64_t>{1} : gathered.sizes();
  for (size_t d = 0; d < src_sizes.size(); ++d) view = view.narrow(static_cast<int64_t>(d), 0, gs[d]);
  view.copy_(gathered.reshape(gs));
  return z;
}

void scatter_backward(GradCtx& g) {
  if (!g.grad().defined()) return;
  tsr::RuntimeScope scope(g.runtime());
  const tsr::Tensor& grad = g.grad();
  const int64_t dim = g.int_arg(1);
  const tsr::Tensor& index = g.input(2);
  if (g.needs(0)) g.set(0, tsr::scatter(grad, dim, index, 0.0));
  if (g.needs(3)) g.set(3, src_grad(tsr::gather(grad, dim, index), g.input_sizes(3)));
}

void scatter_add_backward(GradCtx& g) {
  if (!g.grad().defined()) return;
  tsr::RuntimeScope scope(g.runtime());
  const tsr::Tensor& grad = g.grad();
  if (g.needs(0)) g.set(0, grad);
  if (g.needs(3)) g.set(3, src_grad(tsr::gather(grad, g.int_arg(1), g.input(2)), g.input_sizes(3)));
}

// As PyTorch's scatter_reduce_backward: sum and mean pass the gradient (mean divided by the
// count); amax/amin share it evenly among the elements equal to the result.
void scatter_reduce_backward(GradCtx& g) {
  if (!g.grad().defined()) return;
  tsr::RuntimeScope scope(g.runtime());
  const tsr::Tensor& grad = g.grad();
  const int64_t dim = g.int_arg(1);
  const tsr::Tensor& index = g.input(2);
  const std::string reduce = g.str(4);
  const bool include_self = g.bool_arg(5);
  tsr::Tensor grad_self, grad_src;
  if (reduce == "sum") {
    grad_self = grad;
    grad_src = tsr::gather(grad, dim, index);
  } else if (reduce == "mean") {
    const tsr::Tensor& src = g.input(3);
    tsr::Tensor n = include_self ? tsr::ones(grad.sizes(), grad.dtype(), grad.device())
                                 : tsr::zeros(grad.sizes(), grad.dtype(), grad.device());
    n = tsr::scatter_add(n, dim, index, tsr::ones(src.sizes(), grad.dtype(), grad.device()));
    n = tsr::masked_fill(n, tsr::eq(n, 0.0), 1.0);
    grad_self = tsr::div(grad, n);
    grad_src = tsr::div(tsr::gather(grad, dim, index), tsr::gather(n, dim, index));
  } else if (reduce == "amax" || reduce == "amin") {
    const tsr::Tensor& self = g.input(0);
    const tsr::Tensor& src = g.input(3);
    const tsr::Tensor& result = g.output(0);
    tsr::Tensor value = tsr::gather(result, dim, index);
    tsr::Tensor self_is = tsr::eq(self, result).to(grad.dtype());
    if (!include_self) self_is = tsr::scatter(self_is, dim, index, 0.0);
    // src's block at the index's positions (src may be larger than the index).
    tsr::Tensor src_sel = src;
    for (int64_t d = 0; d < index.dim(); ++d)
      if (src_sel.size(d) != index.size(d)) src_sel = src_sel.narrow(d, 0, index.size(d));
    tsr::Tensor src_is = tsr::eq(src_sel, value).to(grad.dtype());
    tsr::Tensor count = tsr::scatter_add(self_is, dim, index, src_is);
    tsr::Tensor dist = tsr::div(grad, tsr::masked_fill(count, tsr::eq(count, 0.0), 1.0));
    grad_self = tsr::mul(self_is, dist);
    grad_src = tsr::mul(src_is, tsr::gather(dist, dim, index));
  } else {
    throw tsr::Error(TSR_UNIMPLEMENTED,
                     "scatter_reduce: the derivative for reduce='" + reduce + "' is not implemented");
  }
  if (!include_self) grad_self = tsr::scatter(grad_self, dim, index, 0.0);
  if (g.needs(0)) g.set(0, grad_self);
  if (g.needs(3)) g.set(3, src_grad(grad_src, g.input_sizes(3)));
}

}  // namespace

TSR_CORE_OPS(index_gather) {
  v.push_back({"index_select(Tensor self, int dim, Tensor index) -> Tensor", composite<index_select_fn>,
               TSR_GRAD(index_select_backward), kSaveInputs});
  v.push_back({"gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor", composite<gather_fn>,
               TSR_GRAD(gather_backward), kSaveInputs});
  v.push_back({"scatter(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", composite<scatter_fn>,
               TSR_GRAD(scatter_backward), kSaveInputs});
  v.push_back({"scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", composite<scatter_add_fn>,
               TSR_GRAD(scatter_add_backward), kSaveInputs});
  v.push_back(
      {"scatter_reduce(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> "
       "Tensor",
       composite<scatter_reduce_fn>, TSR_GRAD(scatter_reduce_backward), kSaveAll});
  v.push_back(composite_op("scatter_value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
                           composite<scatter_value_fn>));
  v.push_back(inplace_op("scatter_(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)"));
  v.push_back(inplace_op("scatter_value_(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)"));
  v.push_back(inplace_op("scatter_add_(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)"));
  v.push_back(
      inplace_op("scatter_reduce_(Tensor(a!) self, int dim, Tensor index, Tensor src, str reduce, *, bool "
                 "include_self=True) -> Tensor(a!)"));
}

}  // namespace tsr::core
