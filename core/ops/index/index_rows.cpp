// index_add, index_copy, index_fill (along one dim with a vector of indices), take and put
// (over the flattened tensor): composites over the scatter family and index_select, so their
// gradients come from those ops' formulas; index_add is a primitive with its own formula.
#include "ops/index/index_util.hpp"

namespace tsr::core {
namespace {

using namespace index_ops;

tsr::Tensor at_least_1d(const tsr::Tensor& t) { return t.dim() == 0 ? t.reshape({1}) : t; }

// The index vector [K] of an index_* op, checked.
tsr::Tensor index_vector(const CArgs& a, const tsr::Tensor& index, const tsr::Tensor& self) {
  if (index.dim() > 1)
    a.fail(TSR_INVALID_ARGUMENT, "index must be a vector (0-dim or 1-dim), got shape " + shape_of(index));
  return as_index(a, index, self).reshape({index.numel()});
}

// idx [K] viewed with K at dim and broadcast to `sizes` (which has K at dim).
tsr::Tensor expand_along(const tsr::Tensor& idx, int64_t dim, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> v(sizes.size(), 1);
  v[static_cast<size_t>(dim)] = idx.numel();
  return idx.reshape(v).expand(sizes);
}

// source must have self's shape except size K at dim.
void check_source(const CArgs& a, const tsr::Tensor& x, const tsr::Tensor& s, int64_t dim, int64_t K) {
  bool ok = s.dim() == x.dim();
  for (int64_t d = 0; ok && d < x.dim(); ++d) ok = s.size(d) == (d == dim ? K : x.size(d));
  if (!ok)
    a.fail(TSR_INVALID_ARGUMENT, "source " + shape_of(s) + " must have the shape of self " + shape_of(x) +
                                     " except size " + std::to_string(K) + " (the number of indices) at dimension " +
                                     std::to_string(dim));
}

tsr::Tensor index_add_fn(CArgs& a) {
  tsr::Tensor self = a.tensor(0), source = a.tensor(3);
  const int64_t dim = norm_dim(a, a.int_arg(1), self.dim());
  tsr::Tensor idx = index_vector(a, a.tensor(2), self);
  tsr::Tensor x = at_least_1d(self), s = at_least_1d(source);
  check_source(a, x, s, dim, idx.numel());
  require_same_dtype(a, self, source, "source");
  const tsr_value_t& alpha = a.ctx().args[4];
  const bool float_alpha =
      alpha.tag == TSR_VALUE_DOUBLE && alpha.u.d != static_cast<double>(static_cast<int64_t>(alpha.u.d));
  if (float_alpha && !is_floating(self.dtype()))
    a.fail(TSR_INVALID_ARGUMENT, std::string("for integral input tensors, argument alpha must not be a floating point "
                                             "number (got ") +
                                     std::to_string(alpha.u.d) + " with " + dtype_name(self.dtype()) + ")");
  const bool one = (alpha.tag == TSR_VALUE_INT && alpha.u.i == 1) ||
                   (alpha.tag == TSR_VALUE_DOUBLE && alpha.u.d == 1.0) || alpha.tag == TSR_VALUE_BOOL;
  if (!one) s = tsr::mul(s, a.scalar_tensor(4).to(s.dtype()));
  tsr::Tensor r = tsr::scatter_add(x, dim, expand_along(idx, dim, s.sizes()), s);
  return self.dim() == 0 ? r.reshape({}) : r;
}

// A primitive (not a composite over scatter_add): the gradient of source is an index_select
// (row copies) rather than a gather over an expanded index.
void index_add_backward(GradCtx& g) {
  if (!g.grad().defined()) return;
  tsr::RuntimeScope scope(g.runtime());
  const tsr::Tensor& grad = g.grad();
  if (g.needs(0)) g.set(0, grad);
  if (g.needs(3)) {
    const tsr::Tensor& index = g.input(2);
    tsr::Tensor gs =
        tsr::index_select(grad.dim() == 0 ? grad.reshape({1}) : grad, g.int_arg(1), index.reshape({index.numel()}));
    const tsr_value_t& alpha = g.arg(4);
    const bool one =
        (alpha.tag == TSR_VALUE_INT && alpha.u.i == 1) || (alpha.tag == TSR_VALUE_DOUBLE && alpha.u.d == 1.0);
    if (!one) gs = tsr::mul(gs, g.double_arg(4));
    g.set(3, gs.reshape(g.input_sizes(3)));
  }
}

tsr::Tensor index_copy_fn(CArgs& a) {
  tsr::Tensor self = a.tensor(0), source = a.tensor(3);
  const int64_t dim = norm_dim(a, a.int_arg(1), self.dim());
  tsr::Tensor idx = index_vector(a, a.tensor(2), self);
  tsr::Tensor x = at_least_1d(self), s = at_least_1d(source);
  check_source(a, x, s, dim, idx.numel());
  require_same_dtype(a, self, source, "source");
  tsr::Tensor r = tsr::scatter(x, dim, expand_along(idx, dim, s.sizes()), s);
  return self.dim() == 0 ? r.reshape({}) : r;
}

tsr::Tensor index_fill_fn(CArgs& a) {
  tsr::Tensor self = a.tensor(0);
  const int64_t dim = norm_dim(a, a.int_arg(1), self.dim());
  tsr::Tensor idx = index_vector(a, a.tensor(2), self);
  tsr::Tensor x = at_least_1d(self);
  std::vector<int64_t> sizes = x.sizes();
  sizes[static_cast<size_t>(dim)] = idx.numel();
  static const tsr::Op scatter_value("scatter_value");
  tsr::Tensor r = tsr::call(scatter_value, {x, dim, expand_along(idx, dim, sizes), a.scalar(3)});
  return self.dim() == 0 ? r.reshape({}) : r;
}

tsr::Tensor take_fn(CArgs& a) {
  tsr::Tensor self = a.tensor(0), index = a.tensor(1);
  tsr::Tensor idx = as_index(a, index, self).reshape({index.numel()});
  return tsr::index_select(self.reshape({self.numel()}), 0, idx).reshape(index.sizes());
}

tsr::Tensor put_fn(CArgs& a) {
  tsr::Tensor self = a.tensor(0), index = a.tensor(1), source = a.tensor(2);
  if (index.numel() != source.numel())
    a.fail(TSR_INVALID_ARGUMENT, "expected source " + shape_of(source) + " and index " + shape_of(index) +
                                     " to have the same number of elements");
  require_same_dtype(a, self, source, "source");
  tsr::Tensor idx = as_index(a, index, self).reshape({index.numel()});
  tsr::Tensor flat = self.reshape({self.numel()});
  tsr::Tensor s = source.reshape({source.numel()});
  tsr::Tensor r = a.bool_arg(3) ? tsr::index_add(flat, 0, idx, s) : tsr::index_copy(flat, 0, idx, s);
  return r.reshape(self.sizes());
}

}  // namespace

TSR_CORE_OPS(index_rows) {
  v.push_back({"index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor",
               composite<index_add_fn>, TSR_GRAD(index_add_backward), kSaveInputs});
  v.push_back(composite_op("index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor",
                           composite<index_copy_fn>));
  v.push_back(
      composite_op("index_fill(Tensor self, int dim, Tensor index, Scalar value) -> Tensor", composite<index_fill_fn>));
  v.push_back(composite_op("take(Tensor self, Tensor index) -> Tensor", composite<take_fn>));
  v.push_back(composite_op("put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor",
                           composite<put_fn>));
  v.push_back(
      inplace_op("index_add_(Tensor(a!) self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor(a!)"));
  v.push_back(inplace_op("index_copy_(Tensor(a!) self, int dim, Tensor index, Tensor source) -> Tensor(a!)"));
  v.push_back(inplace_op("index_fill_(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)"));
  v.push_back(inplace_op("put_(Tensor(a!) self, Tensor index, Tensor source, bool accumulate=False) -> Tensor(a!)"));
}

}  // namespace tsr::core
