// Composite matrix/vector products built on mm, bmm and matmul (whose formulas give their
// gradients): addmm, addmv, mv, baddbmm, addbmm, dot, vdot, outer, linear, tensordot. linear
// with a bias uses the fused _linear_bias (ops/nn/nn_linear.cpp) where the backend has a kernel.
#include <string>

#include "ops/composite.hpp"
#include "ops/nn/nn_kernel_op.hpp"
#include "ops/op_table.hpp"

namespace tsr::core {

namespace {

std::string shp(const std::vector<int64_t>& s) { return shape_str(s.data(), static_cast<int>(s.size())); }
std::string shp(const tsr::Tensor& t) { return shp(t.sizes()); }

void need_dim(const CArgs& a, const tsr::Tensor& t, int64_t nd, const char* what) {
  if (t.dim() != nd)
    a.fail(TSR_INVALID_ARGUMENT, std::string(what) + " must be a " + std::to_string(nd) + "-D tensor, got " + shp(t));
}

void same_dtype(const CArgs& a, const tsr::Tensor& x, const tsr::Tensor& y) {
  if (x.dtype() != y.dtype())
    a.fail(TSR_INVALID_ARGUMENT, std::string("expected both operands to have the same dtype, got ") +
                                     dtype_name(x.dtype()) + " and " + dtype_name(y.dtype()));
}

// self must broadcast to `shape` (PyTorch's rule for the bias of addmm & co).
void check_bias(const CArgs& a, const tsr::Tensor& self, const std::vector<int64_t>& shape) {
  auto s = self.sizes();
  bool ok = s.size() <= shape.size();
  for (size_t i = 0; ok && i < s.size(); ++i) {
    int64_t want = shape[shape.size() - s.size() + i];
    ok = s[i] == want || s[i] == 1;
  }
  if (!ok)
    a.fail(TSR_INVALID_ARGUMENT,
           "self of shape " + shp(s) + " cannot be broadcast to the product's shape " + shp(shape));
}

bool is_one(const CArgs& a, size_t i) { return a.double_arg(i) == 1.0; }
bool is_zero(const CArgs& a, size_t i) { return a.double_arg(i) == 0.0; }

// beta * self + alpha * prod. beta == 0 ignores self's values (NaN/inf do not propagate), as
// in PyTorch. Scalars keep their Python kind (an int alpha keeps an integer product integral).
tsr::Tensor add_scaled(const CArgs& a, const tsr::Tensor& self, tsr::Tensor prod, size_t beta_i, size_t alpha_i) {
  check_bias(a, self, prod.sizes());
  if (!is_floating(prod.dtype()))
    for (size_t i : {beta_i, alpha_i})
      if (a.ctx().args[i].tag == TSR_VALUE_DOUBLE)
        a.fail(TSR_INVALID_ARGUMENT,
               std::string("for integral input tensors, argument ") + (i == beta_i ? "beta" : "alpha") +
                   " must not be a floating point number (got " + std::to_string(a.double_arg(i)) + ")");
  if (!is_one(a, alpha_i)) prod = tsr::mul(prod, a.scalar_tensor(alpha_i));
  if (is_zero(a, beta_i)) {
    if (self.dtype() != prod.dtype()) prod = prod.to(self.dtype());
    return prod;
  }
  tsr::Tensor s = is_one(a, beta_i) ? self : tsr::mul(self, a.scalar_tensor(beta_i));
  return tsr::add(s, prod);
}

tsr::Tensor mv_of(const CArgs& a, const tsr::Tensor& m, const tsr::Tensor& v) {
  need_dim(a, m, 2, "mat");
  need_dim(a, v, 1, "vec");
  if (m.size(1) != v.size(0)) a.fail(TSR_INVALID_ARGUMENT, "size mismatch, got input " + shp(m) + ", vec " + shp(v));
  same_dtype(a, m, v);
  return tsr::mm(m, v.unsqueeze(1)).squeeze(1);
}

tsr::Tensor mv_fn(CArgs& a) { return mv_of(a, a.tensor(0), a.tensor(1)); }

tsr::Tensor addmm_fn(CArgs& a) {
  tsr::Tensor m1 = a.tensor(1), m2 = a.tensor(2);
  need_dim(a, m1, 2, "mat1");
  need_dim(a, m2, 2, "mat2");
  if (m1.size(1) != m2.size(0))
    a.fail(TSR_INVALID_ARGUMENT, "mat1 and mat2 shapes cannot be multiplied (" + shp(m1) + " and " + shp(m2) + ")");
  same_dtype(a, m1, m2);
  return add_scaled(a, a.tensor(0), tsr::mm(m1, m2), 3, 4);
}

tsr::Tensor addmv_fn(CArgs& a) { return add_scaled(a, a.tensor(0), mv_of(a, a.tensor(1), a.tensor(2)), 3, 4); }

tsr::Tensor bmm_checked(const CArgs& a, const tsr::Tensor& b1, const tsr::Tensor& b2) {
  need_dim(a, b1, 3, "batch1");
  need_dim(a, b2, 3, "batch2");
  if (b1.size(0) != b2.size(0) || b1.size(2) != b2.size(1))
    a.fail(TSR_INVALID_ARGUMENT, "expected batch1 [b, n, m] and batch2 [b, m, p], got " + shp(b1) + " and " + shp(b2));
  same_dtype(a, b1, b2);
  return tsr::bmm(b1, b2);
}

tsr::Tensor baddbmm_fn(CArgs& a) { return add_scaled(a, a.tensor(0), bmm_checked(a, a.tensor(1), a.tensor(2)), 3, 4); }

tsr::Tensor addbmm_fn(CArgs& a) {
  tsr::Tensor p = bmm_checked(a, a.tensor(1), a.tensor(2));
  // Sum over the batch in the operands' dtype (sum would widen integers to int64).
  p = tsr::sum(p, {0}, false, p.dtype());
  return add_scaled(a, a.tensor(0), p, 3, 4);
}

tsr::Tensor dot_fn(CArgs& a) {
  tsr::Tensor x = a.tensor(0), y = a.tensor(1);
  if (x.dim() != 1 || y.dim() != 1)
    a.fail(TSR_INVALID_ARGUMENT, "1D tensors expected, but got " + shp(x) + " and " + shp(y));
  if (x.size(0) != y.size(0))
    a.fail(TSR_INVALID_ARGUMENT, "inconsistent tensor size, expected tensor " + shp(x) + " and src " + shp(y) +
                                     " to have the same number of elements");
  same_dtype(a, x, y);
  return tsr::mm(x.unsqueeze(0), y.unsqueeze(1)).reshape({});
}

tsr::Tensor outer_fn(CArgs& a) {
  tsr::Tensor x = a.tensor(0), y = a.tensor(1);
  if (x.dim() != 1 || y.dim() != 1)
    a.fail(TSR_INVALID_ARGUMENT, "1D tensors expected, but got " + shp(x) + " and " + shp(y));
  return tsr::mul(x.unsqueeze(1), y.unsqueeze(0));
}

tsr::Tensor linear_fn(CArgs& a) {
  tsr::Tensor x = a.tensor(0), w = a.tensor(1);
  auto bias = a.opt_tensor(2);
  if (w.dim() != 1 && w.dim() != 2) a.fail(TSR_INVALID_ARGUMENT, "weight must be 1-D or 2-D, got " + shp(w));
  if (x.dim() == 0) a.fail(TSR_INVALID_ARGUMENT, "input must have at least 1 dimension, got " + shp(x));
  if (x.size(-1) != w.size(-1))
    a.fail(TSR_INVALID_ARGUMENT, "input " + shp(x) + " and weight " + shp(w) + " disagree on in_features (" +
                                     std::to_string(x.size(-1)) + " != " + std::to_string(w.size(-1)) + ")");
  same_dtype(a, x, w);
  // A backend GEMM with a bias epilogue (ops/nn/nn_linear.cpp): for the common form only, a 2-D
  // weight and a bias of one element per output feature in the input's dtype.
  static const tsr::Op fused("_linear_bias");
  static const tsr::Op fused_kernel("_nn_linear");
  if (bias && w.dim() == 2 && bias->dim() == 1 && bias->size(0) == w.size(0) && bias->dtype() == x.dtype() &&
      nn::has_device_kernel(fused_kernel, x, x.dtype())) {
    if (x.dim() == 2) return tsr::call(fused, {x, w, *bias});
    std::vector<int64_t> out = x.sizes();
    out.back() = w.size(0);
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < x.sizes().size(); ++i) rows *= x.size(int64_t(i));
    return tsr::call(fused, {x.reshape({rows, x.size(-1)}), w, *bias}).reshape(out);
  }
  tsr::Tensor y = tsr::matmul(x, w.dim() == 2 ? w.t() : w);
  if (bias) {
    check_bias(a, *bias, y.sizes());
    y = tsr::add(y, *bias);
  }
  return y;
}

// tensordot: contracts dims_self of self with dims_other of other by permuting both into
// matrices for one mm.
tsr::Tensor tensordot_fn(CArgs& a) {
  tsr::Tensor x = a.tensor(0), y = a.tensor(1);
  std::vector<int64_t> dx = a.ints(2), dy = a.ints(3);
  if (dx.size() != dy.size())
    a.fail(TSR_INVALID_ARGUMENT, "both dimension lists should have same length, got " + shp(dx) + " and " + shp(dy));
  same_dtype(a, x, y);
  const int64_t nx = x.dim(), ny = y.dim();
  std::vector<bool> cx(nx, false), cy(ny, false);
  int64_t k = 1;
  for (size_t i = 0; i < dx.size(); ++i) {
    int64_t ix = dx[i] < 0 ? dx[i] + nx : dx[i], iy = dy[i] < 0 ? dy[i] + ny : dy[i];
    if (ix < 0 || ix >= nx || iy < 0 || iy >= ny || cx[ix] || cy[iy])
      a.fail(TSR_INVALID_ARGUMENT, "invalid or repeated contraction dims " + shp(dx) + " for " + shp(x) + " and " +
                                       shp(dy) + " for " + shp(y));
    if (x.size(ix) != y.size(iy))
      a.fail(TSR_INVALID_ARGUMENT, "contracted dimensions need to match, but first has size " +
                                       std::to_string(x.size(ix)) + " in dim " + std::to_string(ix) +
                                       " and second has size " + std::to_string(y.size(iy)) + " in dim " +
                                       std::to_string(iy));
    cx[ix] = cy[iy] = true;
    k *= x.size(ix);
  }
  std::vector<int64_t> px, py, out_shape;
  int64_t m = 1, n = 1;
  for (int64_t i = 0; i < nx; ++i)
    if (!cx[i]) px.push_back(i), out_shape.push_back(x.size(i)), m *= x.size(i);
  for (size_t i = 0; i < dx.size(); ++i) px.push_back(dx[i] < 0 ? dx[i] + nx : dx[i]);
  for (size_t i = 0; i < dy.size(); ++i) py.push_back(dy[i] < 0 ? dy[i] + ny : dy[i]);
  for (int64_t i = 0; i < ny; ++i)
    if (!cy[i]) py.push_back(i), out_shape.push_back(y.size(i)), n *= y.size(i);
  tsr::Tensor xm = x.permute(px).reshape({m, k});
  tsr::Tensor ym = y.permute(py).reshape({k, n});
  return tsr::mm(xm, ym).reshape(out_shape);
}

}  // namespace

TSR_CORE_OPS(linalg_products) {
  v.push_back(composite_op("mv(Tensor self, Tensor vec) -> Tensor", composite<mv_fn>));
  v.push_back(composite_op("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
                           composite<addmm_fn>));
  v.push_back(composite_op("addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
                           composite<addmv_fn>));
  v.push_back(
      composite_op("baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
                   composite<baddbmm_fn>));
  v.push_back(
      composite_op("addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
                   composite<addbmm_fn>));
  v.push_back(composite_op("dot(Tensor self, Tensor tensor) -> Tensor", composite<dot_fn>));
  // Real dtypes only, so vdot (conjugating self) equals dot.
  v.push_back(composite_op("vdot(Tensor self, Tensor other) -> Tensor", composite<dot_fn>));
  v.push_back(composite_op("outer(Tensor self, Tensor vec2) -> Tensor", composite<outer_fn>));
  v.push_back(composite_op("linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", composite<linear_fn>));
  v.push_back(composite_op("tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor",
                           composite<tensordot_fn>));
}

}  // namespace tsr::core
