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

struct TorchBlockImpl : torch::nn::Module {
  TorchBlockImpl(int64_t C, int64_t H) : C(C), H(H) {
    ln1 = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({C})));
    qkv = register_module("qkv", torch::nn::Linear(C, 3 * C));
    proj = register_module("proj", torch::nn::Linear(C, C));
    ln2 = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({C})));
    fc = register_module("fc", torch::nn::Linear(C, 4 * C));
    fc2 = register_module("fc2", torch::nn::Linear(4 * C, C));
  }
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& causal_mask) {
    const int64_t B = x.size(0), T = x.size(1);
    auto s = qkv->forward(ln1->forward(x)).split(C, 2);
    auto heads = [&](const torch::Tensor& t) { return t.view({B, T, H, C / H}).transpose(1, 2); };
    torch::Tensor q = heads(s[0]), k = heads(s[1]), v = heads(s[2]);
    // nanoGPT's attention without flash kernels (libtorch 1.13 has no public SDPA).
    torch::Tensor att = torch::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(double(C / H)));
    att = att.masked_fill(causal_mask.slice(0, 0, T).slice(1, 0, T).logical_not(), -INFINITY);
    att = torch::softmax(att, -1);
    torch::Tensor y = torch::matmul(att, v).transpose(1, 2).reshape({B, T, C});
    x = x + proj->forward(y);
    return x + fc2->forward(torch::gelu(fc->forward(ln2->forward(x))));
  }
  int64_t C, H;
  torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
  torch::nn::Linear qkv{nullptr}, proj{nullptr}, fc{nullptr}, fc2{nullptr};
};
TORCH_MODULE(TorchBlock);

struct TorchGPTImpl : torch::nn::Module {
  explicit TorchGPTImpl(const Config& c) : c(c) {
    wte = register_module("wte", torch::nn::Embedding(c.vocab_size, c.n_embd));
    wpe = register_module("wpe", torch::nn::Embedding(c.block_size, c.n_embd));
    blocks = register_module("blocks", torch::nn::ModuleList());
    for (int l = 0; l < c.n_layer; ++l) blocks->push_back(TorchBlock(c.n_embd, c.n_head));
    ln_f = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.n_embd})));
    mask = register_buffer("mask", torch::ones({c.block_size, c.block_size}, torch::kBool).tril());
  }
  torch::Tensor forward(const torch::Tensor& idx) {
    const int64_t T = idx.size(1);
    torch::Tensor x = wte->forward(idx) + wpe->forward(torch::arange(T, torch::kLong));
    for (auto& b : *blocks) x = b->as<TorchBlock>()->forward(x, mask);
    return torch::linear(ln_f->forward(x), wte->weight);  // weight-tied head
  }
  Config c;
  torch::nn::Embedding wte{nullptr}, wpe{nullptr};
  torch::nn::ModuleList blocks{nullptr};
  torch::nn::LayerNorm ln_f{nullptr};
  torch::Tensor mask;
};
TORCH_MODULE(TorchGPT);

class TorchTrainer {
 public:
  TorchTrainer(const Config& c, const std::vector<NamedParam>& init, const BatchTokens& batch) : c_(c), model_(c) {
    std::vector<torch::Tensor> params = model_->parameters();
    if (params.size() != init.size())
      throw std::runtime_error("libtorch GPT has " + std::to_string(params.size()) + " parameters, Tessera's " +
                               std::to_string(init.size()));
    std::vector<torch::Tensor> decay, no_decay;
    {
      torch::NoGradGuard ng;
      for (size_t i = 0; i < params.size(); ++i) {
        std::vector<int64_t> shape(params[i].sizes().begin(), params[i].sizes().end());
        if (shape != init[i].shape) throw std::runtime_error("parameter " + init[i].name + ": shapes differ");
        params[i].copy_(torch::from_blob(const_cast<float*>(init[i].values.data()), params[i].sizes(), torch::kFloat));
        (params[i].dim() >= 2 ? decay : no_decay).push_back(params[i]);
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
    loss.backward();
    torch::nn::utils::clip_grad_norm_(model_->parameters(), c_.clip);
    opt_->step();
    // set_to_none (as Tessera's side and PyTorch 2's default); 1.13's zero_grad() zeroes in place.
    for (auto& p : model_->parameters()) p.mutable_grad() = torch::Tensor();
    return loss.item<double>();
  }

 private:
  Config c_;
  TorchGPT model_;
  std::unique_ptr<torch::optim::AdamW> opt_;
  torch::Tensor idx_, targets_;
};

}  // namespace gpt_bench
