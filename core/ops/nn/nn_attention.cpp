// scaled_dot_product_attention: a composite that turns the mask options (bool or float
// attn_mask, is_causal) into an additive bias and draws the dropout mask, around the primitive
// _sdpa_math (softmax(q k^T * scale + bias) [* dropout mask] @ v) whose backward is the
// standard attention gradient from the saved probabilities.
//
// _sdpa_math runs the kernel ops _nn_attention and _nn_attention_backward (every head's scores,
// softmax and products in one pass over its rows, nothing of [..., L, S] but the probabilities
// written) where the device registers them for the dtype and the operands have the common form:
// one set of batch dims shared by query, key and value, a bias broadcast over the batch or given
// for all of it, a full dropout mask, and (backward) no gradient wanted for the bias. Otherwise,
// or when the kernel declines a problem (large heads, where GEMMs win), it runs the matmul +
// softmax formulation, which also is what every other device runs.
#include <cmath>

#include "autograd/engine.hpp"
#include "ops/nn/nn_kernel_op.hpp"
#include "ops/nn/nn_util.hpp"

namespace tsr::core {
namespace {

using tsr::Tensor;

Tensor last_t(const Tensor& t) { return t.transpose(t.dim() - 2, t.dim() - 1); }

// ---- the fused kernel ops ----
// _nn_attention(query [N, L, E], key [N, S, E], value [N, S, Ev], bias? [1 or N, L, S],
//               dropout_mask? [N, L, S], float scale) -> (out [N, L, Ev], probs [N, L, S])
// _nn_attention_backward(grad [N, L, Ev], query, key, value, probs [N, L, S], dropout_mask?,
//                        float scale) -> (grad_query, grad_key, grad_value)
// All of one floating dtype. probs are the softmax before dropout, as _sdpa_math saves them.

std::string dims3(const core::Tensor* t) { return shape_str(t->sizes, t->ndim); }

tsr_dtype_t attention_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  core::Tensor* q = nn::kfloat(ctx, 0, 3);
  core::Tensor* k = nn::kfloat(ctx, 1, 3, q);
  core::Tensor* v = nn::kfloat(ctx, 2, 3, q);
  core::Tensor* bias = nn::kfloat(ctx, 3, 3, q);
  core::Tensor* drop = nn::kfloat(ctx, 4, 3, q);
  const int64_t N = q->sizes[0], L = q->sizes[1], E = q->sizes[2], S = k->sizes[1], Ev = v->sizes[2];
  nn::krequire(ctx, k->sizes[0] == N && v->sizes[0] == N && k->sizes[2] == E && v->sizes[1] == S,
               "query " + dims3(q) + ", key " + dims3(k) + " and value " + dims3(v) +
                   " are not [N, L, E], [N, S, E] and [N, S, Ev]");
  nn::krequire(ctx, !bias || ((bias->sizes[0] == 1 || bias->sizes[0] == N) && bias->sizes[1] == L && bias->sizes[2] == S),
               "bias " + (bias ? dims3(bias) : std::string()) + " is not [1 or " + std::to_string(N) + ", " +
                   std::to_string(L) + ", " + std::to_string(S) + "]");
  nn::krequire(ctx, !drop || (drop->sizes[0] == N && drop->sizes[1] == L && drop->sizes[2] == S),
               "dropout_mask " + (drop ? dims3(drop) : std::string()) + " is not [" + std::to_string(N) + ", " +
                   std::to_string(L) + ", " + std::to_string(S) + "]");
  outs.push_back({{N, L, Ev}, q->dtype});
  outs.push_back({{N, L, S}, q->dtype});
  return q->dtype;
}

tsr_dtype_t attention_backward_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  core::Tensor* g = nn::kfloat(ctx, 0, 3);
  core::Tensor* q = nn::kfloat(ctx, 1, 3, g);
  core::Tensor* k = nn::kfloat(ctx, 2, 3, g);
  core::Tensor* v = nn::kfloat(ctx, 3, 3, g);
  core::Tensor* p = nn::kfloat(ctx, 4, 3, g);
  core::Tensor* drop = nn::kfloat(ctx, 5, 3, g);
  const int64_t N = q->sizes[0], L = q->sizes[1], E = q->sizes[2], S = k->sizes[1], Ev = v->sizes[2];
  nn::krequire(ctx, k->sizes[0] == N && v->sizes[0] == N && k->sizes[2] == E && v->sizes[1] == S,
               "query " + dims3(q) + ", key " + dims3(k) + " and value " + dims3(v) +
                   " are not [N, L, E], [N, S, E] and [N, S, Ev]");
  auto is_nls = [&](const core::Tensor* t, int64_t last) {
    return t->sizes[0] == N && t->sizes[1] == L && t->sizes[2] == last;
  };
  nn::krequire(ctx, is_nls(g, Ev) && is_nls(p, S) && (!drop || is_nls(drop, S)),
               "grad " + dims3(g) + ", probs " + dims3(p) + (drop ? ", dropout_mask " + dims3(drop) : std::string()) +
                   " do not match query " + dims3(q) + ", key " + dims3(k) + " and value " + dims3(v));
  outs.push_back({{N, L, E}, g->dtype});
  outs.push_back({{N, S, E}, g->dtype});
  outs.push_back({{N, S, Ev}, g->dtype});
  return g->dtype;
}

// The batch dims of t ([..., X, Y]) and their product.
std::vector<int64_t> batch_of(const Tensor& t) {
  auto s = t.sizes();
  return std::vector<int64_t>(s.begin(), s.end() - 2);
}
int64_t product(const std::vector<int64_t>& v) {
  int64_t n = 1;
  for (int64_t x : v) n *= x;
  return n;
}
std::vector<int64_t> with_last(std::vector<int64_t> batch, int64_t a, int64_t b) {
  batch.push_back(a);
  batch.push_back(b);
  return batch;
}

// The operands in the kernel ops' [N, ...] form, when they have the common form (see the top).
struct Fusable {
  std::vector<int64_t> batch;
  int64_t N = 0, L = 0, S = 0;
  Tensor q, k, v;
  std::optional<Tensor> bias, drop;
};
std::optional<Fusable> fusable(const tsr::Op& kernel, const Tensor& q, const Tensor& k, const Tensor& v,
                               const std::optional<Tensor>& bias, const std::optional<Tensor>& drop) {
  if (q.dim() < 2 || q.dim() != k.dim() || q.dim() != v.dim()) return std::nullopt;
  if (k.dtype() != q.dtype() || v.dtype() != q.dtype() || (bias && bias->dtype() != q.dtype()) ||
      (drop && drop->dtype() != q.dtype()))
    return std::nullopt;
  if (!nn::has_device_kernel(kernel, q, q.dtype())) return std::nullopt;
  Fusable f;
  f.batch = batch_of(q);
  if (batch_of(k) != f.batch || batch_of(v) != f.batch) return std::nullopt;
  f.N = product(f.batch);
  f.L = q.size(-2);
  f.S = k.size(-2);
  if (drop && drop->sizes() != with_last(f.batch, f.L, f.S)) return std::nullopt;
  if (bias) {
    // Broadcast to [..., L, S]: shared by the batch ([1, L, S]) or materialized for all of it.
    const int64_t bd = bias->dim();
    if (bd < 2 || bd > q.dim() || (bias->size(-2) != 1 && bias->size(-2) != f.L) ||
        (bias->size(-1) != 1 && bias->size(-1) != f.S))
      return std::nullopt;
    std::vector<int64_t> bb = batch_of(*bias);
    for (size_t i = 0; i < bb.size(); ++i) {
      const int64_t full = f.batch[f.batch.size() - bb.size() + i];
      if (bb[i] != 1 && bb[i] != full) return std::nullopt;
    }
    if (product(bb) == 1)
      f.bias = bias->reshape({1, bias->size(-2), bias->size(-1)}).expand({1, f.L, f.S});
    else
      f.bias = bias->expand(with_last(f.batch, f.L, f.S)).reshape({f.N, f.L, f.S});
  }
  f.q = q.reshape({f.N, f.L, q.size(-1)});
  f.k = k.reshape({f.N, f.S, k.size(-1)});
  f.v = v.reshape({f.N, f.S, v.size(-1)});
  if (drop) f.drop = drop->reshape({f.N, f.L, f.S});
  return f;
}

// (out, probabilities before dropout)
std::vector<Tensor> sdpa_math_fwd(CArgs& a) {
  Tensor q = a.tensor(0), k = a.tensor(1), v = a.tensor(2);
  auto bias = a.opt_tensor(3), drop = a.opt_tensor(4);
  double scale = a.double_arg(5);
  // Reached directly through op_find too: the checks scaled_dot_product_attention makes first.
  for (const Tensor* t : {&q, &k, &v}) nn::require_floating(a.op(), "query/key/value", *t);
  if (q.dtype() != k.dtype() || q.dtype() != v.dtype() || q.dim() < 2 || k.dim() < 2 || v.dim() < 2 ||
      q.size(-1) != k.size(-1) || k.size(-2) != v.size(-2))
    nn::fail(a.op(), "expected query [..., L, E], key [..., S, E], value [..., S, Ev] of one dtype, got query " +
                         nn::shp(q) + ", key " + nn::shp(k) + ", value " + nn::shp(v));
  static const tsr::Op kernel("_nn_attention");
  if (auto f = fusable(kernel, q, k, v, bias, drop)) {
    auto r = nn::declinable(
        [&] { return tsr::call_multi(kernel, {f->q, f->k, f->v, nn::opt(f->bias), nn::opt(f->drop), scale}); });
    if (r) return {(*r)[0].reshape(with_last(f->batch, f->L, v.size(-1))), (*r)[1].reshape(with_last(f->batch, f->L, f->S))};
  }
  Tensor s = nn::matmul(q, last_t(k)) * scale;
  if (bias) s = s + *bias;
  Tensor p = tsr::softmax(s, -1);
  Tensor pd = drop ? p * *drop : p;
  return {nn::matmul(pd, v), p};
}

void sdpa_math_bwd(GradCtx& c) {
  if (!c.grad(0).defined()) return;
  const Tensor &q = c.input(0), &k = c.input(1), &v = c.input(2);
  bool has_bias = !c.is_none(3), has_drop = !c.is_none(4);
  double scale = c.double_arg(5);
  const Tensor& p = c.output(1);
  const Tensor& g = c.grad(0);
  // The fused backward when no graph of it is built and the bias needs no gradient.
  static const tsr::Op kernel("_nn_attention_backward");
  std::optional<Tensor> drop = has_drop ? std::optional<Tensor>(c.input(4)) : std::nullopt;
  if (!grad_mode() && !(has_bias && c.needs(3)) && g.dtype() == q.dtype() && p.dtype() == q.dtype())
    if (auto f = fusable(kernel, q, k, v, std::nullopt, drop)) {
      auto r = nn::declinable([&] {
        return tsr::call_multi(kernel, {g.reshape({f->N, f->L, v.size(-1)}), f->q, f->k, f->v,
                                        p.reshape({f->N, f->L, f->S}), nn::opt(f->drop), scale});
      });
      if (r) {
        if (c.needs(0)) c.set(0, (*r)[0].reshape(q.sizes()));
        if (c.needs(1)) c.set(1, (*r)[1].reshape(k.sizes()));
        if (c.needs(2)) c.set(2, (*r)[2].reshape(v.sizes()));
        return;
      }
    }
  Tensor pd = has_drop ? p * c.input(4) : p;
  if (c.needs(2)) c.set(2, nn::matmul(last_t(pd), g));
  if (!(c.needs(0) || c.needs(1) || (has_bias && c.needs(3)))) return;
  Tensor dp = nn::matmul(g, last_t(v));
  if (has_drop) dp = dp * c.input(4);
  Tensor ds = nn::softmax_backward_data(dp, p, p.dim() - 1);
  if (c.needs(0)) c.set(0, nn::matmul(ds, k) * scale);
  if (c.needs(1)) c.set(1, nn::matmul(last_t(ds), q) * scale);
  if (has_bias && c.needs(3)) c.set(3, ds);
}

Tensor sdpa_fn(CArgs& a) {
  Tensor q = a.tensor(0), k = a.tensor(1), v = a.tensor(2);
  auto mask = a.opt_tensor(3);
  double p = a.double_arg(4);
  bool causal = a.bool_arg(5);
  for (const Tensor* t : {&q, &k, &v}) nn::require_floating(a.op(), "query/key/value", *t);
  if (q.dtype() != k.dtype() || q.dtype() != v.dtype())
    nn::fail(a.op(), std::string("query, key and value must have one dtype, got ") + dtype_name(q.dtype()) + ", " +
                         dtype_name(k.dtype()) + ", " + dtype_name(v.dtype()));
  if (q.dim() < 2 || k.dim() < 2 || v.dim() < 2)
    nn::fail(a.op(),
             "query " + nn::shp(q) + ", key " + nn::shp(k) + " and value " + nn::shp(v) + " need at least 2 dims");
  const int64_t L = q.size(-2), S = k.size(-2), E = q.size(-1);
  if (k.size(-1) != E || v.size(-2) != S)
    nn::fail(a.op(), "expected query [..., L, E], key [..., S, E], value [..., S, Ev], got query " + nn::shp(q) +
                         ", key " + nn::shp(k) + ", value " + nn::shp(v));
  if (!(p >= 0 && p <= 1)) nn::fail(a.op(), "dropout_p must be in [0, 1], got " + std::to_string(p));
  if (causal && mask) nn::fail(a.op(), "attn_mask and is_causal cannot both be set");
  double scale = a.is_none(6) ? 1.0 / std::sqrt(static_cast<double>(E)) : a.double_arg(6);
  std::optional<Tensor> bias;
  if (causal) {
    mask = tsr::ge(tsr::arange(L, TSR_I64, q.device()).view({L, 1}), tsr::arange(S, TSR_I64, q.device()).view({1, S}));
  }
  if (mask) {
    if (mask->dim() < 2 || (mask->size(-2) != L && mask->size(-2) != 1) || (mask->size(-1) != S && mask->size(-1) != 1))
      nn::fail(a.op(), "attn_mask " + nn::shp(*mask) + " does not broadcast to the attention shape [..., " +
                           std::to_string(L) + ", " + std::to_string(S) + "]");
    if (mask->dtype() == TSR_BOOL) {
      Tensor zero = tsr::zeros({}, q.dtype(), q.device());
      Tensor ninf = tsr::full({}, -INFINITY, q.dtype(), q.device());
      bias = tsr::where(*mask, zero, ninf);
    } else if (is_floating(mask->dtype())) {
      bias = mask->to(q.dtype());
    } else {
      nn::fail(a.op(), std::string("attn_mask must be bool or floating point, got ") + dtype_name(mask->dtype()));
    }
  }
  std::optional<Tensor> drop;
  if (p > 0) {
    // The mask covers the broadcast attention shape [..., L, S].
    std::vector<int64_t> shape;
    auto qs = q.sizes(), ks = k.sizes();
    size_t nb = std::max(qs.size(), ks.size()) - 2;
    for (size_t i = 0; i < nb; ++i) {
      int64_t a1 = i + qs.size() - 2 >= nb ? qs[i + qs.size() - 2 - nb] : 1;
      int64_t b1 = i + ks.size() - 2 >= nb ? ks[i + ks.size() - 2 - nb] : 1;
      shape.push_back(std::max(a1, b1));
    }
    shape.push_back(L);
    shape.push_back(S);
    drop = p >= 1 ? tsr::zeros(shape, q.dtype(), q.device())
                  : tsr::ge(tsr::rand(shape, TSR_F32, q.device()), p).to(q.dtype()) * (1.0 / (1.0 - p));
  }
  // With the fused kernels the operands are made dense here, once: _sdpa_math saves them, and its
  // forward and backward would otherwise each copy strided heads (a projection's q/k/v views).
  static const tsr::Op kernel("_nn_attention");
  if (nn::has_device_kernel(kernel, q, q.dtype())) {
    q = q.contiguous();
    k = k.contiguous();
    v = v.contiguous();
  }
  static const tsr::Op op("_sdpa_math");
  return tsr::call_multi(op, {q, k, v, nn::opt(bias), nn::opt(drop), scale})[0];
}

}  // namespace

TSR_CORE_OPS(nn_attention) {
  v.push_back({"_nn_attention(Tensor query, Tensor key, Tensor value, Tensor? bias, Tensor? dropout_mask, "
               "float scale) -> (Tensor, Tensor)",
               nn::kernel_op_impl<attention_shape>});
  v.push_back({"_nn_attention_backward(Tensor grad, Tensor query, Tensor key, Tensor value, Tensor probs, "
               "Tensor? dropout_mask, float scale) -> (Tensor, Tensor, Tensor)",
               nn::kernel_op_impl<attention_backward_shape>});
  v.push_back(
      nn::prim("_sdpa_math(Tensor query, Tensor key, Tensor value, Tensor? bias, Tensor? dropout_mask, "
               "float scale) -> (Tensor, Tensor)",
               composite_multi<sdpa_math_fwd>, TSR_GRAD(sdpa_math_bwd), kSaveAll));
  v.push_back(
      composite_op("scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
                   "float dropout_p=0.0, bool is_causal=False, float? scale=None) -> Tensor",
                   composite<sdpa_fn>));
}

}  // namespace tsr::core
