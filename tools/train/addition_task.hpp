// tessera train: the built-in task, multi-digit addition written as text.
//
// An example with digits=3 is the 12-token sequence "123+045=8610": both operands zero-padded
// to `digits`, then the digits+1 digits of the sum written least significant digit first
// (168 -> "8610"). Reversed, each answer digit depends only on operand digits already seen
// and one carry, the order a left-to-right model can compute in; written the usual way
// the model must resolve every carry before emitting the first digit, and small transformers
// learn that several times slower.
//
// Vocabulary: '0'..'9' = 0..9, '+' = 10, '=' = 11. Loss is taken only on the answer
// positions (targets elsewhere are -100). The held-out problems are drawn first and the train
// set excludes them, so none is ever trained on. evaluate() decodes greedily (argmax) the
// answer of every held-out problem and reports exact-match accuracy.
//
// Errors: tsr::Error naming "addition" and the bad value. Thread-safety: see task.hpp.
#pragma once

#include <utility>
#include <vector>

#include "task.hpp"

namespace tessera_train {

struct AdditionOptions {
  int digits = 3;
  uint64_t seed = 1;
  int64_t train_size = 200000;  // capped by the number of problems not held out
  int64_t heldout_size = 1000;  // capped at a fifth of all problems
};

class AdditionTask : public Task {
 public:
  static constexpr int64_t kPlus = 10, kEquals = 11, kVocab = 12;

  explicit AdditionTask(const AdditionOptions& o);

  std::string name() const override { return "addition"; }
  int64_t vocab_size() const override { return kVocab; }
  int64_t block_size() const override { return seq_len() - 1; }
  Batch batch(int64_t step, int64_t batch_size, tsr::Device dev, int64_t first = 0, int64_t rows = -1) const override;
  EvalResult evaluate(GPT& model, tsr::Device dev) const override;
  std::map<std::string, std::string> signature() const override;
  std::string describe() const override;

  int digits() const { return d_; }
  int64_t seq_len() const { return 3 * d_ + 3; }
  int64_t prompt_len() const { return 2 * d_ + 2; }  // through '='
  std::vector<int64_t> encode(uint64_t a, uint64_t b) const;
  // "123+045=8610" from token ids (any length).
  static std::string render(const std::vector<int64_t>& tokens);
  const std::vector<std::pair<uint64_t, uint64_t>>& train_set() const { return train_; }
  const std::vector<std::pair<uint64_t, uint64_t>>& heldout_set() const { return heldout_; }
  // Exact-match accuracy of greedy decoding on `problems` (all of them when empty).
  double accuracy(GPT& model, tsr::Device dev, const std::vector<std::pair<uint64_t, uint64_t>>& problems,
                  std::string* examples = nullptr) const;

 private:
  const std::vector<int64_t>& epoch_order(int64_t epoch) const;
  int d_;
  uint64_t seed_, base_;  // base_ = 10^digits
  std::vector<std::pair<uint64_t, uint64_t>> train_, heldout_;
  mutable int64_t cached_epoch_ = -1;
  mutable std::vector<int64_t> order_;
};

}  // namespace tessera_train
