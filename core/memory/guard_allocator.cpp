// Guard mode (TESSERA_ALLOC_CONF guard_bytes:N): canary bytes on both sides of every
// allocation, so that a kernel writing past its tensors is caught after it returns, with the op
// and the tensor named (ops/op_impl.cpp checks them), instead of corrupting the heap and dying
// later somewhere unrelated ("malloc(): invalid size").
//
// The canaries live in device memory, so they are written and read with the device type's own
// copy: the mode works for any backend, at the price of two small copies per allocation and
// per check.
#include <algorithm>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "memory/allocator.hpp"
#include "runtime/runtime.hpp"
#include "runtime/status.hpp"

namespace tsr::core {
namespace {

// A byte no float, small integer or zero-fill produces by accident in every position.
constexpr unsigned char kCanary = 0xFD;

class GuardAllocator final : public DeviceAllocator {
 public:
  GuardAllocator(std::unique_ptr<DeviceAllocator> inner, std::string name, size_t guard, GuardCopyFn copy)
      : inner_(std::move(inner)), name_(std::move(name)), guard_(guard), copy_(std::move(copy)), pattern_(guard, kCanary) {}

  tsr_status_t allocate(size_t nbytes, tsr_stream_t* stream, void** out) override {
    if (nbytes == 0) {
      *out = nullptr;
      return nullptr;
    }
    void* base = nullptr;
    TSR_RETURN_IF_ERROR(inner_->allocate(nbytes + 2 * guard_, stream, &base));
    char* user = static_cast<char*>(base) + guard_;
    tsr_status_t st = write_canaries(user, nbytes);
    if (st) {
      inner_->deallocate(base);
      return prefix_status(st, name_ + ": guard mode: cannot write the guard bytes");
    }
    try {
      std::lock_guard<std::mutex> lock(mu_);
      live_[user] = nbytes;
    } catch (...) {
      inner_->deallocate(base);
      return make_status(TSR_RESOURCE_EXHAUSTED, name_ + ": guard mode: out of host memory");
    }
    *out = user;
    return nullptr;
  }

  void deallocate(void* ptr) override {
    if (!ptr) return;
    std::string damage = guard_damage(ptr);
    if (!damage.empty())
      log(TSR_LOG_ERROR, name_ + ": guard mode: a block freed with damaged guard bytes (" + damage +
                             "): something wrote outside its tensor after the last kernel check");
    {
      std::lock_guard<std::mutex> lock(mu_);
      live_.erase(ptr);
    }
    inner_->deallocate(static_cast<char*>(ptr) - guard_);
  }

  std::string guard_damage(const void* ptr) override {
    size_t nbytes = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = live_.find(ptr);
      if (it == live_.end()) return {};
      nbytes = it->second;
    }
    char* user = static_cast<char*>(const_cast<void*>(ptr));
    std::vector<unsigned char> before(guard_), after(guard_);
    tsr_status_t st = copy_(false, user - guard_, before.data(), guard_);
    if (!st) st = copy_(false, user + nbytes, after.data(), guard_);
    if (st) {
      std::string m = "cannot read the guard bytes: " + std::string(st->message);
      free_status(st);
      return m;
    }
    std::string damage;
    // Before the start: the damaged byte nearest to the block says how far back it reached.
    size_t n_before = 0, first_before = 0;
    for (size_t i = 0; i < guard_; ++i)
      if (before[i] != kCanary) {
        if (!n_before) first_before = guard_ - i;
        ++n_before;
      }
    size_t n_after = 0, last_after = 0;
    for (size_t i = 0; i < guard_; ++i)
      if (after[i] != kCanary) {
        ++n_after;
        last_after = i + 1;
      }
    const std::string block = "block of " + std::to_string(nbytes) + " bytes";
    if (n_after)
      damage = std::to_string(n_after) + " of the " + std::to_string(guard_) + " guard bytes after the end of its " +
               block + " were overwritten, up to " + std::to_string(last_after) + " bytes past the end" +
               (last_after == guard_ ? " (the write may reach further)" : "");
    if (n_before)
      damage += (damage.empty() ? "" : "; ") + std::to_string(n_before) + " of the " + std::to_string(guard_) +
                " guard bytes before the start of its " + block + " were overwritten, from " +
                std::to_string(first_before) + " bytes before the start";
    if (!damage.empty()) {
      tsr_status_t w = write_canaries(user, nbytes);  // report each overrun once
      free_status(w);
    }
    return damage;
  }

  tsr_status_t record_stream(void* ptr, tsr_stream_t* stream) override {
    return inner_->record_stream(ptr ? static_cast<char*>(ptr) - guard_ : ptr, stream);
  }
  void set_limit(size_t bytes, const std::string& why) override { inner_->set_limit(bytes, why); }
  void stats(tsr_memory_stats_t* out) override { inner_->stats(out); }  // guard bytes included
  std::string snapshot_json() override { return inner_->snapshot_json(); }
  void empty_cache() override { inner_->empty_cache(); }
  tsr_status_t pool_create(uint64_t* id) override { return inner_->pool_create(id); }
  tsr_status_t pool_begin(uint64_t id, tsr_stream_t* stream) override { return inner_->pool_begin(id, stream); }
  tsr_status_t pool_end(uint64_t id, tsr_stream_t* stream) override { return inner_->pool_end(id, stream); }
  tsr_status_t pool_release(uint64_t id) override { return inner_->pool_release(id); }

 private:
  tsr_status_t write_canaries(char* user, size_t nbytes) {
    TSR_RETURN_IF_ERROR(copy_(true, user - guard_, pattern_.data(), guard_));
    return copy_(true, user + nbytes, pattern_.data(), guard_);
  }

  std::unique_ptr<DeviceAllocator> inner_;
  std::string name_;
  size_t guard_;
  GuardCopyFn copy_;
  std::vector<unsigned char> pattern_;
  std::mutex mu_;
  std::unordered_map<const void*, size_t> live_;  // user pointer -> requested bytes
};

}  // namespace

std::unique_ptr<DeviceAllocator> make_guard_allocator(std::unique_ptr<DeviceAllocator> inner, std::string device_name,
                                                      size_t guard_bytes, GuardCopyFn copy) {
  return std::make_unique<GuardAllocator>(std::move(inner), std::move(device_name), guard_bytes, std::move(copy));
}

}  // namespace tsr::core
