// The caching allocator's stream-ordered part (see memory/caching_allocator.cpp for the layout):
// record_stream, blocks freed while in use on other streams (pending until their events
// complete: deferring, polling and synchronizing them), and private pools (graph capture).
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "memory/allocator.hpp"
#include "memory/allocator_util.hpp"
#include "memory/caching_allocator_impl.hpp"
#include "memory/spin_mutex.hpp"
#include "runtime/status.hpp"

namespace tsr::core::caching_detail {

tsr_status_t CachingAllocator::record_stream(void* ptr, tsr_stream_t* stream) {
  if (ptr == nullptr || dev_ == nullptr) return nullptr;
  std::lock_guard<SpinMutex> lock(mu_);
  Block* b = active_.find(ptr);
  if (b == nullptr) {
    return make_status(TSR_INVALID_ARGUMENT, "record_stream: the tensor's memory is not an active block of " + name_);
  }
  if (stream == b->seg->stream) return nullptr;
  for (tsr_stream_t* s : b->uses) {
    if (s == stream) return nullptr;
  }
  try {
    b->uses.push_back(stream);
  } catch (const std::bad_alloc&) {
    return host_oom_status(name_, 0);
  }
  return nullptr;
}

tsr_status_t CachingAllocator::pool_create(uint64_t* id) {
  try {
    std::lock_guard<SpinMutex> lock(mu_);
    auto p = std::make_unique<PrivatePool>();
    p->id = next_pool_id_++;
    *id = p->id;
    pools_.push_back(std::move(p));
    return nullptr;
  } catch (const std::bad_alloc&) {
    return host_oom_status(name_, 0);
  }
}

tsr_status_t CachingAllocator::pool_begin(uint64_t id, tsr_stream_t* stream) {
  if (dev_ == nullptr) stream = nullptr;  // as in allocate()
  try {
    std::lock_guard<SpinMutex> lock(mu_);
    PrivatePool* p = find_pool(id);
    if (p == nullptr) return unknown_pool("memory_pool_begin", id);
    for (const auto& c : capturing_) {
      if (c.first == stream) {
        return make_status(TSR_FAILED_PRECONDITION, "memory_pool_begin: a memory pool (" +
                                                        std::to_string(c.second->id) +
                                                        ") is already begun for this stream of " + name_);
      }
    }
    capturing_.emplace_back(stream, p);
    ++p->claims;
    return nullptr;
  } catch (const std::bad_alloc&) {
    return host_oom_status(name_, 0);
  }
}

tsr_status_t CachingAllocator::pool_end(uint64_t id, tsr_stream_t* stream) {
  if (dev_ == nullptr) stream = nullptr;
  std::lock_guard<SpinMutex> lock(mu_);
  for (auto it = capturing_.begin(); it != capturing_.end(); ++it) {
    if (it->first == stream && it->second->id == id) {
      capturing_.erase(it);
      return nullptr;
    }
  }
  return make_status(TSR_FAILED_PRECONDITION, "memory_pool_end: memory pool " + std::to_string(id) +
                                                  " is not begun for this stream of " + name_);
}

tsr_status_t CachingAllocator::pool_release(uint64_t id) {
  std::lock_guard<SpinMutex> lock(mu_);
  PrivatePool* p = find_pool(id);
  if (p == nullptr) return unknown_pool("memory_pool_release", id);
  if (--p->claims > 0) return nullptr;
  for (size_t i = 0; i < capturing_.size();) {
    if (capturing_[i].second == p) {
      capturing_.erase(capturing_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  if (p->in_use == 0) return_pool(p);
  return nullptr;
}

// The pool begun for `stream`, if any.
PrivatePool* CachingAllocator::capture_pool(tsr_stream_t* stream) const {
  for (const auto& c : capturing_) {
    if (c.first == stream) return c.second;
  }
  return nullptr;
}

PrivatePool* CachingAllocator::find_pool(uint64_t id) const {
  for (const auto& p : pools_) {
    if (p->id == id) return p.get();
  }
  return nullptr;
}

tsr_status_t CachingAllocator::unknown_pool(const char* where, uint64_t id) const {
  return make_status(TSR_INVALID_ARGUMENT,
                     std::string(where) + ": no memory pool " + std::to_string(id) + " on " + name_);
}

// Moves a wholly free segment of a pool into pool `to` (nullptr: the device cache).
void CachingAllocator::retag_segment(Segment* s, PrivatePool* to) {
  if (s->pool == to) return;
  Block* h = s->head;
  if (h->allocated || h->pending || h->next != nullptr) return;  // blocks still in use
  FreeSet& set = s->large ? large_free_ : small_free_;
  erase_free(set, h);
  s->pool = to;
  s->pool_id = to != nullptr ? to->id : 0;
  insert_free(set, h);
}

// A released pool without blocks in use: its segments become ordinary cache.
void CachingAllocator::return_pool(PrivatePool* p) {
  for (Segment* s = seg_head_; s != nullptr; s = s->next) {
    if (s->pool == p) retag_segment(s, nullptr);
  }
  for (auto it = pools_.begin(); it != pools_.end(); ++it) {
    if (it->get() == p) {
      pools_.erase(it);
      break;
    }
  }
}

// b was used on other streams: record an event on each and keep it out of the cache until
// they complete. Returns false when the block may be freed at once (the events could not be
// made: the streams were synchronized instead).
bool CachingAllocator::defer_free(Block* b) {
  const size_t n = b->uses.size();
  try {
    pending_.reserve(pending_.size() + 1);
    b->events.reserve(n);
    event_cache_.reserve(num_events_ + n);  // so that returning events never allocates
  } catch (const std::bad_alloc&) {
    sync_uses(b);
    return false;
  }
  for (tsr_stream_t* s : b->uses) {
    tsr_event_t* e = nullptr;
    if (!event_cache_.empty()) {
      e = event_cache_.back();
      event_cache_.pop_back();
    } else if (tsr_status_t st = dev_->event_create(dev_->self, device_, TSR_EVENT_DEFAULT, &e)) {
      free_status(st);
      e = nullptr;
    } else {
      ++num_events_;
      try {
        event_cache_.reserve(num_events_);
      } catch (const std::bad_alloc&) {
      }
    }
    if (e != nullptr) {
      if (tsr_status_t st = dev_->event_record(dev_->self, device_, e, s)) {
        free_status(st);
        event_cache_.push_back(e);
        e = nullptr;
      }
    }
    if (e == nullptr) {  // no event: wait for the stream's work here instead
      free_status(dev_->stream_synchronize(dev_->self, device_, s));
      continue;
    }
    b->events.push_back(e);
  }
  b->uses.clear();
  if (b->events.empty()) return false;
  b->pending = true;
  pending_.push_back(b);
  return true;
}

void CachingAllocator::sync_uses(Block* b) {
  for (tsr_stream_t* s : b->uses) free_status(dev_->stream_synchronize(dev_->self, device_, s));
  b->uses.clear();
}

// Frees the pending blocks whose events are complete (all of them when `wait`).
void CachingAllocator::process_events(bool wait) {
  size_t keep = 0;
  for (size_t i = 0; i < pending_.size(); ++i) {
    Block* b = pending_[i];
    bool done = true;
    while (!b->events.empty()) {
      tsr_event_t* e = b->events.back();
      int32_t complete = 1;
      tsr_status_t st =
          wait ? dev_->event_synchronize(dev_->self, device_, e) : dev_->event_query(dev_->self, device_, e, &complete);
      // An error belongs to the work on that stream (it surfaces at its next synchronizing
      // call); the block is no longer waited for.
      if (st != nullptr) {
        free_status(st);
        complete = 1;
      }
      if (complete == 0) {
        done = false;
        break;
      }
      b->events.pop_back();
      event_cache_.push_back(e);  // capacity reserved in defer_free
    }
    if (done) {
      b->pending = false;
      finish_free(b);
    } else {
      pending_[keep++] = b;
    }
  }
  pending_.resize(keep);
}

}  // namespace tsr::core::caching_detail
