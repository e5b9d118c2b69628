// tessera_gpt_bench, Tessera side: `tessera train`'s GPT (tools/train, tessera_train library)
// on a batch of its addition task, trained as the trainer does it: forward, loss,
// zero_grad(set_to_none), backward, clip_grad_norm_, AdamW (decay on matrices only).
// The learning-rate schedule is left out (constant lr on both sides) so losses stay comparable.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "addition_task.hpp"
#include "gpt.hpp"
#include "tessera/optim.hpp"
#include "tessera/tessera.hpp"

namespace gpt_bench {

// `tessera train`'s defaults for the addition task (tools/train/trainer.cpp, defaults_for):
// 3-digit addition (vocab 12, 11 positions), 2 layers x 4 heads x 64, batch 256, AdamW lr 3e-3,
// betas (0.9, 0.99), weight decay 0.01, clip 1.0.
struct Config {
  int digits = 3, n_layer = 2, n_head = 4, n_embd = 64, batch = 256;
  double lr = 3e-3, weight_decay = 0.01, beta1 = 0.9, beta2 = 0.99, clip = 1.0;
  int vocab_size = 12, block_size = 11;  // set from the task
};
inline Config default_config() { return Config{}; }
inline std::string describe(const Config& c) {
  return "tessera train's GPT: addition " + std::to_string(c.digits) + " digits (vocab " +
         std::to_string(c.vocab_size) + ", " + std::to_string(c.block_size) + " positions), " +
         std::to_string(c.n_layer) + " layers x " + std::to_string(c.n_head) + " heads x " + std::to_string(c.n_embd) +
         ", batch " + std::to_string(c.batch) + " (" + std::to_string(c.batch * c.block_size) + " tokens/step)";
}

inline tessera_train::AdditionOptions task_options(const Config& c) {
  tessera_train::AdditionOptions ao;
  ao.digits = c.digits;
  ao.train_size = 4 * c.batch;  // only one batch is drawn
  return ao;
}
// Sets vocab_size and block_size from the task.
inline void resolve(Config& c) {
  tessera_train::AdditionTask task(task_options(c));
  c.vocab_size = static_cast<int>(task.vocab_size());
  c.block_size = static_cast<int>(task.block_size());
}

struct NamedParam {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> values;
};

struct BatchTokens {
  std::vector<int64_t> idx, targets;  // [batch, block]; targets -100 where no loss is taken
};

class TesseraTrainer {
 public:
  // c: resolve()d.
  TesseraTrainer(const Config& c, uint64_t seed) : c_(c) {
    tessera_train::AdditionTask task(task_options(c));
    tessera_train::GPTConfig gc;
    gc.vocab_size = c.vocab_size;
    gc.block_size = c.block_size;
    gc.n_layer = c.n_layer;
    gc.n_head = c.n_head;
    gc.n_embd = c.n_embd;
    tsr::manual_seed(seed);
    model_ = std::make_shared<tessera_train::GPT>(gc);
    model_->train();
    std::vector<tsr::Tensor> decay, no_decay;
    for (const tsr::Tensor& p : model_->parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
    tsr::optim::AdamWOptions o;
    o.lr = c.lr;
    o.weight_decay = c.weight_decay;
    o.betas = {c.beta1, c.beta2};
    opt_ = std::make_unique<tsr::optim::AdamW>(
        std::vector<tsr::optim::ParamGroup>{tsr::optim::ParamGroup(decay),
                                            tsr::optim::ParamGroup(no_decay, {{"weight_decay", 0.0}})},
        o);
    tessera_train::Batch b = task.batch(0, c.batch, tsr::Device::cpu());
    x_ = b.x;
    y_ = b.y;
  }

  // One training step; returns the loss before the update.
  double step() {
    tsr::Tensor loss = model_->loss(model_->forward(x_), y_);
    opt_->zero_grad();
    loss.backward();
    tsr::optim::clip_grad_norm_(model_->parameters(), c_.clip);
    opt_->step();
    return loss.item<float>();
  }

  std::vector<NamedParam> initial_parameters() const {
    std::vector<NamedParam> out;
    for (auto& [name, t] : model_->named_parameters()) out.push_back({name, t.sizes(), t.to_vector<float>()});
    return out;
  }
  BatchTokens batch_tokens() const { return {x_.to_vector<int64_t>(), y_.to_vector<int64_t>()}; }

 private:
  Config c_;
  std::shared_ptr<tessera_train::GPT> model_;
  std::unique_ptr<tsr::optim::AdamW> opt_;
  tsr::Tensor x_, y_;
};

}  // namespace gpt_bench
