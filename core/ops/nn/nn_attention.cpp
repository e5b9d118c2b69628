// scaled_dot_product_attention: a composite that turns the mask options (bool or float
// attn_mask, is_causal) into an additive bias and draws the dropout mask, around the primitive
// _sdpa_math (softmax(q k^T * scale + bias) [* dropout mask] @ v) whose backward is the
// standard attention gradient from the saved probabilities.
#include <cmath>

#include "ops/nn/nn_util.hpp"

namespace tsr::core {
namespace {

using tsr::Tensor;

Tensor last_t(const Tensor& t) { return t.transpose(t.dim() - 2, t.dim() - 1); }

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
