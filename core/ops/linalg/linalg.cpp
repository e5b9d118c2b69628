// Matrix products (mm, bmm, matmul): ops whose kernels take views rather than an iteration.
#include <algorithm>

#include "ops/op_impl.hpp"
#include "ops/op_table.hpp"
#include "ops/composite.hpp"

namespace tsr::core {

namespace {

// BLAS can take a matrix when one of its two dims has unit stride.
bool blas_ok(const Tensor* t, int d0) {
  int64_t r = t->sizes[d0], c = t->sizes[d0 + 1];
  int64_t sr = t->strides[d0], sc = t->strides[d0 + 1];
  bool row_major = sc == 1 && sr >= std::max<int64_t>(1, c);
  bool col_major = sr == 1 && sc >= std::max<int64_t>(1, r);
  return row_major || col_major;
}

tsr_status_t blas_layout(Runtime* rt, Tensor* t, int d0, const char* op, Tensor** out) {
  if (blas_ok(t, d0)) {
    t->retain();
    *out = t;
    return nullptr;
  }
  return make_contiguous(rt, t, op, out);
}

tsr_status_t matmul_common(CallCtx& ctx, int rank) {
  Tensor* a = ctx.tensor(0);
  Tensor* b = ctx.tensor(1);
  Tensor* both[2] = {a, b};
  tsr_device_t device;
  TSR_RETURN_IF_ERROR(common_device(ctx, both, 2, &device));
  bool ok = a->ndim == rank && b->ndim == rank;
  int m = rank - 2;
  if (!ok || a->sizes[m + 1] != b->sizes[m] || (rank == 3 && a->sizes[0] != b->sizes[0]))
    return ctx.error(TSR_INVALID_ARGUMENT, std::string(rank == 2 ? "expected 2-D matrices with a.size(1) == b.size(0)"
                                                                 : "expected 3-D batches [b, m, k] and [b, k, n]") +
                                               ", got " + shape_str(a->sizes, a->ndim) + " and " +
                                               shape_str(b->sizes, b->ndim));
  if (a->dtype != b->dtype)
    return ctx.error(TSR_INVALID_ARGUMENT, std::string("expected both operands to have the same dtype, got ") +
                                               dtype_name(a->dtype) + " and " + dtype_name(b->dtype));
  if (a->dtype == TSR_BOOL) return ctx.error(TSR_INVALID_ARGUMENT, "not supported for bool tensors");
  int64_t sizes[3];
  if (rank == 3) sizes[0] = a->sizes[0];
  sizes[m] = a->sizes[m];
  sizes[m + 1] = b->sizes[m + 1];
  Tensor* out = nullptr;
  TSR_RETURN_IF_ERROR(make_output(ctx, 0, rank, sizes, a->dtype, device, &out));
  Tensor *la = nullptr, *lb = nullptr;
  tsr_status_t st = blas_layout(ctx.rt, a, m, ctx.name(), &la);
  if (!st) st = blas_layout(ctx.rt, b, m, ctx.name(), &lb);
  if (!st)
    st = into_dense(ctx, out, [&](Tensor* target) {
      Tensor* ins[2] = {la, lb};
      return launch(ctx, device, a->dtype, ins, 2, &target, 1, nullptr);
    });
  if (la) la->release();
  if (lb) lb->release();
  if (st) {
    out->release();
    return st;
  }
  publish_outputs(ctx, &out, 1);
  return nullptr;
}

tsr_status_t mm_impl(CallCtx& ctx) { return matmul_common(ctx, 2); }
tsr_status_t bmm_impl(CallCtx& ctx) { return matmul_common(ctx, 3); }

tsr_status_t call_internal(Runtime* rt, const char* name, Tensor* a, Tensor* b, Tensor** out) {
  tsr_value_t args[2];
  args[0].tag = args[1].tag = TSR_VALUE_TENSOR;
  args[0].u.tensor = a;
  args[1].u.tensor = b;
  *out = nullptr;
  return call_op(rt->op_by_name.at(name), args, 2, out, 1);
}

// t ([..., m, k] or [k]) as the matrix [prod(...) * m, k]: a view when its leading dims
// collapse into one strided dim, else a contiguous copy.
tsr_status_t fold_rows(Runtime* rt, Tensor* t, const char* op, Tensor** out) {
  const int nd = t->ndim;
  const int64_t k = t->sizes[nd - 1], kst = t->strides[nd - 1];
  if (nd == 1) {
    int64_t s2[2] = {1, k}, st2[2] = {std::max<int64_t>(1, k) * kst, kst};
    *out = make_view(t, 2, s2, st2, t->offset);
    return nullptr;
  }
  int64_t rows = 1, row_stride = 0, expect = -1;
  bool collapsible = true;
  for (int i = nd - 2; i >= 0; --i) {
    rows *= t->sizes[i];
    if (t->sizes[i] == 1) continue;
    if (expect < 0) {
      row_stride = t->strides[i];
    } else if (t->strides[i] != expect) {
      collapsible = false;
    }
    expect = t->strides[i] * t->sizes[i];
  }
  if (expect < 0) row_stride = std::max<int64_t>(1, k) * kst;  // at most one row
  int64_t s2[2] = {rows, k};
  if (collapsible) {
    int64_t st2[2] = {row_stride, kst};
    *out = make_view(t, 2, s2, st2, t->offset);
    return nullptr;
  }
  Tensor* c = nullptr;
  TSR_RETURN_IF_ERROR(make_contiguous(rt, t, op, &c));
  int64_t st2[2] = {k, 1};
  *out = make_view(c, 2, s2, st2, c->offset);
  c->release();
  return nullptr;
}

// matmul: torch.matmul semantics by reshaping onto mm/bmm.
tsr_status_t matmul_impl(CallCtx& ctx) {
  Tensor* a = ctx.tensor(0);
  Tensor* b = ctx.tensor(1);
  Runtime* rt = ctx.rt;
  if (a->ndim == 0 || b->ndim == 0)
    return ctx.error(TSR_INVALID_ARGUMENT, "both arguments need at least 1 dimension, got " +
                                               shape_str(a->sizes, a->ndim) + " and " + shape_str(b->sizes, b->ndim));
  int64_t k_a = a->sizes[a->ndim - 1];
  int64_t k_b = b->ndim == 1 ? b->sizes[0] : b->sizes[b->ndim - 2];
  if (k_a != k_b)
    return ctx.error(TSR_INVALID_ARGUMENT, "shapes " + shape_str(a->sizes, a->ndim) + " and " +
                                               shape_str(b->sizes, b->ndim) + " cannot be multiplied (" +
                                               std::to_string(k_a) + " != " + std::to_string(k_b) + ")");
  // Promote both to 3-D [batch, m, k] x [batch, k, n] with broadcast batch dims.
  int64_t m = a->ndim == 1 ? 1 : a->sizes[a->ndim - 2];
  int64_t n = b->ndim == 1 ? 1 : b->sizes[b->ndim - 1];
  int nba = std::max(0, a->ndim - 2), nbb = std::max(0, b->ndim - 2);
  int nb = std::max(nba, nbb);
  int64_t batch[TSR_MAX_DIMS];
  int64_t batch_numel = 1;
  for (int i = 0; i < nb; ++i) {
    int ia = i - (nb - nba), ib = i - (nb - nbb);
    int64_t sa = ia >= 0 ? a->sizes[ia] : 1, sb = ib >= 0 ? b->sizes[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      return ctx.error(TSR_INVALID_ARGUMENT, "batch dimensions of " + shape_str(a->sizes, a->ndim) + " and " +
                                                 shape_str(b->sizes, b->ndim) + " cannot be broadcast");
    batch[i] = sa == 1 ? sb : sa;  // not max: a size-0 batch broadcast against 1 stays 0
    batch_numel *= batch[i];
  }
  // Expanded views: a -> [batch..., m, k], b -> [batch..., k, n].
  auto expand_to = [&](Tensor* t, bool is_a, Tensor** out3) -> tsr_status_t {
    int64_t sizes[TSR_MAX_DIMS], strides[TSR_MAX_DIMS];
    int nbt = is_a ? nba : nbb;
    for (int i = 0; i < nb; ++i) {
      int it = i - (nb - nbt);
      sizes[i] = batch[i];
      strides[i] = (it >= 0 && t->sizes[it] != 1) ? t->strides[it] : 0;
    }
    if (t->ndim == 1) {
      sizes[nb] = is_a ? 1 : t->sizes[0];
      strides[nb] = is_a ? 0 : t->strides[0];
      sizes[nb + 1] = is_a ? t->sizes[0] : 1;
      strides[nb + 1] = is_a ? t->strides[0] : 0;
    } else {
      sizes[nb] = t->sizes[t->ndim - 2];
      strides[nb] = t->strides[t->ndim - 2];
      sizes[nb + 1] = t->sizes[t->ndim - 1];
      strides[nb + 1] = t->strides[t->ndim - 1];
    }
    Tensor* e = make_view(t, nb + 2, sizes, strides, t->offset);
    // Collapse batch dims into one: needs a copy when they are not uniformly strided.
    int64_t s3[3] = {batch_numel, sizes[nb], sizes[nb + 1]};
    int64_t st3[3] = {0, strides[nb], strides[nb + 1]};
    bool uniform = true;
    int64_t expect = -1;
    for (int i = nb - 1; i >= 0; --i) {
      if (sizes[i] == 1) continue;
      if (expect < 0) {
        st3[0] = strides[i];
        expect = strides[i] * sizes[i];
      } else if (strides[i] != expect) {
        uniform = false;
      } else {
        expect *= sizes[i];
      }
    }
    if (uniform) {
      *out3 = make_view(e, 3, s3, st3, e->offset);
      e->release();
      return nullptr;
    }
    Tensor* c = nullptr;
    tsr_status_t st = make_contiguous(rt, e, ctx.name(), &c);
    e->release();
    if (st) return st;
    int64_t cst[3];
    contiguous_strides(3, s3, cst);
    *out3 = make_view(c, 3, s3, cst, c->offset);
    c->release();
    return nullptr;
  };
  Tensor* r3 = nullptr;
  tsr_status_t st = nullptr;
  if (nbb == 0) {
    // b is one matrix for every batch (linear layers: [B, T, C] @ [C, N]): fold a's batch dims
    // into its rows and run a single mm [batch*m, k] @ [k, n], as torch does, instead of
    // `batch` small GEMMs that each repack b. The backward then gets one GEMM for b's gradient
    // instead of a batched product summed over the broadcast batch (matmul_backward).
    Tensor *a2 = nullptr, *b2 = nullptr;
    st = fold_rows(rt, a, ctx.name(), &a2);
    if (!st) {
      if (b->ndim == 2) {
        b->retain();
        b2 = b;
      } else {  // [k] -> [k, 1]
        int64_t bs[2] = {b->sizes[0], 1}, bst[2] = {b->strides[0], 1};
        b2 = make_view(b, 2, bs, bst, b->offset);
      }
      st = call_internal(rt, "mm", a2, b2, &r3);
    }
    if (a2) a2->release();
    if (b2) b2->release();
  } else {
    Tensor *a3 = nullptr, *b3 = nullptr;
    st = expand_to(a, true, &a3);
    if (!st) st = expand_to(b, false, &b3);
    if (!st) st = call_internal(rt, "bmm", a3, b3, &r3);
    if (a3) a3->release();
    if (b3) b3->release();
  }
  if (st) return st;
  // Result shape: batch..., (m if a was >= 2-D), (n if b was >= 2-D).
  int64_t rs[TSR_MAX_DIMS];
  int rn = 0;
  for (int i = 0; i < nb; ++i) rs[rn++] = batch[i];
  if (a->ndim > 1) rs[rn++] = m;
  if (b->ndim > 1) rs[rn++] = n;
  int64_t rst[TSR_MAX_DIMS];
  contiguous_strides(rn, rs, rst);
  Tensor* result = make_view(r3, rn, rs, rst, r3->offset);
  r3->release();
  if (Tensor* o = ctx.out_slot(0)) {
    st = make_output(ctx, 0, rn, rs, result->dtype, result->device, &o);
    if (!st) {
      st = copy_into(o, result, ctx.name());
      o->release();
    }
    result->release();
    return st;
  }
  ctx.outs[0] = result;
  return nullptr;
}

// ---- backward formulas ----

// Column-major (a transposed contiguous matrix, as w.t() in linear).
bool col_major(const tsr::Tensor& t) {
  auto st = t.strides();
  return t.dim() == 2 && st[0] == 1 && st[1] >= t.size(0) && t.size(1) > 1;
}

// a^T @ g for a matrix operand b of a product a @ b, laid out like b: for a transposed b
// (linear's w.t()) it is computed as (g^T @ a)^T, so the gradient that reaches w through the
// transpose is contiguous and needs no dense copy when stored as w.grad (as torch does).
tsr::Tensor mat2_grad(const tsr::Tensor& a, const tsr::Tensor& g, const tsr::Tensor& b) {
  if (col_major(b)) return tsr::mm(g.t(), a).t();
  return tsr::mm(a.t(), g);
}

void mm_backward(GradCtx& g) {
  const tsr::Tensor& go = g.grad(0);
  if (!go.defined()) return;
  if (g.needs(0)) g.set(0, tsr::mm(go, g.input(1).t()));
  if (g.needs(1)) g.set(1, mat2_grad(g.input(0), go, g.input(1)));
}

void bmm_backward(GradCtx& g) {
  const tsr::Tensor& go = g.grad(0);
  if (!go.defined()) return;
  if (g.needs(0)) g.set(0, tsr::bmm(go, g.input(1).transpose(1, 2)));
  if (g.needs(1)) g.set(1, tsr::bmm(g.input(0).transpose(1, 2), go));
}

// matmul over every rank combination: 1-D operands are lifted to matrices (a: [1, k],
// b: [k, 1]) and the incoming gradient gets the matching unit dims back; the products are then
// ordinary (batched) matmuls whose broadcast batch dims the engine sums down to each input.
void matmul_backward(GradCtx& g) {
  const tsr::Tensor& go = g.grad(0);
  if (!go.defined()) return;
  tsr::Tensor a = g.input(0), b = g.input(1);
  const bool a1 = a.dim() == 1, b1 = b.dim() == 1;
  tsr::Tensor am = a1 ? a.unsqueeze(0) : a;
  tsr::Tensor bm = b1 ? b.unsqueeze(1) : b;
  tsr::Tensor gm = go;
  if (a1) gm = gm.unsqueeze(b1 ? gm.dim() : gm.dim() - 1);
  if (b1) gm = gm.unsqueeze(gm.dim());
  if (g.needs(0)) {
    tsr::Tensor ga = tsr::matmul(gm, bm.transpose(bm.dim() - 2, bm.dim() - 1));
    if (a1) ga = ga.squeeze(ga.dim() - 2);
    g.set(0, ga);
  }
  if (g.needs(1)) {
    tsr::Tensor gb;
    if (bm.dim() == 2) {
      // b shared by every batch (forward folded into one mm): its gradient is one GEMM over all
      // rows, not a batched product summed over the batch afterwards.
      std::vector<int64_t> as = am.sizes();
      int64_t rows = 1;
      for (size_t i = 0; i + 1 < as.size(); ++i) rows *= as[i];  // not -1: k or n may be 0
      gb = mat2_grad(am.reshape({rows, as.back()}), gm.reshape({rows, gm.size(-1)}), bm);
    } else {
      gb = tsr::matmul(am.transpose(am.dim() - 2, am.dim() - 1), gm);
    }
    if (b1) gb = gb.squeeze(gb.dim() - 1);
    g.set(1, gb);
  }
}

}  // namespace

TSR_CORE_OPS(linalg) {
  v.push_back({"mm(Tensor self, Tensor mat2) -> Tensor", mm_impl, TSR_GRAD(mm_backward), kSaveInputs});
  v.push_back({"bmm(Tensor self, Tensor mat2) -> Tensor", bmm_impl, TSR_GRAD(bmm_backward), kSaveInputs});
  v.push_back({"matmul(Tensor self, Tensor other) -> Tensor", matmul_impl, TSR_GRAD(matmul_backward), kSaveInputs});
}

}  // namespace tsr::core
