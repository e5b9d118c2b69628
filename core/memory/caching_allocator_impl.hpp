// Internal to the core: the caching allocator's data structures and class, shared by
// memory/caching_allocator.cpp (allocation, best fit, splitting and merging, segments, statistics) and
// memory/caching_allocator_streams.cpp (record_stream, pending frees and their events, private pools).
// The layout is described at the top of memory/caching_allocator.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "memory/allocator.hpp"
#include "memory/spin_mutex.hpp"

// A named namespace (not an anonymous one) so that both files define the same class.
namespace tsr::core::caching_detail {

struct Block;

// An entry of a pool's free set: the block's key, copied so that the tree search does not
// chase Block pointers. The key fields are mutable so that a block can be resized in place
// when its position in the order does not change.
struct FreeKey {
  uint64_t pool;     // private pool id, 0 = the device cache
  uintptr_t stream;  // the segment's stream
  mutable size_t size;
  mutable uintptr_t addr;
  Block* block;
};

struct BySizeAddr {
  bool operator()(const FreeKey& a, const FreeKey& b) const {
    if (a.pool != b.pool) return a.pool < b.pool;
    if (a.stream != b.stream) return a.stream < b.stream;
    return a.size != b.size ? a.size < b.size : a.addr < b.addr;
  }
};

using FreeSet = std::set<FreeKey, BySizeAddr>;

// Active blocks by address: open addressing with linear probing, a power-of-two table and
// Fibonacci hashing (std::unordered_map's prime modulo costs two divisions per free). The
// owner keeps the capacity at least twice the number of Blocks in existence, so insert never
// grows the table and never throws.
class ActiveMap {
 public:
  // Makes room for n entries at load <= 1/2. May throw std::bad_alloc (then unchanged).
  void reserve(size_t n) {
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    if (cap <= slots_.size()) return;
    std::vector<Slot> old(cap);
    old.swap(slots_);
    shift_ = 64;
    for (size_t c = cap; c > 1; c >>= 1) --shift_;
    mask_ = cap - 1;
    for (const Slot& sl : old) {
      if (sl.key != nullptr) put(sl.key, sl.val);
    }
  }
  // Requires reserve() room and key not present.
  void insert(void* key, Block* val) {
    put(key, val);
    ++count_;
  }
  // Removes key and returns its value; nullptr if absent.
  Block* erase(void* key) {
    if (slots_.empty()) return nullptr;
    size_t i = home(key);
    while (slots_[i].key != key) {
      if (slots_[i].key == nullptr) return nullptr;
      i = (i + 1) & mask_;
    }
    Block* val = slots_[i].val;
    // Backward-shift deletion: no tombstones.
    for (size_t j = (i + 1) & mask_; slots_[j].key != nullptr; j = (j + 1) & mask_) {
      const size_t k = home(slots_[j].key);
      const bool movable = (i <= j) ? (k <= i || k > j) : (k <= i && k > j);
      if (movable) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = Slot{};
    --count_;
    return val;
  }
  size_t size() const { return count_; }
  Block* find(const void* key) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = home(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return slots_[i].val;
      if (slots_[i].key == nullptr) return nullptr;
    }
  }

 private:
  struct Slot {
    void* key = nullptr;
    Block* val = nullptr;
  };
  size_t home(const void* key) const {
    const uint64_t x = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(key)) >> 6;
    return static_cast<size_t>((x * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void put(void* key, Block* val) {
    size_t i = home(key);
    while (slots_[i].key != nullptr) i = (i + 1) & mask_;
    slots_[i] = Slot{key, val};
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  unsigned shift_ = 64;
  size_t count_ = 0;
};

struct PrivatePool {
  uint64_t id = 0;
  int64_t claims = 1;  // memory_pool_create and each memory_pool_begin hold one
  int64_t in_use = 0;  // blocks allocated from the pool and not yet back in its free set
};

struct Segment {
  char* base = nullptr;
  size_t size = 0;
  bool large = false;
  tsr_stream_t* stream = nullptr;  // the stream its blocks are cached for
  PrivatePool* pool = nullptr;     // private pool, nullptr = the device cache
  uint64_t pool_id = 0;
  Block* head = nullptr;    // lowest-address block
  Segment* prev = nullptr;  // segment list, creation order
  Segment* next = nullptr;
};

struct Block {
  char* ptr = nullptr;
  size_t size = 0;
  size_t requested = 0;  // bytes asked for (active blocks)
  Segment* seg = nullptr;
  Block* prev = nullptr;  // neighbours in the segment (address order)
  Block* next = nullptr;  // (also links the spare list)
  bool allocated = false;
  bool pending = false;              // freed, waiting for events on other streams (neither active nor free)
  std::vector<tsr_stream_t*> uses;   // record_stream: other streams using the block
  std::vector<tsr_event_t*> events;  // pending: events still to complete
  FreeSet::iterator free_it;         // position in its pool while free
  FreeSet::node_type free_node;      // owned while the block is not in a free set
};

class CachingAllocator final : public DeviceAllocator {
 public:
  CachingAllocator(const tsr_raw_allocator_t* raw, tsr_device_t device, std::string name, const AllocConf& conf,
                   const tsr_device_type_def_t* dev);
  ~CachingAllocator() override;

  tsr_status_t allocate(size_t nbytes, tsr_stream_t* stream, void** out) override;
  void deallocate(void* ptr) override;
  void set_limit(size_t bytes, const std::string& why) override;
  void stats(tsr_memory_stats_t* out) override;
  std::string snapshot_json() override;
  void empty_cache() override;
  // memory/caching_allocator_streams.cpp
  tsr_status_t record_stream(void* ptr, tsr_stream_t* stream) override;
  tsr_status_t pool_create(uint64_t* id) override;
  tsr_status_t pool_begin(uint64_t id, tsr_stream_t* stream) override;
  tsr_status_t pool_end(uint64_t id, tsr_stream_t* stream) override;
  tsr_status_t pool_release(uint64_t id) override;

 private:
  // memory/caching_allocator.cpp
  size_t round_size(size_t n) const;
  size_t segment_size(size_t size) const;
  void refill_spares();
  void push_spare(Block* b);
  Block* pop_spare();
  static FreeKey key_of(const Block* b, const char* ptr, size_t size);
  void insert_free(FreeSet& pool, Block* b);
  void erase_free(FreeSet& pool, Block* b);
  FreeSet::iterator find_fit(FreeSet& pool, bool large, size_t size, uint64_t pid, tsr_stream_t* stream);
  bool should_split(const Block* b, bool large, size_t size) const;
  Block* split_front(FreeSet& pool, FreeSet::iterator it, size_t size);
  void split_back(Block* b, FreeSet& pool, size_t size);
  void grow_free(FreeSet& pool, Block* k, char* ptr, size_t size);
  void free_block(Block* b);
  void release_free_segments(size_t target);
  void unlink_segment(Segment* s);
  bool try_reserve(size_t seg_size, void** p, std::string* raw_msg);
  Block* new_segment(bool large, size_t size, size_t nbytes, tsr_stream_t* stream, PrivatePool* pp, tsr_status_t* st);
  std::string oom(size_t size, size_t nbytes) const;
  void finish_free(Block* b);
  // memory/caching_allocator_streams.cpp
  PrivatePool* capture_pool(tsr_stream_t* stream) const;
  PrivatePool* find_pool(uint64_t id) const;
  tsr_status_t unknown_pool(const char* where, uint64_t id) const;
  void retag_segment(Segment* s, PrivatePool* to);
  void return_pool(PrivatePool* p);
  bool defer_free(Block* b);
  void sync_uses(Block* b);
  void process_events(bool wait);

  const tsr_raw_allocator_t* raw_;
  const tsr_device_t device_;
  const std::string name_;
  AllocConf conf_;
  const tsr_device_type_def_t* dev_;  // null when the device has no streams
  std::string limit_why_;
  std::vector<Block*> pending_;            // freed blocks waiting for events
  std::vector<tsr_event_t*> event_cache_;  // completed events for reuse
  size_t num_events_ = 0;                  // events made (cached or pending)
  std::vector<std::unique_ptr<PrivatePool>> pools_;
  std::vector<std::pair<tsr_stream_t*, PrivatePool*>> capturing_;  // begun pools
  uint64_t next_pool_id_ = 1;
  size_t round_ = 512;
  bool round_pow2_ = true;
  bool round_twice_ = false;

  SpinMutex mu_;  // hot path: see memory/spin_mutex.hpp
  FreeSet small_free_;
  FreeSet large_free_;
  ActiveMap active_;
  size_t active_capacity_ = 0;
  Segment* seg_head_ = nullptr;
  Segment* seg_tail_ = nullptr;
  Block* spare_ = nullptr;
  size_t num_spare_ = 0;
  size_t num_blocks_ = 0;  // Blocks ever made (in segments or spare)

  int64_t allocated_ = 0;
  int64_t peak_allocated_ = 0;
  int64_t reserved_ = 0;
  int64_t peak_reserved_ = 0;
  int64_t num_allocs_ = 0;
  int64_t num_frees_ = 0;
  int64_t num_raw_allocs_ = 0;
  int64_t num_raw_frees_ = 0;
  int64_t num_cache_hits_ = 0;
  int64_t num_splits_ = 0;
  int64_t num_ooms_ = 0;
  int64_t num_segments_ = 0;
};

}  // namespace tsr::core::caching_detail
