// The oneDNN side library's cache of plans (primitives with what runs them), shared by its
// convolution and matmul kernels: a bounded LRU keyed by a plain problem struct (hashed and
// compared by its bytes, tsr::BytesHash), shared by every thread. Creating a oneDNN primitive
// generates JIT code (milliseconds), so each problem builds its plan once; tensor data is never
// part of a plan.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "tessera/bytes_key.hpp"

namespace tsr::cpu {

template <class Key, class Plan, size_t Capacity = 64>
class PlanCache {
 public:
  // The plan of `key`, built by build(key) on a miss. The build runs outside the lock (it is
  // slow); when two threads miss at once, the first one stored wins and the other plan is dropped.
  // An exception from build propagates and nothing is stored.
  template <class Build>
  std::shared_ptr<const Plan> get(const Key& key, Build&& build) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = map_.find(key);
      if (it != map_.end()) {
        lru_.splice(lru_.begin(), lru_, it->second);
        return it->second->second;
      }
    }
    std::shared_ptr<const Plan> plan = build(key);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it != map_.end()) return it->second->second;
    lru_.emplace_front(key, std::move(plan));
    map_.emplace(key, lru_.begin());
    while (lru_.size() > Capacity) {
      map_.erase(lru_.back().first);
      lru_.pop_back();
    }
    return lru_.front().second;
  }

 private:
  struct Eq {
    bool operator()(const Key& a, const Key& b) const { return bytes_equal(a, b); }
  };
  std::mutex mu_;
  std::list<std::pair<Key, std::shared_ptr<const Plan>>> lru_;
  std::unordered_map<Key, typename decltype(lru_)::iterator, BytesHash<Key>, Eq> map_;
};

}  // namespace tsr::cpu
