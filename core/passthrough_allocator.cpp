// The pass-through allocator: every request goes straight to the raw allocator (for allocators
// that cache themselves, or TESSERA_ALLOC_CONF "allocator:native"), with the same statistics,
// limit and snapshot as the caching allocator.
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "allocator.hpp"
#include "allocator_util.hpp"
#include "status.hpp"

namespace tsr::core {
namespace {

class PassthroughAllocator final : public DeviceAllocator {
 public:
  PassthroughAllocator(const tsr_raw_allocator_t* raw, tsr_device_t device, std::string name,
                       const AllocConf& conf)
      : raw_(raw), device_(device), name_(std::move(name)), limit_(conf.limit_bytes) {}

  // Live allocations are left alone (they may still be in use).
  ~PassthroughAllocator() override = default;

  tsr_status_t allocate(size_t nbytes, void** out) override {
    if (nbytes == 0) {
      *out = nullptr;
      return nullptr;
    }
    try {
      std::lock_guard<std::mutex> lock(mu_);
      std::string raw_msg;
      void* p = nullptr;
      const bool over_limit = nbytes > kMaxRequest ||
                              (limit_ != 0 && static_cast<size_t>(allocated_) + nbytes > limit_);
      if (over_limit || !raw_alloc(raw_, device_, nbytes, &p, &raw_msg)) {
        ++num_ooms_;
        std::string m = oom_message(name_, nbytes, nbytes, allocated_, allocated_, limit_);
        if (!over_limit && !raw_msg.empty()) m += "; " + raw_name(raw_) + ": " + raw_msg;
        return make_status(TSR_RESOURCE_EXHAUSTED, std::move(m));
      }
      try {
        live_.emplace(p, nbytes);
      } catch (...) {
        raw_->free(raw_->self, device_, p, nbytes);
        throw;
      }
      ++num_raw_allocs_;
      ++num_allocs_;
      allocated_ += static_cast<int64_t>(nbytes);
      if (allocated_ > peak_allocated_) peak_allocated_ = allocated_;
      *out = p;
      return nullptr;
    } catch (const std::bad_alloc&) {
      return host_oom_status(name_, nbytes);
    }
  }

  void deallocate(void* ptr) override {
    if (ptr == nullptr) return;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.find(ptr);
    if (it == live_.end()) return;
    const size_t n = it->second;
    live_.erase(it);
    raw_->free(raw_->self, device_, ptr, n);
    ++num_raw_frees_;
    ++num_frees_;
    allocated_ -= static_cast<int64_t>(n);
  }

  void stats(tsr_memory_stats_t* out) override {
    std::lock_guard<std::mutex> lock(mu_);
    out->struct_size = sizeof(tsr_memory_stats_t);
    out->allocated_bytes = allocated_;
    out->peak_allocated_bytes = peak_allocated_;
    out->reserved_bytes = allocated_;
    out->peak_reserved_bytes = peak_allocated_;
    out->num_allocs = num_allocs_;
    out->num_frees = num_frees_;
    out->num_raw_allocs = num_raw_allocs_;
    out->num_raw_frees = num_raw_frees_;
    out->num_cache_hits = 0;
    out->num_splits = 0;
    out->num_ooms = num_ooms_;
    out->num_segments = static_cast<int64_t>(live_.size());
    out->limit_bytes = static_cast<int64_t>(limit_);
  }

  std::string snapshot_json() override {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::pair<uintptr_t, size_t>> allocs;
    allocs.reserve(live_.size());
    for (const auto& [p, n] : live_) allocs.emplace_back(reinterpret_cast<uintptr_t>(p), n);
    std::sort(allocs.begin(), allocs.end());
    std::string j = "{\"device\":";
    append_json_string(j, name_);
    j += ",\"allocator\":";
    append_json_string(j, raw_name(raw_));
    j += ",\"segments\":[";
    bool first = true;
    for (const auto& [addr, n] : allocs) {
      if (!first) j += ',';
      first = false;
      j += "{\"address\":";
      append_uint(j, addr);
      j += ",\"size\":";
      append_uint(j, n);
      j += ",\"blocks\":[{\"address\":";
      append_uint(j, addr);
      j += ",\"size\":";
      append_uint(j, n);
      j += ",\"requested\":";
      append_uint(j, n);
      j += ",\"state\":\"active\"}]}";
    }
    j += "]}";
    return j;
  }

  void empty_cache() override {}

 private:
  const tsr_raw_allocator_t* raw_;
  const tsr_device_t device_;
  const std::string name_;
  const size_t limit_;
  std::mutex mu_;
  std::unordered_map<void*, size_t> live_;
  int64_t allocated_ = 0;
  int64_t peak_allocated_ = 0;
  int64_t num_allocs_ = 0;
  int64_t num_frees_ = 0;
  int64_t num_raw_allocs_ = 0;
  int64_t num_raw_frees_ = 0;
  int64_t num_ooms_ = 0;
};

}  // namespace

std::unique_ptr<DeviceAllocator> make_passthrough_allocator(const tsr_raw_allocator_t* raw,
                                                            tsr_device_t device,
                                                            std::string device_name,
                                                            const AllocConf& conf) {
  return std::make_unique<PassthroughAllocator>(raw, device, std::move(device_name), conf);
}

}  // namespace tsr::core
