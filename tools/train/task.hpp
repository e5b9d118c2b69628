// tessera train: what a training task provides to the loop (tokens in, next tokens out).
//
// A batch is a pure function of (task seed, step): resuming at step k replays exactly the
// batches an uninterrupted run would have drawn, with no data-loader position to persist
// beyond the step counter. Tasks own their host-side token data; batches are new tensors on
// the requested device. Not thread-safe (a task may cache the current epoch's order).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "tessera/tessera.hpp"

namespace tessera_train {

class GPT;

struct Batch {
  tsr::Tensor x, y;  // int64 [B, T]; y = -100 where no loss is taken (ignore_index)
};

// Held-out figures reported by evaluate(); `metric` is what the summary leads with.
struct EvalResult {
  std::string metric_name;  // "held-out exact match", "val loss"
  double metric = 0;
  std::string detail;  // a few decoded examples, for the log
};

class Task {
 public:
  virtual ~Task() = default;
  virtual std::string name() const = 0;
  virtual int64_t vocab_size() const = 0;
  // The context the model needs (length of x).
  virtual int64_t block_size() const = 0;
  // Rows [first, first + rows) of the global batch of `step` (rows < 0: to its end): a
  // data-parallel rank generates only its own slice, and gets the same rows as a one-process
  // run's batch would hold there.
  virtual Batch batch(int64_t step, int64_t batch_size, tsr::Device dev, int64_t first = 0, int64_t rows = -1) const = 0;
  virtual EvalResult evaluate(GPT& model, tsr::Device dev) const = 0;
  // Settings a resumed run must match, stored in the checkpoint ("task.digits" = "3").
  virtual std::map<std::string, std::string> signature() const = 0;
  virtual std::string describe() const = 0;
};

// Deterministic 64-bit mixing (splitmix64): per-step and per-epoch random streams that do
// not depend on the standard library's distribution implementations.
inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

class SplitMix {
 public:
  explicit SplitMix(uint64_t seed) : s_(seed) {}
  uint64_t next() { return mix64(s_++); }
  // Uniform in [0, n) (n > 0); the modulo bias is below 2^-40 for the sizes used here.
  uint64_t below(uint64_t n) { return next() % n; }
  double uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }

 private:
  uint64_t s_;
};

}  // namespace tessera_train
