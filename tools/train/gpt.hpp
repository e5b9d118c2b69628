// tessera train: a nanoGPT-style decoder-only transformer built from tsr::nn layers.
//
//   token embedding + learned position embedding -> n_layer pre-norm blocks
//   (LayerNorm -> causal self-attention -> residual; LayerNorm -> MLP 4x GELU -> residual)
//   -> final LayerNorm -> logits = x @ wte.weight^T (the head is tied to the token embedding,
//   so it adds no parameters and shares storage with wte.weight).
//
// Ownership: modules are held by std::shared_ptr (tsr::nn::Module is non-copyable); tensors
// returned by forward are new. Errors: tsr::Error naming "GPT" and the offending shape or
// value (bad config, indices longer than block_size, non-integer indices). Thread-safety:
// as tsr::nn::Module (no concurrent mutation).
#pragma once

#include <memory>
#include <string>

#include "tessera/nn.hpp"
#include "tessera/tessera.hpp"

namespace tessera_train {

struct GPTConfig {
  int64_t vocab_size = 16;
  int64_t block_size = 16;
  int64_t n_layer = 2;
  int64_t n_head = 4;
  int64_t n_embd = 64;
  double dropout = 0.0;
  bool bias = true;  // biases of the Linear layers (LayerNorms always have weight and bias)

  void validate() const;  // throws tsr::Error naming the bad field
  // vocab*C + block*C + L*(12C^2 + 13C or 4C without biases) + 2C
  int64_t expected_parameters() const;
  std::string str() const;
};

class CausalSelfAttention : public tsr::nn::Module {
 public:
  explicit CausalSelfAttention(const GPTConfig& c);
  tsr::Tensor forward(const tsr::Tensor& x) override;  // [B, T, C] -> [B, T, C]
  std::shared_ptr<tsr::nn::Linear> c_attn, c_proj;
  std::shared_ptr<tsr::nn::Dropout> resid_dropout;

 private:
  int64_t n_head_, n_embd_;
  double dropout_;
};

class MLP : public tsr::nn::Module {
 public:
  explicit MLP(const GPTConfig& c);
  tsr::Tensor forward(const tsr::Tensor& x) override;
  std::shared_ptr<tsr::nn::Linear> c_fc, c_proj;
  std::shared_ptr<tsr::nn::Dropout> dropout;
};

class Block : public tsr::nn::Module {
 public:
  explicit Block(const GPTConfig& c);
  tsr::Tensor forward(const tsr::Tensor& x) override;
  std::shared_ptr<tsr::nn::LayerNorm> ln_1, ln_2;
  std::shared_ptr<CausalSelfAttention> attn;
  std::shared_ptr<MLP> mlp;
};

// The blocks under "h.0", "h.1", ... (nanoGPT's state_dict names), kept typed.
class BlockList : public tsr::nn::Module {
 public:
  BlockList() : Module("ModuleList") {}
  void push_back(std::shared_ptr<Block> b) {
    blocks_.push_back(register_module(std::to_string(blocks_.size()), std::move(b)));
  }
  const std::vector<std::shared_ptr<Block>>& blocks() const { return blocks_; }

 private:
  std::vector<std::shared_ptr<Block>> blocks_;
};

class GPT : public tsr::nn::Module {
 public:
  // Initializes like GPT-2 from the runtime RNG (tsr::manual_seed first for reproducibility):
  // weights N(0, 0.02), residual projections N(0, 0.02/sqrt(2 n_layer)), biases 0.
  explicit GPT(const GPTConfig& c);
  // idx: integer [B, T] with T <= block_size -> logits float [B, T, vocab_size].
  tsr::Tensor forward(const tsr::Tensor& idx) override;
  // Mean cross-entropy over targets != -100 (targets: integer [B, T]).
  tsr::Tensor loss(const tsr::Tensor& logits, const tsr::Tensor& targets) const;
  const GPTConfig& config() const { return cfg_; }
  std::string extra_repr() const override { return cfg_.str(); }

  std::shared_ptr<tsr::nn::Embedding> wte, wpe;
  std::shared_ptr<tsr::nn::Dropout> drop;
  std::shared_ptr<BlockList> h;
  std::shared_ptr<tsr::nn::LayerNorm> ln_f;

 private:
  GPTConfig cfg_;
};

}  // namespace tessera_train
