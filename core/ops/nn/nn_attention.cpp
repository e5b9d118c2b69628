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
// _nn_attention(query [B, H, L, E], key [B, H, S, E], value [B, H, S, Ev],
//               bias? [1 or B, 1 or H, L, S], dropout_mask? [B, H, L, S], float scale)
//   -> (out [B, H, L, Ev], probs [B, H, L, S])
// _nn_attention_backward(grad [B, H, L, Ev], query, key, value, probs, dropout_mask?, float scale)
//   -> (grad_query, grad_key, grad_value)
// All of one floating dtype; probs are the softmax before dropout, as _sdpa_math saves them. The
// kernels take row-strided views (nn::KernelViews::kRowStrided: a transformer's heads, transposed
// and narrowed views of one projection, are read where they are), and out and the gradients
// are allocated in [B, L, H, .] memory: the transpose(1, 2).reshape that merges the heads again
// is then a view, forward and backward.

std::string dims_str(const core::Tensor* t) { return shape_str(t->sizes, t->ndim); }

const std::vector<int> kSequenceMajor = {0, 2, 1, 3};  // [B, H, L, E] stored as [B, L, H, E]

// The checks both kernel ops make on query, key and value (arguments qi, qi + 1, qi + 2).
void check_qkv(CallCtx& ctx, size_t qi, core::Tensor*& q, core::Tensor*& k, core::Tensor*& v) {
  q = nn::kfloat(ctx, qi, 4);
  k = nn::kfloat(ctx, qi + 1, 4, q);
  v = nn::kfloat(ctx, qi + 2, 4, q);
  const int64_t* qs = q->sizes;
  nn::krequire(ctx,
               k->sizes[0] == qs[0] && v->sizes[0] == qs[0] && k->sizes[1] == qs[1] && v->sizes[1] == qs[1] &&
                   k->sizes[3] == qs[3] && v->sizes[2] == k->sizes[2],
               "query " + dims_str(q) + ", key " + dims_str(k) + " and value " + dims_str(v) +
                   " are not [B, H, L, E], [B, H, S, E] and [B, H, S, Ev]");
}

tsr_dtype_t attention_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  core::Tensor *q, *k, *v;
  check_qkv(ctx, 0, q, k, v);
  core::Tensor* bias = nn::kfloat(ctx, 3, 4, q);
  core::Tensor* drop = nn::kfloat(ctx, 4, 4, q);
  const int64_t B = q->sizes[0], H = q->sizes[1], L = q->sizes[2], S = k->sizes[2], Ev = v->sizes[3];
  const std::string nls = "[" + std::to_string(B) + ", " + std::to_string(H) + ", " + std::to_string(L) + ", " +
                          std::to_string(S) + "]";
  nn::krequire(ctx,
               !bias || ((bias->sizes[0] == 1 || bias->sizes[0] == B) && (bias->sizes[1] == 1 || bias->sizes[1] == H) &&
                         bias->sizes[2] == L && bias->sizes[3] == S),
               "bias " + (bias ? dims_str(bias) : std::string()) + " does not broadcast to " + nls);
  nn::krequire(ctx, !drop || (drop->sizes[0] == B && drop->sizes[1] == H && drop->sizes[2] == L && drop->sizes[3] == S),
               "dropout_mask " + (drop ? dims_str(drop) : std::string()) + " is not " + nls);
  outs.push_back({{B, H, L, Ev}, q->dtype, kSequenceMajor});
  outs.push_back({{B, H, L, S}, q->dtype});
  return q->dtype;
}

tsr_dtype_t attention_backward_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  core::Tensor* g = nn::kfloat(ctx, 0, 4);
  core::Tensor *q, *k, *v;
  check_qkv(ctx, 1, q, k, v);
  nn::krequire(ctx, q->dtype == g->dtype, "query must be " + std::string(dtype_name(g->dtype)) + " like grad");
  core::Tensor* p = nn::kfloat(ctx, 4, 4, g);
  core::Tensor* drop = nn::kfloat(ctx, 5, 4, g);
  const int64_t B = q->sizes[0], H = q->sizes[1], L = q->sizes[2], E = q->sizes[3], S = k->sizes[2],
                Ev = v->sizes[3];
  auto is = [&](const core::Tensor* t, int64_t last) {
    return t->sizes[0] == B && t->sizes[1] == H && t->sizes[2] == L && t->sizes[3] == last;
  };
  nn::krequire(ctx, is(g, Ev) && is(p, S) && (!drop || is(drop, S)),
               "grad " + dims_str(g) + ", probs " + dims_str(p) + (drop ? ", dropout_mask " + dims_str(drop) : "") +
                   " do not match query " + dims_str(q) + ", key " + dims_str(k) + " and value " + dims_str(v));
  outs.push_back({{B, H, L, E}, g->dtype, kSequenceMajor});
  outs.push_back({{B, H, S, E}, g->dtype, kSequenceMajor});
  outs.push_back({{B, H, S, Ev}, g->dtype, kSequenceMajor});
  return g->dtype;
}

// The batch dims of t ([..., X, Y]).
std::vector<int64_t> batch_of(const Tensor& t) {
  auto s = t.sizes();
  return std::vector<int64_t>(s.begin(), s.end() - 2);
}
std::vector<int64_t> with_last(std::vector<int64_t> batch, int64_t a, int64_t b) {
  batch.push_back(a);
  batch.push_back(b);
  return batch;
}

// t [batch..., X, Y] as [B, H, X, Y]: a view for 2-4 dims (leading 1s), leading batch dims merged
// by reshape beyond.
Tensor as4d(const Tensor& t) {
  Tensor r = t;
  while (r.dim() < 4) r = r.unsqueeze(0);
  if (r.dim() > 4) r = r.reshape({-1, r.size(-3), r.size(-2), r.size(-1)});
  return r;
}
Tensor from4d(const Tensor& t, const std::vector<int64_t>& batch) {
  return batch.size() == 2 ? t : t.reshape(with_last(batch, t.size(2), t.size(3)));
}

// The operands in the kernel ops' 4-D form, when they have the common form (see the top).
struct Fusable {
  std::vector<int64_t> batch;
  int64_t L = 0, S = 0;
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
  f.L = q.size(-2);
  f.S = k.size(-2);
  const std::vector<int64_t> full = with_last(f.batch, f.L, f.S);
  if (drop && drop->sizes() != full) return std::nullopt;
  if (bias) {
    const int64_t bd = bias->dim();
    if (bd < 2 || bd > q.dim() || (bias->size(-2) != 1 && bias->size(-2) != f.L) ||
        (bias->size(-1) != 1 && bias->size(-1) != f.S))
      return std::nullopt;
    std::vector<int64_t> bb = batch_of(*bias);
    for (size_t i = 0; i < bb.size(); ++i)
      if (bb[i] != 1 && bb[i] != f.batch[f.batch.size() - bb.size() + i]) return std::nullopt;
    // [L, S] materialized at the bias's own batch size (small), then broadcast over the batch by
    // stride 0 (the kernel reads one head for all where both batch dims are broadcast).
    Tensor own = bias->expand(with_last(bb, f.L, f.S)).contiguous();
    f.bias = as4d(own.expand(full));
  }
  f.q = as4d(q);
  f.k = as4d(k);
  f.v = as4d(v);
  if (drop) f.drop = as4d(*drop);
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
    if (r) return {from4d((*r)[0], f->batch), from4d((*r)[1], f->batch)};
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
        return tsr::call_multi(kernel, {as4d(g), f->q, f->k, f->v, as4d(p), nn::opt(f->drop), scale});
      });
      if (r) {
        if (c.needs(0)) c.set(0, from4d((*r)[0], f->batch));
        if (c.needs(1)) c.set(1, from4d((*r)[1], f->batch));
        if (c.needs(2)) c.set(2, from4d((*r)[2], f->batch));
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
  static const tsr::Op op("_sdpa_math");
  return tsr::call_multi(op, {q, k, v, nn::opt(bias), nn::opt(drop), scale})[0];
}

}  // namespace

TSR_CORE_OPS(nn_attention) {
  v.push_back({"_nn_attention(Tensor query, Tensor key, Tensor value, Tensor? bias, Tensor? dropout_mask, "
               "float scale) -> (Tensor, Tensor)",
               nn::kernel_op_impl<attention_shape, nn::KernelViews::kRowStrided>});
  v.push_back({"_nn_attention_backward(Tensor grad, Tensor query, Tensor key, Tensor value, Tensor probs, "
               "Tensor? dropout_mask, float scale) -> (Tensor, Tensor, Tensor)",
               nn::kernel_op_impl<attention_backward_shape, nn::KernelViews::kRowStrided>});
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
