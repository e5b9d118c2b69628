// Tessera SDK: MultiheadAttention (torch.nn.MultiheadAttention).
//
//   auto mha = std::make_shared<tsr::nn::MultiheadAttention>(/*embed_dim*/ 64, /*num_heads*/ 4,
//                                                             /*dropout*/ 0.0, /*bias*/ true,
//                                                             /*batch_first*/ true);
//   auto [y, w] = mha->forward(x, x, x);                       // w: [N, L, S], head average
//   auto [y2, none] = mha->forward(x, x, x, {}, /*need_weights=*/false, {}, true, /*is_causal=*/true);
//
// PyTorch's parameters and names: in_proj_weight [3E, E] (xavier_uniform_), in_proj_bias [3E]
// (zeros), out_proj.weight [E, E] (Linear's init), out_proj.bias [E] (zeros), so a PyTorch
// state_dict loads unchanged. Layouts: [L, N, E] (batch_first: [N, L, E]) or unbatched [L, E];
// key and value must have embed_dim features (no kdim/vdim).
//
// Masks follow torch.nn.MultiheadAttention (not F.scaled_dot_product_attention): a bool
// attn_mask or key_padding_mask is true where attention is NOT allowed; a float mask is added to
// the scores. attn_mask is [L, S] or [N * num_heads, L, S]; key_padding_mask [N, S] ([S]
// unbatched). is_causal applies the causal mask (key j > query i is masked) on its own, and is
// combined with attn_mask when both are given (PyTorch treats it as a hint and needs attn_mask).
// A query row with every key masked gives NaN, as in PyTorch.
//
// need_weights=false runs tsr::nn::scaled_dot_product_attention (no [N, H, L, S] probabilities
// kept by the caller; with only is_causal it builds no mask tensor). need_weights=true computes
// softmax(q k^T / sqrt(d)) explicitly and returns it (after dropout, as PyTorch), averaged over
// heads unless average_attn_weights=false ([N, H, L, S]). Self-attention (query, key and value
// the same tensor) projects q, k and v with one matmul.
//
// Ownership: the module owns its parameters (nn/module.hpp); outputs are new tensors.
// Errors: tsr::Error naming MultiheadAttention and the offending shapes/dtypes, raised before
// computing; the module is never modified by forward. Thread-safety: as nn::Module.
#pragma once

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/nn/linear.hpp"
#include "tessera/nn/module.hpp"
#include "tessera/nn/seq_util.hpp"
#include "tessera/ops/random.hpp"
#include "tessera/tessera.hpp"

namespace tsr::nn {

class MultiheadAttention : public Module {
 public:
  const int64_t embed_dim, num_heads, head_dim;
  const double dropout;
  const bool batch_first;
  Tensor in_proj_weight, in_proj_bias;  // in_proj_bias undefined when bias=false
  std::shared_ptr<Linear> out_proj;

  MultiheadAttention(int64_t embed_dim_, int64_t num_heads_, double dropout_ = 0.0, bool bias = true,
                     bool batch_first_ = false)
      : Module("MultiheadAttention"),
        embed_dim(embed_dim_),
        num_heads(num_heads_),
        head_dim(num_heads_ > 0 ? embed_dim_ / num_heads_ : 0),
        dropout(dropout_),
        batch_first(batch_first_) {
    seq_detail::require_positive(type_name(), "embed_dim", embed_dim);
    seq_detail::require_positive(type_name(), "num_heads", num_heads);
    if (embed_dim % num_heads != 0)
      seq_detail::fail(type_name(), "embed_dim " + std::to_string(embed_dim) + " is not divisible by num_heads " +
                                        std::to_string(num_heads));
    seq_detail::require_probability(type_name(), "dropout", dropout);
    {
      NoGradGuard no_grad;
      in_proj_weight = tsr::empty({3 * embed_dim, embed_dim});
      // xavier_uniform_ over the packed [3E, E] matrix, as PyTorch's _reset_parameters.
      double bound = std::sqrt(6.0 / static_cast<double>(4 * embed_dim));
      tsr::uniform_(in_proj_weight, -bound, bound);
      if (bias) in_proj_bias = tsr::zeros({3 * embed_dim});
    }
    register_parameter("in_proj_weight", in_proj_weight);
    register_parameter("in_proj_bias", in_proj_bias);
    out_proj = register_module("out_proj", std::make_shared<Linear>(embed_dim, embed_dim, bias));
    if (bias) {
      NoGradGuard no_grad;
      out_proj->bias.fill_(0);
    }
  }

  // (output, attention weights); the weights are undefined when need_weights is false.
  std::pair<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& key_padding_mask = {}, bool need_weights = true,
                                    const std::optional<Tensor>& attn_mask = {}, bool average_attn_weights = true,
                                    bool is_causal = false) {
    const bool unbatched = check_inputs(query, key, value);
    // Batch-major [N, L, E] internally: heads then split as [N, H, L, D] without copies of k/v.
    auto to_nle = [&](const Tensor& t) { return unbatched ? t.unsqueeze(0) : batch_first ? t : t.transpose(0, 1); };
    Tensor q = to_nle(query), k = to_nle(key), v = to_nle(value);
    const int64_t N = q.size(0), L = q.size(1), S = k.size(1);
    std::optional<Tensor> bias = combined_mask(key_padding_mask, attn_mask, unbatched, N, L, S, q.dtype());

    std::optional<Tensor> b_in = in_proj_bias.defined() ? std::optional<Tensor>(in_proj_bias) : std::nullopt;
    if (query.get() == key.get() && key.get() == value.get()) {
      std::vector<Tensor> qkv = tsr::chunk(tsr::linear(q, in_proj_weight, b_in), 3, -1);
      q = qkv[0], k = qkv[1], v = qkv[2];
    } else {
      auto w = tsr::chunk(in_proj_weight, 3, 0);
      std::vector<std::optional<Tensor>> b(3);
      if (b_in) {
        auto bs = tsr::chunk(*b_in, 3, 0);
        for (int i = 0; i < 3; ++i) b[i] = bs[i];
      }
      q = tsr::linear(q, w[0], b[0]);
      k = tsr::linear(k, w[1], b[1]);
      v = tsr::linear(v, w[2], b[2]);
    }
    auto heads = [&](const Tensor& t, int64_t len) { return t.reshape({N, len, num_heads, head_dim}).transpose(1, 2); };
    q = heads(q, L), k = heads(k, S), v = heads(v, S);

    const double p = is_training() ? dropout : 0.0;
    Tensor ctx, weights;
    if (!need_weights) {
      if (is_causal && !bias) {
        ctx = tsr::nn::scaled_dot_product_attention(q, k, v, std::nullopt, p, /*is_causal=*/true);
      } else {
        if (is_causal) bias = *bias + causal_bias(L, S, q);
        ctx = tsr::nn::scaled_dot_product_attention(q, k, v, bias, p, false);
      }
    } else {
      if (is_causal) bias = bias ? *bias + causal_bias(L, S, q) : causal_bias(L, S, q);
      Tensor scores = tsr::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(head_dim)));
      if (bias) scores = scores + *bias;
      weights = tsr::softmax(scores, -1);
      if (p > 0) weights = tsr::nn::dropout(weights, p, true);
      ctx = tsr::matmul(weights, v);
      if (average_attn_weights) weights = tsr::mean(weights, {1});
      if (unbatched) weights = weights.squeeze(0);
    }
    Tensor out = ctx.transpose(1, 2).reshape({N, L, embed_dim});
    out = tsr::linear(out, out_proj->weight,
                      out_proj->bias.defined() ? std::optional<Tensor>(out_proj->bias) : std::nullopt);
    if (unbatched)
      out = out.squeeze(0);
    else if (!batch_first)
      out = out.transpose(0, 1);
    return {out, weights};
  }

  // Self-attention output only (Sequential-friendly): forward(x, x, x, {}, false).first.
  Tensor forward(const Tensor& x) override { return forward(x, x, x, std::nullopt, false).first; }

  std::string extra_repr() const override {
    return "embed_dim=" + std::to_string(embed_dim) + ", num_heads=" + std::to_string(num_heads) +
           (dropout != 0 ? ", dropout=" + std::to_string(dropout) : "") + (batch_first ? ", batch_first=true" : "");
  }

 private:
  // Validates the shapes and dtypes of q/k/v; true when the input is unbatched ([L, E]).
  bool check_inputs(const Tensor& q, const Tensor& k, const Tensor& v) const {
    const std::string layout = batch_first ? "[batch, len, " : "[len, batch, ";
    const std::string E = std::to_string(embed_dim);
    for (const Tensor* t : {&q, &k, &v})
      if (!t->defined() || (t->dim() != 2 && t->dim() != 3) || t->size(-1) != embed_dim || t->dim() != q.dim())
        seq_detail::fail(type_name(), "expected query, key and value " + layout + E + "] (or [len, " + E +
                                          "] unbatched, all alike), got query " + seq_detail::shape_text(q) + ", key " +
                                          seq_detail::shape_text(k) + ", value " + seq_detail::shape_text(v));
    const bool unbatched = q.dim() == 2;
    const int64_t bdim = batch_first ? 0 : 1, sdim = unbatched ? 0 : batch_first ? 1 : 0;
    if (k.size(sdim) != v.size(sdim) || (!unbatched && (k.size(bdim) != q.size(bdim) || v.size(bdim) != q.size(bdim))))
      seq_detail::fail(type_name(), "key and value must have one length and the query's batch, got query " +
                                        seq_detail::shape_text(q) + ", key " + seq_detail::shape_text(k) + ", value " +
                                        seq_detail::shape_text(v));
    seq_detail::require_dtype(type_name(), "query", q, in_proj_weight.dtype());
    seq_detail::require_dtype(type_name(), "key", k, in_proj_weight.dtype());
    seq_detail::require_dtype(type_name(), "value", v, in_proj_weight.dtype());
    return unbatched;
  }

  // A bool mask (true = masked) or a float mask as an additive bias of dtype dt.
  Tensor as_bias(const char* what, const Tensor& m, tsr_dtype_t dt) const {
    if (m.dtype() == TSR_BOOL)
      return tsr::where(m, tsr::full({}, -INFINITY, dt, m.device()), tsr::zeros({}, dt, m.device()));
    if (is_floating(m.dtype())) return m.to(dt);
    seq_detail::fail(type_name(), std::string(what) + " must be bool or floating point, got " + dtype_name(m.dtype()));
  }

  // key_padding_mask and attn_mask as one additive bias broadcasting to [N, H, L, S].
  std::optional<Tensor> combined_mask(const std::optional<Tensor>& kpm, const std::optional<Tensor>& am, bool unbatched,
                                      int64_t N, int64_t L, int64_t S, tsr_dtype_t dt) const {
    std::optional<Tensor> bias;
    if (am && am->defined()) {
      const Tensor& m = *am;
      std::vector<int64_t> want2{L, S}, want3{N * num_heads, L, S};
      if (m.sizes() == want2) {
        bias = as_bias("attn_mask", m, dt).view({1, 1, L, S});
      } else if (m.sizes() == want3 || (unbatched && m.sizes() == std::vector<int64_t>{num_heads, L, S})) {
        bias = as_bias("attn_mask", m, dt).reshape({N, num_heads, L, S});
      } else {
        seq_detail::fail(type_name(), "attn_mask must be " + seq_detail::shape_text(want2) + " or " +
                                          seq_detail::shape_text(want3) + " (batch * num_heads, L, S), got " +
                                          seq_detail::shape_text(m));
      }
    }
    if (kpm && kpm->defined()) {
      const Tensor& m = *kpm;
      std::vector<int64_t> want = unbatched ? std::vector<int64_t>{S} : std::vector<int64_t>{N, S};
      if (m.sizes() != want)
        seq_detail::fail(type_name(), "key_padding_mask must be " + seq_detail::shape_text(want) + " (batch, S), got " +
                                          seq_detail::shape_text(m));
      Tensor b = as_bias("key_padding_mask", m, dt).reshape({N, 1, 1, S});
      bias = bias ? *bias + b : b;
    }
    return bias;
  }

  static Tensor causal_bias(int64_t L, int64_t S, const Tensor& like) {
    Tensor i = tsr::arange(L, TSR_I64, like.device()).view({L, 1});
    Tensor j = tsr::arange(S, TSR_I64, like.device()).view({1, S});
    return tsr::where(tsr::gt(j, i), tsr::full({}, -INFINITY, like.dtype(), like.device()),
                      tsr::zeros({}, like.dtype(), like.device()));
  }
};

}  // namespace tsr::nn
