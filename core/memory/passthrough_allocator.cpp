// The pass-through allocator: every request goes straight to the raw allocator (for allocators
// that cache themselves, or TESSERA_ALLOC_CONF "allocator:native"), with the same statistics,
// limit and snapshot as the caching allocator.
//
// Raw allocators with alloc_async/free_async (cudaMallocAsync style) order memory on a stream
// themselves: each allocation remembers its stream and is returned with free_async on it.
// record_stream(ptr, other) is honoured at free time by making the allocation stream wait for
// an event recorded on each other stream, so that free_async's stream order covers their work.
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "memory/allocator.hpp"
#include "memory/allocator_util.hpp"
#include "runtime/status.hpp"

namespace tsr::core {
namespace {

class PassthroughAllocator final : public DeviceAllocator {
 public:
  PassthroughAllocator(const tsr_raw_allocator_t* raw, tsr_device_t device, std::string name, const AllocConf& conf,
                       const tsr_device_type_def_t* dev)
      : raw_(raw),
        device_(device),
        name_(std::move(name)),
        limit_(conf.limit_bytes),
        dev_(device_has_streams(dev) ? dev : nullptr) {}

  // Live allocations are left alone (they may still be in use).
  ~PassthroughAllocator() override = default;

  tsr_status_t allocate(size_t nbytes, tsr_stream_t* stream, void** out) override {
    if (dev_ == nullptr) stream = nullptr;  // dummy handles of a device without streams
    if (nbytes == 0) {
      *out = nullptr;
      return nullptr;
    }
    try {
      std::lock_guard<std::mutex> lock(mu_);
      std::string raw_msg;
      void* p = nullptr;
      const bool over_limit =
          nbytes > kMaxRequest || (limit_ != 0 && static_cast<size_t>(allocated_) + nbytes > limit_);
      if (over_limit || !raw_alloc_stream(raw_, device_, nbytes, stream, &p, &raw_msg)) {
        ++num_ooms_;
        std::string m = oom_message(name_, nbytes, nbytes, allocated_, allocated_, limit_);
        if (limit_ != 0 && !limit_why_.empty()) m += " (" + limit_why_ + ")";
        if (!over_limit && !raw_msg.empty()) m += "; " + raw_name(raw_) + ": " + raw_msg;
        return make_status(TSR_RESOURCE_EXHAUSTED, std::move(m));
      }
      try {
        live_.emplace(p, Live{nbytes, stream, {}});
      } catch (...) {
        raw_free(p, nbytes, stream);
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
    const size_t n = it->second.nbytes;
    tsr_stream_t* stream = it->second.stream;
    if (!it->second.uses.empty()) order_after_uses(stream, it->second.uses);
    live_.erase(it);
    raw_free(ptr, n, stream);
    ++num_raw_frees_;
    ++num_frees_;
    allocated_ -= static_cast<int64_t>(n);
  }

  tsr_status_t record_stream(void* ptr, tsr_stream_t* stream) override {
    if (ptr == nullptr || dev_ == nullptr) return nullptr;
    try {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = live_.find(ptr);
      if (it == live_.end()) {
        return make_status(TSR_INVALID_ARGUMENT,
                           "record_stream: the tensor's memory is not a live allocation of " + name_);
      }
      if (stream == it->second.stream) return nullptr;
      for (tsr_stream_t* s : it->second.uses) {
        if (s == stream) return nullptr;
      }
      it->second.uses.push_back(stream);
      return nullptr;
    } catch (const std::bad_alloc&) {
      return host_oom_status(name_, 0);
    }
  }

  void set_limit(size_t bytes, const std::string& why) override {
    std::lock_guard<std::mutex> lock(mu_);
    limit_ = bytes;
    limit_why_ = why;
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
    for (const auto& [p, l] : live_) allocs.emplace_back(reinterpret_cast<uintptr_t>(p), l.nbytes);
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
  struct Live {
    size_t nbytes;
    tsr_stream_t* stream;             // allocation stream (free_async goes there)
    std::vector<tsr_stream_t*> uses;  // record_stream
  };

  void raw_free(void* p, size_t n, tsr_stream_t* stream) {
    if (raw_->free_async != nullptr) {
      raw_->free_async(raw_->self, device_, p, n, stream);
    } else {
      raw_->free(raw_->self, device_, p, n);
    }
  }

  // Later work on `stream` (the free) waits for the work enqueued on `uses` so far. Without
  // stream-ordered freeing the other streams are synchronized instead.
  void order_after_uses(tsr_stream_t* stream, const std::vector<tsr_stream_t*>& uses) {
    for (tsr_stream_t* s : uses) {
      bool ordered = false;
      if (raw_->free_async != nullptr) {
        tsr_event_t* e = nullptr;
        if (tsr_status_t st = dev_->event_create(dev_->self, device_, TSR_EVENT_DEFAULT, &e)) {
          free_status(st);
        } else {
          tsr_status_t st2 = dev_->event_record(dev_->self, device_, e, s);
          if (st2 == nullptr) st2 = dev_->stream_wait_event(dev_->self, device_, stream, e);
          ordered = st2 == nullptr;
          free_status(st2);
          // Destroying an event with pending waits is allowed (CUDA semantics): the wait keeps
          // the recorded point.
          free_status(dev_->event_destroy(dev_->self, device_, e));
        }
      }
      if (!ordered) free_status(dev_->stream_synchronize(dev_->self, device_, s));
    }
  }

  const tsr_raw_allocator_t* raw_;
  const tsr_device_t device_;
  const std::string name_;
  size_t limit_;
  std::string limit_why_;
  const tsr_device_type_def_t* dev_;
  std::mutex mu_;
  std::unordered_map<void*, Live> live_;
  int64_t allocated_ = 0;
  int64_t peak_allocated_ = 0;
  int64_t num_allocs_ = 0;
  int64_t num_frees_ = 0;
  int64_t num_raw_allocs_ = 0;
  int64_t num_raw_frees_ = 0;
  int64_t num_ooms_ = 0;
};

}  // namespace

std::unique_ptr<DeviceAllocator> make_passthrough_allocator(const tsr_raw_allocator_t* raw, tsr_device_t device,
                                                            std::string device_name, const AllocConf& conf,
                                                            const tsr_device_type_def_t* dev) {
  return std::make_unique<PassthroughAllocator>(raw, device, std::move(device_name), conf, dev);
}

}  // namespace tsr::core
