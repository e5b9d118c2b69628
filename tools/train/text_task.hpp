// tessera train --text FILE: a character-level language model on any text file.
//
// The vocabulary is the set of distinct bytes of the file (UTF-8 text is modeled byte by
// byte, so it stays lossless for any input). The first 90% of the bytes train, the last 10%
// validate; a batch is `batch_size` random windows of block_size+1 bytes whose offsets are
// a function of (seed, step). evaluate() reports the mean loss over fixed validation windows;
// sample() generates text with temperature and top-k from the host-side RNG `seed`.
//
// Errors: tsr::Error naming "--text", the path and the reason (unreadable, too short for the
// context). Thread-safety: const methods may run concurrently.
#pragma once

#include <string>
#include <vector>

#include "task.hpp"

namespace tessera_train {

class TextTask : public Task {
 public:
  TextTask(const std::string& path, int64_t block_size, uint64_t seed);

  std::string name() const override { return "text"; }
  int64_t vocab_size() const override { return static_cast<int64_t>(vocab_.size()); }
  int64_t block_size() const override { return block_; }
  Batch batch(int64_t step, int64_t batch_size, tsr::Device dev, int64_t first = 0, int64_t rows = -1) const override;
  EvalResult evaluate(GPT& model, tsr::Device dev) const override;
  std::map<std::string, std::string> signature() const override;
  std::string describe() const override;

  // Continues `prompt` (bytes outside the vocabulary are dropped; empty: starts from the
  // file's first byte) by n bytes. temperature > 0; top_k <= 0 keeps every token.
  std::string sample(GPT& model, tsr::Device dev, const std::string& prompt, int64_t n, double temperature,
                     int64_t top_k, uint64_t seed) const;
  const std::string& vocab() const { return vocab_; }

 private:
  std::string path_, vocab_;
  int64_t block_;
  uint64_t seed_;
  int id_of_[256];
  std::vector<int64_t> train_, val_;
};

}  // namespace tessera_train
