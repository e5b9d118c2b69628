#include "gpt.hpp"

#include <cmath>
#include <cstdio>

#include "tessera/autograd.hpp"

namespace tessera_train {

namespace {
[[noreturn]] void bad_config(const std::string& what) { throw tsr::Error(TSR_INVALID_ARGUMENT, "GPTConfig: " + what); }

std::string fmt_g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

void init_normal(tsr::Tensor& t, double std) {
  tsr::NoGradGuard no_grad;
  tsr::normal_(t, 0.0, std);
}
void init_zeros(tsr::Tensor& t) {
  if (!t.defined()) return;
  tsr::NoGradGuard no_grad;
  t.fill_(0);
}
}  // namespace

void GPTConfig::validate() const {
  if (vocab_size < 1) bad_config("vocab_size must be >= 1, got " + std::to_string(vocab_size));
  if (block_size < 1) bad_config("block_size must be >= 1, got " + std::to_string(block_size));
  if (n_layer < 0) bad_config("n_layer must be >= 0, got " + std::to_string(n_layer));
  if (n_head < 1) bad_config("n_head must be >= 1, got " + std::to_string(n_head));
  if (n_embd < 1 || n_embd % n_head != 0)
    bad_config("n_embd (" + std::to_string(n_embd) + ") must be a positive multiple of n_head (" +
               std::to_string(n_head) + ")");
  if (!(dropout >= 0 && dropout < 1)) bad_config("dropout must be in [0, 1), got " + std::to_string(dropout));
}

int64_t GPTConfig::expected_parameters() const {
  const int64_t C = n_embd;
  int64_t per_layer = 12 * C * C + (bias ? 13 * C : 4 * C);
  return vocab_size * C + block_size * C + n_layer * per_layer + 2 * C;
}

std::string GPTConfig::str() const {
  return "vocab_size=" + std::to_string(vocab_size) + ", block_size=" + std::to_string(block_size) +
         ", n_layer=" + std::to_string(n_layer) + ", n_head=" + std::to_string(n_head) +
         ", n_embd=" + std::to_string(n_embd) + ", dropout=" + fmt_g(dropout) + ", bias=" + (bias ? "true" : "false");
}

CausalSelfAttention::CausalSelfAttention(const GPTConfig& c)
    : Module("CausalSelfAttention"), n_head_(c.n_head), n_embd_(c.n_embd), dropout_(c.dropout) {
  // One fused projection for q, k and v: one GEMM instead of three.
  c_attn = register_module("c_attn", std::make_shared<tsr::nn::Linear>(c.n_embd, 3 * c.n_embd, c.bias));
  c_proj = register_module("c_proj", std::make_shared<tsr::nn::Linear>(c.n_embd, c.n_embd, c.bias));
  resid_dropout = register_module("resid_dropout", std::make_shared<tsr::nn::Dropout>(c.dropout));
}

tsr::Tensor CausalSelfAttention::forward(const tsr::Tensor& x) {
  const int64_t B = x.size(0), T = x.size(1), C = n_embd_, H = n_head_;
  tsr::Tensor qkv = (*c_attn)(x);  // [B, T, 3C]
  auto heads = [&](int64_t i) { return qkv.narrow(2, i * C, C).reshape({B, T, H, C / H}).transpose(1, 2); };
  tsr::Tensor y = tsr::nn::scaled_dot_product_attention(heads(0), heads(1), heads(2), std::nullopt,
                                                        is_training() ? dropout_ : 0.0, /*is_causal=*/true);
  y = y.transpose(1, 2).reshape({B, T, C});
  return (*resid_dropout)((*c_proj)(y));
}

MLP::MLP(const GPTConfig& c) : Module("MLP") {
  c_fc = register_module("c_fc", std::make_shared<tsr::nn::Linear>(c.n_embd, 4 * c.n_embd, c.bias));
  c_proj = register_module("c_proj", std::make_shared<tsr::nn::Linear>(4 * c.n_embd, c.n_embd, c.bias));
  dropout = register_module("dropout", std::make_shared<tsr::nn::Dropout>(c.dropout));
}

tsr::Tensor MLP::forward(const tsr::Tensor& x) { return (*dropout)((*c_proj)(tsr::gelu((*c_fc)(x)))); }

Block::Block(const GPTConfig& c) : Module("Block") {
  ln_1 = register_module("ln_1", std::make_shared<tsr::nn::LayerNorm>(std::vector<int64_t>{c.n_embd}));
  attn = register_module("attn", std::make_shared<CausalSelfAttention>(c));
  ln_2 = register_module("ln_2", std::make_shared<tsr::nn::LayerNorm>(std::vector<int64_t>{c.n_embd}));
  mlp = register_module("mlp", std::make_shared<MLP>(c));
}

tsr::Tensor Block::forward(const tsr::Tensor& x) {
  tsr::Tensor h = x + attn->forward((*ln_1)(x));
  return h + mlp->forward((*ln_2)(h));
}

GPT::GPT(const GPTConfig& c) : Module("GPT"), cfg_(c) {
  c.validate();
  wte = register_module("wte", std::make_shared<tsr::nn::Embedding>(c.vocab_size, c.n_embd));
  wpe = register_module("wpe", std::make_shared<tsr::nn::Embedding>(c.block_size, c.n_embd));
  drop = register_module("drop", std::make_shared<tsr::nn::Dropout>(c.dropout));
  h = register_module("h", std::make_shared<BlockList>());
  for (int64_t i = 0; i < c.n_layer; ++i) h->push_back(std::make_shared<Block>(c));
  ln_f = register_module("ln_f", std::make_shared<tsr::nn::LayerNorm>(std::vector<int64_t>{c.n_embd}));

  // GPT-2 initialization. The projections that write into the residual stream are scaled
  // down so the stream's variance does not grow with depth.
  const double proj_std = 0.02 / std::sqrt(2.0 * static_cast<double>(std::max<int64_t>(c.n_layer, 1)));
  init_normal(wte->weight, 0.02);
  init_normal(wpe->weight, 0.02);
  for (const auto& b : h->blocks()) {
    init_normal(b->attn->c_attn->weight, 0.02);
    init_zeros(b->attn->c_attn->bias);
    init_normal(b->attn->c_proj->weight, proj_std);
    init_zeros(b->attn->c_proj->bias);
    init_normal(b->mlp->c_fc->weight, 0.02);
    init_zeros(b->mlp->c_fc->bias);
    init_normal(b->mlp->c_proj->weight, proj_std);
    init_zeros(b->mlp->c_proj->bias);
  }
}

tsr::Tensor GPT::forward(const tsr::Tensor& idx) {
  if (idx.dim() != 2 || tsr::is_floating(idx.dtype()))
    throw tsr::Error(TSR_INVALID_ARGUMENT,
                     "GPT: expected integer token indices of shape [B, T], got " + tsr::describe(idx));
  const int64_t T = idx.size(1);
  if (T > cfg_.block_size)
    throw tsr::Error(TSR_INVALID_ARGUMENT, "GPT: sequence length " + std::to_string(T) + " exceeds block_size " +
                                               std::to_string(cfg_.block_size));
  tsr::Tensor pos = tsr::arange(T, TSR_I64, idx.device());
  tsr::Tensor x = (*drop)((*wte)(idx) + (*wpe)(pos));  // [B, T, C] + [T, C]
  for (const auto& b : h->blocks()) x = b->forward(x);
  x = (*ln_f)(x);
  // The tied head: logits against the token embedding matrix.
  return tsr::linear(x, wte->weight);
}

tsr::Tensor GPT::loss(const tsr::Tensor& logits, const tsr::Tensor& targets) const {
  const int64_t V = logits.size(-1);
  return tsr::nn::cross_entropy(logits.reshape({-1, V}), targets.reshape({-1}), std::nullopt, "mean", -100);
}

}  // namespace tessera_train
