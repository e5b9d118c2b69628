// Tessera SDK: each rank's share of a dataset (torch.utils.data.DistributedSampler).
//
//   tsr::data::DistributedSampler s(n, /*num_replicas=*/pg.size(), /*rank=*/pg.rank(),
//                                   /*shuffle=*/true, /*seed=*/7, /*drop_last=*/false);
//   s.set_epoch(epoch);              // the same permutation on every rank
//   for (int64_t i : s.indices()) ...
//
// As PyTorch: every rank draws the same permutation of 0..n-1 (shuffled_indices: a function of
// seed, epoch and n alone), then takes every num_replicas-th index starting at its rank. Without
// drop_last the list is padded by repeating its start so that each rank gets ceil(n / R)
// indices; with drop_last the tail is dropped so that each gets floor(n / R) (PyTorch:
// ceil((n - R) / R) when R does not divide n). The ranks' shares are disjoint except for the
// padding. Errors: tsr::Error(INVALID_ARGUMENT) for num_replicas < 1 or rank outside it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/data/sampler.hpp"

namespace tsr::data {

class DistributedSampler {
 public:
  DistributedSampler(size_t n, int num_replicas, int rank, bool shuffle = true, uint64_t seed = 0,
                     bool drop_last = false)
      : n_(n), replicas_(num_replicas), rank_(rank), shuffle_(shuffle), seed_(seed), drop_last_(drop_last) {
    if (num_replicas < 1 || rank < 0 || rank >= num_replicas)
      throw Error(TSR_INVALID_ARGUMENT, "DistributedSampler: rank " + std::to_string(rank) + " of " +
                                            std::to_string(num_replicas) + " replicas");
  }
  void set_epoch(uint64_t epoch) { epoch_ = epoch; }
  // How many indices each rank gets.
  size_t num_samples() const {
    const size_t r = static_cast<size_t>(replicas_);
    if (drop_last_ && n_ % r != 0) return n_ >= r ? (n_ - r + r - 1) / r : 0;
    return (n_ + r - 1) / r;
  }
  std::vector<int64_t> indices() const {
    std::vector<int64_t> all = shuffle_ ? shuffled_indices(n_, seed_, epoch_) : shuffled_indices(0, 0, 0);
    if (!shuffle_)
      for (size_t i = 0; i < n_; ++i) all.push_back(static_cast<int64_t>(i));
    const size_t total = num_samples() * static_cast<size_t>(replicas_);
    if (all.size() < total && !all.empty()) {  // pad by repeating from the start
      size_t k = 0;
      while (all.size() < total) {
        const int64_t again = all[k++];
        all.push_back(again);
      }
    }
    all.resize(total);
    std::vector<int64_t> mine;
    for (size_t i = static_cast<size_t>(rank_); i < total; i += static_cast<size_t>(replicas_)) mine.push_back(all[i]);
    return mine;
  }

 private:
  size_t n_;
  int replicas_, rank_;
  bool shuffle_;
  uint64_t seed_;
  bool drop_last_;
  uint64_t epoch_ = 0;
};

}  // namespace tsr::data
