// tessera_gpt_bench, Tessera side: the GPT and one training step (stand-in written with the
// SDK's functional ops until tools/train's model is available).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tessera/tessera.hpp"

namespace gpt_bench {

struct Config {
  int vocab_size = 16, block_size = 32, n_layer = 2, n_head = 4, n_embd = 128, batch = 64;
  double lr = 1e-3, weight_decay = 0.1, beta1 = 0.9, beta2 = 0.99, clip = 1.0;
};
inline Config default_config() { return Config{}; }
inline std::string describe(const Config& c) {
  return "GPT vocab " + std::to_string(c.vocab_size) + ", block " + std::to_string(c.block_size) + ", " +
         std::to_string(c.n_layer) + " layers, " + std::to_string(c.n_head) + " heads, embd " +
         std::to_string(c.n_embd) + ", batch " + std::to_string(c.batch) + " (" +
         std::to_string(c.batch * c.block_size) + " tokens/step)";
}

struct NamedParam {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> values;
};

struct BatchTokens {
  std::vector<int64_t> idx, targets;  // [batch, block]
};

class TesseraTrainer {
 public:
  TesseraTrainer(const Config& c, uint64_t seed) : c_(c) {
    tsr::manual_seed(seed);
    const int64_t C = c.n_embd;
    auto normal = [](std::vector<int64_t> s, double std) { return (tsr::randn(std::move(s)) * std).requires_grad_(); };
    auto zeros = [](std::vector<int64_t> s) { return tsr::zeros(std::move(s)).requires_grad_(); };
    auto ones = [](std::vector<int64_t> s) { return tsr::ones(std::move(s)).requires_grad_(); };
    const double proj_std = 0.02 / std::sqrt(2.0 * c.n_layer);
    add("wte", normal({c.vocab_size, C}, 0.02), true);
    add("wpe", normal({c.block_size, C}, 0.02), true);
    for (int l = 0; l < c.n_layer; ++l) {
      std::string p = "blocks." + std::to_string(l) + ".";
      add(p + "ln1.weight", ones({C}), false);
      add(p + "ln1.bias", zeros({C}), false);
      add(p + "attn.qkv.weight", normal({3 * C, C}, 0.02), true);
      add(p + "attn.qkv.bias", zeros({3 * C}), false);
      add(p + "attn.proj.weight", normal({C, C}, proj_std), true);
      add(p + "attn.proj.bias", zeros({C}), false);
      add(p + "ln2.weight", ones({C}), false);
      add(p + "ln2.bias", zeros({C}), false);
      add(p + "mlp.fc.weight", normal({4 * C, C}, 0.02), true);
      add(p + "mlp.fc.bias", zeros({4 * C}), false);
      add(p + "mlp.proj.weight", normal({C, 4 * C}, proj_std), true);
      add(p + "mlp.proj.bias", zeros({C}), false);
    }
    add("ln_f.weight", ones({C}), false);
    add("ln_f.bias", zeros({C}), false);
    for (auto& p : params_) {
      exp_avg_.push_back(tsr::zeros(p.sizes()));
      exp_avg_sq_.push_back(tsr::zeros(p.sizes()));
    }
    idx_ = tsr::randint(0, c.vocab_size, {c.batch, c.block_size});
    targets_ = tsr::randint(0, c.vocab_size, {c.batch, c.block_size});
    pos_ = tsr::arange(c.block_size);
  }

  // One training step; returns the loss before the update.
  double step() {
    tsr::Tensor loss = tsr::nn::cross_entropy(forward(idx_).view({-1, c_.vocab_size}), targets_.view({-1}));
    loss.backward();
    clip_grad_norm(c_.clip);
    ++step_;
    for (size_t i = 0; i < params_.size(); ++i) {
      tsr::AdamOptions o;
      o.lr = c_.lr;
      o.beta1 = c_.beta1;
      o.beta2 = c_.beta2;
      o.weight_decay = decay_[i] ? c_.weight_decay : 0.0;
      o.decoupled_weight_decay = true;
      tsr::adam_step_(params_[i], params_[i].grad(), exp_avg_[i], exp_avg_sq_[i], std::nullopt, step_, o);
      params_[i].set_grad(tsr::Tensor());
    }
    return loss.item<float>();
  }

  std::vector<NamedParam> initial_parameters() const {
    std::vector<NamedParam> out;
    for (size_t i = 0; i < params_.size(); ++i) out.push_back({names_[i], params_[i].sizes(), params_[i].to_vector<float>()});
    return out;
  }
  BatchTokens batch_tokens() const { return {idx_.to_vector<int64_t>(), targets_.to_vector<int64_t>()}; }

 private:
  void add(std::string name, tsr::Tensor t, bool decay) {
    names_.push_back(std::move(name));
    params_.push_back(std::move(t));
    decay_.push_back(decay);
  }

  tsr::Tensor forward(const tsr::Tensor& idx) {
    const int64_t B = idx.size(0), T = idx.size(1), C = c_.n_embd, H = c_.n_head;
    size_t k = 0;
    const tsr::Tensor& wte = params_[k++];
    const tsr::Tensor& wpe = params_[k++];
    tsr::Tensor x = tsr::nn::embedding(idx, wte) + tsr::nn::embedding(pos_.slice(0, 0, T), wpe);
    for (int l = 0; l < c_.n_layer; ++l) {
      const tsr::Tensor *ln1w = &params_[k++], *ln1b = &params_[k++], *qkvw = &params_[k++], *qkvb = &params_[k++],
                        *pw = &params_[k++], *pb = &params_[k++], *ln2w = &params_[k++], *ln2b = &params_[k++],
                        *fw = &params_[k++], *fb = &params_[k++], *f2w = &params_[k++], *f2b = &params_[k++];
      tsr::Tensor h = tsr::nn::layer_norm(x, {C}, *ln1w, *ln1b);
      tsr::Tensor qkv = tsr::linear(h, *qkvw, *qkvb);
      std::vector<tsr::Tensor> s = tsr::split(qkv, C, 2);
      auto heads = [&](const tsr::Tensor& t) { return t.view({B, T, H, C / H}).transpose(1, 2); };
      tsr::Tensor y = tsr::nn::scaled_dot_product_attention(heads(s[0]), heads(s[1]), heads(s[2]), std::nullopt, 0.0, true);
      y = y.transpose(1, 2).reshape({B, T, C});
      x = x + tsr::linear(y, *pw, *pb);
      h = tsr::nn::layer_norm(x, {C}, *ln2w, *ln2b);
      x = x + tsr::linear(tsr::gelu(tsr::linear(h, *fw, *fb)), *f2w, *f2b);
    }
    const tsr::Tensor& lnfw = params_[k++];
    const tsr::Tensor& lnfb = params_[k++];
    x = tsr::nn::layer_norm(x, {C}, lnfw, lnfb);
    return tsr::linear(x, wte);
  }

  void clip_grad_norm(double max_norm) {
    tsr::NoGradGuard ng;
    std::vector<tsr::Tensor> sq;
    for (auto& p : params_) {
      tsr::Tensor g = p.grad();
      sq.push_back(tsr::sum(g * g));
    }
    tsr::Tensor total = tsr::sqrt(tsr::sum(tsr::stack(sq)));
    tsr::Tensor coef = tsr::clamp(max_norm / (total + 1e-6), std::nullopt, 1.0);
    for (auto& p : params_) {
      tsr::Tensor g = p.grad();
      tsr::mul_(g, coef);
    }
  }

  Config c_;
  std::vector<std::string> names_;
  std::vector<tsr::Tensor> params_, exp_avg_, exp_avg_sq_;
  std::vector<bool> decay_;
  tsr::Tensor idx_, targets_, pos_;
  int64_t step_ = 0;
};

}  // namespace gpt_bench
