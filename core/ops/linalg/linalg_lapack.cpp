// Factorization-based ops (inverse, linalg_solve, cholesky): shape/dtype checks here, the
// factorizations in the backends (LAPACK on the CPU). Singular or non-positive-definite
// inputs come back as statuses naming the op and the batch element.
#include <algorithm>

#include "ops/composite.hpp"
#include "ops/op_impl.hpp"
#include "ops/op_table.hpp"

namespace tsr::core {

namespace {

tsr_status_t check_square_float(CallCtx& ctx, Tensor* a, const char* what) {
  if (a->ndim < 2 || a->sizes[a->ndim - 1] != a->sizes[a->ndim - 2])
    return ctx.error(TSR_INVALID_ARGUMENT,
                     std::string(what) + " must be batches of square matrices, got " + shape_str(a->sizes, a->ndim));
  if (a->dtype != TSR_F32 && a->dtype != TSR_F64)
    return ctx.error(TSR_INVALID_ARGUMENT,
                     std::string("expected a float32 or float64 tensor, got ") + dtype_name(a->dtype));
  return nullptr;
}

// Runs the kernel on contiguous copies of the inputs into a fresh (or the caller's) output
// of `sizes`.
tsr_status_t run_dense(CallCtx& ctx, Tensor** ins, int nin, int ndim, const int64_t* sizes) {
  tsr_device_t device;
  TSR_RETURN_IF_ERROR(common_device(ctx, ins, nin, &device));
  Tensor* dense[2] = {nullptr, nullptr};
  tsr_status_t st = nullptr;
  for (int i = 0; i < nin && !st; ++i) st = make_contiguous(ctx.rt, ins[i], ctx.name(), &dense[i]);
  Tensor* out = nullptr;
  if (!st) st = make_output(ctx, 0, ndim, sizes, ins[0]->dtype, device, &out);
  // Factorizations can fail at any batch element: a caller's out= tensor is written only once
  // every element succeeded (the kernel fills a temporary).
  if (!st && ctx.out_slot(0) && out->numel > 0) {
    Tensor* tmp = nullptr;
    st = new_tensor(ctx.rt, ndim, sizes, ins[0]->dtype, device, ctx.name(), &tmp);
    if (!st) st = launch(ctx, device, ins[0]->dtype, dense, nin, &tmp, 1, nullptr);
    if (!st) st = copy_into(out, tmp, ctx.name());
    if (tmp) tmp->release();
  } else if (!st) {
    st = into_dense(
        ctx, out, [&](Tensor* target) { return launch(ctx, device, ins[0]->dtype, dense, nin, &target, 1, nullptr); });
  }
  for (int i = 0; i < nin; ++i)
    if (dense[i]) dense[i]->release();
  if (st) {
    if (out) out->release();
    return st;
  }
  publish_outputs(ctx, &out, 1);
  return nullptr;
}

tsr_status_t inverse_impl(CallCtx& ctx) {
  Tensor* a = ctx.tensor(0);
  TSR_RETURN_IF_ERROR(check_square_float(ctx, a, "input"));
  return run_dense(ctx, &a, 1, a->ndim, a->sizes);
}

tsr_status_t cholesky_impl(CallCtx& ctx) {
  Tensor* a = ctx.tensor(0);
  TSR_RETURN_IF_ERROR(check_square_float(ctx, a, "input"));
  return run_dense(ctx, &a, 1, a->ndim, a->sizes);
}

// A [*, n, n], B [*, n, k] with identical batch dims (linalg_solve broadcasts before).
tsr_status_t solve_impl(CallCtx& ctx) {
  Tensor* ab[2] = {ctx.tensor(0), ctx.tensor(1)};
  Tensor *a = ab[0], *b = ab[1];
  TSR_RETURN_IF_ERROR(check_square_float(ctx, a, "A"));
  bool ok = b->ndim == a->ndim && b->sizes[b->ndim - 2] == a->sizes[a->ndim - 1] &&
            std::equal(a->sizes, a->sizes + a->ndim - 2, b->sizes);
  if (!ok)
    return ctx.error(TSR_INVALID_ARGUMENT, "expected A [*, n, n] and B [*, n, k] with equal batch dims, got " +
                                               shape_str(a->sizes, a->ndim) + " and " + shape_str(b->sizes, b->ndim));
  if (a->dtype != b->dtype)
    return ctx.error(TSR_INVALID_ARGUMENT, std::string("expected A and B to have the same dtype, got ") +
                                               dtype_name(a->dtype) + " and " + dtype_name(b->dtype));
  return run_dense(ctx, ab, 2, b->ndim, b->sizes);
}

// det and slogdet: results of the batch shape, from one LU per matrix.
tsr_status_t det_impl(CallCtx& ctx) {
  Tensor* a = ctx.tensor(0);
  TSR_RETURN_IF_ERROR(check_square_float(ctx, a, "input"));
  const size_t nout = ctx.op->schema.num_outputs;
  Tensor* dense = nullptr;
  TSR_RETURN_IF_ERROR(make_contiguous(ctx.rt, a, ctx.name(), &dense));
  Tensor* outs[2] = {nullptr, nullptr};
  tsr_status_t st = nullptr;
  for (size_t i = 0; i < nout && !st; ++i)
    st = make_output(ctx, i, a->ndim - 2, a->sizes, a->dtype, a->device, &outs[i]);
  // Kernels write dense results; the caller's out= tensors get a dense temporary when strided.
  Tensor* targets[2] = {nullptr, nullptr};
  for (size_t i = 0; i < nout && !st; ++i) {
    if (outs[i]->contiguous) {
      outs[i]->retain();
      targets[i] = outs[i];
    } else {
      st = new_tensor(ctx.rt, outs[i]->ndim, outs[i]->sizes, outs[i]->dtype, outs[i]->device, ctx.name(), &targets[i]);
    }
  }
  if (!st && outs[0]->numel > 0) st = launch(ctx, a->device, a->dtype, &dense, 1, targets, int(nout), nullptr);
  for (size_t i = 0; i < nout && !st; ++i)
    if (targets[i] != outs[i] && outs[i]->numel > 0) st = copy_into(outs[i], targets[i], ctx.name());
  dense->release();
  for (size_t i = 0; i < nout; ++i)
    if (targets[i]) targets[i]->release();
  if (st) {
    for (size_t i = 0; i < nout; ++i)
      if (outs[i]) outs[i]->release();
    return st;
  }
  publish_outputs(ctx, outs, nout);
  return nullptr;
}

std::string shp(const std::vector<int64_t>& s) { return shape_str(s.data(), static_cast<int>(s.size())); }

// linalg_solve(A, B): B is a vector (batch) when it is 1-D or has A's shape without the last
// dim (PyTorch's rule); batch dims broadcast.
tsr::Tensor linalg_solve_fn(CArgs& a) {
  tsr::Tensor A = a.tensor(0), B = a.tensor(1);
  if (A.dim() < 2 || A.size(-1) != A.size(-2))
    a.fail(TSR_INVALID_ARGUMENT, "A must be batches of square matrices, got " + shp(A.sizes()));
  auto as = A.sizes();
  std::vector<int64_t> a_batch(as.begin(), as.end() - 1);
  bool vec = B.dim() == 1 || (B.dim() == A.dim() - 1 && B.sizes() == a_batch);
  tsr::Tensor Bm = vec ? B.unsqueeze(B.dim()) : B;
  if (Bm.dim() < 2 || Bm.size(-2) != A.size(-1))
    a.fail(TSR_INVALID_ARGUMENT, "incompatible shapes of A " + shp(as) + " and B " + shp(B.sizes()));
  auto bs = Bm.sizes();
  size_t na = as.size() - 2, nb = bs.size() - 2, n = std::max(na, nb);
  std::vector<int64_t> batch(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i + na >= n ? as[i + na - n] : 1, y = i + nb >= n ? bs[i + nb - n] : 1;
    if (x != y && x != 1 && y != 1)
      a.fail(TSR_INVALID_ARGUMENT, "batch dims of A " + shp(as) + " and B " + shp(B.sizes()) + " do not broadcast");
    batch[i] = std::max(x, y);
  }
  std::vector<int64_t> ae = batch, be = batch;
  ae.push_back(as[na]);
  ae.push_back(as[na + 1]);
  be.push_back(bs[nb]);
  be.push_back(bs[nb + 1]);
  static const tsr::Op op("_linalg_solve");
  tsr::Tensor X = tsr::call(op, {A.expand(ae), Bm.expand(be)});
  return vec ? X.squeeze(X.dim() - 1) : X;
}

tsr::Tensor mT(const tsr::Tensor& t) { return t.transpose(t.dim() - 2, t.dim() - 1); }

void inverse_backward(GradCtx& g) {
  const tsr::Tensor& go = g.grad(0);
  if (!go.defined() || !g.needs(0)) return;
  tsr::Tensor yt = mT(g.output(0));
  g.set(0, tsr::neg(tsr::matmul(tsr::matmul(yt, go), yt)));
}

void solve_backward(GradCtx& g) {
  const tsr::Tensor& go = g.grad(0);
  if (!go.defined()) return;
  static const tsr::Op op("_linalg_solve");
  tsr::Tensor gb = tsr::call(op, {mT(g.input(0)), go});
  if (g.needs(1)) g.set(1, gb);
  if (g.needs(0)) g.set(0, tsr::neg(tsr::matmul(gb, mT(g.output(0)))));
}

tsr::Tensor as_matrix_factor(const tsr::Tensor& t) { return t.unsqueeze(t.dim()).unsqueeze(t.dim() + 1); }

// d det / dA = det * A^-T (needs A invertible; a singular A fails in inverse's status).
void det_backward(GradCtx& g) {
  const tsr::Tensor& go = g.grad(0);
  if (!go.defined() || !g.needs(0)) return;
  g.set(0, tsr::mul(as_matrix_factor(tsr::mul(go, g.output(0))), mT(tsr::inverse(g.input(0)))));
}

// d logabsdet / dA = A^-T; the sign is piecewise constant.
void slogdet_backward(GradCtx& g) {
  const tsr::Tensor& go = g.grad(1);
  if (!go.defined() || !g.needs(0)) return;
  g.set(0, tsr::mul(as_matrix_factor(go), mT(tsr::inverse(g.input(0)))));
}

// Lower-triangular mask (strict: below the diagonal only) in t's dtype and device.
tsr::Tensor tril_mask(const tsr::Tensor& like, int64_t n, bool strict) {
  tsr::Tensor r = tsr::arange(n, TSR_I64, like.device());
  tsr::Tensor i = r.unsqueeze(1), j = r.unsqueeze(0);
  return (strict ? tsr::gt(i, j) : tsr::ge(i, j)).to(like.dtype());
}

// A = L L^T: gA = L^-T Phi L^-1 with Phi = sym(tril(L^T gL)) (diagonal counted once), the
// symmetric gradient PyTorch returns.
void cholesky_backward(GradCtx& g) {
  const tsr::Tensor& go = g.grad(0);
  if (!go.defined() || !g.needs(0)) return;
  bool upper = g.bool_arg(1);
  tsr::Tensor L = upper ? mT(g.output(0)) : g.output(0);
  tsr::Tensor gL = upper ? mT(go) : go;
  int64_t n = L.size(-1);
  tsr::Tensor p = tsr::mul(tsr::matmul(mT(L), gL), tril_mask(L, n, false));
  p = tsr::mul(tsr::add(p, mT(tsr::mul(p, tril_mask(L, n, true)))), 0.5);
  tsr::Tensor linv = tsr::inverse(L);
  g.set(0, tsr::matmul(tsr::matmul(mT(linv), p), linv));
}

}  // namespace

TSR_CORE_OPS(linalg_lapack) {
  v.push_back({"inverse(Tensor self) -> Tensor", inverse_impl, TSR_GRAD(inverse_backward), kSaveOutputs});
  v.push_back(
      {"cholesky(Tensor self, bool upper=False) -> Tensor", cholesky_impl, TSR_GRAD(cholesky_backward), kSaveOutputs});
  v.push_back({"_linalg_solve(Tensor A, Tensor B) -> Tensor", solve_impl, TSR_GRAD(solve_backward), kSaveAll});
  v.push_back({"det(Tensor self) -> Tensor", det_impl, TSR_GRAD(det_backward), kSaveAll});
  v.push_back(
      {"slogdet(Tensor self) -> (Tensor sign, Tensor logabsdet)", det_impl, TSR_GRAD(slogdet_backward), kSaveInputs});
  v.push_back(composite_op("linalg_solve(Tensor A, Tensor B) -> Tensor", composite<linalg_solve_fn>));
}

}  // namespace tsr::core
