// tessera_gpt_bench, libtorch side: the same GPT (nanoGPT layout) with torch::nn modules and
// torch::optim::AdamW, started from the Tessera model's initial parameters.
#pragma once

#include <torch/torch.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpt_bench_model.hpp"

namespace gpt_bench {

// Module names as tools/train's GPT (nanoGPT's), so parameters are matched by name.
struct TorchAttentionImpl : torch::nn::Module {
  TorchAttentionImpl(int64_t C, int64_t H) : C(C), H(H) {
    c_attn = register_module("c_attn", torch::nn::Linear(C, 3 * C));
    c_proj = register_module("c_proj", torch::nn::Linear(C, C));
  }
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& causal_mask) {
    const int64_t B = x.size(0), T = x.size(1);
    auto s = c_attn->forward(x).split(C, 2);
    auto heads = [&](const torch::Tensor& t) { return t.view({B, T, H, C / H}).transpose(1, 2); };
    torch::Tensor q = heads(s[0]), k = heads(s[1]), v = heads(s[2]);
    // nanoGPT's attention without flash kernels (libtorch 1.13 has no public SDPA).
    torch::Tensor att = torch::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(double(C / H)));
    att = att.masked_fill(causal_mask.slice(0, 0, T).slice(1, 0, T).logical_not(), -INFINITY);
    att = torch::softmax(att, -1);
    return c_proj->forward(torch::matmul(att, v).transpose(1, 2).reshape({B, T, C}));
  }
  int64_t C, H;
  torch::nn::Linear c_attn{nullptr}, c_proj{nullptr};
};
TORCH_MODULE(TorchAttention);

struct TorchMLPImpl : torch::nn::Module {
  explicit TorchMLPImpl(int64_t C) {
    c_fc = register_module("c_fc", torch::nn::Linear(C, 4 * C));
    c_proj = register_module("c_proj", torch::nn::Linear(4 * C, C));
  }
  torch::Tensor forward(const torch::Tensor& x) { return c_proj->forward(torch::gelu(c_fc->forward(x))); }
  torch::nn::Linear c_fc{nullptr}, c_proj{nullptr};
};
TORCH_MODULE(TorchMLP);

struct TorchBlockImpl : torch::nn::Module {
  TorchBlockImpl(int64_t C, int64_t H) {
    ln_1 = register_module("ln_1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({C})));
    attn = register_module("attn", TorchAttention(C, H));
    ln_2 = register_module("ln_2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({C})));
    mlp = register_module("mlp", TorchMLP(C));
  }
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& causal_mask) {
    x = x + attn->forward(ln_1->forward(x), causal_mask);
    return x + mlp->forward(ln_2->forward(x));
  }
  torch::nn::LayerNorm ln_1{nullptr}, ln_2{nullptr};
  TorchAttention attn{nullptr};
  TorchMLP mlp{nullptr};
};
TORCH_MODULE(TorchBlock);

struct TorchGPTImpl : torch::nn::Module {
  explicit TorchGPTImpl(const Config& c) : c(c) {
    wte = register_module("wte", torch::nn::Embedding(c.vocab_size, c.n_embd));
    wpe = register_module("wpe", torch::nn::Embedding(c.block_size, c.n_embd));
    h = register_module("h", torch::nn::ModuleList());
    for (int l = 0; l < c.n_layer; ++l) h->push_back(TorchBlock(c.n_embd, c.n_head));
    ln_f = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.n_embd})));
    mask = register_buffer("mask", torch::ones({c.block_size, c.block_size}, torch::kBool).tril());
  }
  torch::Tensor forward(const torch::Tensor& idx) {
    const int64_t T = idx.size(1);
    torch::Tensor x = wte->forward(idx) + wpe->forward(torch::arange(T, torch::kLong));
    for (auto& b : *h) x = b->as<TorchBlock>()->forward(x, mask);
    return torch::linear(ln_f->forward(x), wte->weight);  // weight-tied head
  }
  Config c;
  torch::nn::Embedding wte{nullptr}, wpe{nullptr};
  torch::nn::ModuleList h{nullptr};
  torch::nn::LayerNorm ln_f{nullptr};
  torch::Tensor mask;
};
TORCH_MODULE(TorchGPT);

class TorchTrainer {
 public:
  TorchTrainer(const Config& c, const std::vector<NamedParam>& init, const BatchTokens& batch) : c_(c), model_(c) {
    auto named = model_->named_parameters();
    if (named.size() != init.size())
      throw std::runtime_error("libtorch GPT has " + std::to_string(named.size()) + " parameters, Tessera's " +
                               std::to_string(init.size()));
    std::vector<torch::Tensor> decay, no_decay;
    {
      torch::NoGradGuard ng;
      for (const NamedParam& p : init) {
        torch::Tensor* t = named.find(p.name);
        if (!t) throw std::runtime_error("libtorch GPT has no parameter " + p.name);
        std::vector<int64_t> shape(t->sizes().begin(), t->sizes().end());
        if (shape != p.shape) throw std::runtime_error("parameter " + p.name + ": shapes differ");
        t->copy_(torch::from_blob(const_cast<float*>(p.values.data()), t->sizes(), torch::kFloat));
        (t->dim() >= 2 ? decay : no_decay).push_back(*t);
      }
    }
    std::vector<torch::optim::OptimizerParamGroup> groups;
    auto opts = [&](double wd) {
      return std::make_unique<torch::optim::AdamWOptions>(
          torch::optim::AdamWOptions(c.lr).betas({c.beta1, c.beta2}).eps(1e-8).weight_decay(wd));
    };
    groups.emplace_back(decay, opts(c.weight_decay));
    groups.emplace_back(no_decay, opts(0.0));
    opt_ = std::make_unique<torch::optim::AdamW>(groups, torch::optim::AdamWOptions(c.lr));
    idx_ = torch::tensor(batch.idx, torch::kLong).view({c.batch, c.block_size});
    targets_ = torch::tensor(batch.targets, torch::kLong).view({c.batch, c.block_size});
  }

  double step() {
    torch::Tensor loss =
        torch::nn::functional::cross_entropy(model_->forward(idx_).view({-1, c_.vocab_size}), targets_.view({-1}));
    // set_to_none (as Tessera's trainer and PyTorch 2's default); 1.13's zero_grad() zeroes in place.
    for (auto& p : model_->parameters()) p.mutable_grad() = torch::Tensor();
    loss.backward();
    torch::nn::utils::clip_grad_norm_(model_->parameters(), c_.clip);
    opt_->step();
    return loss.item<double>();
  }

 private:
  Config c_;
  TorchGPT model_;
  std::unique_ptr<torch::optim::AdamW> opt_;
  torch::Tensor idx_, targets_;
};

}  // namespace gpt_bench
