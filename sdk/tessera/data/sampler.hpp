// Tessera SDK: the order in which a DataLoader visits a dataset, as a pure function of
// (dataset size, batch size, shuffle, seed, epoch, drop_last).
//
//   tsr::data::BatchSampler s(/*n=*/10, /*batch_size=*/4, /*shuffle=*/true, /*seed=*/7,
//                             /*drop_last=*/false);
//   s.set_epoch(2);
//   s.num_batches();  // 3
//   s.batch(2);       // the last 2 indices of epoch 2's permutation
//
// Shuffling is a Fisher-Yates permutation driven by Philox4x32-10 (tessera/philox.h) keyed by
// the seed, with the epoch in the counter's high half. It depends on nothing but (seed, epoch,
// n): not on the runtime's generator (training code drawing random numbers does not change the
// data order), not on the standard library (std::shuffle's algorithm is unspecified), not on
// the platform. That is what lets a checkpoint resume an epoch from (seed, epoch, batch).
//
// Ownership: plain values. Errors: tsr::Error(INVALID_ARGUMENT) for batch_size < 1 and
// OUT_OF_RANGE for a batch index past the end. Thread-safety: const methods may be called
// concurrently; set_epoch must not race with them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "tessera/error.hpp"
#include "tessera/philox.h"

namespace tsr::data {

namespace detail {
// High 64 bits of a 64x64-bit product (portable: no __int128 under -pedantic).
inline uint64_t mulhi64(uint64_t a, uint64_t b) {
  const uint64_t a_lo = a & 0xffffffffu, a_hi = a >> 32, b_lo = b & 0xffffffffu, b_hi = b >> 32;
  const uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo, lo_hi = a_lo * b_hi, hi_hi = a_hi * b_hi;
  const uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xffffffffu) + lo_hi;
  return hi_hi + (hi_lo >> 32) + (cross >> 32);
}
}  // namespace detail

// A permutation of 0..n-1 that depends only on (seed, epoch, n).
inline std::vector<int64_t> shuffled_indices(size_t n, uint64_t seed, uint64_t epoch) {
  std::vector<int64_t> p(n);
  std::iota(p.begin(), p.end(), int64_t{0});
  if (n < 2) return p;
  const uint32_t key[2] = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
  uint64_t block = 0;
  tsr_philox4x32_t bits{};
  int lane = 4;  // 64-bit draws: two per Philox block
  auto next64 = [&]() -> uint64_t {
    if (lane == 4) {
      const uint32_t ctr[4] = {static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32),
                               static_cast<uint32_t>(epoch), static_cast<uint32_t>(epoch >> 32)};
      bits = tsr_philox4x32_10(ctr, key);
      ++block;
      lane = 0;
    }
    uint64_t v = (static_cast<uint64_t>(bits.v[lane]) << 32) | bits.v[lane + 1];
    lane += 2;
    return v;
  };
  for (size_t i = n - 1; i > 0; --i) {
    // Multiply-shift maps 64 random bits onto [0, i]; its bias (< (i+1) / 2^64) is far below
    // anything a training run could detect, and it avoids a data-dependent rejection loop.
    const uint64_t j = detail::mulhi64(next64(), static_cast<uint64_t>(i) + 1);
    std::swap(p[i], p[j]);
  }
  return p;
}

class BatchSampler {
 public:
  BatchSampler(size_t n, int64_t batch_size, bool shuffle, uint64_t seed, bool drop_last, uint64_t epoch = 0)
      : n_(n), batch_size_(batch_size), shuffle_(shuffle), seed_(seed), drop_last_(drop_last), epoch_(epoch) {
    if (batch_size < 1)
      throw Error(TSR_INVALID_ARGUMENT, "BatchSampler: batch_size must be >= 1, got " + std::to_string(batch_size));
    reorder();
  }

  // Batches per epoch of n samples: the last, short batch counts unless drop_last.
  static int64_t count(size_t n, int64_t batch_size, bool drop_last) {
    if (batch_size < 1)
      throw Error(TSR_INVALID_ARGUMENT, "BatchSampler: batch_size must be >= 1, got " + std::to_string(batch_size));
    const int64_t m = static_cast<int64_t>(n);
    return drop_last ? m / batch_size : (m + batch_size - 1) / batch_size;
  }

  void set_epoch(uint64_t epoch) {
    epoch_ = epoch;
    reorder();
  }
  uint64_t epoch() const { return epoch_; }
  size_t dataset_size() const { return n_; }

  int64_t num_batches() const { return count(n_, batch_size_, drop_last_); }

  // Dataset indices of batch b of the current epoch.
  std::vector<int64_t> batch(int64_t b) const {
    if (b < 0 || b >= num_batches())
      throw Error(TSR_OUT_OF_RANGE, "BatchSampler: batch " + std::to_string(b) + " out of range (" +
                                        std::to_string(num_batches()) + " batches per epoch)");
    const size_t begin = static_cast<size_t>(b * batch_size_);
    const size_t end = std::min(n_, begin + static_cast<size_t>(batch_size_));
    return std::vector<int64_t>(order_.begin() + static_cast<std::ptrdiff_t>(begin),
                                order_.begin() + static_cast<std::ptrdiff_t>(end));
  }

 private:
  void reorder() {
    if (shuffle_) {
      order_ = shuffled_indices(n_, seed_, epoch_);
    } else {
      order_.resize(n_);
      std::iota(order_.begin(), order_.end(), int64_t{0});
    }
  }
  size_t n_;
  int64_t batch_size_;
  bool shuffle_;
  uint64_t seed_;
  bool drop_last_;
  uint64_t epoch_;
  std::vector<int64_t> order_;
};

}  // namespace tsr::data
